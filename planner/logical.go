package planner

import (
	"strings"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// Node is an immutable logical plan node.
type Node interface {
	// Children returns the inputs.
	Children() []Node
	// WithChildren returns a copy with other inputs (same count).
	WithChildren(kids []Node) Node
	// Schema returns the output columns.
	Schema() types.Schema
	// String renders the node itself (not its inputs) for EXPLAIN.
	String() string
}

// Scan reads a table. Table.Schema holds its physical columns, those the
// connector reads; Columns, when set, every column of the table in order,
// computed ones included, with their time attributes (the WATERMARK FOR
// column is a rowtime attribute, a PROCTIME() column a proctime one).
type Scan struct {
	Table   *connector.Table
	Columns types.Schema
	// Computed, when the table has computed columns, holds one expression
	// over the physical columns per column of Columns (a physical column
	// is a column reference): the projection placed right above the scan.
	Computed []expr.Expr
	// Watermark is the table's WATERMARK FOR over its physical columns
	// (computed columns substituted), or nil.
	Watermark *exec.WatermarkSpec
	// WatermarkText renders the watermark for EXPLAIN ("" if none) and
	// Rowtime names the rowtime column.
	WatermarkText, Rowtime string
	// Source, when set, is the table's source with a filter or a
	// projection pushed into it (pushdown.go): Table.Schema then holds the
	// columns it produces, and Pushed renders what was pushed for EXPLAIN.
	Source connector.Source
	Pushed string
}

// Filter keeps the rows for which Cond is TRUE.
type Filter struct {
	Input Node
	Cond  expr.Expr
}

// Project computes Exprs over each input row; Names are the output columns.
type Project struct {
	Input Node
	Exprs []expr.Expr
	Names []string
}

// Calc is a Filter and a Project in one operator (Cond nil: keep all rows).
type Calc struct {
	Input Node
	Cond  expr.Expr
	Exprs []expr.Expr
	Names []string
}

// Aggregate groups its input by the Keys columns and computes Aggs; its
// output is the keys followed by one column per aggregate, named Names.
type Aggregate struct {
	Input Node
	Keys  []int
	Aggs  []aggfunc.Call
	Names []string
	// partial and final mark the inner and the outer aggregate of a split
	// distinct aggregation (lowerSplit): the inner's keys end with the
	// buckets; the outer merges the inner's per-bucket results.
	partial, final bool
}

// Union is UNION ALL of inputs with equal schemas (the first one's names).
type Union struct {
	Inputs []Node
}

// Sink writes its input into a table (Table nil: a query's result, named Name).
type Sink struct {
	Input Node
	Table *connector.Table
	Name  string
}

var (
	_ Node = (*Scan)(nil)
	_ Node = (*Filter)(nil)
	_ Node = (*Project)(nil)
	_ Node = (*Calc)(nil)
	_ Node = (*Aggregate)(nil)
	_ Node = (*Union)(nil)
	_ Node = (*Sink)(nil)
)

// Children returns nil.
func (n *Scan) Children() []Node { return nil }

// WithChildren returns n.
func (n *Scan) WithChildren([]Node) Node { return n }

// Schema returns the table's columns (see Columns).
func (n *Scan) Schema() types.Schema {
	if n.Columns.Columns != nil {
		return n.Columns
	}
	return n.Table.Schema
}

// String renders the node for EXPLAIN.
func (n *Scan) String() string { return "LogicalTableScan(table=[" + n.Table.Name + "])" }

// Children returns the input.
func (n *Filter) Children() []Node { return []Node{n.Input} }

// WithChildren replaces the input.
func (n *Filter) WithChildren(k []Node) Node { c := *n; c.Input = k[0]; return &c }

// Schema is the input's.
func (n *Filter) Schema() types.Schema { return n.Input.Schema() }

// String renders the node for EXPLAIN.
func (n *Filter) String() string { return "LogicalFilter(condition=[" + n.Cond.String() + "])" }

// Children returns the input.
func (n *Project) Children() []Node { return []Node{n.Input} }

// WithChildren replaces the input.
func (n *Project) WithChildren(k []Node) Node { c := *n; c.Input = k[0]; return &c }

// Schema names the projections.
func (n *Project) Schema() types.Schema { return projSchema(n.Exprs, n.Names) }

// String renders the node for EXPLAIN.
func (n *Project) String() string {
	parts := make([]string, len(n.Exprs))
	for i, e := range n.Exprs {
		parts[i] = n.Names[i] + "=[" + e.String() + "]"
	}
	return "LogicalProject(" + strings.Join(parts, ", ") + ")"
}

// Children returns the input.
func (n *Calc) Children() []Node { return []Node{n.Input} }

// WithChildren replaces the input.
func (n *Calc) WithChildren(k []Node) Node { c := *n; c.Input = k[0]; return &c }

// Schema names the projections.
func (n *Calc) Schema() types.Schema { return projSchema(n.Exprs, n.Names) }

// String renders the node for EXPLAIN.
func (n *Calc) String() string {
	s := "Calc(select=[" + selectList(n.Exprs, n.Names) + "]"
	if n.Cond != nil {
		s += ", where=[" + n.Cond.String() + "]"
	}
	return s + ")"
}

// selectList renders "a, +(b, 1) AS c".
func selectList(es []expr.Expr, names []string) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
		if parts[i] != names[i] {
			parts[i] += " AS " + names[i]
		}
	}
	return strings.Join(parts, ", ")
}

