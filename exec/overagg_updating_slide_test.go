package exec

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// overSlideIn is a row of TestOverUpdatingIntSlides: partition k (the
// leading column), ordered by s, ties by the row (ts: each distinct row
// has its own), aggregating v (NULL when nil).
type overSlideIn struct {
	k, ts, s int64
	v        *int64
}

// overSlideCase is one column type of TestOverUpdatingIntSlides: k and v
// are BIGINT or INT (the leading partition column taken from the
// change's row must keep its kind), big values near the int64 range (the
// sums wrap as int64 do).
type overSlideCase struct {
	name string
	kind types.Kind
	big  bool
}

func (c overSlideCase) val(n int64) types.Value {
	if c.kind == types.KindInt {
		return types.IntValue(n)
	}
	return types.BigIntValue(n)
}

func (c overSlideCase) values(r overSlideIn) []types.Value {
	v := types.NullValue()
	if r.v != nil {
		v = c.val(*r.v)
	}
	return []types.Value{c.val(r.k), types.TimestampValue(r.ts), types.BigIntValue(r.s), v}
}

// spec is ROWS n of SUM(v), AVG(v), COUNT(v), COUNT(*): integer sums and
// counts only, so the operator slides them in place (slides).
func (c overSlideCase) spec(t *testing.T, n int64) OverSpec {
	t.Helper()
	b := aggfunc.Builtins()
	typ := types.Type{Kind: c.kind}
	count := types.Type{Kind: types.KindBigInt, NotNull: true}
	var calls []aggfunc.Call
	for _, f := range []struct {
		name string
		arg  int
		star bool
	}{{"SUM", 3, false}, {"AVG", 3, false}, {"COUNT", 3, false}, {"COUNT", -1, true}} {
		fn, err := b.Lookup(f.name, f.star)
		if err != nil {
			t.Fatal(err)
		}
		rt := typ
		if f.name == "COUNT" {
			rt = count
		}
		calls = append(calls, aggfunc.Call{Func: fn, Arg: f.arg, ArgType: typ, Type: rt, Name: f.name})
	}
	return OverSpec{Partition: []int{0}, Frame: OverFrame{IsRows: true, Rows: n}, Calls: calls,
		Kinds: []types.Kind{c.kind, types.KindTimestamp, types.KindBigInt, c.kind}, Order: []SortKey{{Col: 2}}}
}

// results is the calls over the frame fr, computed here: NULLs skipped,
// SUM and AVG NULL over no values, AVG the int64 sum (wrapping) divided
// by the count, truncated.
func (c overSlideCase) results(fr []overSlideIn) []types.Value {
	var sum, n int64
	for _, r := range fr {
		if r.v != nil {
			sum += *r.v
			n++
		}
	}
	all := types.BigIntValue(int64(len(fr)))
	if n == 0 {
		return []types.Value{types.NullValue(), types.NullValue(), types.BigIntValue(0), all}
	}
	return []types.Value{c.val(sum), c.val(sum / n), types.BigIntValue(n), all}
}

// want is the batch OVER (ROWS n) over live, one string per row.
func (c overSlideCase) want(live []overSlideIn, n int) []string {
	per := map[int64][]overSlideIn{}
	for _, r := range live {
		per[r.k] = append(per[r.k], r)
	}
	var out []string
	for _, rs := range per {
		slices.SortFunc(rs, overSlideOrder)
		for i, r := range rs {
			out = append(out, types.FormatRow(types.Insert, append(c.values(r), c.results(rs[max(0, i-n):i+1])...))[2:])
		}
	}
	slices.Sort(out)
	return out
}

// overSlideOrder orders a partition's rows: by s, ties by ts (equal rows
// are interchangeable).
func overSlideOrder(a, b overSlideIn) int {
	return cmp.Or(cmp.Compare(a.s, b.s), cmp.Compare(a.ts, b.ts))
}

// overSlideChanges is a random changelog over 30 partitions: inserts,
// the same row again, -U/+U of live rows, deletes of live rows and of
// rows never there; v NULL a quarter of the time, near the int64 range
// when big. It returns the changelog's rows and the rows live at its end.
func (c overSlideCase) changes(seed uint64, n int) (kinds []types.RowKind, rows [][]types.Value, live []overSlideIn) {
	rng := rand.New(rand.NewPCG(seed, 73))
	ts := int64(1000)
	next := func(k int64) overSlideIn {
		ts++
		r := overSlideIn{k: k, ts: ts, s: rng.Int64N(10)}
		if rng.IntN(4) != 0 {
			v := rng.Int64N(201) - 100
			if c.big && rng.IntN(2) == 0 {
				v = math.MaxInt64 - rng.Int64N(1000)
				if rng.IntN(2) == 0 {
					v = math.MinInt64 + rng.Int64N(1000)
				}
			}
			r.v = &v
		}
		return r
	}
	return changelogOf[overSlideIn]{keys: 30, mix: changelogMix{insert: 40, same: 48, update: 80, del: 96},
		next: next, key: func(r overSlideIn) int64 { return r.k }, values: c.values}.make(rng, n)
}

