package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

type pkind int

const (
	pScan pkind = iota
	pCalc
	pExchange
	pAgg
	pUnion
	pSink
	pEnforcer
)

// pnode is a physical plan node: an operator with its parallelism, or an
// exchange between operators, or a union (which becomes several inputs of
// its consumer in the job graph).
type pnode struct {
	kind        pkind
	desc        string // operator description, as EXPLAIN prints it
	canon       string // what the operator computes, without column names: the basis of its id
	kids        []*pnode
	schema      types.Schema
	mode        connector.ChangelogMode
	uniqueKeys  keySet // sets of columns unique in the result; nil: none known
	upsertKeys  keySet // sets of columns by which the changes apply; nil: none known
	parallelism int
	id          string

	scan      *Scan
	source    connector.Source
	watermark *exec.WatermarkSpec // pScan: the table's WATERMARK FOR, or nil
	calc      *Calc
	agg       *Aggregate
	part      exec.Partitioning
	sink      connector.Sink
	table     string // sink table name

	notNull      []int    // pEnforcer: the NOT NULL columns it checks
	notNullNames []string // and their names
	action       exec.NotNullAction
}

// Children returns the inputs.
func (p *pnode) Children() []*pnode { return p.kids }

// label is the node's line in EXPLAIN: its description with its
// changelog mode and keys (unique keys only where they differ from the
// upsert keys).
func (p *pnode) label() string {
	d := p.desc
	s := d[:len(d)-1] + ", changelogMode=[" + p.mode.String() + "]"
	if p.upsertKeys != nil {
		s += ", upsertKeys=" + keysText(p.upsertKeys, p.schema)
	}
	if p.uniqueKeys != nil && !slices.EqualFunc(p.uniqueKeys, p.upsertKeys, slices.Equal) {
		s += ", uniqueKeys=" + keysText(p.uniqueKeys, p.schema)
	}
	return s + ")"
}

// physBuilder lowers optimized logical plans to physical ones.
type physBuilder struct {
	p           *Planner
	parallelism int
	sinks       func(s *Sink, updating bool) (connector.Sink, error)
	pos         parser.Pos // the statement, for errors
}

func fields(s types.Schema) string { return strings.Join(s.Names(), ", ") }

