// Package planner turns bound SQL into plans: it resolves names and types
// against a Catalog, builds a logical plan, rewrites it (Calc merging,
// filter push-down), chooses exchanges and parallelism, and produces the
// exec.JobGraph that the runtime runs, with EXPLAIN text for each stage.
package planner

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/weir-sql/weir/confval"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// Planner plans INSERTs and queries against a catalog.
type Planner struct {
	Catalog    *Catalog
	Connectors *connector.Registry
	Env        connector.Env
	// Config holds SET values; 'parallelism.default' (alias
	// 'table.exec.resource.default-parallelism') sets operator parallelism,
	// runtime.NumCPU() by default.
	Config map[string]string
}

// Plan is a planned job.
type Plan struct {
	Graph   *exec.JobGraph
	Explain string
	// Schema is the result schema of a query (PlanQuery).
	Schema types.Schema
	// Updating reports whether the result (of a query; of any INSERT of
	// a job) has updates or deletes.
	Updating bool
	// Modes holds the changelog mode of each INSERT's or the query's
	// result, in order.
	Modes []connector.ChangelogMode
}

// KeyLocalTimeZone is the SET key of the session's time zone, in which
// TIMESTAMP_LTZ values are shown and converted ('default': the machine's).
const KeyLocalTimeZone = "table.local-time-zone"

// location returns the session's time zone (KeyLocalTimeZone).
func (p *Planner) location() (*time.Location, error) {
	v, ok := p.Config[KeyLocalTimeZone]
	if !ok {
		return time.Local, nil
	}
	loc, err := confval.TimeZone(v)
	if err != nil {
		return nil, fmt.Errorf("config '%s': %w", KeyLocalTimeZone, err)
	}
	return loc, nil
}

// QuerySinkName names a query's result sink in plans.
const QuerySinkName = "collect"

func (p *Planner) parallelism() (int, error) {
	for _, k := range []string{"parallelism.default", "table.exec.resource.default-parallelism"} {
		if v, ok := p.Config[k]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 {
				return 0, fmt.Errorf("config '%s' = '%s': want a positive integer", k, v)
			}
			return n, nil
		}
	}
	return runtime.NumCPU(), nil
}

// KeyNotNullEnforcer is the SET key that says what a sink does with NULL in
// a NOT NULL column: 'ERROR' (default: the job fails) or 'DROP' (the row is
// dropped and counted), as in Flink.
const KeyNotNullEnforcer = "table.exec.sink.not-null-enforcer"

// ParseNotNullEnforcer parses a value of 'table.exec.sink.not-null-enforcer'
// (ERROR or DROP, case-insensitive).
func ParseNotNullEnforcer(v string) (exec.NotNullAction, error) {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "ERROR":
		return exec.NotNullError, nil
	case "DROP":
		return exec.NotNullDrop, nil
	}
	return 0, fmt.Errorf("config '%s' = '%s': expected 'ERROR' or 'DROP'", KeyNotNullEnforcer, v)
}

func (p *Planner) notNullAction() (exec.NotNullAction, error) {
	v, ok := p.Config[KeyNotNullEnforcer]
	if !ok {
		return exec.NotNullError, nil
	}
	return ParseNotNullEnforcer(v)
}

// PlanInserts plans all INSERTs of a script as one job (Flink's STATEMENT SET).
func (p *Planner) PlanInserts(ins []*parser.Insert, jobName string) (*Plan, error) {
	if len(ins) == 0 {
		return nil, fmt.Errorf("no INSERT to plan")
	}
	var roots []rootPlan
	for _, in := range ins {
		s, err := p.bindInsert(in)
		if err != nil {
			return nil, err
		}
		roots = append(roots, rootPlan{sink: s, pos: in.Pos, sql: in.SQL() + ";"})
	}
	sinks := func(s *Sink, _ bool) (connector.Sink, error) { return p.Connectors.Sink(s.Table, p.Env) }
	return p.plan(roots, sinks, jobName)
}

