package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// TestSplitPerFile checks the reader's splits (connector.SplitReader): the
// rows of one Next come from one file, LastSplit names it by relative path,
// and the call that reads a file's end names it as finished, also when a
// large batch could take rows of the next file too.
func TestSplitPerFile(t *testing.T) {
	dir := t.TempDir()
	files := map[string]int{"a.csv": 3, "b/c.csv": 2, "d.csv": 0, "e.csv": 4}
	for name, n := range files {
		var sb strings.Builder
		for i := range n {
			fmt.Fprintf(&sb, "%s,%d\n", name, i)
		}
		writeFile(t, dir, name, sb.String())
	}
	s, err := openSource(t, []types.Column{{Name: "f", Type: types.Varchar}, {Name: "i", Type: types.Int}},
		map[string]string{"format": "csv", "path": dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{100, 2} {
		r, err := s.Open(0, 1)
		if err != nil {
			t.Fatal(err)
		}
		sr := r.(connector.SplitReader)
		got := map[string]int{}
		var finished []string
		b := types.NewBatch(2, max)
		for {
			b.Reset()
			err := r.Next(context.Background(), b, max)
			split, fin := sr.LastSplit()
			for i := range b.Len() {
				if f := b.Row(i)[0].Str(); f != split {
					t.Fatalf("max %d: row of %s in a call whose split is %q", max, f, split)
				}
				got[split]++
			}
			finished = append(finished, fin...)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if want := []string{"a.csv", "b/c.csv", "d.csv", "e.csv"}; !slices.Equal(finished, want) {
			t.Fatalf("max %d: finished %v, want %v", max, finished, want)
		}
		for name, n := range files {
			if got[name] != n {
				t.Fatalf("max %d: %d rows of %s, want %d", max, got[name], name, n)
			}
		}
		r.Close()
	}
}

// TestSplitLister: a subtask's files (i mod parallelism) are its splits
// from the start; a file leaves the list once read to its end, also one an
// earlier run finished (restored by SeekAll).
func TestSplitLister(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a.csv", "b.csv", "c.csv", "d.csv", "e.csv"}
	for _, name := range names {
		writeFile(t, dir, name, name+",1\n"+name+",2\n")
	}
	s, err := openSource(t, []types.Column{{Name: "f", Type: types.Varchar}, {Name: "i", Type: types.Int}},
		map[string]string{"format": "csv", "path": dir})
	if err != nil {
		t.Fatal(err)
	}
	list := func(r connector.SourceReader) (int, []string) {
		l := r.(connector.SplitLister)
		return l.SplitCount(), l.AssignedSplits(nil)
	}
	// Parallelism 2: subtask 0 has a, c, e; subtask 1 b, d.
	for sub, want := range [][]string{{"a.csv", "c.csv", "e.csv"}, {"b.csv", "d.csv"}} {
		r, err := s.Open(sub, 2)
		if err != nil {
			t.Fatal(err)
		}
		if n, got := list(r); n != len(want) || !slices.Equal(got, want) {
			t.Errorf("subtask %d: %d splits %v, want %v", sub, n, got, want)
		}
		r.Close()
	}
	r, err := s.Open(3, 4) // d.csv only
	if err != nil {
		t.Fatal(err)
	}
	if n, got := list(r); n != 1 || !slices.Equal(got, []string{"d.csv"}) {
		t.Errorf("subtask 3 of 4: %d splits %v", n, got)
	}
	r.Close()
	r, err = s.Open(5, 6) // none
	if err != nil {
		t.Fatal(err)
	}
	if n, got := list(r); n != 0 || len(got) != 0 {
		t.Errorf("subtask 5 of 6: %d splits %v", n, got)
	}
	r.Close()

	// Reading: a file leaves the list at its end.
	r, err = s.Open(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := types.NewBatch(2, 2)
	for {
		b.Reset()
		if err := r.Next(context.Background(), b, 2); err != nil {
			t.Fatal(err)
		}
		if _, fin := r.(connector.SplitReader).LastSplit(); slices.Contains(fin, "b.csv") {
			break
		}
	}
	if _, got := list(r); !slices.Equal(got, []string{"c.csv", "d.csv", "e.csv"}) {
		t.Errorf("after b.csv: %v", got)
	}
	pos, err := r.Position()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	// Restored at parallelism 2: subtask 0's a and c, a already read.
	r, err = s.Open(0, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.(connector.RescalableReader).SeekAll([][]byte{pos}); err != nil {
		t.Fatal(err)
	}
	if _, got := list(r); !slices.Equal(got, []string{"c.csv", "e.csv"}) {
		t.Errorf("restored at parallelism 2: %v", got)
	}
}