func projSchema(es []expr.Expr, names []string) types.Schema {
	cols := make([]types.Column, len(es))
	for i, e := range es {
		cols[i] = types.Column{Name: names[i], Type: e.Type()}
	}
	return types.Schema{Columns: cols}
}

// Children returns the input.
func (n *Aggregate) Children() []Node { return []Node{n.Input} }

// WithChildren replaces the input.
func (n *Aggregate) WithChildren(k []Node) Node { c := *n; c.Input = k[0]; return &c }

// Schema is the keys then the aggregates.
func (n *Aggregate) Schema() types.Schema {
	in := n.Input.Schema()
	var cols []types.Column
	for i, k := range n.Keys {
		cols = append(cols, types.Column{Name: n.Names[i], Type: in.Columns[k].Type.Plain()})
	}
	for j, a := range n.Aggs {
		cols = append(cols, types.Column{Name: n.Names[len(n.Keys)+j], Type: a.Type})
	}
	return types.Schema{Columns: cols}
}

// String renders the node for EXPLAIN.
func (n *Aggregate) String() string {
	in := n.Input.Schema()
	keys := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		keys[i] = in.Columns[k].Name
	}
	s := "LogicalAggregate(group=[{" + strings.Join(keys, ", ") + "}]"
	for j, a := range n.Aggs {
		s += ", " + n.Names[len(n.Keys)+j] + "=[" + a.Name + "]"
	}
	return s + ")"
}

// groupAggDesc renders the physical operator, as Flink does.
func (n *Aggregate) groupAggDesc() string {
	in := n.Input.Schema()
	keys := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		keys[i] = in.Columns[k].Name
	}
	sel := append([]string{}, keys...)
	for j, a := range n.Aggs {
		name := n.Names[len(n.Keys)+j]
		if name == a.Name {
			sel = append(sel, a.Name)
		} else {
			sel = append(sel, a.Name+" AS "+name)
		}
	}
	attrs := ""
	if len(keys) > 0 {
		attrs = "groupBy=[" + strings.Join(keys, ", ") + "], "
	}
	switch {
	case n.partial:
		attrs += "partialFinalType=[PARTIAL], "
	case n.final:
		attrs += "partialFinalType=[FINAL], "
	}
	return "GroupAggregate(" + attrs + "select=[" + strings.Join(sel, ", ") + "])"
}

// Children returns the inputs.
func (n *Union) Children() []Node { return n.Inputs }

// WithChildren replaces the inputs.
func (n *Union) WithChildren(k []Node) Node { return &Union{Inputs: k} }

// Schema is the first input's; a column is a time attribute only if it is
// one in every input.
func (n *Union) Schema() types.Schema {
	s := n.Inputs[0].Schema()
	var cols []types.Column
	for _, in := range n.Inputs[1:] {
		for i, c := range in.Schema().Columns {
			if i < len(s.Columns) && c.Type.Attr != s.Columns[i].Type.Attr {
				if cols == nil {
					cols = append([]types.Column(nil), s.Columns...)
				}
				cols[i].Type = cols[i].Type.Plain()
			}
		}
	}
	if cols != nil {
		s.Columns = cols
	}
	return s
}

// String renders the node for EXPLAIN.
func (n *Union) String() string { return "LogicalUnion(all=[true])" }

// Children returns the input.
func (n *Sink) Children() []Node { return []Node{n.Input} }

// WithChildren replaces the input.
func (n *Sink) WithChildren(k []Node) Node { c := *n; c.Input = k[0]; return &c }

// Schema is the input's.
func (n *Sink) Schema() types.Schema { return n.Input.Schema() }

// String renders the node for EXPLAIN.
func (n *Sink) String() string {
	return "LogicalSink(table=[" + n.Name + "], fields=[" + strings.Join(n.Schema().Names(), ", ") + "])"
}

// treeString renders a plan as an indented tree, Flink style: the last
// input of a node under "+- ", the others under ":- ".
func treeString[N interface{ Children() []N }](n N, label func(N) string) string {
	var b strings.Builder
	var walk func(n N, indent, conn string)
	walk = func(n N, indent, conn string) {
		b.WriteString(indent + conn + label(n) + "\n")
		switch conn {
		case "+- ":
			indent += "   "
		case ":- ":
			indent += ":  "
		}
		kids := n.Children()
		for i, k := range kids {
			c := ":- "
			if i == len(kids)-1 {
				c = "+- "
			}
			walk(k, indent, c)
		}
	}
	walk(n, "", "")
	return b.String()
}
