package exec

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/types"
)

// modelGroup is the Go model of one group: the non-NULL values present,
// in arrival order; a retraction removes the value's earliest occurrence.
type modelGroup []types.Value

func (m *modelGroup) add(v types.Value) {
	if !v.IsNull() {
		*m = append(*m, v)
	}
}

func (m *modelGroup) retract(v types.Value) {
	if v.IsNull() {
		return
	}
	for i, x := range *m {
		if types.Equal(x, v) {
			*m = append((*m)[:i], (*m)[i+1:]...)
			return
		}
	}
}

// answer computes fn over the group directly (two-pass variance).
func (m modelGroup) answer(fn aggfunc.Kind, sep string) types.Value {
	if len(m) == 0 {
		return types.NullValue()
	}
	switch fn {
	case aggfunc.FirstValue:
		return m[0]
	case aggfunc.LastValue:
		return m[len(m)-1]
	case aggfunc.ListAgg:
		parts := make([]string, len(m))
		for i, v := range m {
			parts[i] = v.Str()
		}
		return types.StringValue(strings.Join(parts, sep))
	case aggfunc.BoolAnd, aggfunc.BoolOr:
		all, some := true, false
		for _, v := range m {
			all = all && v.Bool()
			some = some || v.Bool()
		}
		if fn == aggfunc.BoolAnd {
			return types.BoolValue(all)
		}
		return types.BoolValue(some)
	}
	n := float64(len(m))
	samp := fn == aggfunc.VarSamp || fn == aggfunc.StddevSamp
	if samp && len(m) < 2 {
		return types.NullValue()
	}
	mean := 0.0
	for _, v := range m {
		mean += v.Float()
	}
	mean /= n
	ss := 0.0
	for _, v := range m {
		d := v.Float() - mean
		ss += d * d
	}
	if samp {
		ss /= n - 1
	} else {
		ss /= n
	}
	if fn == aggfunc.StddevPop || fn == aggfunc.StddevSamp {
		ss = math.Sqrt(ss)
	}
	return types.DoubleValue(ss)
}

// TestNewAggregatesOverRetractions feeds each new aggregate a random
// changelog over several groups (inserts, and retractions of values
// present, NULLs among them) in batches, saves and loads every group's
// state into a fresh accumulator at random points (as a checkpoint and
// restore do), and compares each group's result after every batch with
// the Go model.
func TestNewAggregatesOverRetractions(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	calls := []AggCall{
		{Func: aggfunc.VarPop, Name: "VAR_POP", ArgType: types.Double, Type: types.Double},
		{Func: aggfunc.VarSamp, Name: "VAR_SAMP", ArgType: types.BigInt, Type: types.Double},
		{Func: aggfunc.StddevPop, Name: "STDDEV_POP", ArgType: types.Double, Type: types.Double},
		{Func: aggfunc.StddevSamp, Name: "STDDEV_SAMP", ArgType: types.Double, Type: types.Double},
		{Func: aggfunc.FirstValue, Name: "FIRST_VALUE", ArgType: types.BigInt, Type: types.BigInt},
		{Func: aggfunc.LastValue, Name: "LAST_VALUE", ArgType: types.Varchar, Type: types.Varchar},
		{Func: aggfunc.ListAgg, Name: "LISTAGG", ArgType: types.Varchar, Type: types.Varchar},
		{Func: aggfunc.ListAgg, Name: "LISTAGG sep", ArgType: types.Varchar, Type: types.Varchar, Sep: " | "},
		{Func: aggfunc.BoolAnd, Name: "BOOL_AND", ArgType: types.Boolean, Type: types.Boolean},
		{Func: aggfunc.BoolOr, Name: "BOOL_OR", ArgType: types.Boolean, Type: types.Boolean},
	}
	const groups = 4
	for _, call := range calls {
		t.Run(call.Name, func(t *testing.T) {
			value := func() types.Value {
				if rng.IntN(8) == 0 {
					return types.NullValue()
				}
				n := rng.Int64N(6) // few values: many duplicates
				switch call.ArgType.Kind {
				case types.KindVarchar:
					return types.StringValue(string(rune('a' + n)))
				case types.KindBoolean:
					return types.BoolValue(n < 4)
				case types.KindDouble:
					return types.DoubleValue(float64(n)*1.5 - 2)
				}
				return types.BigIntValue(n * 1000)
			}
			sep := call.Sep
			if sep == "" {
				sep = ","
			}
			call.Arg = 0
			acc, err := newAccumulator(call)
			if err != nil {
				t.Fatal(err)
			}
			for range groups {
				acc.grow()
			}
			model := make([]modelGroup, groups)
			for step := range 300 {
				b := types.NewBatch(1, 8)
				var gis []int32
				for range 1 + rng.IntN(8) {
					g := rng.IntN(groups)
					if len(model[g]) > 0 && rng.IntN(3) == 0 {
						v := model[g][rng.IntN(len(model[g]))]
						kind := types.UpdateBefore
						if rng.IntN(2) == 0 {
							kind = types.Delete
						}
						b.Append(kind, []types.Value{v})
						model[g].retract(v)
					} else {
						v := value()
						kind := types.Insert
						if rng.IntN(2) == 0 {
							kind = types.UpdateAfter
						}
						b.Append(kind, []types.Value{v})
						model[g].add(v)
					}
					gis = append(gis, int32(g))
				}
				acc.update(gis, b, 0)
				if rng.IntN(10) == 0 { // checkpoint and restore
					fresh, err := newAccumulator(call)
					if err != nil {
						t.Fatal(err)
					}
					for g := range groups {
						fresh.grow()
						state := acc.save(int32(g), nil)
						rest, err := fresh.load(int32(g), state)
						if err != nil || len(rest) != 0 {
							t.Fatalf("step %d: load group %d: %v, %d bytes left", step, g, err, len(rest))
						}
					}
					acc = fresh
				}
				for g := range groups {
					got, want := acc.result(int32(g)), model[g].answer(call.Func, sep)
					if !sameResult(got, want) {
						t.Fatalf("step %d group %d (values %v): got %v, want %v", step, g, model[g], got, want)
					}
				}
			}
		})
	}
}

// sameResult compares results, DOUBLEs within a relative 1e-9.
func sameResult(got, want types.Value) bool {
	if got.IsNull() || want.IsNull() {
		return got.IsNull() && want.IsNull()
	}
	if want.Kind() == types.KindDouble {
		if got.Kind() != types.KindDouble {
			return false
		}
		d := math.Abs(got.Float() - want.Float())
		return d <= 1e-9*math.Max(1, math.Abs(want.Float()))
	}
	return got.Kind() == want.Kind() && types.Equal(got, want)
}

// TestSeqAccBadState: a malformed saved state is an error, not a panic.
func TestSeqAccBadState(t *testing.T) {
	acc, err := newAccumulator(AggCall{Func: aggfunc.ListAgg, Name: "LISTAGG", ArgType: types.Varchar, Type: types.Varchar})
	if err != nil {
		t.Fatal(err)
	}
	acc.grow()
	for _, bad := range [][]byte{nil, {5}, {1, 0xff}, {1, byte(types.KindNull), 0}} {
		if _, err := acc.load(0, bad); err == nil {
			t.Errorf("load(%x): no error", bad)
		}
	}
}
