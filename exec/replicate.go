package exec

import (
	"github.com/weir-sql/weir/types"
)

// replicateChunk is the most rows Replicate puts in one output batch.
const replicateChunk = 1024

// NewReplicate returns a factory for the Replicate operator of INTERSECT
// ALL and EXCEPT ALL (Flink's replicate_rows table function): each input
// row is emitted n times, with its first width values and its kind, where
// n is the BIGINT in column count (NULL or n <= 0: not at all). It is
// stateless; output batches hold at most replicateChunk rows, so a large
// n does not make one huge batch.
func NewReplicate(width, count int) func() Operator {
	return func() Operator { return &replicateOp{width: width, count: count} }
}

// replicateOp is the Replicate operator (see NewReplicate).
type replicateOp struct {
	width, count int
	out          *types.Batch
}

var _ Operator = (*replicateOp)(nil)

// Open implements Operator.
func (o *replicateOp) Open(*OpContext) error {
	o.out = types.NewBatch(o.width, replicateChunk)
	return nil
}

// Process implements Operator.
func (o *replicateOp) Process(_ int, b *types.Batch, out Emitter) error {
	res := o.out
	res.Reset()
	for i := range b.Len() {
		row := b.Row(i)
		c := row[o.count]
		if c.IsNull() {
			continue
		}
		for n := c.Int(); n > 0; n-- {
			res.Append(b.Kinds[i], row[:o.width])
			if res.Len() == replicateChunk {
				if err := out.Emit(res); err != nil {
					return err
				}
				res.Reset()
			}
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
func (o *replicateOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *replicateOp) Close() error { o.out = nil; return nil }
