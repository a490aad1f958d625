package exec

import (
	"fmt"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestIntervalJoinPickedBatchEnds checks emitPicked's inline room check
// where the output batch runs out of room (its first 256 rows' room, and
// each growth after) and where it is emitted full (1024 rows, flushFull):
// one arriving row joins n rows of its key at once, and at the end of
// input n unmatched rows of another key go out NULL-padded (a full outer
// join), for n around those ends; the output is picked (columns
// reordered, repeated, and one only). Every emitted batch must be of the
// picked width, hold at most 1024 rows and have its values in step with
// its rows, and the rows must be the picked columns of the answer built
// here.
func TestIntervalJoinPickedBatchEnds(t *testing.T) {
	for _, pick := range [][]int{{3, 0, 1, 3}, {1}} {
		for _, n := range []int{255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 3000} {
			t.Run(fmt.Sprintf("pick%v/n%d", pick, n), func(t *testing.T) {
				op, _ := openKeyTimeJoin(t, FullOuterJoin, 1_000_000)
				if !op.pickOutput(pick) {
					t.Fatalf("pick %v refused", pick)
				}
				got := map[string]int{}
				emits := 0
				out := ijEmitFunc(func(b *types.Batch) error {
					emits++
					if b.Width != len(pick) || len(b.Vals) != b.Len()*b.Width || b.Len() > 1024 || b.Len() == 0 {
						return fmt.Errorf("batch of width %d, %d rows, %d values", b.Width, b.Len(), len(b.Vals))
					}
					for i := range b.Len() {
						if b.Kinds[i] != types.Insert {
							return fmt.Errorf("row kind %s", b.Kinds[i])
						}
						got[fmt.Sprint(b.Row(i))]++
					}
					return nil
				})
				want := map[string]int{}
				picked := func(row []types.Value) string {
					p := make([]types.Value, len(pick))
					for k, c := range pick {
						p[k] = row[c]
					}
					return fmt.Sprint(p)
				}
				feed := func(in int, rows [][]types.Value) {
					b := types.NewBatch(2, len(rows))
					for _, r := range rows {
						b.Append(types.Insert, r)
					}
					if err := op.Process(in, b, out); err != nil {
						t.Fatal(err)
					}
				}
				var left, right [][]types.Value
				for i := range n {
					left = append(left, []types.Value{types.BigIntValue(1), types.TimestampValue(int64(i))})
					right = append(right, []types.Value{types.BigIntValue(2), types.TimestampValue(int64(i))})
				}
				feed(0, left)
				feed(1, right) // key 2: no left rows, padded at the end
				r := []types.Value{types.BigIntValue(1), types.TimestampValue(int64(n))}
				feed(1, [][]types.Value{r}) // joins every left row at once
				for _, l := range left {
					want[picked(append(append([]types.Value(nil), l...), r...))]++
				}
				for _, rr := range right {
					want[picked(append([]types.Value{{}, {}}, rr...))]++
				}
				if err := op.ProcessWatermark(MaxWatermark, out); err != nil {
					t.Fatal(err)
				}
				checkIJRows(t, fmt.Sprintf("pick %v, %d rows", pick, n), got, want)
				if min := (2*n + 1023) / 1024; emits < min {
					t.Fatalf("%d batches emitted for %d rows", emits, 2*n)
				}
			})
		}
	}
}