// TestOverUpdatingIntSlides runs ROWS n OVERs of integer SUM, AVG and
// COUNT only (slid in place, slides; the stored rows' leading partition
// column taken from the change's row) over a random changelog with equal
// rows, NULLs and, for big, sums that wrap: on a memory backend, the
// applied output is the batch OVER over the live rows computed here and
// the stored rows are the live rows; through a checkpoint at parallelism
// 2, output lost after it (a kill) and a restore at 3, the output before
// the checkpoint plus the restored run's, applied, is the same.
func TestOverUpdatingIntSlides(t *testing.T) {
	seed := testseed.Seed(t)
	for ci, c := range []overSlideCase{{"bigint", types.KindBigInt, false}, {"bigint-wrap", types.KindBigInt, true}, {"int", types.KindInt, false}} {
		kinds, rows, live := c.changes(seed+uint64(ci), 900)
		for _, n := range []int64{1, 3} {
			want := c.want(live, int(n))
			t.Run(fmt.Sprintf("%s/rows%d", c.name, n), func(t *testing.T) {
				spec := c.spec(t, n)
				op, k := openOverUpdMemory(t, spec)
				if o := op.(*overUpdOp); o.slides == nil || o.lead != 1 {
					t.Fatalf("slides %v, lead %d: want the calls slid and one leading partition column", o.slides, o.lead)
				}
				sink := &recordSink{}
				b := types.NewBatch(4, len(rows))
				for i, r := range rows {
					b.Append(kinds[i], r)
				}
				if err := op.Process(0, b, recordEmitter{recordWriter{sink}}); err != nil {
					t.Fatal(err)
				}
				if got := applyChangelog(t, sink.rows); !slices.Equal(got, want) {
					t.Fatalf("seed %d: memory: %d rows, want %d\n got  %v\n want %v", seed, len(got), len(want), got, want)
				}
				checkOverStoredRows(t, seed, op.(*overUpdOp), k, c, live)

				const batch, cut = 20, 500
				h := newOverUpdHarness(t, t.TempDir(), 2, nil, spec)
				for i := 0; i < cut; i += batch {
					h.emitChanges(kinds[i:i+batch], rows[i:i+batch])
				}
				ck := h.checkpoint()
				before := slices.Clone(h.sink.rows)
				for i := cut; i < cut+4*batch; i += batch { // lost in the kill
					h.emitChanges(kinds[i:i+batch], rows[i:i+batch])
				}
				r := newOverUpdHarness(t, t.TempDir(), 3, ck, spec)
				r.reader.pos = cut
				for i := cut; i < len(rows); i += batch {
					j := min(i+batch, len(rows))
					r.emitChanges(kinds[i:j], rows[i:j])
				}
				r.end()
				if got := applyChangelog(t, append(before, r.sink.rows...)); !slices.Equal(got, want) {
					t.Fatalf("seed %d: restored: %d rows, want %d\n got  %v\n want %v", seed, len(got), len(want), got, want)
				}
			})
		}
	}
}

