package filesystem

import (
	"context"
	"errors"
	"testing"

	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/types"
)

// TestDescribePosition reads a folder partly and checks what the positions
// say: the file by relative path, the byte offset and line of its next
// record, the files finished; a subtask at its end; the later files of a
// position restored at another parallelism; an invalid position is an
// error.
func TestDescribePosition(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.csv", "1\n2\n")
	writeFile(t, dir, "b.csv", "3\n4\n")
	writeFile(t, dir, "sub/c.csv", "5\n66\n7\n")
	cols := []types.Column{{Name: "x", Type: types.Int}}
	ctx := context.Background()
	s, err := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
	if err != nil {
		t.Fatal(err)
	}
	// Parallelism 2: subtask 0 reads a.csv and sub/c.csv, subtask 1 b.csv.
	read := func(subtask, rows int) []byte {
		r, err := s.Open(subtask, 2)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := connectortest.Drain(ctx, r, 1, 10, rows); err != nil {
			t.Fatal(err)
		}
		p, err := r.Position()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p0 := read(0, 4) // a.csv's 2 rows, then "5" and "66" of sub/c.csv
	p1 := read(1, -1)
	cases := []struct {
		pos  []byte
		want string
	}{
		{p0, `subtask 0 of 2: file "sub/c.csv": next record at byte offset 5 (line 3); 1 earlier file finished`},
		{p1, `subtask 1 of 2: finished: all its files read (1 file)`},
	}
	// Restored at parallelism 1 from one row read by each of 3 subtasks:
	// a.csv continues, b.csv and sub/c.csv are listed where they were left.
	pr := rescaledPosition(t, s, 3)
	cases = append(cases, struct {
		pos  []byte
		want string
	}{pr, `subtask 0 of 1: file "a.csv": next record at byte offset 2 (line 2); 0 earlier files finished
then file "b.csv": next record at byte offset 2 (line 2) (where an earlier run left it)
then file "sub/c.csv": next record at byte offset 2 (line 2) (where an earlier run left it)`})
	for i, c := range cases {
		got, err := DescribePosition(c.pos)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got != c.want {
			t.Errorf("case %d:\ngot  %s\nwant %s", i, got, c.want)
		}
	}
	if _, err := DescribePosition([]byte{9, 1}); !errors.Is(err, ErrBadPosition) {
		t.Errorf("invalid position: got %v, want ErrBadPosition", err)
	}
}
