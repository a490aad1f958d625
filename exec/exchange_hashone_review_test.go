package exec

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// TestExchangeHashOneRowsInPlace drives the hash exchange on one key
// column (emitHashOne, whose pending batch's room check is inlined) with
// random batches: keys of INT, BIGINT, VARCHAR and NULL (the integer fast
// hash and the encoded one), every row kind, a small batch size so that
// pending batches fill and are sent in the middle of an input batch,
// flushes of part-filled batches, and every sent batch released (Reset
// and back on the free list) before the next input batch, so that
// pending batches are reused ones. Per destination, the rows received
// must be, in order, the input rows whose key's key group (computed here
// from state.KeyGroup of the encoded key, the generic path) that
// destination owns; no sent batch may exceed the batch size. At a
// maximum parallelism of a power of two and of another. Randomized:
// prints its seed.
func TestExchangeHashOneRowsInPlace(t *testing.T) {
	seed := testseed.Seed(t)
	for _, maxPar := range []int{128, 100} {
		for _, width := range []int{1, 3, 9} {
			t.Run(fmt.Sprintf("maxpar%d/width%d", maxPar, width), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, uint64(maxPar*100+width)))
				const nd, bs = 3, 7
				inbox := make(chan message, 1<<14)
				j := &Job{}
				key := width / 2
				owner := make([]int32, maxPar)
				for kg := range owner {
					owner[kg] = int32(types.SubtaskForKeyGroup(kg, nd, maxPar))
				}
				e := &outEdge{kind: Hash, keys: []int{key}, dests: make([]*outChannel, nd), owner: owner, maxPar: maxPar}
				links := make([]*link, nd)
				for d := range nd {
					links[d] = newLink(inbox, d, width, 1024)
					e.dests[d] = &outChannel{link: links[d], pending: links[d].getBatch(bs)}
				}
				x := &exchange{ctx: context.Background(), job: j, edges: []*outEdge{e}, batchSize: bs, width: width, rowsOut: &atomic.Int64{}}
				want := make([][]string, nd)
				got := make([][]string, nd)
				drain := func() {
					for {
						select {
						case m := <-inbox:
							if m.kind != msgData {
								t.Fatalf("seed %d: message kind %d", seed, m.kind)
							}
							if n := m.batch.Len(); n == 0 || n > bs || m.batch.Width != width || len(m.batch.Vals) != n*width {
								t.Fatalf("seed %d: sent batch of %d rows, %d values, width %d (batch size %d, width %d)", seed, n, len(m.batch.Vals), m.batch.Width, bs, width)
							}
							for i := range m.batch.Len() {
								got[m.ch] = append(got[m.ch], types.FormatRow(m.batch.Kinds[i], m.batch.Row(i)))
							}
							links[m.ch].release(j, m)
						default:
							return
						}
					}
				}
				kinds := []types.RowKind{types.Insert, types.Delete, types.UpdateBefore, types.UpdateAfter}
				value := func() types.Value {
					switch r.IntN(6) {
					case 0:
						return types.Value{}
					case 1:
						return types.StringValue(fmt.Sprintf("s%d", r.IntN(50)))
					case 2:
						return types.IntValue(r.Int64N(1000) - 500)
					case 3:
						return types.BigIntValue([]int64{math.MinInt64, math.MaxInt64, 0, -1}[r.IntN(4)])
					default:
						return types.BigIntValue(r.Int64N(1e6))
					}
				}
				for step := range 300 {
					size := 1 + r.IntN(40)
					if step%50 == 49 {
						size = 200 + r.IntN(100)
					}
					b := types.NewBatch(width, 1)
					row := make([]types.Value, width)
					for range size {
						for c := range row {
							row[c] = value()
						}
						k := kinds[r.IntN(len(kinds))]
						b.Append(k, row)
						kg := state.KeyGroup(state.AppendValue(nil, row[key]), maxPar)
						d := types.SubtaskForKeyGroup(kg, nd, maxPar)
						want[d] = append(want[d], types.FormatRow(k, row))
					}
					if err := x.Emit(b); err != nil {
						t.Fatal(err)
					}
					// The input batch is the sender's to reuse once Emit
					// returns: scribble over it.
					for i := range b.Vals {
						b.Vals[i] = types.StringValue("stale")
					}
					if r.IntN(4) == 0 {
						if err := x.flush(); err != nil {
							t.Fatal(err)
						}
					}
					drain()
				}
				if err := x.flush(); err != nil {
					t.Fatal(err)
				}
				drain()
				for d := range nd {
					if len(got[d]) != len(want[d]) {
						t.Fatalf("seed %d: destination %d got %d rows, want %d", seed, d, len(got[d]), len(want[d]))
					}
					for i := range want[d] {
						if got[d][i] != want[d][i] {
							t.Fatalf("seed %d: destination %d row %d is %s, want %s", seed, d, i, got[d][i], want[d][i])
						}
					}
				}
				if n := x.rowsOut.Load(); n != int64(len(want[0])+len(want[1])+len(want[2])) {
					t.Fatalf("seed %d: rowsOut %d", seed, n)
				}
			})
		}
	}
}
