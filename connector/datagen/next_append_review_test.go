package datagen

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestNextAppendsInPlace checks Next's rows written in room made once a
// call: reads of random sizes (1 row to past the batch's room) into a
// batch that sometimes still holds the rows of earlier calls (they must
// stay as they were) and sometimes was Reset (room with old values in
// it), the last call cut by the number of rows, at parallelism 1 and 3.
// The rows read must be, per subtask and in order, the table's rows of
// that subtask (a sequence id: subtask, subtask+p, ...; the ids 0..499
// once in all), each the same as when read alone. Randomized: prints its
// seed.
func TestNextAppendsInPlace(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 31))
	// The rows one by one, for comparison: a batch of one row a call.
	one := map[int64]string{}
	{
		s := mustSource(t, rescaleCols, rescaleOpts)
		rd, err := s.Open(0, 1)
		if err != nil {
			t.Fatal(err)
		}
		for {
			b := types.NewBatch(len(rescaleCols), 1)
			err := rd.Next(context.Background(), b, 1)
			for i := range b.Len() {
				one[b.Row(i)[0].Int()] = types.FormatRow(b.Kinds[i], b.Row(i))
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(one) != 500 {
			t.Fatalf("%d rows read one at a time, want 500", len(one))
		}
	}
	for _, par := range []int{1, 3} {
		s := mustSource(t, rescaleCols, rescaleOpts)
		seen := 0
		for sub := range par {
			rd, err := s.Open(sub, par)
			if err != nil {
				t.Fatal(err)
			}
			b := types.NewBatch(len(rescaleCols), 1+r.IntN(8))
			var got, kept []string
			for done := false; !done; {
				if r.IntN(3) == 0 {
					got = append(got, kept...)
					kept = kept[:0]
					b.Reset()
				}
				before := b.Len()
				err := rd.Next(context.Background(), b, 1+r.IntN(60))
				if errors.Is(err, io.EOF) {
					done = true
				} else if err != nil {
					t.Fatal(err)
				}
				if b.Len() < before || len(b.Vals) != b.Len()*b.Width {
					t.Fatalf("seed %d: batch of %d rows, %d values after Next (had %d rows)", seed, b.Len(), len(b.Vals), before)
				}
				// The rows of earlier calls are as they were.
				for i := range before {
					if s := types.FormatRow(b.Kinds[i], b.Row(i)); s != kept[i] {
						t.Fatalf("seed %d: row %d changed to %s from %s", seed, i, s, kept[i])
					}
				}
				for i := before; i < b.Len(); i++ {
					kept = append(kept, types.FormatRow(b.Kinds[i], b.Row(i)))
				}
			}
			got = append(got, kept...)
			var want []string
			for id := int64(sub); id < 500; id += int64(par) {
				want = append(want, one[id])
			}
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, subtask %d of %d: %d rows, want %d (first %v, want %v)", seed, sub, par, len(got), len(want), got[:min(3, len(got))], want[:3])
			}
			seen += len(got)
		}
		if seen != 500 {
			t.Fatalf("parallelism %d: %d rows", par, seen)
		}
	}
}