// PlanQuery plans a bare query whose rows go to the sink the caller builds
// from the result schema and whether the result is updating.
func (p *Planner) PlanQuery(q *parser.QueryStmt, sink func(schema types.Schema, updating bool) (connector.Sink, error), jobName string) (*Plan, error) {
	loc, err := p.location()
	if err != nil {
		return nil, err
	}
	b := &binder{cat: p.Catalog, loc: loc}
	r, err := b.bindQuery(q.Query)
	if err != nil {
		return nil, err
	}
	root := &Sink{Input: r.node, Name: QuerySinkName}
	sinks := func(s *Sink, upd bool) (connector.Sink, error) { return sink(s.Schema(), upd) }
	plan, err := p.plan([]rootPlan{{sink: root, pos: q.Pos}}, sinks, jobName)
	if err != nil {
		return nil, err
	}
	plan.Schema = r.node.Schema()
	return plan, nil
}

// Explain returns the EXPLAIN text of an INSERT or a query.
func (p *Planner) Explain(st *parser.Explain) (string, error) {
	switch s := st.Stmt.(type) {
	case *parser.Insert:
		plan, err := p.PlanInserts([]*parser.Insert{s}, "explain")
		if err != nil {
			return "", err
		}
		return plan.Explain, nil
	case *parser.QueryStmt:
		plan, err := p.PlanQuery(s, func(types.Schema, bool) (connector.Sink, error) { return explainSink{}, nil }, "explain")
		if err != nil {
			return "", err
		}
		return plan.Explain, nil
	}
	return "", parser.Errorf(st.Pos, "EXPLAIN supports INSERT and SELECT statements")
}

// explainSink stands in for a query's sink when only explaining.
type explainSink struct{}

// AcceptsUpdates returns true: explaining shows any plan.
func (explainSink) AcceptsUpdates() bool { return true }

// Parallelism returns 0: follow the input.
func (explainSink) Parallelism() int { return 0 }

// Open fails: the sink is never run.
func (explainSink) Open(int, int) (connector.SinkWriter, error) {
	return nil, fmt.Errorf("explain-only sink cannot be opened")
}

type rootPlan struct {
	sink *Sink
	pos  parser.Pos
	sql  string // the statement, recorded in the job graph
}

func (p *Planner) plan(roots []rootPlan, sinks func(*Sink, bool) (connector.Sink, error), jobName string) (*Plan, error) {
	par, err := p.parallelism()
	if err != nil {
		return nil, err
	}
	var ast, phys strings.Builder
	g := &exec.JobGraph{Name: jobName, MaxParallelism: types.DefaultMaxParallelism}
	gb := &graphBuilder{g: g}
	used := map[string]int{}
	var modes []connector.ChangelogMode
	var schema strings.Builder
	for _, r := range roots {
		ast.WriteString(treeString[Node](r.sink, Node.String))
		writeQuerySchema(&schema, r.sink)
		opt, err := optimize(r.sink)
		if err != nil {
			return nil, err
		}
		if opt, err = p.pruneJoins(opt); err != nil {
			return nil, err
		}
		if opt, err = p.pruneOvers(opt); err != nil {
			return nil, err
		}
		if opt, err = p.pushIntoScans(opt); err != nil {
			return nil, err
		}
		pb := &physBuilder{p: p, parallelism: par, sinks: sinks, pos: r.pos}
		pn, err := pb.build(opt)
		if err != nil {
			return nil, err
		}
		if pn, err = mergeComputedCalcs(pn); err != nil {
			return nil, err
		}
		ids := map[physNode]string{}
		assignIDs(pn, used, ids)
		modes = append(modes, pn.traits().mode)
		phys.WriteString(treeString(pn, label))
		first := len(g.Vertices)
		if _, err := gb.emit(pn, ids); err != nil {
			return nil, err
		}
		if r.sql != "" {
			g.Statements = append(g.Statements, r.sql)
			for _, v := range g.Vertices[first:] {
				v.Statement = len(g.Statements)
			}
		}
	}
	nameVertices(g)
	text := "== Abstract Syntax Tree ==\n" + ast.String() +
		"\n== Query Schema ==\n" + schema.String() +
		"\n== Optimized Physical Plan ==\n" + phys.String() +
		"\n== Job Graph ==\n" + graphText(g)
	plan := &Plan{Graph: g, Explain: text, Modes: modes}
	for _, m := range modes {
		plan.Updating = plan.Updating || !m.IsInsertOnly()
	}
	return plan, nil
}

