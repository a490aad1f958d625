package exec

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/weir-sql/weir/types"
)

// NotNullAction is what the not-null enforcer does with a row that has NULL
// in a NOT NULL sink column ('table.exec.sink.not-null-enforcer').
type NotNullAction int

// The not-null enforcer's actions.
const (
	// NotNullError fails the job (Flink's default).
	NotNullError NotNullAction = iota
	// NotNullDrop drops the row and counts it (Metrics.Dropped).
	NotNullDrop
)

func (a NotNullAction) String() string {
	if a == NotNullDrop {
		return "DROP"
	}
	return "ERROR"
}

// NewNotNullEnforcer returns a factory for the operator the planner puts
// before a sink whose NOT NULL columns cols (named names) may receive NULL
// from its input: it passes batches through unchanged while those columns
// hold no NULL, and for a row that has one either fails naming the table,
// the column and the row, or drops the row and counts it.
func NewNotNullEnforcer(table string, cols []int, names []string, action NotNullAction) func() Operator {
	return func() Operator {
		return &notNullOp{table: table, cols: cols, names: names, action: action}
	}
}

// notNullOp is the not-null enforcer (see NewNotNullEnforcer).
type notNullOp struct {
	table   string
	cols    []int
	names   []string
	action  NotNullAction
	dropped *atomic.Int64
	out     *types.Batch
}

var _ Operator = (*notNullOp)(nil)

// Open implements Operator.
func (o *notNullOp) Open(ctx *OpContext) error {
	o.dropped = ctx.Dropped
	return nil
}

// firstNull returns the index in o.cols of the first NOT NULL column that
// is NULL in row, or -1.
func (o *notNullOp) firstNull(row []types.Value) int {
	for i, c := range o.cols {
		if row[c].IsNull() {
			return i
		}
	}
	return -1
}

// Process implements Operator. A batch without NULL in the checked columns
// (the usual case) is forwarded as is; the check reads only those columns.
func (o *notNullOp) Process(_ int, b *types.Batch, out Emitter) error {
	n := b.Len()
	first := -1
	for i := 0; i < n && first < 0; i++ {
		if o.firstNull(b.Row(i)) >= 0 {
			first = i
		}
	}
	if first < 0 {
		return out.Emit(b)
	}
	if o.action == NotNullError {
		row := b.Row(first)
		c := o.firstNull(row)
		return fmt.Errorf("sink %s: column '%s' is NOT NULL, however, a null value is being written into it (row %s). "+
			"You can set job configuration 'table.exec.sink.not-null-enforcer'='DROP' to suppress this exception and drop such records silently",
			o.table, o.names[c], types.FormatRow(b.Kinds[first], row))
	}
	if o.out == nil || o.out.Width != b.Width {
		o.out = types.NewBatch(b.Width, n)
	}
	keep := o.out
	keep.Reset()
	for i := range first {
		keep.Append(b.Kinds[i], b.Row(i))
	}
	var dropped int64
	for i := first; i < n; i++ {
		row := b.Row(i)
		if o.firstNull(row) >= 0 {
			dropped++
			continue
		}
		keep.Append(b.Kinds[i], row)
	}
	if o.dropped != nil {
		o.dropped.Add(dropped)
	}
	if keep.Len() == 0 {
		return nil
	}
	err := out.Emit(keep)
	keep.Reset()
	return err
}

// Finish implements Operator.
func (o *notNullOp) Finish(Emitter) error { return nil }

// Close implements Operator.
func (o *notNullOp) Close() error { o.out = nil; return nil }

// NotNullDesc renders the enforcer for EXPLAIN, e.g.
// "ConstraintEnforcer(notNull=[id, name], action=[ERROR])".
func NotNullDesc(names []string, action NotNullAction) string {
	return "ConstraintEnforcer(notNull=[" + strings.Join(names, ", ") + "], action=[" + action.String() + "])"
}
