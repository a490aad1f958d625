package exec

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/weir-sql/weir/internal/cputime"
	"github.com/weir-sql/weir/types"
)

// Columns of the q16-like input of BenchmarkGroupAggDistinctFilter: the
// projection the planner makes of Nexmark's bid for q16 (the FILTER
// arguments as CASE columns, NULL when the filter does not hold).
const (
	q16Channel = iota
	q16Day
	q16Minute
	q16Low // COUNT(*) FILTER (price < 10000): 1 or NULL
	q16Mid
	q16High
	q16Bidder
	q16BidderLow
	q16BidderMid
	q16BidderHigh
	q16Auction
	q16AuctionLow
	q16AuctionMid
	q16AuctionHigh
	q16Width
)

// q16Calls are q16's aggregates over the q16 columns.
func q16Calls() []AggCall {
	calls := []AggCall{
		{Func: AggMax, Arg: q16Minute, ArgType: types.Varchar, Type: types.Varchar},
		{Func: AggCountStar, Arg: -1, Type: types.BigInt},
	}
	for c := q16Low; c <= q16High; c++ {
		calls = append(calls, AggCall{Func: AggCount, Arg: c, ArgType: types.BigInt, Type: types.BigInt})
	}
	for c := q16Bidder; c <= q16BidderHigh; c++ {
		calls = append(calls, AggCall{Func: AggCount, Arg: c, ArgType: types.BigInt, Type: types.BigInt, Distinct: true, DistinctArg: "bidder"})
	}
	for c := q16Auction; c <= q16AuctionHigh; c++ {
		calls = append(calls, AggCall{Func: AggCount, Arg: c, ArgType: types.BigInt, Type: types.BigInt, Distinct: true, DistinctArg: "auction"})
	}
	return calls
}

// q16Batches makes n batches of 1,024 bids shaped like Nexmark's: half of
// them in one of 4 hot channels, the rest in one of 10,000; three quarters
// of bidders and auctions hot (recent), the rest any seen so far.
func q16Batches(n int) []*types.Batch {
	r := rand.New(rand.NewPCG(3, 4))
	hot := []string{"Google", "Facebook", "Baidu", "Apple"}
	var cold []string
	for i := range 10000 {
		cold = append(cold, "channel-"+strconv.Itoa(i))
	}
	one := types.BigIntValue(1)
	out := make([]*types.Batch, n)
	row := make([]types.Value, q16Width)
	ev := 0
	for i := range out {
		bt := types.NewBatch(q16Width, 1024)
		for range 1024 {
			ev++
			clear(row)
			if r.IntN(2) == 0 {
				row[q16Channel] = types.StringValue(hot[r.IntN(len(hot))])
			} else {
				row[q16Channel] = types.StringValue(cold[r.IntN(len(cold))])
			}
			row[q16Day] = types.StringValue("2026-01-01")
			row[q16Minute] = types.StringValue("10:" + strconv.Itoa(10+ev/200_000%50))
			people, auctions := 1000+ev/50, 1000+ev/15
			bidder, auction := int64(r.IntN(people)), int64(r.IntN(auctions))
			if r.IntN(4) > 0 {
				bidder, auction = int64(people-1-r.IntN(100)), int64(auctions-1-r.IntN(100))
			}
			row[q16Bidder], row[q16Auction] = types.BigIntValue(bidder), types.BigIntValue(auction)
			band := 0
			switch price := r.IntN(2_000_000); {
			case price >= 1_000_000:
				band = 2
			case price >= 10_000:
				band = 1
			}
			row[q16Low+band] = one
			row[q16BidderLow+band] = row[q16Bidder]
			row[q16AuctionLow+band] = row[q16Auction]
			bt.Append(types.Insert, row)
		}
		out[i] = bt
	}
	return out
}

// BenchmarkGroupAggDistinctFilter is q16's GroupAgg alone (one subtask,
// 1M bids into a new operator), without checkpoints: per-row group lookup,
// DISTINCT entries (new ones and their index's growth) and the changelog.
// "flush=batch" emits after every batch of 1,024 rows, as the task's flushes
// (idle input, every 5 ms) do in q16 at 10M events (about 1,100 rows an
// emit); "flush=none" leaves it to the mini-batch's own bounds (emitDue).
func BenchmarkGroupAggDistinctFilter(b *testing.B) {
	batches := q16Batches(1024)
	for _, flush := range []bool{true, false} {
		name := "flush=none"
		if flush {
			name = "flush=batch"
		}
		b.Run(name, func(b *testing.B) {
			cpu0 := cputime.Process()
			emitted := 0
			for range b.N {
				op := NewGroupAggOverInserts([]int{q16Channel, q16Day}, q16Calls())().(*groupAggOp)
				if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "GroupAggregate", ID: "bench", StateBudget: 1 << 32}); err != nil {
					b.Fatal(err)
				}
				op.miniBatch = true
				out := &discardEmitter2{}
				op.lastOut = out
				for _, bt := range batches {
					if err := op.Process(0, bt, out); err != nil {
						b.Fatal(err)
					}
					if flush {
						if err := op.emitPending(); err != nil {
							b.Fatal(err)
						}
					}
				}
				if err := op.emitPending(); err != nil {
					b.Fatal(err)
				}
				emitted += out.rows
			}
			rows := float64(b.N * len(batches) * 1024)
			b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/rows, "cpu-ns/row")
			b.ReportMetric(float64(emitted)/rows, "out/row")
		})
	}
}