// checkOverStoredRows checks that the rows the operator keeps (each
// partition's sorted map, the rows within its keys) are the live rows.
func checkOverStoredRows(t *testing.T, seed uint64, o *overUpdOp, k *state.Keyed, c overSlideCase, live []overSlideIn) {
	t.Helper()
	var want, got []string
	parts := map[int64]bool{}
	for _, r := range live {
		want = append(want, types.FormatRow(types.Insert, c.values(r)))
		parts[r.k] = true
	}
	rk := NewRowKey(o.spec.Partition, 128)
	for p := range 30 {
		row := c.values(overSlideIn{k: int64(p)})
		if err := rk.Set(k, row); err != nil {
			t.Fatal(err)
		}
		n := 0
		err := o.rows.Ascend(func(mk, v []byte) (bool, error) {
			enc, err := encOf(mk, v)
			if err != nil {
				return false, err
			}
			dec := make([]types.Value, len(o.spec.Kinds))
			for i := range dec {
				val, rest, err := state.DecodeValue(enc)
				if err != nil {
					return false, err
				}
				dec[i], enc = state.WithColumnKind(val, o.spec.Kinds[i]), rest
			}
			got = append(got, types.FormatRow(types.Insert, dec))
			n++
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 && !parts[int64(p)] {
			t.Errorf("seed %d: partition %d keeps %d rows, none live", seed, p, n)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("seed %d: stored rows\n got  %v\n want %v", seed, got, want)
	}
}

// TestOverUpdatingDecodeLead checks decode's leading partition columns:
// a stored row that starts with the change's encoded leading columns
// takes their values (with the column's kind), any other is decoded in
// full; columns not read are left alone.
func TestOverUpdatingDecodeLead(t *testing.T) {
	spec := OverSpec{Partition: []int{1, 0}, Frame: OverFrame{IsRows: true, Rows: 2},
		Kinds: []types.Kind{types.KindInt, types.KindVarchar, types.KindBigInt}, Order: []SortKey{{Col: 2}}}
	op, _ := openOverUpdMemory(t, spec)
	o := op.(*overUpdOp)
	if o.lead != 2 {
		t.Fatalf("lead %d, want 2", o.lead)
	}
	// The change's leading columns encode in 14 bytes (two words
	// compared), unless a case has its own: 2 bytes (NULLs) or 27 (a long
	// string), compared as strings.
	change := []types.Value{types.IntValue(7), types.StringValue("ab"), types.BigIntValue(1)}
	nulls := []types.Value{types.NullValue(), types.NullValue(), types.BigIntValue(1)}
	long := []types.Value{types.IntValue(7), types.StringValue("abcdefghijklmno"), types.BigIntValue(1)}
	keep := types.BigIntValue(-99)
	for _, c := range []struct {
		name   string
		change []types.Value // nil: change
		stored []types.Value
		read   []bool
		want   []types.Value
	}{
		{name: "short lead, same", change: nulls, stored: []types.Value{types.NullValue(), types.NullValue(), types.BigIntValue(5)}, read: []bool{true, true, true},
			want: []types.Value{types.NullValue(), types.NullValue(), types.BigIntValue(5)}},
		{name: "short lead, other", change: nulls, stored: []types.Value{types.NullValue(), types.StringValue(""), types.BigIntValue(5)}, read: []bool{true, true, true},
			want: []types.Value{types.NullValue(), types.StringValue(""), types.BigIntValue(5)}},
		{name: "long lead, same", change: long, stored: []types.Value{types.IntValue(7), types.StringValue("abcdefghijklmno"), types.BigIntValue(5)}, read: []bool{true, true, true},
			want: []types.Value{types.IntValue(7), types.StringValue("abcdefghijklmno"), types.BigIntValue(5)}},
		{name: "long lead, other in the middle", change: long, stored: []types.Value{types.IntValue(7), types.StringValue("abcdefgXijklmno"), types.BigIntValue(5)}, read: []bool{true, true, true},
			want: []types.Value{types.IntValue(7), types.StringValue("abcdefgXijklmno"), types.BigIntValue(5)}},
		{"same lead", nil, []types.Value{types.IntValue(7), types.StringValue("ab"), types.BigIntValue(5)}, []bool{true, true, true},
			[]types.Value{types.IntValue(7), types.StringValue("ab"), types.BigIntValue(5)}},
		{"same lead, lead not read", nil, []types.Value{types.IntValue(7), types.StringValue("ab"), types.BigIntValue(5)}, []bool{false, false, true},
			[]types.Value{keep, keep, types.BigIntValue(5)}},
		{"same lead, some read", nil, []types.Value{types.IntValue(7), types.StringValue("ab"), types.BigIntValue(5)}, []bool{false, true, false},
			[]types.Value{keep, types.StringValue("ab"), keep}},
		{"other first", nil, []types.Value{types.IntValue(8), types.StringValue("ab"), types.BigIntValue(5)}, []bool{true, true, true},
			[]types.Value{types.IntValue(8), types.StringValue("ab"), types.BigIntValue(5)}},
		{"other second, a prefix", nil, []types.Value{types.IntValue(7), types.StringValue("abc"), types.BigIntValue(5)}, []bool{true, true, true},
			[]types.Value{types.IntValue(7), types.StringValue("abc"), types.BigIntValue(5)}},
		{"NULL lead", nil, []types.Value{types.NullValue(), types.NullValue(), types.BigIntValue(5)}, []bool{true, true, true},
			[]types.Value{types.NullValue(), types.NullValue(), types.BigIntValue(5)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := change
			if c.change != nil {
				ch = c.change
			}
			o.encodeChange(ch)
			src := state.Values{}.Append(nil, c.stored)
			dst := []types.Value{keep, keep, keep}
			last := 0
			for i, r := range c.read {
				if r {
					last = i
				}
			}
			if err := o.decode(dst, src, c.read, last); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(dst, c.want) {
				t.Fatalf("decode = %v, want %v", dst, c.want)
			}
			// The change's leading columns are decoded only when a stored
			// row of the same leading bytes has one of them read.
			leadRead := slices.Contains(c.read[:o.lead], true) && string(src[:min(len(src), o.leadLen)]) == string(o.enc[:o.leadLen])
			if o.leadDecoded != leadRead {
				t.Fatalf("lead decoded = %v, want %v", o.leadDecoded, leadRead)
			}
			for i, v := range dst {
				if v.Kind() != c.want[i].Kind() {
					t.Fatalf("column %d kind %v, want %v", i, v.Kind(), c.want[i].Kind())
				}
			}
		})
	}
}