func (b *physBuilder) build(n Node) (*pnode, error) {
	var kids []*pnode
	for _, k := range n.Children() {
		pk, err := b.build(k)
		if err != nil {
			return nil, err
		}
		kids = append(kids, pk)
	}
	out := &pnode{kids: kids, schema: n.Schema()}
	if len(kids) == 1 {
		out.mode, out.uniqueKeys, out.upsertKeys = kids[0].mode, kids[0].uniqueKeys, kids[0].upsertKeys
	}
	switch x := n.(type) {
	case *Scan:
		src, err := b.p.Connectors.Source(x.Table, b.p.Env)
		if err != nil {
			return nil, err
		}
		out.kind, out.scan, out.source, out.parallelism = pScan, x, src, b.parallelism
		out.watermark = x.Watermark
		out.desc = "TableSourceScan(table=[" + x.Table.Name + "], fields=[" + fields(x.Table.Schema) + "])"
		if x.Watermark != nil {
			out.desc = out.desc[:len(out.desc)-1] + ", rowtime=[" + x.Rowtime + "], watermark=[" + x.WatermarkText + "])"
		}
		out.canon = "scan " + key(x.Table.Name) + " " + x.Table.Schema.String()
		out.mode = connector.SourceChangelogMode(src)
		out.uniqueKeys = tableKeys(x.Table)
		out.upsertKeys = out.uniqueKeys
		if x.Computed != nil {
			// Computed columns: a projection right above the scan, chained
			// into the source task.
			out.schema = x.Table.Schema
			c := &Calc{Input: &Scan{Table: x.Table}, Exprs: x.Computed, Names: x.Columns.Names()}
			return &pnode{kind: pCalc, calc: c, kids: []*pnode{out}, schema: x.Columns, parallelism: out.parallelism,
				desc: c.String(), canon: calcCanon(c), mode: out.mode,
				uniqueKeys: projectKeys(out.uniqueKeys, c.Exprs), upsertKeys: projectKeys(out.upsertKeys, c.Exprs)}, nil
		}
	case *Calc:
		out.kind, out.calc, out.parallelism = pCalc, x, maxParallelism(kids)
		out.desc = x.String()
		out.canon = calcCanon(x)
		out.uniqueKeys = projectKeys(out.uniqueKeys, x.Exprs)
		out.upsertKeys = projectKeys(out.upsertKeys, x.Exprs)
	case *Aggregate:
		inMode := kids[0].mode
		if inMode.Contains(types.UpdateAfter) && !inMode.Contains(types.UpdateBefore) {
			return nil, parser.Errorf(b.pos, "%s over an upsert changelog (%s, no -U) is not supported yet", x.groupAggDesc(), inMode.Kinds())
		}
		ex := &pnode{kind: pExchange, kids: kids, schema: x.Input.Schema(), mode: inMode,
			uniqueKeys: kids[0].uniqueKeys, upsertKeys: kids[0].upsertKeys}
		in := x.Input.Schema()
		if len(x.Keys) == 0 {
			ex.part = exec.Partitioning{Kind: exec.Global}
			ex.desc = "Exchange(distribution=[single])"
			out.parallelism = 1
		} else {
			names := make([]string, len(x.Keys))
			for i, k := range x.Keys {
				names[i] = in.Columns[k].Name
			}
			ex.part = exec.Partitioning{Kind: exec.Hash, Keys: x.Keys}
			ex.desc = "Exchange(distribution=[hash[" + strings.Join(names, ", ") + "]])"
			ex.upsertKeys = keysContaining(ex.upsertKeys, x.Keys)
			out.parallelism = b.parallelism
		}
		ex.parallelism = out.parallelism
		ex.canon = fmt.Sprintf("exchange %v %v", ex.part.Kind, ex.part.Keys)
		out.kind, out.agg, out.kids = pAgg, x, []*pnode{ex}
		out.desc = x.groupAggDesc()
		out.canon = aggCanon(x)
		out.mode = aggMode(inMode)
		out.uniqueKeys = leadingKey(len(x.Keys))
		out.upsertKeys = out.uniqueKeys
	case *Union:
		out.kind, out.parallelism = pUnion, maxParallelism(kids)
		out.desc = "Union(all=[true], union=[" + fields(out.schema) + "])"
		out.canon = "union"
		for _, k := range kids {
			out.mode = out.mode.Union(k.mode)
		}
		out.uniqueKeys, out.upsertKeys = nil, nil
	case *Sink:
		upd := !kids[0].mode.IsInsertOnly()
		sink, err := b.sinks(x, upd)
		if err != nil {
			return nil, err
		}
		if err := checkSinkMode(x, sink, kids[0]); err != nil {
			return nil, parser.Errorf(b.pos, "%s", err.Error())
		}
		out.kind, out.sink, out.table = pSink, sink, x.Name
		out.desc = "Sink(table=[" + x.Name + "], fields=[" + fields(out.schema) + "])"
		out.canon = "sink " + key(x.Name)
		if enf, err := b.notNullEnforcer(x, kids[0]); err != nil {
			return nil, err
		} else if enf != nil {
			kids = []*pnode{enf}
			out.kids = kids
		}
		in := kids[0]
		out.parallelism = in.parallelism
		if sp := sink.Parallelism(); sp > 0 && sp != in.parallelism {
			out.parallelism = sp
			ex := &pnode{kind: pExchange, kids: kids, schema: in.schema, mode: in.mode, parallelism: sp,
				part: exec.Partitioning{Kind: exec.Rebalance}, desc: "Exchange(distribution=[rebalance])",
				uniqueKeys: in.uniqueKeys} // a rebalance reorders the changes of a key
			if x.Table != nil && len(x.Table.PrimaryKey) > 0 && upd {
				ex.part = exec.Partitioning{Kind: exec.Hash, Keys: x.Table.PrimaryKey}
				var names []string
				for _, k := range x.Table.PrimaryKey {
					names = append(names, in.schema.Columns[k].Name)
				}
				ex.desc = "Exchange(distribution=[hash[" + strings.Join(names, ", ") + "]])"
				ex.upsertKeys = keysContaining(in.upsertKeys, x.Table.PrimaryKey)
			}
			ex.canon = fmt.Sprintf("exchange %v %v", ex.part.Kind, ex.part.Keys)
			out.kids = []*pnode{ex}
		}
		out.uniqueKeys, out.upsertKeys = out.kids[0].uniqueKeys, out.kids[0].upsertKeys
	default:
		return nil, fmt.Errorf("planner: no physical operator for %T", n)
	}
	return out, nil
}

// notNullEnforcer returns the operator that checks the NOT NULL columns of
// sink x's table which its input in may fill with NULL, as Flink's
// ConstraintEnforcer does; nil when the input's types prove every NOT NULL
// column non-null (then nothing is checked at run time).
func (b *physBuilder) notNullEnforcer(x *Sink, in *pnode) (*pnode, error) {
	if x.Table == nil {
		return nil, nil
	}
	var cols []int
	var names []string
	for i, c := range x.Table.Schema.Columns {
		if c.Type.NotNull && i < in.schema.Len() && !in.schema.Columns[i].Type.NotNull {
			cols = append(cols, i)
			names = append(names, c.Name)
		}
	}
	if len(cols) == 0 {
		return nil, nil
	}
	action, err := b.p.notNullAction()
	if err != nil {
		return nil, err
	}
	return &pnode{
		kind: pEnforcer, kids: []*pnode{in}, schema: in.schema, mode: in.mode, parallelism: in.parallelism,
		uniqueKeys: in.uniqueKeys, upsertKeys: in.upsertKeys,
		desc:    exec.NotNullDesc(names, action),
		canon:   fmt.Sprintf("notnull %s %v %v", key(x.Name), cols, action),
		table:   x.Name,
		notNull: cols, notNullNames: names, action: action,
	}, nil
}

func maxParallelism(ps []*pnode) int {
	m := 1
	for _, p := range ps {
		m = max(m, p.parallelism)
	}
	return m
}

// calcCanon describes a Calc by its expressions over input positions.
func calcCanon(c *Calc) string {
	var b strings.Builder
	b.WriteString("calc")
	if c.Cond != nil {
		b.WriteString(" where " + digest(c.Cond))
	}
	for _, e := range c.Exprs {
		b.WriteString(" | " + digest(e))
	}
	return b.String()
}

// aggCanon describes an aggregate by its key positions and calls.
func aggCanon(a *Aggregate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "groupagg keys=%v", a.Keys)
	for _, c := range a.Aggs {
		fmt.Fprintf(&b, " | %d distinct=%v arg=%d %s -> %s", c.Func, c.Distinct, c.Arg, c.ArgType, c.Type)
	}
	return b.String()
}
