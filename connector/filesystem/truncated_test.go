package filesystem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/types"
)

// TestRestoreTruncated truncates a file below the offset a position read
// it to: Seek and SeekAll fail naming the file, the offset and the size
// found; a file truncated only down to the offset restores.
func TestRestoreTruncated(t *testing.T) {
	cols := []types.Column{{Name: "x", Type: types.Int}}
	ctx := context.Background()
	for _, mode := range []string{"seek", "seekall"} {
		dir := t.TempDir()
		a := writeFile(t, dir, "a.csv", "1\n2\n")
		b := writeFile(t, dir, "b.csv", "10\n20\n30\n")
		s, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
		// Subtask 0 of 2 reads all of a.csv, subtask 1 two rows of b.csv,
		// up to byte offset 6.
		var positions [][]byte
		for k, limit := range []int{-1, 2} {
			r, _ := s.Open(k, 2)
			if _, err := connectortest.Drain(ctx, r, 1, 10, limit); err != nil {
				t.Fatal(err)
			}
			p, _ := r.Position()
			positions = append(positions, p)
			r.Close()
		}
		restore := func() error {
			if mode == "seek" {
				r, _ := s.Open(1, 2)
				defer r.Close()
				return r.Seek(positions[1])
			}
			r, _ := s.Open(0, 1)
			defer r.Close()
			return r.(*Reader).SeekAll(positions)
		}
		if err := os.Truncate(b, 6); err != nil {
			t.Fatal(err)
		}
		if err := restore(); err != nil {
			t.Errorf("%s: truncated to the offset: %v", mode, err)
		}
		if err := os.Truncate(b, 4); err != nil {
			t.Fatal(err)
		}
		err := restore()
		want := fmt.Sprintf("%s was read up to byte offset 6, but its size is now 4 bytes", b)
		if !errors.Is(err, ErrFileChanged) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", mode, err, want)
		}
		// Truncating a file that was read to its end is not an error.
		if err := os.Truncate(b, 9); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(a, 0); err != nil {
			t.Fatal(err)
		}
		if err := restore(); err != nil {
			t.Errorf("%s: %v", mode, err)
		}
		// Gone after the listing, before the restore.
		if err := os.Remove(b); err != nil {
			t.Fatal(err)
		}
		if err := restore(); !errors.Is(err, ErrFileChanged) || !strings.Contains(err.Error(), b+", read up to byte offset 6, is gone") {
			t.Errorf("%s: got %v", mode, err)
		}
	}
}

// TestRestoreFileGone restores a position inside the last file of a
// folder after that file was deleted: an error, not a reader at its end.
func TestRestoreFileGone(t *testing.T) {
	cols := []types.Column{{Name: "x", Type: types.Int}}
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, dir, "a.csv", "1\n")
	writeFile(t, dir, "sub/b.csv", "2\n3\n")
	s, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	r, _ := s.Open(0, 1)
	if _, err := connectortest.Drain(ctx, r, 1, 10, 2); err != nil {
		t.Fatal(err)
	}
	pos, _ := r.Position()
	r.Close()
	r0, _ := s.Open(0, 1)
	if _, err := connectortest.Drain(ctx, r0, 1, 10, -1); err != nil {
		t.Fatal(err)
	}
	end, _ := r0.Position()
	r0.Close()
	if err := os.Remove(filepath.Join(dir, "sub", "b.csv")); err != nil {
		t.Fatal(err)
	}
	s2, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	r2, _ := s2.Open(0, 1)
	if err := r2.Seek(pos); !errors.Is(err, ErrBadPosition) || !errors.Is(err, connector.ErrPermanent) || !strings.Contains(err.Error(), `file 1 ("sub/b.csv") is gone`) {
		t.Errorf("got %v", err)
	}
	// b.csv back, a.csv gone: the index of b.csv changed.
	writeFile(t, dir, "sub/b.csv", "2\n3\n")
	if err := os.Remove(filepath.Join(dir, "a.csv")); err != nil {
		t.Fatal(err)
	}
	s3, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	r4, _ := s3.Open(0, 1)
	if err := r4.Seek(pos); !errors.Is(err, ErrBadPosition) || !errors.Is(err, connector.ErrPermanent) || !strings.Contains(err.Error(), `file 1 ("sub/b.csv") is gone; "sub/b.csv" is file 0: files before it were added or removed`) {
		t.Errorf("got %v", err)
	}
	// A reader that had finished restores at its end.
	r5, _ := s3.Open(0, 1)
	if err := r5.Seek(end); err != nil {
		t.Fatal(err)
	}
	if got, err := connectortest.Drain(ctx, r5, 1, 10, -1); err != nil || len(got) != 0 {
		t.Errorf("after the end: got %v, %v", got, err)
	}
}
