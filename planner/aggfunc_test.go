package planner

import (
	"strings"
	"testing"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// wantAggType is Flink's result type of an aggregate over an argument of
// type arg, written out here independently of the registry; ok false
// when the call is an error. A function the test does not know fails it:
// a newly registered aggregate needs its expectations here.
func wantAggType(t *testing.T, f *aggfunc.Func, arg types.Type) (types.Type, bool) {
	switch f.Name {
	case "COUNT":
		return types.Type{Kind: types.KindBigInt, NotNull: true}, true
	case "SUM", "AVG":
		if !arg.Kind.IsNumeric() {
			return types.Type{}, false
		}
		return types.Type{Kind: arg.Kind}, true
	case "MIN", "MAX", "FIRST_VALUE", "LAST_VALUE":
		return types.Type{Kind: arg.Kind}, true
	case "VAR_POP", "VAR_SAMP", "STDDEV_POP", "STDDEV_SAMP":
		if !arg.Kind.IsNumeric() {
			return types.Type{}, false
		}
		return types.Type{Kind: arg.Kind}, true
	case "LISTAGG":
		if arg.Kind != types.KindVarchar {
			return types.Type{}, false
		}
		return types.Type{Kind: types.KindVarchar}, true
	case "BOOL_AND", "BOOL_OR":
		if arg.Kind != types.KindBoolean {
			return types.Type{}, false
		}
		return types.Type{Kind: types.KindBoolean}, true
	}
	t.Fatalf("no expected types for aggregate %s: add them to wantAggType", f.Signature())
	return types.Type{}, false
}

// findAggregate returns the first Aggregate of a logical plan.
func findAggregate(n Node) *Aggregate {
	if a, ok := n.(*Aggregate); ok {
		return a
	}
	for _, k := range n.Children() {
		if a := findAggregate(k); a != nil {
			return a
		}
	}
	return nil
}

// TestEveryRegisteredAggregateBindsTypesAndBuilds calls every function of
// the registry, in every form it has, over a column of every type: the
// bound call must name the registry's function, have Flink's result type
// (or be refused with the function's name), and the runtime must build
// its accumulator.
func TestEveryRegisteredAggregateBindsTypesAndBuilds(t *testing.T) {
	cat := NewCatalog()
	ddl := `CREATE TABLE t (k STRING, i INT NOT NULL, b BIGINT, d DOUBLE, s STRING, ts TIMESTAMP(3), bo BOOLEAN) WITH ('connector' = 'datagen')`
	stmts, err := parser.Parse(ddl)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateTable(stmts[0].(*parser.CreateTable)); err != nil {
		t.Fatal(err)
	}
	tbl, _ := cat.Table("t")
	funcs := aggfunc.Builtins().Funcs()
	if len(funcs) == 0 {
		t.Fatal("empty registry")
	}
	for _, f := range funcs {
		type form struct {
			sql      string
			col      int // -1: *
			distinct bool
		}
		var forms []form
		if f.Arg == aggfunc.NoArg {
			forms = append(forms, form{f.Name + "(*)", -1, false})
		} else {
			for ci, c := range tbl.Schema.Columns {
				forms = append(forms, form{f.Name + "(" + c.Name + ")", ci, false})
				if f.Distinct {
					forms = append(forms, form{f.Name + "(DISTINCT " + c.Name + ")", ci, true})
				}
			}
		}
		for _, fm := range forms {
			q := "SELECT k, " + fm.sql + " FROM t GROUP BY k"
			stmts, err := parser.Parse(q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			b := &binder{cat: cat}
			r, err := b.bindQuery(stmts[0].(*parser.QueryStmt).Query)
			var arg types.Type
			if fm.col >= 0 {
				arg = tbl.Schema.Columns[fm.col].Type
			}
			want, ok := wantAggType(t, f, arg)
			if !ok {
				if err == nil || !strings.Contains(err.Error(), f.Name) {
					t.Errorf("%s: want an error naming %s, got %v", q, f.Name, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", q, err)
				continue
			}
			a := findAggregate(r.node)
			if a == nil || len(a.Aggs) != 1 {
				t.Fatalf("%s: no aggregate with one call in the plan", q)
			}
			c := a.Aggs[0]
			if c.Func != f || c.Distinct != fm.distinct || c.Type != want {
				t.Errorf("%s: bound %s distinct=%v type %s, want %s distinct=%v type %s",
					q, c.Func.Signature(), c.Distinct, c.Type, f.Signature(), fm.distinct, want)
			}
			if (c.Arg < 0) != (fm.col < 0) || c.ArgType != arg {
				t.Errorf("%s: argument column %d of type %s, want type %s", q, c.Arg, c.ArgType, arg)
			}
			if _, err := exec.NewAccumulator(c); err != nil {
				t.Errorf("%s: the runtime cannot build it: %v", q, err)
			}
		}
	}
}

// TestUnknownAggregateListsCloseNames: a misspelt aggregate is an error
// at its position that names the close registered functions.
func TestUnknownAggregateListsCloseNames(t *testing.T) {
	text, _ := runScript(`CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'datagen');
SELECT k, SUMM(v) FROM t GROUP BY k;`)
	if !strings.Contains(text, "line 2:11: unknown function SUMM (closest known functions: SUM") {
		t.Errorf("got:\n%s", text)
	}
	text, _ = runScript(`CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'datagen');
SELECT k, AVG(*) FROM t GROUP BY k;`)
	if !strings.Contains(text, "AVG(*) is not supported; only COUNT(*)") {
		t.Errorf("got:\n%s", text)
	}
}

// TestDistinctArgNamesTheUnfilteredArgument: DISTINCT calls over one
// expression, with and without FILTER, get one DistinctArg (GroupAggregate
// shares their sets), calls over other expressions another; a call
// without DISTINCT gets none.
func TestDistinctArgNamesTheUnfilteredArgument(t *testing.T) {
	cat := NewCatalog()
	stmts, err := parser.Parse(`CREATE TABLE t (k STRING, b BIGINT, a BIGINT, p BIGINT) WITH ('connector' = 'datagen')`)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateTable(stmts[0].(*parser.CreateTable)); err != nil {
		t.Fatal(err)
	}
	q := `SELECT k, COUNT(DISTINCT b), COUNT(DISTINCT b) FILTER (WHERE p < 10),
		COUNT(DISTINCT b) FILTER (WHERE p >= 10), SUM(DISTINCT b) FILTER (WHERE p < 10),
		COUNT(DISTINCT a) FILTER (WHERE p < 10), COUNT(DISTINCT b + 1), COUNT(b) FILTER (WHERE p < 10)
		FROM t GROUP BY k`
	stmts, err = parser.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	r, err := (&binder{cat: cat}).bindQuery(stmts[0].(*parser.QueryStmt).Query)
	if err != nil {
		t.Fatal(err)
	}
	a := findAggregate(r.node)
	if a == nil || len(a.Aggs) != 7 {
		t.Fatalf("no aggregate with 7 calls in the plan")
	}
	var got []string
	for _, c := range a.Aggs {
		got = append(got, c.DistinctArg)
	}
	b, x, y := got[0], got[4], got[5]
	if b == "" || x == "" || y == "" || got[6] != "" || x == b || y == b || x == y ||
		got[1] != b || got[2] != b || got[3] != b {
		t.Fatalf("DistinctArg per call: %q", got)
	}
	if a.Aggs[1].Arg == a.Aggs[0].Arg || a.Aggs[1].Arg == a.Aggs[2].Arg {
		t.Fatalf("the FILTER variants share an argument column: %d %d %d", a.Aggs[0].Arg, a.Aggs[1].Arg, a.Aggs[2].Arg)
	}
}
