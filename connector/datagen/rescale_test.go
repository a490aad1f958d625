package datagen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

var rescaleCols = []types.Column{{Name: "id", Type: types.BigInt}, {Name: "v", Type: types.Int}, {Name: "ts", Type: types.Timestamp}}

var rescaleOpts = map[string]string{
	"rows-per-second":    "1000000000",
	"number-of-rows":     "500",
	"fields.id.kind":     "sequence",
	"fields.id.start":    "0",
	"fields.id.end":      "100000",
	"fields.ts.max-past": "60000",
}

// checkExactlyOnce fails unless got holds the rows of want exactly once each.
func checkExactlyOnce(t *testing.T, name string, got, want []string) {
	t.Helper()
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		dups := 0
		for i := 1; i < len(got); i++ {
			if got[i] == got[i-1] {
				dups++
			}
		}
		t.Errorf("%s: got %d rows (%d duplicates), want %d", name, len(got), dups, len(want))
	}
}

// rowFields splits a row as connectortest formats it, "+I[a, b, c]", into
// its first n fields (the last one holding the rest).
func rowFields(t *testing.T, row string, n int) []string {
	t.Helper()
	inner, ok := strings.CutPrefix(row, "+I[")
	if !ok || !strings.HasSuffix(inner, "]") {
		t.Fatalf("row %q is not an insert", row)
	}
	f := strings.SplitN(strings.TrimSuffix(inner, "]"), ", ", n)
	if len(f) != n {
		t.Fatalf("row %q has fewer than %d fields", row, n)
	}
	return f
}

// checkSequenceRows checks rows of rescaleCols against what the options
// define: the ids are exactly 0..499, each once, and every ts lies within
// max-past (60 s) before the source's base time.
func checkSequenceRows(t *testing.T, rows []string) {
	t.Helper()
	seen := map[int64]bool{}
	for _, row := range rows {
		f := rowFields(t, row, 3)
		id, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || id < 0 || id >= 500 || seen[id] {
			t.Fatalf("row %q: id not in 0..499 or seen twice (%v)", row, err)
		}
		seen[id] = true
		if _, err := strconv.ParseInt(f[1], 10, 32); err != nil {
			t.Fatalf("row %q: v is not an INT: %v", row, err)
		}
		ts, err := time.Parse("2006-01-02 15:04:05.000", f[2])
		if err != nil || ts.After(base) || ts.Before(base.Add(-time.Minute)) {
			t.Fatalf("row %q: ts not within 60 s before %v (%v)", row, base, err)
		}
	}
	if len(seen) != 500 {
		t.Fatalf("%d ids, want 0..499", len(seen))
	}
}

// TestRescale reads part of the table at one parallelism and the rest
// after restoring at others, cut at random points per subtask; the rows
// read are those of an uninterrupted read, which holds ids 0..499 once.
func TestRescale(t *testing.T) {
	ctx := context.Background()
	whole := readAll(t, mustSource(t, rescaleCols, rescaleOpts), len(rescaleCols), 1)
	checkSequenceRows(t, whole)
	tests := [][]int{{3, 1}, {3, 2}, {3, 5}, {3, 3}, {3, 5, 2}, {2, 7, 1, 4}, {1, 1}}
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 2))
	for _, stages := range tests {
		for round := range 20 {
			name := fmt.Sprintf("%v round %d", stages, round)
			cuts := map[[2]int]int{}
			cut := func(stage, subtask int) int {
				if stage == len(stages)-1 {
					return -1
				}
				c := rng.IntN(500 / stages[stage])
				cuts[[2]int{stage, subtask}] = c
				return c
			}
			src := mustSource(t, rescaleCols, rescaleOpts)
			got, err := connectortest.ReadRescaled(ctx, src, len(rescaleCols), 7, stages, cut)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkExactlyOnce(t, name+fmt.Sprint(" cuts ", cuts), got, whole)
			checkSequenceRows(t, got)
		}
	}
}

// TestRescaleUnbounded cuts an unbounded table twice: the rows read are
// distinct rows of the table (a random BIGINT identifies each), as many as
// the cuts say, and among its first rows.
func TestRescaleUnbounded(t *testing.T) {
	opts := map[string]string{"rows-per-second": "1000000000"}
	cols := []types.Column{{Name: "v", Type: types.BigInt}}
	s := mustSource(t, cols, opts)
	cuts := [][]int{{40, 3, 17}, {5, 0, 22, 9, 31}, {60, 60}}
	got, err := connectortest.ReadRescaled(context.Background(), s, 1, 4, []int{3, 5, 2}, func(stage, subtask int) int {
		return cuts[stage][subtask]
	})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := s.Open(0, 1)
	defer r.Close()
	prefix, err := connectortest.Drain(context.Background(), r, 1, 50, 1000)
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]bool{}
	for _, row := range prefix {
		table[row] = true
	}
	seen := map[string]bool{}
	for _, row := range got {
		if seen[row] || !table[row] {
			t.Fatalf("row %s read twice or not among the first 1000", row)
		}
		seen[row] = true
	}
	if want := 40 + 3 + 17 + 5 + 0 + 22 + 9 + 31 + 60 + 60; len(got) != want {
		t.Errorf("read %d rows, want %d", len(got), want)
	}
}

func TestSeekAllErrors(t *testing.T) {
	s := mustSource(t, rescaleCols, rescaleOpts)
	pos := func(subtask, parallelism int) []byte {
		r, _ := s.Open(subtask, parallelism)
		p, _ := r.Position()
		return p
	}
	other, _ := newSource(connectortest.Table("g", rescaleCols, rescaleOpts), base.AddDate(0, 0, 1))
	ro, _ := other.Open(1, 2)
	otherPos, _ := ro.Position()
	tests := []struct {
		positions [][]byte
		want      string
	}{
		{nil, "no positions"},
		{[][]byte{pos(1, 2), pos(0, 2)}, "position 0 of 2 was taken by subtask 1 of 2"},
		{[][]byte{pos(0, 3), pos(1, 3)}, "position 0 of 2 was taken by subtask 0 of 3"},
		{[][]byte{pos(0, 2), otherPos}, "another run"},
		{[][]byte{pos(0, 2), {7}}, "unknown version"},
		{[][]byte{pos(0, 2), pos(1, 2)[:3]}, "truncated"},
	}
	for _, tc := range tests {
		r, _ := s.Open(0, 3)
		err := r.(*Reader).SeekAll(tc.positions)
		if !errors.Is(err, ErrBadPosition) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v", tc.want, err)
		}
	}
}

// TestSeekVersion1 restores a position in the encoding of the first
// version (no layers).
func TestSeekVersion1(t *testing.T) {
	s := mustSource(t, rescaleCols, rescaleOpts)
	v1 := []byte{1, 4, 1, 3, 0} // cursor 4, subtask 1 of 3, base 0
	r, _ := s.Open(1, 3)
	if err := r.Seek(v1); err != nil {
		t.Fatal(err)
	}
	rows, err := connectortest.Drain(context.Background(), r, len(rescaleCols), 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "+I[13, ") { // row 1 + 4*3
		t.Errorf("got %v", rows)
	}
}
