package exec

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// parseRows reads rows like "+I a 5; -D a null" (BIGINT for integers,
// DOUBLE for numbers with a dot, NULL for null, VARCHAR otherwise) into a
// batch of the given width.
func parseRows(t *testing.T, width int, s string) *types.Batch {
	t.Helper()
	b := types.NewBatch(width, 8)
	for _, r := range strings.Split(s, ";") {
		f := strings.Fields(r)
		if len(f) == 0 {
			continue
		}
		kind := map[string]types.RowKind{"+I": types.Insert, "-U": types.UpdateBefore, "+U": types.UpdateAfter, "-D": types.Delete}[f[0]]
		if len(f)-1 != width {
			t.Fatalf("row %q: want %d values", r, width)
		}
		row := make([]types.Value, width)
		for i, tok := range f[1:] {
			if tok == "null" {
				continue
			}
			if n, err := strconv.ParseInt(tok, 10, 64); err == nil {
				row[i] = types.BigIntValue(n)
			} else if x, err := strconv.ParseFloat(tok, 64); err == nil && strings.Contains(tok, ".") {
				row[i] = types.DoubleValue(x)
			} else {
				row[i] = types.StringValue(tok)
			}
		}
		b.Append(kind, row)
	}
	return b
}

// recorder is an Emitter that renders what it receives.
type recorder struct{ rows []string }

func (r *recorder) Emit(b *types.Batch) error {
	for i := range b.Len() {
		r.rows = append(r.rows, types.FormatRow(b.Kinds[i], b.Row(i)))
	}
	return nil
}

