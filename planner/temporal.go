package planner

import (
	"fmt"
	"strings"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// TemporalJoin is `Left [LEFT] JOIN Right FOR SYSTEM_TIME AS OF
// left.time ON …`. When the time is a rowtime it is an event-time temporal
// join of a versioned Right (a primary key and a rowtime, the version
// time); when it is a processing-time attribute it is a lookup join and
// Right is the table's Scan, read whole by the operator rather than
// streamed (it is not a child, so the rules leave it alone). Keys and Cond
// are as in Join after key extraction.
type TemporalJoin struct {
	Left, Right         Node
	Kind                JoinKind // JoinInner or JoinLeft
	Cond                expr.Expr
	Keyed               bool
	LeftKeys, RightKeys []int
	// LeftTime is the AS OF column of Left; RightTime Right's rowtime
	// column (event time only).
	LeftTime, RightTime int
	// Lookup marks a processing-time (lookup) join; RightExtra are the
	// join-key columns computed over the table's rows (appended to them).
	Lookup     bool
	RightExtra []expr.Expr
	// RightKeyCols is, per right key, the column of Right it is (a
	// widening integer cast of it, for a key of another type), or -1:
	// where the primary key of a versioned Right is looked for.
	RightKeyCols []int
	// Table names the right table or view; Pos is the JOIN's position.
	Table string
	Pos   parser.Pos
}

var _ Node = (*TemporalJoin)(nil)

// Children returns Left and, for an event-time join, Right.
func (n *TemporalJoin) Children() []Node {
	if n.Lookup {
		return []Node{n.Left}
	}
	return []Node{n.Left, n.Right}
}

// WithChildren replaces the inputs.
func (n *TemporalJoin) WithChildren(k []Node) Node {
	c := *n
	c.Left = k[0]
	if !n.Lookup {
		c.Right = k[1]
	}
	return &c
}

// rightSchema is the right side's columns as joined: the table's, plus
// the computed key columns of a lookup join.
func (n *TemporalJoin) rightSchema() types.Schema {
	if len(n.RightExtra) == 0 {
		return n.Right.Schema()
	}
	return withExtra(n.Right, n.RightExtra).Schema()
}

// Schema is the left columns (with their time attributes, as in Flink)
// then the right ones as plain, nullable for a LEFT join.
func (n *TemporalJoin) Schema() types.Schema {
	l, r := n.Left.Schema(), n.rightSchema()
	cols := append(make([]types.Column, 0, l.Len()+r.Len()), l.Columns...)
	for _, c := range r.Columns {
		c.Type = c.Type.Plain()
		if n.Kind == JoinLeft {
			c.Type = c.Type.Nullable()
		}
		cols = append(cols, c)
	}
	return types.Schema{Columns: cols}
}

// String renders the node for EXPLAIN.
func (n *TemporalJoin) String() string {
	cond := "true"
	if n.Cond != nil {
		cond = n.Cond.String()
	}
	kind := "EventTime"
	if n.Lookup {
		kind = "ProcTime, table=[" + n.Table + "]"
	}
	s := fmt.Sprintf("LogicalTemporalJoin(%s, joinType=[%s], asOf=[%s]", kind, n.Kind, n.Left.Schema().Columns[n.LeftTime].Name)
	if n.Keyed {
		l, r := n.Left.Schema(), n.rightSchema()
		parts := make([]string, len(n.LeftKeys))
		for i := range n.LeftKeys {
			parts[i] = l.Columns[n.LeftKeys[i]].Name + " = " + r.Columns[n.RightKeys[i]].Name
		}
		return s + fmt.Sprintf(", keys=[%s], residual=[%s])", strings.Join(parts, ", "), cond)
	}
	return s + ", condition=[" + cond + "])"
}

// temporalRight returns the right side of n when it is a table read FOR
// SYSTEM_TIME AS OF.
func temporalRight(n *parser.Join) *parser.TableRef {
	if t, ok := n.Right.(*parser.TableRef); ok && t.AsOf != nil {
		return t
	}
	return nil
}

// bindTemporalJoin binds a join whose right side is read FOR SYSTEM_TIME
// AS OF a time attribute of the left side.
func (b *binder) bindTemporalJoin(n *parser.Join, tr *parser.TableRef) (rel, error) {
	var kind JoinKind
	switch n.Kind {
	case parser.InnerJoin:
		kind = JoinInner
	case parser.LeftJoin:
		kind = JoinLeft
	default:
		return rel{}, parser.Errorf(n.Pos, "a temporal join (FOR SYSTEM_TIME AS OF) is JOIN or LEFT JOIN … ON, not %s", n.Kind)
	}
	if n.On == nil {
		return rel{}, parser.Errorf(n.Pos, "a temporal join needs ON with an equality between the two sides")
	}
	l, err := b.bindFrom(n.Left)
	if err != nil {
		return rel{}, err
	}
	plain := *tr
	plain.AsOf = nil
	r, err := b.bindFrom(&plain)
	if err != nil {
		return rel{}, err
	}
	// AS OF reads a time attribute of the left side.
	eb := &exprBinder{sc: newScope(l), where: "in FOR SYSTEM_TIME AS OF", loc: b.loc, cat: b.cat}
	at, err := eb.bind(tr.AsOf)
	if err != nil {
		return rel{}, err
	}
	col, ok := at.(*expr.Column)
	if !ok || (col.T.Attr != types.Rowtime && col.T.Attr != types.Proctime) {
		return rel{}, parser.Errorf(tr.AsOf.Position(), "FOR SYSTEM_TIME AS OF needs a time attribute of the left side: a rowtime (a column with a WATERMARK: an event-time temporal join) or a PROCTIME() column (a lookup join); '%s' is %s", parser.Format(tr.AsOf), at.Type())
	}
	j := &TemporalJoin{Left: l.node, Right: r.node, Kind: kind, LeftTime: col.Index, Lookup: col.T.Attr == types.Proctime, Table: tr.Name, Pos: n.Pos}
	rs := r.node.Schema()
	if j.Lookup {
		if _, ok := r.node.(*Scan); !ok {
			return rel{}, parser.Errorf(tr.Pos, "a lookup join (FOR SYSTEM_TIME AS OF a processing-time attribute) reads a table, but '%s' is a view", tr.Name)
		}
	} else {
		j.RightTime = -1
		for i, c := range rs.Columns {
			if c.Type.Attr == types.Rowtime {
				j.RightTime = i
			}
		}
		if j.RightTime < 0 {
			return rel{}, parser.Errorf(tr.Pos, "'%s' is not a versioned table: an event-time temporal join needs a rowtime on its right side (a WATERMARK FOR a column of the table) and a primary key", tr.Name)
		}
	}
	parts := append([]relPart{}, l.relParts()...)
	wl := l.node.Schema().Len()
	for _, p := range r.relParts() {
		for _, q := range parts {
			if p.qual != "" && strings.EqualFold(p.qual, q.qual) {
				return rel{}, parser.Errorf(tr.Pos, "'%s' appears twice in FROM: give each an alias", p.qual)
			}
		}
		p.start += wl
		parts = append(parts, p)
	}
	out := rel{node: j, parts: parts}
	sc := newScope(out)
	sc.schema = types.Schema{Columns: append(append([]types.Column{}, l.node.Schema().Columns...), rs.Columns...)}
	cb := &exprBinder{sc: sc, where: "in ON", loc: b.loc, cat: b.cat}
	cond, err := cb.bind(n.On)
	if err != nil {
		return rel{}, err
	}
	if err := wantBool(cond, n.On, "ON"); err != nil {
		return rel{}, err
	}
	j.Cond = cond
	return out, nil
}

// extractTemporalKeys splits a temporal join's condition into equi-join
// keys and a residual as extractJoinKeys does for a regular join (keys of
// different types or expressions are computed in one type below it and
// dropped above it). It needs at least one key pair.
func extractTemporalKeys(n Node) (Node, bool, error) {
	t, ok := n.(*TemporalJoin)
	if !ok || t.Keyed {
		return n, false, nil
	}
	res, _, err := extractJoinKeys(&Join{Left: t.Left, Right: t.Right, Kind: t.Kind, Cond: t.Cond})
	if err != nil {
		return nil, false, err
	}
	proj, _ := res.(*Project)
	j, ok := res.(*Join)
	if proj != nil {
		j, ok = proj.Input.(*Join)
	}
	if !ok {
		return nil, false, fmt.Errorf("planner: temporal join keys: unexpected %T", res)
	}
	if len(j.LeftKeys) == 0 {
		return nil, false, parser.Errorf(t.Pos, "a temporal join needs an equality between the two sides in ON (the join key; for an event-time join it must contain the primary key of '%s')", t.Table)
	}
	if j.Interval != nil {
		return nil, false, parser.Errorf(t.Pos, "a temporal join's ON cannot bound the two rowtimes (an interval join's condition): the version is chosen by FOR SYSTEM_TIME AS OF")
	}
	c := *t
	c.Keyed, c.LeftKeys, c.RightKeys, c.Cond, c.Left = true, j.LeftKeys, j.RightKeys, j.Cond, j.Left
	rw := t.Right.Schema().Len()
	c.RightKeyCols = make([]int, len(j.RightKeys))
	for i, k := range j.RightKeys {
		c.RightKeyCols[i] = -1
		if k < rw {
			c.RightKeyCols[i] = k
		} else if p, ok := j.Right.(*Project); ok {
			c.RightKeyCols[i] = castColumn(p.Exprs[k])
		}
	}
	if !t.Lookup {
		c.Right = j.Right
	} else if p, ok := j.Right.(*Project); ok && p.Input == t.Right {
		c.RightExtra = p.Exprs[t.Right.Schema().Len():]
	}
	if proj == nil {
		return &c, true, nil
	}
	// The projection that drops the key columns again, with the columns'
	// types (and time attributes) as the temporal join has them.
	sch := c.Schema()
	exprs := make([]expr.Expr, len(proj.Exprs))
	for i, e := range proj.Exprs {
		col, ok := e.(*expr.Column)
		if !ok {
			return nil, false, fmt.Errorf("planner: temporal join keys: projection of %s", e)
		}
		exprs[i] = expr.NewColumn(col.Index, sch.Columns[col.Index].Type, col.Name)
	}
	return &Project{Input: &c, Exprs: exprs, Names: proj.Names}, true, nil
}

// castColumn returns the column e reads when e is a column or an integer
// column cast to a wider integer type (which keeps values apart), else -1.
func castColumn(e expr.Expr) int {
	switch x := e.(type) {
	case *expr.Column:
		return x.Index
	case *expr.Cast:
		col, ok := x.X.(*expr.Column)
		if ok && !x.Try && isIntegerKind(col.T.Kind) && isIntegerKind(x.T.Kind) {
			return col.Index
		}
	}
	return -1
}

func isIntegerKind(k types.Kind) bool {
	switch k {
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		return true
	}
	return false
}
