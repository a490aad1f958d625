package exec

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// outChannel is the sending end of one logical channel with its pending batch.
type outChannel struct {
	link    *link
	pending *types.Batch
}

// outEdge distributes one task's output over the channels of one edge to the
// downstream vertex's subtasks.
type outEdge struct {
	kind   PartitionKind
	keys   []int
	dests  []*outChannel // by downstream subtask; one entry for Forward
	owner  []int32       // key group → index into dests (Hash)
	maxPar int
	keyBuf []byte
	next   int // round-robin position (Rebalance)
}

// exchange is the tail of a task's chain that sends rows to other tasks. It
// copies rows into one pending batch per destination and sends a batch when
// it is full, on flush (idle input, FlushInterval) and before control
// messages.
type exchange struct {
	ctx       context.Context
	job       *Job
	edges     []*outEdge
	batchSize int
	width     int // row width the plan declares for this vertex's output
	rowsOut   *atomic.Int64
	dirty     bool  // some pending batch holds rows
	wm        int64 // the last watermark sent (NoWatermark before any)
}

var _ Emitter = (*exchange)(nil)

// Emit copies b's rows to the destinations of every edge.
func (x *exchange) Emit(b *types.Batch) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	if b.Width != x.width {
		return fmt.Errorf("rows of width %d emitted where the plan declares width %d", b.Width, x.width)
	}
	x.rowsOut.Add(int64(n))
	x.dirty = true
	for _, e := range x.edges {
		if err := x.emitEdge(e, b); err != nil {
			return err
		}
	}
	return nil
}

func (x *exchange) emitEdge(e *outEdge, b *types.Batch) error {
	switch e.kind {
	case Forward, Global:
		return x.appendAll(e.dests[0], b)
	case Broadcast:
		for _, d := range e.dests {
			if err := x.appendAll(d, b); err != nil {
				return err
			}
		}
		return nil
	case Rebalance:
		for i := range b.Len() {
			d := e.dests[e.next]
			e.next++
			if e.next == len(e.dests) {
				e.next = 0
			}
			if err := x.appendRow(d, b.Kinds[i], b.Row(i)); err != nil {
				return err
			}
		}
		return nil
	case Hash:
		if len(e.keys) == 1 {
			return x.emitHashOne(e, b)
		}
		for i := range b.Len() {
			row := b.Row(i)
			buf := e.keyBuf[:0]
			for _, k := range e.keys {
				buf = state.AppendValue(buf, row[k])
			}
			e.keyBuf = buf
			kg := state.KeyGroup(buf, e.maxPar)
			if err := x.appendRow(e.dests[e.owner[kg]], b.Kinds[i], row); err != nil {
				return err
			}
		}
		return nil
	}
	panic("exec: unknown partitioning")
}

// emitHashOne is Hash on a single key column, with a fast path for integer
// values. Rows go to the owner of the key's key group in the layout of
// package state (state.KeyGroup of the order-preserving encoding), where
// INT and BIGINT keys of equal value meet.
func (x *exchange) emitHashOne(e *outEdge, b *types.Batch) error {
	k, w := e.keys[0], b.Width
	maxPar := uint64(e.maxPar)
	var mask uint64
	if maxPar&(maxPar-1) == 0 {
		mask = maxPar - 1
	}
	for i := range b.Len() {
		row := b.Vals[i*w : (i+1)*w : (i+1)*w]
		v := row[k]
		var h uint64
		if tag := state.IntKeyTag(v.Kind()); tag != 0 {
			h = state.HashIntTag(tag, v.Int())
		} else {
			e.keyBuf = state.AppendValue(e.keyBuf[:0], v)
			h = state.HashKey(e.keyBuf)
		}
		var kg uint64
		if mask != 0 {
			kg = h & mask // h % maxPar for a power of two, without a division
		} else {
			kg = h % maxPar
		}
		d := e.dests[e.owner[kg]]
		// appendRow, its room check inlined: growRow is a call, which
		// cost about as much as the row's copy.
		if p := d.pending; p.Width == w && cap(p.Vals)-len(p.Vals) >= w && cap(p.Kinds) > len(p.Kinds) {
			n := len(p.Vals)
			p.Kinds = append(p.Kinds, b.Kinds[i])
			p.Vals = p.Vals[:n+w]
			dst := p.Vals[n : n+w : n+w]
			for j := range dst {
				dst[j] = row[j]
			}
		} else {
			appendRow(p, b.Kinds[i], row)
		}
		if d.pending.Len() >= x.batchSize {
			if err := x.sendPending(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendAll copies every row of b to d in bulk.
func (x *exchange) appendAll(d *outChannel, b *types.Batch) error {
	kinds, vals := b.Kinds, b.Vals
	w := b.Width
	for len(kinds) > 0 {
		p := d.pending
		n := min(len(kinds), x.batchSize-p.Len())
		p.Kinds = append(p.Kinds, kinds[:n]...)
		p.Vals = append(p.Vals, vals[:n*w]...)
		kinds, vals = kinds[n:], vals[n*w:]
		if p.Len() >= x.batchSize {
			if err := x.sendPending(d); err != nil {
				return err
			}
		}
	}
	return nil
}

func (x *exchange) appendRow(d *outChannel, kind types.RowKind, row []types.Value) error {
	appendRow(d.pending, kind, row)
	if d.pending.Len() >= x.batchSize {
		return x.sendPending(d)
	}
	return nil
}

func (x *exchange) sendPending(d *outChannel) error {
	b := d.pending
	if err := d.link.send(x.ctx, x.job, message{batch: b, ch: d.link.ch, kind: msgData}); err != nil {
		return err
	}
	d.pending = d.link.getBatch(x.batchSize)
	return nil
}

// flush sends every non-empty pending batch.
func (x *exchange) flush() error {
	if !x.dirty {
		return nil
	}
	for _, e := range x.edges {
		for _, d := range e.dests {
			if d.pending.Len() > 0 {
				if err := x.sendPending(d); err != nil {
					return err
				}
			}
		}
	}
	x.dirty = false
	return nil
}

// barrier flushes and then sends checkpoint barrier id on every channel.
func (x *exchange) barrier(id int64) error {
	if err := x.flush(); err != nil {
		return err
	}
	for _, e := range x.edges {
		for _, d := range e.dests {
			if err := d.link.send(x.ctx, x.job, message{ch: d.link.ch, kind: msgBarrier, ckpt: id}); err != nil {
				return err
			}
		}
	}
	return nil
}

// endOfInput flushes and then sends end of input on every channel;
// stopped says that the task's input did not end but was stopped
// (message.stopped).
func (x *exchange) endOfInput(stopped bool) error {
	if err := x.flush(); err != nil {
		return err
	}
	for _, e := range x.edges {
		for _, d := range e.dests {
			if err := d.link.send(x.ctx, x.job, message{ch: d.link.ch, kind: msgEnd, stopped: stopped}); err != nil {
				return err
			}
		}
	}
	return nil
}
