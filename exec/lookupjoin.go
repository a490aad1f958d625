package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/state"
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
	spec.Residual = expr.CheapFirst(spec.Residual) // cheap operands of AND/OR first
	return func() Operator { return &lookupJoinOp{spec: spec} }
}

type lookupJoinOp struct {
	spec LookupJoinSpec
	// proc is the processing time PROCTIME() in the residual and the
	// table's computed columns reads (the clock's, read per batch).
	proc procClock
	// The index of the table's rows by key: with a single key whose every
	// value is an integer (of any integer type), ints maps its value to a
	// run of order (runs[g]..runs[g+1]); else index maps the encoded key
	// (types.AppendKey) to row offsets. Rows with a NULL key are in
	// neither: a NULL key never matches.
	index map[string][]int32
	ints  *state.IntTable
	runs  []int32          // ints: group g's rows are order[runs[g]:runs[g+1]]
	order []int32          // ints: row offsets into rows, grouped by key
	rows  []types.Value    // the table's rows, RightWidth each
	next  time.Time        // the next reload (zero: never)
	clock func() time.Time // spec.Now, or the task's clock
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
	o.proc.open(o.clock)
	o.spec.Residual = o.proc.bind(bindWatermark(ctx, o.spec.Residual))
	o.spec.Computed = o.proc.bindAll(o.spec.Computed)
	o.spec.Extra = o.proc.bindAll(o.spec.Extra)
	o.joinOutput.open(o.spec.LeftWidth, o.spec.RightWidth)
	return o.load(o.clock())
}

// load reads the whole table into a fresh index at processing time now:
// the PROCTIME() of its computed columns, one time for every row.
func (o *lookupJoinOp) load(now time.Time) error {
	o.proc.set(now)
	src, err := o.spec.Open()
	if err != nil {
		return fmt.Errorf("lookup table '%s': %w", o.spec.Table, err)
	}
	r, err := src.Open(0, 1)
	if err != nil {
		return fmt.Errorf("lookup table '%s': %w", o.spec.Table, err)
	}
	defer r.Close()
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
			rows = append(rows, row...)
		}
	}
	// The index holds int32 offsets of values (row × width).
	if len(rows) > math.MaxInt32 {
		return fmt.Errorf("lookup table '%s': more than %d values (rows × columns)", o.spec.Table, math.MaxInt32)
	}
	o.rows = rows
	o.buildIndex()
	if o.spec.Reload > 0 {
		o.next = o.clock().Add(o.spec.Reload)
	}
	return nil
}

// Process implements Operator: each left row joins the table's rows of
// its key (after a reload when one is due). The batch's processing time
// (one clock read) is the reload's and its PROCTIME().
func (o *lookupJoinOp) Process(_ int, b *types.Batch, out Emitter) error {
	if !o.next.IsZero() || o.proc.bound {
		now := o.clock()
		if !o.next.IsZero() && !now.Before(o.next) {
			if err := o.load(now); err != nil {
				return err
			}
		}
		o.proc.set(now)
	}
	w := o.spec.RightWidth
	for i := range b.Len() {
		row := b.Row(i)
		matched := false
		if !hasNullKey(row, o.spec.LeftKeys) {
			for _, off := range o.lookup(row) {
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

// buildIndex indexes o.rows by their key (see lookupJoinOp.index).
func (o *lookupJoinOp) buildIndex() {
	w := o.spec.RightWidth
	n := 0
	if w > 0 {
		n = len(o.rows) / w
	}
	o.index, o.ints, o.runs, o.order = nil, nil, nil, nil
	if len(o.spec.RightKeys) == 1 && o.intKeys(n) {
		c := o.spec.RightKeys[0]
		ints := state.NewIntTable()
		var count []int32 // rows per group
		group := make([]int32, n)
		for i := range n {
			k := o.rows[i*w+c].Int()
			g, ok := ints.Get(k)
			if !ok {
				g = int32(len(count))
				ints.Put(k, g)
				count = append(count, 0)
			}
			count[g]++
			group[i] = g
		}
		runs := make([]int32, len(count)+1)
		for g, c := range count {
			runs[g+1] = runs[g] + c
		}
		order := make([]int32, n)
		next := count[:0] // reused: the next free place of each group's run
		next = append(next, runs[:len(runs)-1]...)
		for i, g := range group {
			order[next[g]] = int32(i * w) // in table order within a key
			next[g]++
		}
		o.ints, o.runs, o.order = ints, runs, order
		return
	}
	index := map[string][]int32{}
	for i := range n {
		row := o.rows[i*w : (i+1)*w]
		kb := o.kb[:0]
		for _, c := range o.spec.RightKeys {
			kb = types.AppendKey(kb, row[c])
		}
		o.kb = kb
		index[string(kb)] = append(index[string(kb)], int32(i*w))
	}
	o.index = index
}

// intKeys reports whether the first n rows' single key is an integer in
// every row (NULL keys are not loaded).
func (o *lookupJoinOp) intKeys(n int) bool {
	c, w := o.spec.RightKeys[0], o.spec.RightWidth
	for i := range n {
		if !o.rows[i*w+c].Kind().IsInteger() {
			return false
		}
	}
	return true
}

// lookup returns the offsets of the table's rows whose key is left row
// row's (which has no NULL key). Integer keys of any integer type match
// by value; with the integer index, a left key that is not an integer
// matches nothing (as its encoding would match no integer's).
func (o *lookupJoinOp) lookup(row []types.Value) []int32 {
	if o.ints != nil {
		v := row[o.spec.LeftKeys[0]]
		if !v.Kind().IsInteger() {
			return nil
		}
		g, ok := o.ints.Get(v.Int())
		if !ok {
			return nil
		}
		return o.order[o.runs[g]:o.runs[g+1]]
	}
	kb := o.kb[:0]
	for _, c := range o.spec.LeftKeys {
		kb = types.AppendKey(kb, row[c])
	}
	o.kb = kb
	return o.index[string(kb)]
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
