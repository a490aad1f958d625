package exec

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// BenchmarkOverUpdatingTopOne is Nexmark q6's OVER: AVG(price) OVER
// (PARTITION BY seller ORDER BY time ROWS BETWEEN 10 PRECEDING AND CURRENT
// ROW) over the changelog of a Top-1 per auction: an auction's first bid
// comes as +I, each higher bid as -U of the auction's previous row and +U
// of the new one (a later time). 100,000 auctions of 10,000 sellers. The
// changes go on from the warm-up (made between timed batches, outside the
// timer): every -U retracts a live row, as in q6. rows=5 is the OVER's
// input as planned before its input was pruned (id, seller, price, time,
// rownum), rows=3 as pruned (seller, price, time). rows=3/calc adds q6's
// Calc after the OVER (seller, the average), chained as a task chains it
// (fuseCalcs). Reports input rows/s.
func BenchmarkOverUpdatingTopOne(b *testing.B) {
	for _, wide := range []bool{false, true} {
		name := "rows=3"
		if wide {
			name = "rows=5"
		}
		b.Run(name, func(b *testing.B) { benchOverUpdatingTopOne(b, wide, false) })
	}
	b.Run("rows=3/calc", func(b *testing.B) { benchOverUpdatingTopOne(b, false, true) })
}

func benchOverUpdatingTopOne(b *testing.B, wide, withCalc bool) {
	avg, err := aggfunc.Builtins().Lookup("AVG", false)
	if err != nil {
		b.Fatal(err)
	}
	bigint := types.Type{Kind: types.KindBigInt}
	seller, price, tcol := 0, 1, 2
	kinds := []types.Kind{types.KindBigInt, types.KindBigInt, types.KindBigInt}
	if wide {
		seller, price, tcol = 1, 2, 3
		kinds = append(kinds, types.KindBigInt, types.KindBigInt)
	}
	spec := OverSpec{Partition: []int{seller}, Frame: OverFrame{IsRows: true, Rows: 10},
		Calls: []aggfunc.Call{{Func: avg, Arg: price, ArgType: bigint, Type: bigint, Name: "AVG(price)"}},
		Kinds: kinds, Order: []SortKey{{Col: tcol}}}
	const auctions, sellers = 100_000, 10_000
	rng := rand.New(rand.NewPCG(6, 6))
	type top struct{ price, time int64 }
	cur := make([]top, auctions)
	vals := make([]types.Value, len(kinds))
	row := func(a int64, t top) []types.Value {
		if wide {
			vals[0], vals[1], vals[2], vals[3], vals[4] = types.BigIntValue(a), types.BigIntValue(a%sellers), types.BigIntValue(t.price), types.BigIntValue(t.time), types.BigIntValue(1)
		} else {
			vals[0], vals[1], vals[2] = types.BigIntValue(a%sellers), types.BigIntValue(t.price), types.BigIntValue(t.time)
		}
		return vals
	}
	now := int64(0)
	bt := types.NewBatch(len(kinds), 1024)
	next := func() *types.Batch { // the next 1023 or so changes
		bt.Reset()
		for bt.Len() < 1023 {
			now++
			a := rng.Int64N(auctions)
			n := top{price: cur[a].price + 1 + rng.Int64N(100), time: now}
			if cur[a].time == 0 {
				bt.Append(types.Insert, row(a, n))
			} else {
				bt.Append(types.UpdateBefore, row(a, cur[a]))
				bt.Append(types.UpdateAfter, row(a, n))
			}
			cur[a] = n
		}
		return bt
	}
	op, _ := openOverUpdMemory(b, spec)
	var out Emitter = &discardEmitter2{}
	if withCalc {
		calc := NewCalc(nil, []expr.Expr{expr.NewColumn(seller, types.BigInt, "seller"), expr.NewColumn(len(kinds), types.BigInt, "avg")})()
		if err := calc.Open(&OpContext{Name: "Calc"}); err != nil {
			b.Fatal(err)
		}
		fuseCalcs([]Operator{op, calc})
		out = &chainEmitter{op: calc, next: out}
	}
	for range 512 { // warm-up
		if err := op.Process(0, next(), out); err != nil {
			b.Fatal(err)
		}
	}
	rows := 0
	var cpu time.Duration // the process's CPU time in Process (GC included)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		bt := next()
		rows += bt.Len()
		c0 := processCPU(b)
		b.StartTimer()
		if err := op.Process(0, bt, out); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += processCPU(b) - c0
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(rows), "cpu-ns/row")
}

// processCPU is the process's user and system CPU time so far: on a
// shared host, CPU per row varies far less than wall time per row.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