func TestGroupAgg(t *testing.T) {
	sumBig := AggCall{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt, Name: "SUM(v)"}
	tests := []struct {
		name  string
		keys  []int
		aggs  []AggCall
		steps []struct{ in, want string } // one input batch each; want rows joined by " "
	}{
		{
			name: "min max under retraction",
			keys: []int{0},
			aggs: []AggCall{
				{Func: AggMin, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
				{Func: AggMax, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
			},
			steps: []struct{ in, want string }{
				{"+I a 5; +I a 3; +I a 9; +I a 3", "+I[a, 3, 9]"},
				{"-D a 3", ""},
				{"-D a 3", "-U[a, 3, 9] +U[a, 5, 9]"},
				{"-D a 9", "-U[a, 5, 9] +U[a, 5, 5]"},
				{"+I a 5", ""},
				{"+I a null", ""},
				{"-D a 5; -D a 5", "-U[a, 5, 5] +U[a, <NULL>, <NULL>]"},
				{"-D a null", "-D[a, <NULL>, <NULL>]"},
			},
		},
		{
			name: "count distinct",
			keys: []int{0},
			aggs: []AggCall{{Func: AggCount, Distinct: true, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}},
			steps: []struct{ in, want string }{
				{"+I a 1; +I a 1; +I a 2", "+I[a, 2]"},
				{"-D a 1", ""},
				{"+I a null", ""},
				{"-D a 1", "-U[a, 2] +U[a, 1]"},
				{"+I a 3; +I b 3", "-U[a, 1] +U[a, 2] +I[b, 1]"},
			},
		},
		{
			name: "sum distinct",
			keys: []int{0},
			aggs: []AggCall{{Func: AggSum, Distinct: true, Arg: 1, ArgType: types.BigInt, Type: types.BigInt}},
			steps: []struct{ in, want string }{
				{"+I a 4; +I a 4; +I a 1", "+I[a, 5]"},
				{"-U a 4; +U a 6", "-U[a, 5] +U[a, 11]"},
				{"-D a 4", "-U[a, 11] +U[a, 7]"},
			},
		},
		{
			name: "avg of ints",
			keys: []int{0},
			aggs: []AggCall{
				{Func: AggAvg, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
				{Func: AggAvg, Arg: 1, ArgType: types.BigInt, Type: types.Double},
			},
			steps: []struct{ in, want string }{
				{"+I a 1; +I a 2", "+I[a, 1, 1.5]"},
				{"+I a 4", "-U[a, 1, 1.5] +U[a, 2, 2.3333333333333335]"},
				{"+I a null", ""},
				{"-D a 1; -D a 2; -D a 4", "-U[a, 2, 2.3333333333333335] +U[a, <NULL>, <NULL>]"},
				{"+I a -7", "-U[a, <NULL>, <NULL>] +U[a, -7, -7.0]"},
			},
		},
		{
			name: "group deleted and unchanged result",
			keys: []int{0},
			aggs: []AggCall{sumBig, {Func: AggCountStar, Arg: -1, Type: types.BigInt}},
			steps: []struct{ in, want string }{
				{"+I a 1; +I b 2", "+I[a, 1, 1] +I[b, 2, 1]"},
				{"-D a 1", "-D[a, 1, 1]"},
				{"-D a 1", ""}, // retraction of a missing group: ignored
				{"+I c 1; -D c 1", ""},
				{"-U b 2; +U b 2", ""},
				{"+I a 7", "+I[a, 7, 1]"},
				{"-D b 2; +I b 3", "-U[b, 2, 1] +U[b, 3, 1]"},
			},
		},
		{
			name: "sum of nulls and doubles",
			keys: []int{0},
			aggs: []AggCall{
				{Func: AggSum, Arg: 1, ArgType: types.Double, Type: types.Double},
				{Func: AggCount, Arg: 1, ArgType: types.Double, Type: types.BigInt},
			},
			steps: []struct{ in, want string }{
				{"+I a null", "+I[a, <NULL>, 0]"},
				{"+I a 1.5; +I a 2.25", "-U[a, <NULL>, 0] +U[a, 3.75, 2]"},
			},
		},
		{
			name: "global aggregate",
			aggs: []AggCall{{Func: AggCountStar, Arg: -1, Type: types.BigInt}, sumBig},
			steps: []struct{ in, want string }{
				{"+I a 1; +I b 2", "+I[2, 3]"},
				{"-D a 1", "-U[2, 3] +U[1, 2]"},
				{"-D b 2", "-D[1, 2]"},
			},
		},
		{
			name: "two keys with null",
			keys: []int{0, 1},
			aggs: []AggCall{{Func: AggCountStar, Arg: -1, Type: types.Int}},
			steps: []struct{ in, want string }{
				{"+I a null; +I a 1; +I a null", "+I[a, <NULL>, 2] +I[a, 1, 1]"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := NewGroupAgg(tc.keys, tc.aggs)()
			if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "GroupAggregate"}); err != nil {
				t.Fatal(err)
			}
			defer op.Close()
			for i, st := range tc.steps {
				rec := &recorder{}
				if err := op.Process(0, parseRows(t, 2, st.in), rec); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if got := strings.Join(rec.rows, " "); got != st.want {
					t.Errorf("step %d (%s):\n got %s\nwant %s", i, st.in, got, st.want)
				}
			}
			if err := op.Finish(&recorder{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestGroupAggOpenErrors(t *testing.T) {
	tests := []struct {
		name string
		aggs []AggCall
		want string
	}{
		{"sum of varchar", []AggCall{{Func: AggSum, Arg: 1, ArgType: types.Varchar, Name: "SUM(s)"}}, "SUM(s): SUM of VARCHAR"},
		{"count without column", []AggCall{{Func: AggCount, Arg: -1, ArgType: types.BigInt, Name: "COUNT(x)"}}, "missing argument"},
		{"unknown function", []AggCall{{Func: AggFunc(99), Arg: 0, Name: "F(x)"}}, "unknown aggregate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := NewGroupAgg([]int{0}, tc.aggs)()
			err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	op := NewGroupAgg([]int{3}, nil)()
	if err := op.Open(&OpContext{}); err != nil {
		t.Fatal(err)
	}
	if err := op.Process(0, types.NewBatch(2, 1), &recorder{}); err == nil {
		t.Fatal("want an error for a key column out of range")
	}
}

func TestCalc(t *testing.T) {
	in := "+I 1 10; -U 2 null; +U 3 3; -D 4 7; +I null 6"
	gt5 := greater{colRef{1, types.BigInt}, constant{types.BigIntValue(5)}}
	tests := []struct {
		name   string
		filter greater
		useF   bool
		proj   []int // column refs; -1 = constant 'x'
		want   string
	}{
		{"filter only", gt5, true, nil, "+I[1, 10] -D[4, 7] +I[<NULL>, 6]"},
		{"projection only", gt5, false, []int{1, -1}, "+I[10, x] -U[<NULL>, x] +U[3, x] -D[7, x] +I[6, x]"},
		{"filter and projection", gt5, true, []int{0}, "+I[1] -D[4] +I[<NULL>]"},
		{"neither", gt5, false, nil, "+I[1, 10] -U[2, <NULL>] +U[3, 3] -D[4, 7] +I[<NULL>, 6]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var proj []expr.Expr
			for _, c := range tc.proj {
				if c < 0 {
					proj = append(proj, constant{types.StringValue("x")})
				} else {
					proj = append(proj, colRef{c, types.BigInt})
				}
			}
			var op Operator
			if tc.useF {
				op = NewCalc(tc.filter, proj)()
			} else {
				op = NewCalc(nil, proj)()
			}
			if err := op.Open(&OpContext{Name: "Calc"}); err != nil {
				t.Fatal(err)
			}
			rec := &recorder{}
			for range 2 { // twice: the output batch is reused
				rec.rows = nil
				if err := op.Process(0, parseRows(t, 2, in), rec); err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(rec.rows, " "); got != tc.want {
					t.Errorf("got  %s\nwant %s", got, tc.want)
				}
			}
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
	op := NewCalc(nil, []expr.Expr{failAt{0, 2}})()
	_ = op.Open(&OpContext{Name: "Calc"})
	err := op.Process(0, parseRows(t, 2, in), &recorder{})
	if err == nil || !errors.Is(err, errBoom) || !strings.Contains(err.Error(), "fail($0)") {
		t.Fatalf("got %v", err)
	}
}
