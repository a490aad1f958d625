package exec

import (
	"fmt"
	"time"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// KeyedOperator is an Operator built on the keyed-state layer (package
// state). Right after Open the task hands it a *state.Keyed for the
// subtask's key groups: in memory without checkpointing, over the
// subtask's state store with it (snapshotted at each barrier, restored and
// rescaled by key group as a StatefulOperator's store is). The operator
// registers its state handles and timers on it and never writes snapshot
// or restore code.
//
// Timers fire from the task's goroutine, between two Process calls: the
// event-time timers whose timestamp the input watermark reached, in
// timestamp order, each time the watermark advances (then the watermark
// goes on: to ProcessWatermark if the operator is also a
// WatermarkOperator, else unchanged downstream); the processing-time
// timers when the task's clock passes them. An operator is a
// StatefulOperator or a KeyedOperator, not both.
type KeyedOperator interface {
	Operator
	// OpenKeyed hands the operator its keyed state, once, after Open. After
	// a restore it holds the state and timers of the subtask's key groups.
	OpenKeyed(k *state.Keyed) error
	// OnTimer is called for each due timer with the timer's key as the
	// current key of the Keyed (the timer is already deleted). It may emit
	// to out, use every state handle and register or delete timers.
	OnTimer(t state.Timer, out Emitter) error
}

// openKeyed gives keyed operator i its state: over store st when the job
// checkpoints, in memory when st is nil.
func (t *task) openKeyed(i int, ko KeyedOperator, st *statestore.Store) error {
	spec := t.v.Operators[i]
	opts := state.Options{OperatorID: spec.ID, MaxParallelism: t.job.maxPar, Subtask: t.subtask, Parallelism: t.v.Parallelism,
		TTL: t.job.opts.StateTTL}
	var (
		k   *state.Keyed
		err error
	)
	if st != nil {
		k, err = state.Open(st, opts)
	} else {
		k, err = state.NewMemory(opts)
	}
	if err == nil {
		err = ko.OpenKeyed(k)
	}
	if err != nil {
		return fmt.Errorf("keyed state of operator %s: %w", spec.Name, err)
	}
	t.keyed[i] = k
	if i > 0 {
		t.emitters[i-1].(*opEmitter).keyed = k
	}
	return nil
}

// openMemoryKeyed gives the keyed operators that restore did not give a
// store (the job does not checkpoint) their state in memory.
func (t *task) openMemoryKeyed() error {
	for i, op := range t.ops {
		ko, ok := op.(KeyedOperator)
		if !ok || t.keyed[i] != nil {
			continue
		}
		if _, both := op.(StatefulOperator); both {
			return fmt.Errorf("operator %s: is both a StatefulOperator and a KeyedOperator", t.v.Operators[i].Name)
		}
		if err := t.openKeyed(i, ko, nil); err != nil {
			return err
		}
		t.hasKeyed = true
	}
	return nil
}

// fireEventTimers fires keyed operator op's event-time timers up to
// watermark wm, emitting to out.
func fireEventTimers(op Operator, k *state.Keyed, wm int64, out Emitter) error {
	ko := op.(KeyedOperator)
	return k.AdvanceWatermark(wm, func(tm state.Timer) error { return ko.OnTimer(tm, out) })
}

// clock returns the task's processing time: Options.Clock, or time.Now.
func (t *task) clock() time.Time {
	if c := t.job.opts.Clock; c != nil {
		return c()
	}
	return time.Now()
}

// processingTime fires the processing-time timers (and expires TTL'd state)
// of the chain's keyed operators at time now, in chain order. The task
// calls it between batches; it does nothing unless the clock moved on by a
// millisecond since the last call.
func (t *task) processingTime(now time.Time) error {
	ms := now.UnixMilli()
	if (!t.hasKeyed && !t.hasTTL) || ms <= t.procMS {
		return nil
	}
	t.procMS = ms
	if t.hasTTL {
		for i, op := range t.ops {
			if e, ok := op.(expiringOperator); ok {
				if err := e.advanceTime(ms); err != nil {
					return attributeOp(t.v.Operators[i].Name, err)
				}
			}
		}
	}
	for i, k := range t.keyed {
		if k == nil {
			continue
		}
		ko, out := t.ops[i].(KeyedOperator), t.emitters[i]
		err := k.AdvanceProcessingTime(ms, func(tm state.Timer) error { return ko.OnTimer(tm, out) })
		if err != nil {
			return attributeOp(t.v.Operators[i].Name, err)
		}
	}
	return nil
}

// nextProcessingTimer returns how long until the earliest processing-time
// timer of the chain's keyed operators is due, if there is one: a task
// waiting for input wakes up then.
func (t *task) nextProcessingTimer(now time.Time) (time.Duration, bool, error) {
	if !t.hasKeyed && !t.hasTTL {
		return 0, false, nil
	}
	next, found := int64(0), false
	for _, op := range t.ops {
		if e, ok := op.(expiringOperator); ok {
			if ts, ok := e.nextExpiry(); ok && (!found || ts < next) {
				next, found = ts, true
			}
		}
	}
	for i, k := range t.keyed {
		if k == nil {
			continue
		}
		ts, ok, err := k.NextTimer(state.ProcessingTime)
		if err != nil {
			return 0, false, attributeOp(t.v.Operators[i].Name, err)
		}
		if ok && (!found || ts < next) {
			next, found = ts, true
		}
	}
	if !found {
		return 0, false, nil
	}
	return max(time.Duration(next-now.UnixMilli())*time.Millisecond, 0), true, nil
}

// RowKey sets a Keyed's current key from key columns of a row: the
// order-preserving encoding of state.AppendValue, in its key group
// (state.KeyGroup), which is where a HASH exchange on the same columns
// routes the row.
type RowKey struct {
	cols   []int
	maxPar int
	kb     []byte
}

// NewRowKey returns a RowKey over columns cols, for a job with
// maxParallelism key groups (OpContext.MaxParallelism).
func NewRowKey(cols []int, maxParallelism int) *RowKey {
	if maxParallelism <= 0 {
		maxParallelism = types.DefaultMaxParallelism
	}
	return &RowKey{cols: cols, maxPar: maxParallelism}
}

// Set makes row's key the current key of k.
func (r *RowKey) Set(k *state.Keyed, row []types.Value) error {
	kb := r.kb[:0]
	for _, c := range r.cols {
		kb = state.AppendValue(kb, row[c])
	}
	r.kb = kb
	return k.SetCurrentKeyInGroup(kb, state.KeyGroup(kb, r.maxPar))
}

// expiringOperator is a StatefulOperator whose state expires with
// Options.StateTTL (GroupAggregate, through state.Records): the task gives
// it the processing time before it handles input and between batches, and
// wakes up for its next expiry when its input is idle.
type expiringOperator interface {
	// expires reports whether the operator has a TTL.
	expires() bool
	// advanceTime sets the processing time (ms) and expires what is due.
	advanceTime(ms int64) error
	// nextExpiry returns when the next state may expire, if any.
	nextExpiry() (int64, bool)
}
