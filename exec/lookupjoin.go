package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// LookupJoinSpec describes a processing-time temporal join against a
// lookup table (FOR SYSTEM_TIME AS OF a left PROCTIME() column): the
// whole table is loaded into memory by each subtask and every left row is
// joined, on arrival, with the table's rows of its key.
type LookupJoinSpec struct {
	// Type is InnerJoin or LeftOuterJoin.
	Type JoinType
	// LeftKeys are key columns of the left row, RightKeys the matching
	// columns of the table's rows (after Computed and Extra).
	LeftKeys, RightKeys []int
	// LeftWidth is the left row's width; RightWidth the width of the
	// table's rows as joined (after Computed and Extra).
	LeftWidth, RightWidth int
	// Residual is the rest of the condition over left ++ right (nil: none).
	Residual expr.Expr
	// Open builds a source that reads the whole table (bounded and
	// insert-only); it is called at each (re)load, so a reload sees the
	// files as they are then.
	Open func() (connector.Source, error)
	// SourceWidth is the width of the rows the source reads; Computed, if
	// not nil, computes the table's columns from them (computed columns),
	// and Extra appends join-key columns computed over those.
	SourceWidth int
	Computed    []expr.Expr
	Extra       []expr.Expr
	// Reload is how often the table is loaded again (0: never).
	Reload time.Duration
	// Now is the processing-time clock; nil means the task's
	// (OpContext.Clock).
	Now func() time.Time
	// Table names the table in errors.
	Table string
}

// NewLookupJoin returns the constructor of a lookup join operator: a
// one-input operator with no checkpointed state (the table is loaded
// again after a restore), emitting +I rows for insert-only input and the
// input row's kind otherwise.
func NewLookupJoin(spec LookupJoinSpec) func() Operator {
	return func() Operator { return &lookupJoinOp{spec: spec} }
}

type lookupJoinOp struct {
	spec  LookupJoinSpec
	index map[string][]int32 // encoded key → row offsets into rows
	rows  []types.Value      // the table's rows, RightWidth each
	next  time.Time          // the next reload (zero: never)
	clock func() time.Time   // spec.Now, or the task's clock
	kb    []byte
	joinOutput
}

// Open implements Operator: it loads the table.
func (o *lookupJoinOp) Open(ctx *OpContext) error {
	if o.spec.Type != InnerJoin && o.spec.Type != LeftOuterJoin {
		return fmt.Errorf("lookup join: join type %d (INNER or LEFT only)", o.spec.Type)
	}
	o.clock = o.spec.Now
	if o.clock == nil {
		o.clock = clockOf(ctx)
	}
	o.joinOutput.open(o.spec.LeftWidth, o.spec.RightWidth)
	return o.load()
}

// load reads the whole table into a fresh index.
func (o *lookupJoinOp) load() error {
	src, err := o.spec.Open()
	if err != nil {
		return fmt.Errorf("lookup table '%s': %w", o.spec.Table, err)
	}
	r, err := src.Open(0, 1)
	if err != nil {
		return fmt.Errorf("lookup table '%s': %w", o.spec.Table, err)
	}
	defer r.Close()
	index := map[string][]int32{}
	var rows []types.Value
	b := types.NewBatch(o.spec.SourceWidth, 1024)
	row := make([]types.Value, o.spec.RightWidth)
	var computed []types.Value
	if o.spec.Computed != nil {
		computed = make([]types.Value, len(o.spec.Computed))
	}
	for done := false; !done; {
		b.Reset()
		err := r.Next(context.Background(), b, 1024)
		if errors.Is(err, io.EOF) {
			done = true
		} else if err != nil {
			return fmt.Errorf("lookup table '%s': %w", o.spec.Table, err)
		}
		for i := range b.Len() {
			if b.Kinds[i] != types.Insert {
				return fmt.Errorf("lookup table '%s': a %s row (a lookup table must be insert-only)", o.spec.Table, b.Kinds[i])
			}
			in := b.Row(i)
			if computed != nil {
				for c, e := range o.spec.Computed {
					if computed[c], err = e.Eval(in); err != nil {
						return fmt.Errorf("lookup table '%s': column %d: %w", o.spec.Table, c, err)
					}
				}
				in = computed
			}
			n := copy(row, in)
			for c, e := range o.spec.Extra {
				if row[n+c], err = e.Eval(in); err != nil {
					return fmt.Errorf("lookup table '%s': join key %s: %w", o.spec.Table, e, err)
				}
			}
			if hasNullKey(row, o.spec.RightKeys) {
				continue
			}
			kb := o.kb[:0]
			for _, c := range o.spec.RightKeys {
				kb = types.AppendKey(kb, row[c])
			}
			o.kb = kb
			index[string(kb)] = append(index[string(kb)], int32(len(rows)))
			rows = append(rows, row...)
		}
	}
	o.index, o.rows = index, rows
	if o.spec.Reload > 0 {
		o.next = o.clock().Add(o.spec.Reload)
	}
	return nil
}

// Process implements Operator: each left row joins the table's rows of
// its key (after a reload when one is due).
func (o *lookupJoinOp) Process(_ int, b *types.Batch, out Emitter) error {
	if !o.next.IsZero() && !o.clock().Before(o.next) {
		if err := o.load(); err != nil {
			return err
		}
	}
	w := o.spec.RightWidth
	for i := range b.Len() {
		row := b.Row(i)
		matched := false
		if !hasNullKey(row, o.spec.LeftKeys) {
			kb := o.kb[:0]
			for _, c := range o.spec.LeftKeys {
				kb = types.AppendKey(kb, row[c])
			}
			o.kb = kb
			for _, off := range o.index[string(kb)] {
				r := o.rows[off : int(off)+w : int(off)+w]
				ok, err := o.matches(row, r)
				if err != nil {
					return err
				}
				if ok {
					matched = true
					if err := o.emitRow(b.Kinds[i], 0, row, r, 1, out); err != nil {
						return err
					}
				}
			}
		}
		if !matched && o.spec.Type == LeftOuterJoin {
			if err := o.emitRow(b.Kinds[i], 0, row, nil, 1, out); err != nil {
				return err
			}
		}
	}
	return o.flush(out)
}

// matches evaluates the residual on a left row with a table row.
func (o *lookupJoinOp) matches(row, other []types.Value) (bool, error) {
	if o.spec.Residual == nil {
		return true, nil
	}
	copy(o.joined[:o.wl], row)
	copy(o.joined[o.wl:], other)
	v, err := o.spec.Residual.Eval(o.joined)
	if err != nil {
		return false, fmt.Errorf("join condition %s: %w", o.spec.Residual, err)
	}
	return !v.IsNull() && v.Bool(), nil
}

// Finish implements Operator.
func (o *lookupJoinOp) Finish(out Emitter) error { return o.flush(out) }

// Close implements Operator.
func (o *lookupJoinOp) Close() error { return nil }
