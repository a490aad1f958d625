package filesystem

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/types"
)

// TestFolderRecursive reads files in subfolders at any depth, in order of
// their relative paths, and skips names starting with '.' or '_' at every
// level, files and folders alike.
func TestFolderRecursive(t *testing.T) {
	dir := t.TempDir()
	// Each visible file holds one row: its own number.
	visible := map[string]int{
		"a.csv":              1,
		"sub/b.csv":          2,
		"sub/deeper/c.csv":   3,
		"sub-x.csv":          4,
		"z.csv":              5,
		"sub/deeper/e/f.csv": 6,
	}
	for name, n := range visible {
		writeFile(t, dir, name, strconv.Itoa(n)+"\n")
	}
	for _, hidden := range []string{".h.csv", "_SUCCESS", "sub/.part-0-1.inprogress", "sub/_tmp.csv",
		".hidden/a.csv", "_temporary/0/a.csv", "sub/deeper/_x/a.csv", "sub/.y/deep/a.csv"} {
		writeFile(t, dir, hidden, "99\n")
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "sub", "deeper"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	// Expected order: relative paths sorted as strings; the symbolic link
	// to a folder is followed like a folder.
	visible["link/c.csv"] = 3
	visible["link/e/f.csv"] = 6
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range visible {
			if !yield(name) {
				return
			}
		}
	})
	s, err := openSource(t, []types.Column{{Name: "x", Type: types.Int}}, map[string]string{"format": "csv", "path": dir})
	if err != nil {
		t.Fatal(err)
	}
	var gotNames []string
	for _, f := range s.Files() {
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			t.Fatal(err)
		}
		gotNames = append(gotNames, filepath.ToSlash(rel))
	}
	if !slices.Equal(gotNames, names) {
		t.Fatalf("files %q, want %q", gotNames, names)
	}
	for _, par := range []int{1, 2, 3} {
		per, err := connectortest.ReadAll(context.Background(), s, 1, par, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := make([][]string, par)
		for j, name := range names {
			want[j%par] = append(want[j%par], "+I["+strconv.Itoa(visible[name])+"]")
		}
		if !slices.EqualFunc(per, want, slices.Equal) {
			t.Errorf("parallelism %d: got %v, want %v", par, per, want)
		}
	}
}

// TestFolderSymlinkCycle refuses a folder that contains itself through a
// symbolic link instead of looping.
func TestFolderSymlinkCycle(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "sub/a.csv", "1\n")
	if err := os.Symlink(dir, filepath.Join(dir, "sub", "back")); err != nil {
		t.Fatal(err)
	}
	_, err := openSource(t, []types.Column{{Name: "x", Type: types.Int}}, map[string]string{"format": "csv", "path": dir})
	if err == nil || !strings.Contains(err.Error(), "sub/back") || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("got %v", err)
	}
}

// TestSeekSubfolders restores a position inside a file of a subfolder, and
// notices when another file took its place even if it has the same base
// name.
func TestSeekSubfolders(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a/x.csv", "1\n2\n")
	writeFile(t, dir, "b/x.csv", "3\n4\n")
	cols := []types.Column{{Name: "x", Type: types.Int}}
	ctx := context.Background()
	s, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	r, _ := s.Open(1, 2)
	if got, err := connectortest.Drain(ctx, r, 1, 10, 1); err != nil || !slices.Equal(got, []string{"+I[3]"}) {
		t.Fatalf("got %v, %v", got, err)
	}
	pos, _ := r.Position()
	r.Close()
	r2, _ := s.Open(1, 2)
	if err := r2.Seek(pos); err != nil {
		t.Fatal(err)
	}
	if got, err := connectortest.Drain(ctx, r2, 1, 10, -1); err != nil || !slices.Equal(got, []string{"+I[4]"}) {
		t.Errorf("after Seek: got %v, %v", got, err)
	}
	writeFile(t, dir, "a/a/x.csv", "0\n") // now file 1 is a/x.csv
	s2, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	r3, _ := s2.Open(1, 2)
	if err := r3.Seek(pos); !errors.Is(err, ErrBadPosition) || !strings.Contains(err.Error(), `file 1 was "b/x.csv", now "a/x.csv"`) {
		t.Errorf("got %v", err)
	}
}

// oldPosition encodes a position as Weir wrote it before files were
// named by relative path: version 1 (file, offset, line, emitted, name)
// or version 2 (subtask and parallelism first, no later files).
func oldPosition(version byte, subtask, parallelism, file int, offset, line int64, name string) []byte {
	b := []byte{version}
	if version == 2 {
		b = binary.AppendUvarint(b, uint64(subtask))
		b = binary.AppendUvarint(b, uint64(parallelism))
	}
	b = binary.AppendUvarint(b, uint64(file))
	b = binary.AppendUvarint(b, uint64(offset))
	b = binary.AppendUvarint(b, uint64(line))
	b = binary.AppendUvarint(b, 0)
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	if version == 2 {
		b = binary.AppendUvarint(b, 0)
	}
	return b
}

// TestOldPositions restores positions of the earlier formats, which named
// files by base name: they work for a folder without subfolders, and a
// folder whose subfolders shift the files is a clear error.
func TestOldPositions(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.csv", "1\n2\n")
	writeFile(t, dir, "c.csv", "3\n4\n")
	cols := []types.Column{{Name: "x", Type: types.Int}}
	ctx := context.Background()
	s, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	for _, v := range []byte{1, 2} {
		r, _ := s.Open(0, 1)
		if err := r.Seek(oldPosition(v, 0, 1, 1, 2, 2, "c.csv")); err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if got, err := connectortest.Drain(ctx, r, 1, 10, -1); err != nil || !slices.Equal(got, []string{"+I[4]"}) {
			t.Errorf("version %d: got %v, %v", v, got, err)
		}
	}
	// With rescaling too: subtask 0 of 2 read a.csv to its end, subtask
	// 1 of 2 one row of c.csv.
	r, _ := s.Open(0, 1)
	if err := r.(*Reader).SeekAll([][]byte{oldPosition(2, 0, 2, 2, 0, 1, ""), oldPosition(2, 1, 2, 1, 2, 2, "c.csv")}); err != nil {
		t.Fatal(err)
	}
	if got, err := connectortest.Drain(ctx, r, 1, 10, -1); err != nil || !slices.Equal(got, []string{"+I[4]"}) {
		t.Errorf("SeekAll: got %v, %v", got, err)
	}
	writeFile(t, dir, "b/x.csv", "9\n")
	s2, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	r2, _ := s2.Open(0, 1)
	err := r2.Seek(oldPosition(2, 0, 1, 1, 2, 2, "c.csv"))
	if !errors.Is(err, ErrBadPosition) || !strings.Contains(err.Error(), `file 1 was "c.csv", now "b/x.csv"`) || !strings.Contains(err.Error(), "subfolders") {
		t.Errorf("got %v", err)
	}
}
