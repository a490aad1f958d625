package planner

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// Values is VALUES (…), (…) (and a SELECT without FROM): a bounded source
// of the given rows, each a list of constant expressions of the columns'
// types, evaluated when the source reads the row.
type Values struct {
	Rows  [][]expr.Expr
	Cols  types.Schema
	Pos   parser.Pos
	Label string // "Values" or, for a SELECT without FROM, the same
}

var _ Node = (*Values)(nil)

// Children returns nil.
func (n *Values) Children() []Node { return nil }

// WithChildren returns n.
func (n *Values) WithChildren([]Node) Node { return n }

// Schema returns the columns.
func (n *Values) Schema() types.Schema { return n.Cols }

// String renders the node for EXPLAIN.
func (n *Values) String() string { return "LogicalValues(tuples=[" + n.tuplesText() + "])" }

// tuplesText renders the rows as Flink does: [{ 1, 'a' }, { 2, 'b' }].
func (n *Values) tuplesText() string {
	var b strings.Builder
	b.WriteString("[")
	for i, r := range n.Rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("{ ")
		for j, e := range r {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.String())
		}
		b.WriteString(" }")
	}
	b.WriteString("]")
	return b.String()
}

// bindValues binds VALUES: each row's expressions over no columns, then
// each column coerced to the common type of its rows.
func (b *binder) bindValues(v *parser.Values) (Node, error) {
	eb := &exprBinder{sc: newScope(rel{node: &Values{}}), where: "in VALUES", loc: b.loc, cat: b.cat}
	rows := make([][]expr.Expr, len(v.Rows))
	var cols []types.Column
	for i, r := range v.Rows {
		if i > 0 && len(r.Values) != len(cols) {
			return nil, parser.Errorf(r.Pos, "VALUES: row %d has %d columns, row 1 has %d", i+1, len(r.Values), len(cols))
		}
		rows[i] = make([]expr.Expr, len(r.Values))
		for j, x := range r.Values {
			if containsAgg(x) {
				return nil, parser.Errorf(x.Position(), "aggregate functions are not allowed in VALUES")
			}
			e, err := eb.bind(x)
			if err != nil {
				return nil, err
			}
			rows[i][j] = e
			if i == 0 {
				cols = append(cols, types.Column{Name: fmt.Sprintf("EXPR$%d", j), Type: e.Type()})
				continue
			}
			t, ok := expr.CommonType(cols[j].Type, e.Type())
			if !ok {
				return nil, parser.Errorf(x.Position(), "VALUES: column %d has types %s and %s", j+1, cols[j].Type.Kind, e.Type().Kind)
			}
			cols[j].Type = t
		}
	}
	for j, c := range cols {
		if c.Type.Kind == types.KindNull {
			return nil, parser.Errorf(v.Rows[0].Values[j].Position(), "VALUES: column %d is NULL in every row: give it a type with CAST(NULL AS type)", j+1)
		}
		for i := range rows {
			e, err := expr.Coerce(rows[i][j], c.Type)
			if err != nil {
				return nil, parser.Errorf(v.Rows[i].Values[j].Position(), "VALUES: %s", err.Error())
			}
			rows[i][j] = e
		}
	}
	return &Values{Rows: rows, Cols: types.Schema{Columns: cols}, Pos: v.Pos}, nil
}

// valuesNode is a Values source: one subtask that emits the rows once.
type valuesNode struct {
	physBase
	values *Values
}

func (x *Values) lower(_ *physBuilder, _ []physNode) (physNode, error) {
	return &valuesNode{
		physBase: physBase{tr: traits{schema: x.Cols, mode: connector.ModeInsertOnly, parallelism: 1}},
		values:   x,
	}, nil
}

func (p *valuesNode) desc() string {
	return "Values(tuples=[" + p.values.tuplesText() + "], fields=[" + fields(p.values.Cols) + "])"
}

func (p *valuesNode) canon() string {
	return "values " + p.values.Cols.String() + " " + p.values.tuplesText()
}

func (p *valuesNode) addTo(b *graphBuilder, id string, _ [][]outlet) ([]outlet, error) {
	v := &exec.Vertex{
		ID:              b.sourceID(id),
		Parallelism:     1,
		Source:          &valuesSource{rows: p.values.Rows},
		SourceWidth:     p.values.Cols.Len(),
		SourceName:      "VALUES",
		SourceConnector: "values",
	}
	b.g.Vertices = append(b.g.Vertices, v)
	return []outlet{{vertex: len(b.g.Vertices) - 1}}, nil
}

// valuesSource emits constant rows, bounded. Its position is the number of
// rows emitted.
type valuesSource struct {
	rows [][]expr.Expr
}

// Bounded implements connector.Source.
func (s *valuesSource) Bounded() bool { return true }

// Open implements connector.Source: subtask 0 reads every row. Its
// PROCTIME() calls read the reader's time (valuesReader.procMS).
func (s *valuesSource) Open(subtask, _ int) (connector.SourceReader, error) {
	r := &valuesReader{rows: s.rows, clock: time.Now}
	if subtask != 0 {
		r.next = len(s.rows)
	}
	// The source's rows are shared by its readers: a row with a
	// PROCTIME() call is bound in a copy.
	for i, row := range s.rows {
		var bound []expr.Expr
		for j, e := range row {
			if b, ok := expr.BindProctime(e, &r.procMS); ok {
				if bound == nil {
					bound = slices.Clone(row)
				}
				bound[j] = b
			}
		}
		if bound != nil {
			if !r.proctime {
				r.rows, r.proctime = slices.Clone(s.rows), true
			}
			r.rows[i] = bound
		}
	}
	return r, nil
}

type valuesReader struct {
	rows [][]expr.Expr
	next int
	// procMS is the processing time the rows' PROCTIME() calls read (if
	// proctime): clock's, read once per Next call.
	procMS   int64
	proctime bool
	clock    func() time.Time
}

var _ exec.ClockReader = (*valuesReader)(nil)

// SetClock implements exec.ClockReader: PROCTIME() reads the task's clock.
func (r *valuesReader) SetClock(clock func() time.Time) { r.clock = clock }

// Next implements connector.SourceReader.
func (r *valuesReader) Next(_ context.Context, b *types.Batch, max int) error {
	if r.proctime {
		r.procMS = r.clock().UnixMilli()
	}
	for n := 0; n < max && r.next < len(r.rows); n++ {
		row := b.AppendEmpty(types.Insert)
		for j, e := range r.rows[r.next] {
			v, err := e.Eval(nil)
			if err != nil {
				return fmt.Errorf("VALUES row %d, column %d: %w", r.next+1, j+1, err)
			}
			row[j] = v
		}
		r.next++
	}
	if r.next >= len(r.rows) {
		return io.EOF
	}
	return nil
}

// Position implements connector.SourceReader.
func (r *valuesReader) Position() ([]byte, error) {
	return binary.BigEndian.AppendUint64(nil, uint64(r.next)), nil
}

// Seek implements connector.SourceReader.
func (r *valuesReader) Seek(pos []byte) error {
	if len(pos) != 8 {
		return errors.New("VALUES: bad position: want 8 bytes")
	}
	n := binary.BigEndian.Uint64(pos)
	if n > uint64(len(r.rows)) {
		return fmt.Errorf("VALUES: position %d is beyond the %d rows", n, len(r.rows))
	}
	r.next = int(n)
	return nil
}

// Close implements connector.SourceReader.
func (r *valuesReader) Close() error { return nil }
