package exec

import (
	"fmt"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// calcOp filters rows and evaluates projections (see NewCalc).
type calcOp struct {
	filter expr.Expr
	proj   []expr.Expr
	out    *types.Batch
}

var _ Operator = (*calcOp)(nil)

// Open implements Operator.
func (c *calcOp) Open(*OpContext) error { return nil }

// Process implements Operator.
func (c *calcOp) Process(_ int, b *types.Batch, out Emitter) error {
	if c.filter == nil && c.proj == nil {
		return out.Emit(b)
	}
	width := b.Width
	if c.proj != nil {
		width = len(c.proj)
	}
	if c.out == nil || c.out.Width != width {
		c.out = types.NewBatch(width, b.Len())
	}
	o := c.out
	o.Reset()
	for i := range b.Len() {
		row := b.Row(i)
		if c.filter != nil {
			v, err := c.filter.Eval(row)
			if err != nil {
				return fmt.Errorf("filter %s: %w", c.filter, err)
			}
			if v.IsNull() || !v.Bool() {
				continue
			}
		}
		if c.proj == nil {
			o.Append(b.Kinds[i], row)
			continue
		}
		dst := o.AppendEmpty(b.Kinds[i])
		for k, p := range c.proj {
			v, err := p.Eval(row)
			if err != nil {
				return fmt.Errorf("projection %d (%s): %w", k, p, err)
			}
			dst[k] = v
		}
	}
	if o.Len() == 0 {
		return nil
	}
	err := out.Emit(o)
	o.Reset()
	return err
}

// Finish implements Operator.
func (c *calcOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (c *calcOp) Close() error { c.out = nil; return nil }