// bindInsert binds INSERT INTO t [(cols)] query into a Sink over a
// projection onto t's columns, with implicit widening casts.
func (p *Planner) bindInsert(in *parser.Insert) (*Sink, error) {
	t, ok := p.Catalog.Table(in.Table)
	if !ok {
		return nil, parser.Errorf(in.Pos, "unknown table '%s' (%s)", in.Table, p.Catalog.listing())
	}
	loc, err := p.location()
	if err != nil {
		return nil, err
	}
	b := &binder{cat: p.Catalog, loc: loc}
	r, err := b.bindQuery(in.Query)
	if err != nil {
		return nil, err
	}
	ts := t.Schema
	targets := make([]int, 0, ts.Len())
	// Virtual metadata columns are read only: not written, not listed.
	virtual := func(i int) bool { m := t.MetadataOf(i); return m != nil && m.Virtual }
	if in.Columns == nil {
		for i := range ts.Columns {
			if !virtual(i) {
				targets = append(targets, i)
			}
		}
	} else {
		seen := map[int]bool{}
		for _, c := range in.Columns {
			i := ts.Index(c)
			if i < 0 {
				return nil, parser.Errorf(in.Pos, "INSERT into %s: unknown column '%s' (columns: %s)", t.Name, c, strings.Join(ts.Names(), ", "))
			}
			if seen[i] {
				return nil, parser.Errorf(in.Pos, "INSERT into %s: column '%s' listed twice", t.Name, c)
			}
			if virtual(i) {
				return nil, parser.Errorf(in.Pos, "INSERT into %s: column '%s' is a VIRTUAL metadata column, which is only read", t.Name, c)
			}
			seen[i] = true
			targets = append(targets, i)
		}
	}
	qs := r.node.Schema()
	if qs.Len() != len(targets) {
		what := "table has"
		if in.Columns != nil {
			what = "column list has"
		}
		return nil, parser.Errorf(in.Pos, "INSERT into %s: query has %d columns, %s %d", t.Name, qs.Len(), what, len(targets))
	}
	exprs := make([]expr.Expr, ts.Len())
	for j, ti := range targets {
		col := ts.Columns[ti]
		qc := qs.Columns[j]
		if !expr.CanAssign(qc.Type, col.Type) {
			return nil, parser.Errorf(itemPos(in, j), "column %s: cannot assign %s to %s", col.Name, qc.Type.Kind, col.Type.Kind)
		}
		x, err := expr.Coerce(expr.NewColumn(j, qc.Type, qc.Name), col.Type)
		if err != nil {
			return nil, parser.Errorf(itemPos(in, j), "column %s: %s", col.Name, err.Error())
		}
		exprs[ti] = x
	}
	for i, c := range ts.Columns {
		if exprs[i] == nil {
			if c.Type.NotNull && !virtual(i) {
				return nil, parser.Errorf(in.Pos, "INSERT into %s: column '%s' is NOT NULL and has no default value: list it in the column list", t.Name, c.Name)
			}
			exprs[i] = expr.NewLiteral(types.NullValue(), c.Type.Nullable())
		}
	}
	proj := &Project{Input: r.node, Exprs: exprs, Names: ts.Names()}
	return &Sink{Input: proj, Table: t, Name: t.Name}, nil
}

// itemPos is the position of the j-th select item of an INSERT's query
// when it is a plain SELECT without stars, else the INSERT's.
func itemPos(in *parser.Insert, j int) parser.Pos {
	q := in.Query
	for {
		switch n := q.(type) {
		case *parser.With:
			q = n.Body
			continue
		case *parser.OrderLimit:
			q = n.Body
			continue
		case *parser.Values:
			if j < len(n.Rows[0].Values) {
				return n.Rows[0].Values[j].Position()
			}
		}
		break
	}
	if s, ok := q.(*parser.Select); ok && j < len(s.Items) {
		for _, it := range s.Items {
			if it.Star {
				return in.Pos
			}
		}
		return s.Items[j].Pos
	}
	return in.Pos
}

// writeQuerySchema writes the columns a statement's query produces for its
// sink, with their types and time attributes as Flink prints them
// ("ts TIMESTAMP(3) *ROWTIME*"), so EXPLAIN shows whether a time attribute
// survives the query (a window's window_time, a rowtime kept through a
// projection).
func writeQuerySchema(b *strings.Builder, sink *Sink) {
	fmt.Fprintf(b, "%s(", sink.Name)
	for i, c := range sink.Input.Schema().Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s %s", c.Name, c.Type.SQL())
	}
	b.WriteString(")\n")
}
