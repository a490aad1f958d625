package exec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestLookupJoinRandom joins random left rows (k INT, v BIGINT) with a
// random lookup table (k INT, w BIGINT; several rows per key, NULL keys),
// inner and left, with and without a residual (w > v), and reloads the
// table when the injected clock passes the reload interval: each left
// row must join the rows of its key in the table as loaded last before it,
// as computed here.
func TestLookupJoinRandom(t *testing.T) {
	seed := testseed.Seed(t)
	for _, typ := range []JoinType{InnerJoin, LeftOuterJoin} {
		for _, residual := range []bool{false, true} {
			t.Run(fmt.Sprintf("type%d/residual=%v", typ, residual), func(t *testing.T) {
				runRandomLookupJoin(t, seed+uint64(typ)*10, typ, residual)
			})
		}
	}
}

func runRandomLookupJoin(t *testing.T, seed uint64, typ JoinType, residual bool) {
	r := rand.New(rand.NewPCG(seed, 17))
	genTable := func() [][]types.Value {
		var rows [][]types.Value
		for range r.IntN(12) {
			k := types.IntValue(int64(r.IntN(6)))
			if r.IntN(10) == 0 {
				k = types.Value{}
			}
			rows = append(rows, []types.Value{k, types.BigIntValue(int64(r.IntN(100)))})
		}
		return rows
	}
	table := genTable()
	loads := 0
	now := time.Unix(1000, 0)
	spec := LookupJoinSpec{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2,
		SourceWidth: 2, Reload: time.Minute, Now: func() time.Time { return now }, Table: "t",
		Open: func() (connector.Source, error) { loads++; return &sliceSource{width: 2, rows: table}, nil }}
	if residual {
		cond, err := expr.NewCompare(">", expr.NewColumn(3, types.Type{Kind: types.KindBigInt}, "w"), expr.NewColumn(1, types.Type{Kind: types.KindBigInt}, "v"))
		if err != nil {
			t.Fatal(err)
		}
		spec.Residual = cond
	}
	op := NewLookupJoin(spec)()
	if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	out := &collectEmitter{t: t, rows: map[string]int{}}
	want := map[string]int{}
	loaded := table
	nextLoad := now.Add(time.Minute)
	b := types.NewBatch(2, 8)
	for step := range 300 {
		if r.IntN(20) == 0 {
			table = genTable() // the file changes; seen at the next reload
		}
		now = now.Add(time.Duration(r.IntN(10)) * time.Second)
		if !now.Before(nextLoad) {
			// a reload happens at the first batch after it is due
			loaded, nextLoad = table, now.Add(time.Minute)
		}
		b.Reset()
		for range 1 + r.IntN(3) {
			row := []types.Value{types.IntValue(int64(r.IntN(7))), types.BigIntValue(int64(r.IntN(100)))}
			if r.IntN(15) == 0 {
				row[0] = types.Value{}
			}
			b.Append(types.Insert, row)
			matched := false
			for _, tr := range loaded {
				if row[0].IsNull() || tr[0].IsNull() || tr[0].Int() != row[0].Int() || (residual && tr[1].Int() <= row[1].Int()) {
					continue
				}
				matched = true
				want[fmt.Sprint(append(slices.Clone(row), tr...))]++
			}
			if !matched && typ == LeftOuterJoin {
				want[fmt.Sprint(append(slices.Clone(row), types.Value{}, types.Value{}))]++
			}
		}
		if err := op.Process(0, b, out); err != nil {
			t.Fatalf("seed %d step %d: %v", seed, step, err)
		}
	}
	if loads < 2 {
		t.Fatalf("seed %d: the table was loaded %d times, want reloads", seed, loads)
	}
	if !equalMultiset(out.rows, want) {
		t.Fatalf("seed %d: output (%d rows)\n%v\nwant (%d rows)\n%v", seed, len(out.rows), keysOf(out.rows), len(want), keysOf(want))
	}
}

// TestLookupJoinIntKeys joins left rows with a lookup table on one
// integer key, the two sides' keys of random integer types (TINYINT to
// BIGINT, and the extremes of BIGINT), with NULL keys on both sides, inner
// and left: each left row joins, in the table's order, the rows whose key
// has its value (a NULL key matches nothing), as a nested loop here
// computes. The table is indexed by the integer table; a VARCHAR key by
// its encoding, checked the same way.
func TestLookupJoinIntKeys(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 23))
	ints := []func(int64) types.Value{types.TinyIntValue, types.SmallIntValue, types.IntValue, types.BigIntValue}
	intKey := func() types.Value {
		if r.IntN(12) == 0 {
			return types.Value{}
		}
		switch r.IntN(10) {
		case 0:
			return types.BigIntValue(math.MinInt64)
		case 1:
			return types.BigIntValue(math.MaxInt64)
		}
		return ints[r.IntN(len(ints))](int64(r.IntN(40) - 20))
	}
	strKey := func() types.Value {
		if r.IntN(12) == 0 {
			return types.Value{}
		}
		return types.StringValue(fmt.Sprint(r.IntN(30)))
	}
	for _, tc := range []struct {
		name string
		key  func() types.Value
		ints bool
	}{{"integer", intKey, true}, {"varchar", strKey, false}} {
		for _, typ := range []JoinType{InnerJoin, LeftOuterJoin} {
			t.Run(fmt.Sprintf("%s/type%d", tc.name, typ), func(t *testing.T) {
				var table [][]types.Value
				for i := range 200 {
					table = append(table, []types.Value{tc.key(), types.BigIntValue(int64(i))})
				}
				spec := LookupJoinSpec{Type: typ, LeftKeys: []int{1}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2,
					SourceWidth: 2, Table: "t",
					Open: func() (connector.Source, error) { return &sliceSource{width: 2, rows: table}, nil }}
				op := NewLookupJoin(spec)().(*lookupJoinOp)
				if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
					t.Fatal(err)
				}
				if (op.ints != nil) != tc.ints {
					t.Fatalf("integer index %v, want %v", op.ints != nil, tc.ints)
				}
				out := &rowsEmitter{}
				var want []string
				matches := 0
				for range 20 {
					b := types.NewBatch(2, 64)
					for i := range 64 {
						row := []types.Value{types.BigIntValue(int64(i)), tc.key()}
						b.Append(types.Insert, row)
						matched := false
						for _, tr := range table {
							if row[1].IsNull() || tr[0].IsNull() || !sameKey(row[1], tr[0]) {
								continue
							}
							matched = true
							want = append(want, types.FormatRow(types.Insert, append(slices.Clone(row), tr...)))
						}
						if matched {
							matches++
						} else if typ == LeftOuterJoin {
							want = append(want, types.FormatRow(types.Insert, append(slices.Clone(row), types.Value{}, types.Value{})))
						}
					}
					if err := op.Process(0, b, out); err != nil {
						t.Fatal(err)
					}
				}
				if err := op.Finish(out); err != nil {
					t.Fatal(err)
				}
				got := make([]string, len(out.rows))
				for i, row := range out.rows {
					got[i] = types.FormatRow(types.Insert, row)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d: %d rows, want %d:\n got  %v\n want %v", seed, len(got), len(want), head(got), head(want))
				}
				if matches < 100 {
					t.Fatalf("seed %d: %d left rows matched: the test proves little", seed, matches)
				}
			})
		}
	}
}

// sameKey is the join's key equality of the test: integers by value,
// other values by kind and value.
func sameKey(a, b types.Value) bool {
	if a.Kind().IsInteger() && b.Kind().IsInteger() {
		return a.Int() == b.Int()
	}
	return a.Kind() == b.Kind() && a.Str() == b.Str()
}
