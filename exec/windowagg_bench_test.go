package exec

import (
	"testing"

	"github.com/weir-sql/weir/types"
)

// nullEmitter drops what it is given.
type nullEmitter struct{}

func (nullEmitter) Emit(*types.Batch) error { return nil }

// BenchmarkTwoPhaseTumble runs W6's shape through the operators alone: two
// local TUMBLE aggregates (COUNT(*), SUM) over 10,000 keys, 10 rows per key
// and slice of event time, into one global aggregate, with a watermark
// every 24 slices; ns/op is per input row.
func BenchmarkTwoPhaseTumble(b *testing.B) {
	benchmarkTwoPhase(b, WindowSpec{Kind: WindowTumble, Size: 1000, TimeCol: 2})
}

// BenchmarkTwoPhaseHop is BenchmarkTwoPhaseTumble with W7's windows: HOP
// of 10 s sliding by 1 s.
func BenchmarkTwoPhaseHop(b *testing.B) {
	benchmarkTwoPhase(b, WindowSpec{Kind: WindowHop, Size: 10000, Slide: 1000, TimeCol: 2})
}

func benchmarkTwoPhase(b *testing.B, spec WindowSpec) {
	calls := windowTestCalls(b)[:2]
	g := NewGlobalWindowAgg(1, spec, calls)().(*globalWindowOp)
	if err := g.Open(&OpContext{MaxParallelism: 128, Name: "global"}); err != nil {
		b.Fatal(err)
	}
	feed := &globalFeed{g: g}
	var locals [2]*localWindowAggOp
	for i := range locals {
		locals[i] = NewLocalWindowAgg([]int{0}, spec, calls)().(*localWindowAggOp)
		if err := locals[i].Open(&OpContext{MaxParallelism: 128, Name: "local"}); err != nil {
			b.Fatal(err)
		}
	}
	const keys, rowsPerMs, wmEvery = 10000, 100, 24000
	batch := types.NewBatch(3, 1024)
	x := uint64(1)
	n := int64(0)
	b.ResetTimer()
	done := 0
	for done < b.N {
		for _, l := range locals {
			batch.Reset()
			for range 1024 {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				batch.Append(types.Insert, []types.Value{types.BigIntValue(int64(x % keys)), types.BigIntValue(int64(x>>32) % 100), types.TimestampValue(n / rowsPerMs)})
				n++
			}
			done += 1024
			if err := l.Process(0, batch, feed); err != nil {
				b.Fatal(err)
			}
			if n/rowsPerMs/wmEvery != (n-1024)/rowsPerMs/wmEvery {
				wm := n/rowsPerMs - 1000
				for _, l := range locals {
					if err := l.ProcessWatermark(wm, feed); err != nil {
						b.Fatal(err)
					}
				}
				if err := g.ProcessWatermark(wm, nullEmitter{}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.ReportMetric(float64(feed.rows)/float64(done), "partials/row")
}

// BenchmarkSessionW8 runs W8's shape through the session aggregate alone:
// COUNT(*) and SUM(v) by 100,000 random keys, event time n/100 ms for row
// n (100,000 rows per second of event time: a key's rows come about a
// second apart, so with a gap of 1 s most rows grow a session and about
// one in three opens one), in batches of 1,024, with a watermark 1 s behind
// after every 300 batches (3 s of event time: in W8 the sources send theirs
// every 200 ms of wall time, 3-6 s of event time at its rates, so sessions
// wait for it); ns/op is per input row, generating it included.
func BenchmarkSessionW8(b *testing.B) {
	calls := windowTestCalls(b)[:2]
	spec := WindowSpec{Kind: WindowSession, Gap: 1000, TimeCol: 2}
	op := NewSessionWindowAgg([]int{0}, spec, calls)().(*sessionWindowOp)
	if err := op.Open(&OpContext{MaxParallelism: 128, Name: "session"}); err != nil {
		b.Fatal(err)
	}
	const batch = 1024
	in := types.NewBatch(3, batch)
	var n, rnd uint64
	fill := func() {
		in.Reset()
		for range batch {
			rnd = rnd*6364136223846793005 + 1442695040888963407 // an LCG: keys and values
			k, v := int64((rnd>>33)%100000), int64((rnd>>20)%100)
			in.Append(types.Insert, []types.Value{types.BigIntValue(k), types.BigIntValue(v), types.TimestampValue(int64(n / 100))})
			n++
		}
	}
	steps := 0
	step := func() {
		fill()
		if err := op.Process(0, in, nullEmitter{}); err != nil {
			b.Fatal(err)
		}
		if steps++; steps%300 != 0 {
			return
		}
		if err := op.ProcessWatermark(int64(n/100)-1000, nullEmitter{}); err != nil {
			b.Fatal(err)
		}
	}
	for range 3000 { // ~30 s of event time: the keys' sessions in steady state
		step()
	}
	b.ResetTimer()
	for range (b.N + batch - 1) / batch {
		step()
	}
	b.StopTimer()
	if keys, _ := op.stateSize(); keys < 50000 {
		b.Fatalf("%d keys with open sessions, want most of 100,000", keys)
	}
}
