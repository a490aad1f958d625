package filesystem

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// rescaleFolder writes files whose records are numbered through all files,
// with an empty file, a comment-free CSV or a Debezium changelog in which
// an update record yields two rows.
func rescaleFolder(t *testing.T, format string) string {
	dir := t.TempDir()
	sizes := []int{5, 0, 9, 1, 12, 3, 7}
	id := 0
	for f, n := range sizes {
		var b strings.Builder
		for range n {
			id++
			if format == "csv" {
				fmt.Fprintf(&b, "%d,r%d\n", id, id)
			} else {
				fmt.Fprintf(&b, `{"op":"u","before":{"i":%d,"s":"old"},"after":{"i":%d,"s":"r%d"}}`+"\n", id, id, id)
			}
		}
		// Some files in subfolders, which are read in order of their
		// relative paths: "f1", "s/f2", "s/t/f3", "u/f4", "v5", "v6", "w0".
		name := [...]string{"w0", "f1", "s/f2", "s/t/f3", "u/f4", "v5", "v6"}[f]
		writeFile(t, dir, name+"."+format, b.String())
	}
	return dir
}

// TestRescale reads a folder in stages at several parallelisms, cut at
// random rows per subtask, and checks that every row is read exactly once.
func TestRescale(t *testing.T) {
	cols := []types.Column{{Name: "i", Type: types.Int}, {Name: "s", Type: types.Varchar}}
	ctx := context.Background()
	for _, format := range []string{"csv", "debezium-json"} {
		ext := "csv"
		if format != "csv" {
			ext = "debezium-json"
		}
		s, err := openSource(t, cols, map[string]string{"format": format, "path": rescaleFolder(t, ext)})
		if err != nil {
			t.Fatal(err)
		}
		whole, err := readRows(t, s, 100)
		if err != nil {
			t.Fatal(err)
		}
		// The folder's content, known in Go: ids 1..37 (the sizes of
		// rescaleFolder), each "r<id>", in the order of the files' paths
		// (w0, holding ids 1..5, comes last); Debezium's update record is
		// the pair -U (old) and +U (r<id>).
		var want []string
		for i := range 37 {
			id := (i+5)%37 + 1
			if format == "csv" {
				want = append(want, fmt.Sprintf("+I[%d, r%d]", id, id))
			} else {
				want = append(want, fmt.Sprintf("-U[%d, old]", id), fmt.Sprintf("+U[%d, r%d]", id, id))
			}
		}
		if !slices.Equal(whole, want) {
			t.Fatalf("%s: an uninterrupted read gave %q, want %q", format, whole, want)
		}
		rng := rand.New(rand.NewPCG(testseed.Seed(t), 4))
		for _, stages := range [][]int{{2, 3, 1}, {2, 1}, {3, 2}, {1, 4, 2, 3}, {2, 2}} {
			for round := range 30 {
				var cuts []int
				got, err := connectortest.ReadRescaled(ctx, s, len(cols), 1+round%3, stages, func(stage, _ int) int {
					if stage == len(stages)-1 {
						return -1
					}
					c := rng.IntN(len(whole) + 1)
					if rng.IntN(3) == 0 {
						c = rng.IntN(4)
					}
					cuts = append(cuts, c)
					return c
				})
				if err != nil {
					t.Fatalf("%s %v: %v", format, stages, err)
				}
				checkExactlyOnce(t, fmt.Sprintf("%s %v cuts %v", format, stages, cuts), got, want)
			}
		}
	}
}

func checkExactlyOnce(t *testing.T, name string, got, want []string) {
	t.Helper()
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %d rows, want %d:\ngot  %q\nwant %q", name, len(got), len(want), got, want)
	}
}

// TestSeekAllErrors restores positions that do not fit the folder or the layout.
func TestSeekAllErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.csv", "1\n")
	writeFile(t, dir, "b.csv", "2\n")
	writeFile(t, dir, "c.csv", "3\n")
	cols := []types.Column{{Name: "x", Type: types.Int}}
	s, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	pos := func(subtask, parallelism int) []byte {
		r, _ := s.Open(subtask, parallelism)
		defer r.Close()
		p, _ := r.Position()
		return p
	}
	tests := []struct {
		positions [][]byte
		want      string
	}{
		{nil, "no positions"},
		{[][]byte{pos(1, 2), pos(0, 2)}, "taken by subtask 1 of 2, not 0 of 2"},
		{[][]byte{pos(0, 3), pos(1, 3)}, "taken by subtask 0 of 3, not 0 of 2"},
		{[][]byte{pos(0, 2), {9}}, "unknown version"},
		{[][]byte{pos(0, 2), pos(1, 2)[:4]}, "truncated"},
		{[][]byte{pos(0, 2), append(pos(1, 2), 0)}, "trailing bytes"},
	}
	for _, tc := range tests {
		r, _ := s.Open(0, 3)
		err := r.(*Reader).SeekAll(tc.positions)
		if !errors.Is(err, ErrBadPosition) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v", tc.want, err)
		}
	}
}

// rescaledPosition reads one row with each of par subtasks of s, restores
// their positions into one subtask (SeekAll) and returns its position,
// which lists the files the earlier subtasks had not finished.
func rescaledPosition(t *testing.T, s *Source, par int) []byte {
	t.Helper()
	var old [][]byte
	for k := range par {
		r, _ := s.Open(k, par)
		if _, err := connectortest.Drain(context.Background(), r, 1, 10, 1); err != nil {
			t.Fatal(err)
		}
		p, _ := r.Position()
		old = append(old, p)
		r.Close()
	}
	r, _ := s.Open(0, 1)
	defer r.Close()
	if err := r.(*Reader).SeekAll(old); err != nil {
		t.Fatal(err)
	}
	pos, _ := r.Position()
	return pos
}

// TestSeekLaterFiles restores with Seek a position that lists later files
// (taken after a SeekAll), and refuses it once a listed file is gone.
func TestSeekLaterFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.csv", "1\n2\n")
	writeFile(t, dir, "b.csv", "3\n4\n")
	writeFile(t, dir, "c.csv", "5\n6\n")
	cols := []types.Column{{Name: "x", Type: types.Int}}
	ctx := context.Background()
	s, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	// At parallelism 3 each subtask reads one row of its file.
	pos := rescaledPosition(t, s, 3) // file 0 at its second row; files 1 and 2 listed
	r2, _ := s.Open(0, 1)
	if err := r2.Seek(pos); err != nil {
		t.Fatal(err)
	}
	got, err := connectortest.Drain(ctx, r2, 1, 10, -1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"+I[2]", "+I[4]", "+I[6]"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if err := os.Remove(filepath.Join(dir, "c.csv")); err != nil {
		t.Fatal(err)
	}
	s2, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	r3, _ := s2.Open(0, 1)
	if err := r3.Seek(pos); !errors.Is(err, ErrBadPosition) || !strings.Contains(err.Error(), `file 2 ("c.csv") is gone`) {
		t.Errorf("got %v", err)
	}
}
