package exec

import (
	"strings"

	"github.com/weir-sql/weir/types"
)

// NewExpand returns a factory for the Expand operator of GROUPING SETS,
// ROLLUP and CUBE: it emits each input row (of width values) once per
// grouping set i, with the columns nulls[i] set to NULL and a last BIGINT
// column ($e) holding i, keeping the row's kind. It is stateless.
func NewExpand(width int, nulls [][]int) func() Operator {
	return func() Operator { return &expandOp{width: width, nulls: nulls} }
}

// expandOp is the Expand operator (see NewExpand).
type expandOp struct {
	width int
	nulls [][]int
	out   *types.Batch
}

var _ Operator = (*expandOp)(nil)

// Open implements Operator.
func (o *expandOp) Open(*OpContext) error { return nil }

// Process implements Operator: one output batch per input batch, the rows
// of each set in turn.
func (o *expandOp) Process(_ int, b *types.Batch, out Emitter) error {
	n := b.Len()
	if o.out == nil {
		o.out = types.NewBatch(o.width+1, n*len(o.nulls))
	}
	res := o.out
	res.Reset()
	for set, nulls := range o.nulls {
		e := types.BigIntValue(int64(set))
		for i := range n {
			row := res.AppendEmpty(b.Kinds[i])
			copy(row, b.Row(i))
			for _, c := range nulls {
				row[c] = types.NullValue()
			}
			row[o.width] = e
		}
	}
	if res.Len() == 0 {
		return nil
	}
	err := out.Emit(res)
	res.Reset()
	return err
}

// Finish implements Operator.
func (o *expandOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *expandOp) Close() error { o.out = nil; return nil }

// ExpandDesc renders Expand for EXPLAIN, e.g.
// "Expand(sets=[[a, b], [a], []], expand=[$e])": the columns kept by each
// grouping set.
func ExpandDesc(sets [][]string) string {
	var b strings.Builder
	b.WriteString("Expand(sets=[")
	for i, s := range sets {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("[" + strings.Join(s, ", ") + "]")
	}
	b.WriteString("], expand=[$e])")
	return b.String()
}
