package exec

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/types"
)

// TestOverUpdatingRowsNullsSmallPartitions (review of the one-pass ROWS n
// results): exact aggregates SUM(v), MIN(v), MAX(v), COUNT(v), COUNT(*),
// AVG(v) of a nullable BIGINT v (NULL a third of the time) over ROWS n
// for n of 0, 1, 3 and 9, in many small partitions (most smaller than the
// larger frames), over a random changelog of inserts, updates, deletes
// inside and outside every frame, duplicate rows (the same row twice, one
// of them deleted later) and deletions of rows never there; checkpointed
// mid-way at parallelism 2 and restored at 3. The changelog applied (every
// retraction must retract a row emitted before) is the batch OVER over
// the rows live at the end, computed here.
func TestOverUpdatingRowsNullsSmallPartitions(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	type in struct {
		k, ts, s int64
		v        *int64
	}
	values := func(r in) []types.Value {
		v := types.NullValue()
		if r.v != nil {
			v = types.BigIntValue(*r.v)
		}
		return []types.Value{types.BigIntValue(r.k), types.TimestampValue(r.ts), types.BigIntValue(r.s), v}
	}
	rng := rand.New(rand.NewPCG(seed, 61))
	ts := int64(1000)
	next := func(k int64) in {
		ts++
		r := in{k: k, ts: ts, s: rng.Int64N(8)}
		if rng.IntN(3) != 0 {
			v := rng.Int64N(41) - 20
			r.v = &v
		}
		return r
	}
	kinds, rows, live := changelogOf[in]{keys: 40, mix: changelogMix{insert: 45, same: 52, update: 80, del: 96},
		next: next, key: func(r in) int64 { return r.k }, values: values}.make(rng, 800)
	b := aggfunc.Builtins()
	bigint := types.Type{Kind: types.KindBigInt}
	count := types.Type{Kind: types.KindBigInt, NotNull: true}
	var calls []aggfunc.Call
	for _, c := range []struct {
		name string
		arg  int
		star bool
	}{{"SUM", 3, false}, {"MIN", 3, false}, {"MAX", 3, false}, {"COUNT", 3, false}, {"COUNT", -1, true}, {"AVG", 3, false}} {
		f, err := b.Lookup(c.name, c.star)
		if err != nil {
			t.Fatal(err)
		}
		typ := bigint
		if c.name == "COUNT" {
			typ = count
		}
		calls = append(calls, aggfunc.Call{Func: f, Arg: c.arg, ArgType: bigint, Type: typ, Name: c.name})
	}
	// results is the calls over the frame fr.
	results := func(fr []in) []types.Value {
		var sum, n int64
		var lo, hi *int64
		for _, r := range fr {
			if r.v == nil {
				continue
			}
			sum += *r.v
			n++
			if lo == nil || *r.v < *lo {
				lo = r.v
			}
			if hi == nil || *r.v > *hi {
				hi = r.v
			}
		}
		if n == 0 {
			return []types.Value{types.NullValue(), types.NullValue(), types.NullValue(), types.BigIntValue(0),
				types.BigIntValue(int64(len(fr))), types.NullValue()}
		}
		return []types.Value{types.BigIntValue(sum), types.BigIntValue(*lo), types.BigIntValue(*hi), types.BigIntValue(n),
			types.BigIntValue(int64(len(fr))), types.BigIntValue(sum / n)}
	}
	for _, n := range []int64{0, 1, 3, 9} {
		t.Run(fmt.Sprintf("rows%d", n), func(t *testing.T) {
			spec := OverSpec{Partition: []int{0}, Frame: OverFrame{IsRows: true, Rows: n}, Calls: calls,
				Kinds: []types.Kind{types.KindBigInt, types.KindTimestamp, types.KindBigInt, types.KindBigInt},
				Order: []SortKey{{Col: 2}}}
			per := map[int64][]in{}
			for _, r := range live {
				per[r.k] = append(per[r.k], r)
			}
			var want []string
			small := 0
			for _, rs := range per {
				if int64(len(rs)) <= n {
					small++
				}
				// By s, ties by the row: ts, then v (NULL first); equal
				// rows are interchangeable.
				slices.SortFunc(rs, func(a, b in) int {
					return cmp.Or(cmp.Compare(a.s, b.s), cmp.Compare(a.ts, b.ts))
				})
				for i, r := range rs {
					want = append(want, types.FormatRow(types.Insert, append(values(r), results(rs[max(0, i-int(n)):i+1])...))[2:])
				}
			}
			slices.Sort(want)
			if n == 9 && small == 0 {
				t.Fatalf("seed %d: no partition smaller than the frame", seed)
			}
			const batch, cut = 20, 400
			h := newOverUpdHarness(t, t.TempDir(), 2, nil, spec)
			for i := 0; i < cut; i += batch {
				h.emitChanges(kinds[i:i+batch], rows[i:i+batch])
			}
			ck := h.checkpoint()
			before := slices.Clone(h.sink.rows)
			r := newOverUpdHarness(t, t.TempDir(), 3, ck, spec)
			r.reader.pos = cut
			for i := cut; i < len(rows); i += batch {
				j := min(i+batch, len(rows))
				r.emitChanges(kinds[i:j], rows[i:j])
			}
			r.end()
			if got := applyChangelog(t, append(before, r.sink.rows...)); !slices.Equal(got, want) {
				t.Fatalf("seed %d: %d rows, want %d\n got  %v\n want %v", seed, len(got), len(want), got, want)
			}
		})
	}
}
