package exec

import (
	"fmt"
	"time"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// This file is the task's part of event time: a source task generates
// watermarks from its rows (WATERMARK FOR) and goes idle when it has no
// data; another task takes the minimum over its input channels (the valve);
// either runs each advance of its watermark through its operator chain and
// out over its exchange.

// emitWatermark runs watermark wm through the chain: first out goes what
// the operators hold back and the exchange's pending rows (everything
// computed before the watermark), then each operator sees it in chain
// order (WatermarkOperator, or passed on unchanged), then the exchange
// sends it on every output channel.
func (t *task) emitWatermark(wm int64) error {
	t.wmMetric.Store(wm)
	if err := t.flushAll(); err != nil {
		return err
	}
	if len(t.ops) == 0 {
		return ForwardWatermark(t.tail, wm)
	}
	return attributeOp(t.v.Operators[0].Name, processWatermark(t.ops[0], t.keyed[0], wm, t.emitters[0]))
}

// processWatermark runs watermark wm through operator op, whose output goes
// to out: a KeyedOperator (k set) first fires its event-time timers up to
// wm; then a WatermarkOperator gets wm, and any other operator passes it on.
func processWatermark(op Operator, k *state.Keyed, wm int64, out Emitter) error {
	if k != nil {
		if err := fireEventTimers(op, k, wm, out); err != nil {
			return err
		}
	}
	if wo, ok := op.(WatermarkOperator); ok {
		return wo.ProcessWatermark(wm, out)
	}
	return ForwardWatermark(out, wm)
}

// channelWatermark handles a watermark, an idle or an active marker from
// input channel m.ch.
func (t *task) channelWatermark(m message) error {
	var (
		wm                int64
		advanced, allIdle bool
	)
	switch m.kind {
	case msgIdle:
		wm, advanced, allIdle = t.valve.Idle(int(m.ch))
	case msgActive:
		if t.valve.activate(int(m.ch)) {
			return t.active()
		}
		return nil
	default:
		if t.valve.activate(int(m.ch)) {
			if err := t.active(); err != nil {
				return err
			}
		}
		wm, advanced = t.valve.Watermark(int(m.ch), m.wm)
		if err := t.inputWatermark(int(m.ch)); err != nil {
			return err
		}
	}
	return t.afterValve(wm, advanced, allIdle)
}

// inputWatermark gives the first operator, if it is an
// InputWatermarkOperator, the watermark of channel ch's input port when
// it advanced: the least over the port's channels of the highest
// watermark each sent.
func (t *task) inputWatermark(ch int) error {
	if len(t.ops) == 0 {
		return nil
	}
	iw, ok := t.ops[0].(InputWatermarkOperator)
	if !ok {
		return nil
	}
	port := t.ports[ch]
	for len(t.portWM) <= port {
		t.portWM = append(t.portWM, NoWatermark)
	}
	wm := MaxWatermark
	for c, p := range t.ports {
		if p == port {
			wm = min(wm, t.valve.wm[c])
		}
	}
	if wm <= t.portWM[port] {
		return nil
	}
	t.portWM[port] = wm
	return attributeOp(t.v.Operators[0].Name, iw.ProcessInputWatermark(port, wm))
}

// active tells downstream that the task, idle before, is active again.
func (t *task) active() error {
	if t.x == nil {
		return nil
	}
	return t.x.control(message{kind: msgActive})
}

// afterValve carries out the valve's decision: forward the advanced
// watermark, then, if every input is idle, go idle downstream.
func (t *task) afterValve(wm int64, advanced, allIdle bool) error {
	if advanced {
		if err := t.emitWatermark(wm); err != nil {
			return err
		}
	}
	if allIdle && t.x != nil {
		return t.x.idle()
	}
	return nil
}

// sourceTime is a source task's event-time step between two batches, at
// time now: it emits the generated watermark when AutoWatermarkInterval
// has passed since the last emission and it advanced, and it goes idle
// (an idle marker on every output channel) when no data came for
// SourceIdleTimeout. hadData says the last read returned rows.
func (t *task) sourceTime(now time.Time, hadData bool) error {
	opts := &t.job.opts
	if hadData {
		t.lastData = now
		if t.srcIdle {
			t.srcIdle = false
			if err := t.active(); err != nil {
				return err
			}
		}
	}
	if now.Sub(t.lastWMEmit) >= opts.AutoWatermarkInterval {
		t.lastWMEmit = now
		wm, ok, err := t.sourceWatermark(now)
		if err != nil {
			return fmt.Errorf("source %s: %w", t.v.SourceName, err)
		}
		if ok && wm > t.srcWM {
			t.srcWM = wm
			if err := t.emitWatermark(wm); err != nil {
				return err
			}
		}
	}
	if opts.SourceIdleTimeout > 0 && !t.srcIdle && now.Sub(t.lastData) >= opts.SourceIdleTimeout {
		t.srcIdle = true
		if err := t.flushAll(); err != nil {
			return err
		}
		if t.x != nil {
			return t.x.idle()
		}
	}
	return nil
}

// sourceWatermark returns the watermark of the rows a source subtask read,
// by time now: the minimum over its active splits for a SplitReader, else
// that of all its rows.
func (t *task) sourceWatermark(now time.Time) (int64, bool, error) {
	if t.splits != nil {
		return t.splits.current(now, t.job.opts.SourceIdleTimeout)
	}
	wm, err := t.wmGen.current()
	return wm, err == nil, err
}

// sourceRows takes the batch b a source task's reader just returned (at
// time now, set when the source has a WATERMARK) into its watermark, tells
// downstream that the task is active again if it was idle and b has rows,
// and sends b through the chain.
func (t *task) sourceRows(b *types.Batch, now time.Time) error {
	var err error
	switch {
	case t.splits != nil:
		err = t.splits.observe(b, now)
	case t.wmGen != nil && b.Len() > 0:
		err = t.wmGen.observe(b)
	}
	if err != nil {
		return fmt.Errorf("source %s: %w", t.v.SourceName, err)
	}
	if b.Len() == 0 {
		return nil
	}
	if t.srcIdle {
		t.srcIdle, t.lastData = false, now
		if err := t.active(); err != nil {
			return err
		}
	}
	return t.push(0, b)
}

// endWatermark is a source's end of input: watermark +∞, so that every
// pending event-time timer downstream fires.
func (t *task) endWatermark() error {
	t.srcWM = MaxWatermark
	return t.emitWatermark(MaxWatermark)
}

// EmitWatermark implements WatermarkEmitter: the next operator sees wm.
func (e *opEmitter) EmitWatermark(wm int64) error {
	return attributeOp(e.name, processWatermark(e.op, e.keyed, wm, e.next))
}

// EmitWatermark implements WatermarkEmitter.
func (e *discardEmitter) EmitWatermark(int64) error { return nil }

// EmitWatermark implements WatermarkEmitter: when wm is above the last
// watermark sent, the pending rows go out and then wm on every output
// channel (a Global edge's too, as barriers).
func (x *exchange) EmitWatermark(wm int64) error {
	if wm <= x.wm {
		return nil
	}
	x.wm = wm
	return x.control(message{kind: msgWatermark, wm: wm})
}

// idle sends the pending rows and then an idle marker on every output
// channel.
func (x *exchange) idle() error {
	return x.control(message{kind: msgIdle})
}

// control flushes and then sends control message m on every channel.
func (x *exchange) control(m message) error {
	if err := x.flush(); err != nil {
		return err
	}
	for _, e := range x.edges {
		for _, d := range e.dests {
			m.ch = d.link.ch
			if err := d.link.send(x.ctx, x.job, m); err != nil {
				return err
			}
		}
	}
	return nil
}
