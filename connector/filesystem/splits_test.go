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
