package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec/coordinator"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// task runs one subtask of a vertex in one goroutine: the source reader or
// the inbound channels, then the operators, then the sink or the exchange.
type task struct {
	job       *Job
	v         *Vertex
	vi        int
	subtask   int
	sourceIdx int // index into Job.skipped, for source tasks
	outWidth  int // row width of the chain's output

	// Output side.
	outEdges []*outEdge
	x        *exchange // nil when the chain ends in a sink or nowhere

	// Input side (non-source tasks).
	inbox chan message
	links []*link // by channel index
	ports []int   // operator input port by channel index
	// portWM is the watermark of each input port last given to an
	// InputWatermarkOperator (inputWatermark).
	portWM []int64
	gate   *inputGate

	ops      []Operator
	emitters []Emitter // emitters[i] receives ops[i]'s output
	tail     Emitter
	reader   connector.SourceReader
	writer   connector.SinkWriter

	lastFlush   time.Time
	lastOpFlush time.Time   // operators last emitted what they held (Options.MiniBatchLatency)
	flushTimer  *time.Timer // wakes an idle task when the held changes are due

	// Keyed operators (KeyedOperator).
	keyed     []*state.Keyed // by operator index; nil unless keyed
	hasKeyed  bool           // some operator is keyed
	hasTTL    bool           // some operator is an expiringOperator with a TTL
	procMS    int64          // the processing time (ms) timers last advanced to
	procTimer *time.Timer    // wakes a waiting task for a processing-time timer

	// Event time.
	valve      *watermarkValve  // non-source tasks: the input channels' watermarks
	wmGen      *watermarkGen    // source tasks with a WATERMARK: generates them
	splits     *splitWatermarks // ... per split, for a connector.SplitReader
	srcWM      int64            // source tasks: the watermark last emitted
	srcIdle    bool             // source tasks: told downstream that it is idle
	lastWMEmit time.Time        // source tasks: when the watermark was last computed
	lastData   time.Time        // source tasks: when rows last came
	align      *aligner         // source tasks in a watermark alignment group
	wmMetric   *atomic.Int64    // the task's watermark, for Metrics

	// Checkpointing (nil/empty when off).
	trigger   chan triggerMsg     // source tasks: checkpoints to start
	ctl       chan ctlMsg         // from the checkpointer: completed checkpoints, final snapshot
	txns      []pendingTxn        // a transactional sink's pre-committed transactions
	positions []pendingTxn        // a connector.CheckpointListener's positions of checkpoints not yet complete
	stopping  bool                // a source took a stop-with-savepoint checkpoint
	finalID   int64               // the final checkpoint this finished task snapshots for
	finalDone bool                // the final checkpoint completed (and was committed)
	stateful  []StatefulOperator  // by operator index; nil if stateless
	stores    []*statestore.Store // by operator index; nil if stateless
	// restoredFinished is, by operator index, whether the operator was
	// restored from a checkpoint in which it had finished: its snapshots
	// only mark it finished (see restore).
	restoredFinished []bool
	replay           []message // released from hold, to offer before the inbox
	alignStart       time.Time // when the first barrier of the aligning checkpoint came

	// stopped says that the task's input did not end but was stopped: a
	// source task stopped (Job.Stop, a stop with savepoint) rather than
	// at the end of its input, or an input channel ended stopped. Its end
	// of input goes downstream so marked (message.stopped).
	stopped bool
	// endStopped is, by channel, whether it ended stopped: its port's
	// operator never hears of its end (InputEndOperator).
	endStopped []bool
	// srcEnded says that a source task read its input to the end (its
	// reader returned io.EOF, or a restored checkpoint says that every
	// subtask of the source had: then it does not read at all, see seek).
	// Its snapshots say so (checkpoint.SourcePosition.Ended).
	srcEnded bool
}

// taskID names the task for the checkpoint coordinator.
func (t *task) taskID() coordinator.TaskID {
	return coordinator.TaskID{Vertex: t.vi, Subtask: t.subtask}
}

// chainError attributes an error to an operator or a sink of the chain.
type chainError struct {
	who string
	err error
}

func (e *chainError) Error() string { return e.who + ": " + e.err.Error() }
func (e *chainError) Unwrap() error { return e.err }

// attributeOp is attribute("operator "+name, err), building the name only
// for an error: it runs for every batch.
func attributeOp(name string, err error) error {
	if err == nil {
		return nil
	}
	return attribute("operator "+name, err)
}

// attribute wraps err with who unless it is already attributed.
func attribute(who string, err error) error {
	if err == nil {
		return nil
	}
	var ce *chainError
	if errors.As(err, &ce) || errors.Is(err, context.Canceled) {
		return err
	}
	return &chainError{who: who, err: err}
}

// opEmitter feeds the next operator of the chain.
type opEmitter struct {
	op    Operator
	name  string
	next  Emitter
	keyed *state.Keyed // op's keyed state, if it is a KeyedOperator
}

func (e *opEmitter) Emit(b *types.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	return attributeOp(e.name, e.op.Process(0, b, e.next))
}

// sinkEmitter writes to the sink writer.
type sinkEmitter struct {
	t *task
}

func (e *sinkEmitter) Emit(b *types.Batch) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	if err := e.t.cancelled(); err != nil {
		return err
	}
	if err := e.t.writer.Write(b); err != nil {
		return attribute("sink "+e.t.v.SinkName, err)
	}
	e.t.job.rowsWritten.Add(int64(n))
	e.t.job.vertexOut[e.t.vi].Add(int64(n))
	return nil
}

// EmitWatermark tells a sink writer that wants it (connector.WatermarkWriter)
// the watermark.
func (e *sinkEmitter) EmitWatermark(wm int64) error {
	if w, ok := e.t.writer.(connector.WatermarkWriter); ok {
		if err := w.Watermark(wm); err != nil {
			return attribute("sink "+e.t.v.SinkName, err)
		}
	}
	return nil
}

// cancelled returns the job's context error once it is cancelled. The
// ends of a chain that never block (a sink, nothing) ask it at every
// batch, so that an operator emitting at length in one call (a join key
// matching many rows) stops when the job is cancelled; an exchange sees
// the cancellation when its channel is full.
func (t *task) cancelled() error {
	select {
	case <-t.job.ctx.Done():
		return t.job.ctx.Err()
	default:
		return nil
	}
}

// discardEmitter ends a chain that feeds nothing.
type discardEmitter struct {
	t *task
}

func (e *discardEmitter) Emit(b *types.Batch) error {
	if err := e.t.cancelled(); err != nil {
		return err
	}
	e.t.job.vertexOut[e.t.vi].Add(int64(b.Len()))
	return nil
}

func (t *task) run() (err error) {
	defer func() {
		if cerr := t.close(err); err == nil {
			err = cerr
		}
	}()
	if err := t.open(); err != nil {
		return err
	}
	if t.v.Source != nil {
		err = t.runSource()
		t.job.sourcesLeft.Add(-1)
	} else {
		err = t.runInputs()
	}
	if err != nil {
		return err
	}
	return t.finish()
}

func (t *task) open() error {
	j := t.job
	par := t.v.Parallelism
	switch {
	case t.v.Sink != nil:
		j.openMu.Lock()
		w, err := t.v.Sink.Open(t.subtask, par)
		j.openMu.Unlock()
		if err != nil {
			return fmt.Errorf("open sink %s: %w", t.v.SinkName, err)
		}
		t.writer = w
		t.tail = &sinkEmitter{t: t}
	case len(t.outEdges) > 0:
		t.x = &exchange{ctx: j.ctx, job: j, edges: t.outEdges, batchSize: j.opts.BatchSize, width: t.outWidth, rowsOut: &j.vertexOut[t.vi], wm: NoWatermark}
		t.tail = t.x
	default:
		t.tail = &discardEmitter{t: t}
	}
	for i, spec := range t.v.Operators {
		op := t.ops[i] // built by buildTasks
		ctx := &OpContext{Subtask: t.subtask, Parallelism: par, MaxParallelism: j.maxPar, Name: spec.Name, ID: spec.ID, StateBudget: j.stateBudget(), Dropped: &j.dropped, Watermark: t.wmMetric,
			Late: &j.vertexLate[t.vi], StateTTL: j.opts.StateTTL, Clock: t.clock}
		if err := op.Open(ctx); err != nil {
			return fmt.Errorf("open operator %s: %w", spec.Name, err)
		}
		if b, ok := op.(bufferingOperator); ok && j.opts.MiniBatch {
			b.enableMiniBatch(j.opts.MiniBatchSize)
		}
		if e, ok := op.(expiringOperator); ok && e.expires() {
			t.hasTTL = true
		}
	}
	fuseCalcs(t.ops)
	t.emitters = make([]Emitter, len(t.ops))
	for i := range t.ops {
		if i+1 < len(t.ops) {
			t.emitters[i] = &opEmitter{op: t.ops[i+1], name: t.v.Operators[i+1].Name, next: nil}
		} else {
			t.emitters[i] = t.tail
		}
	}
	for i := range len(t.ops) - 1 {
		t.emitters[i].(*opEmitter).next = t.emitters[i+1]
	}
	if t.v.Source != nil {
		j.openMu.Lock()
		r, err := t.v.Source.Open(t.subtask, par)
		j.openMu.Unlock()
		if err != nil {
			return fmt.Errorf("open source %s: %w", t.v.SourceName, err)
		}
		t.reader = r
		if cr, ok := r.(ClockReader); ok {
			cr.SetClock(t.clock)
		}
		if t.v.Watermark != nil {
			t.wmGen = newWatermarkGen(t.v.Watermark, t.v.SourceWidth)
			if sr, ok := r.(connector.SplitReader); ok {
				t.splits = newSplitWatermarks(sr, t.v.Watermark, t.v.SourceWidth)
			}
		}
	}
	t.keyed = make([]*state.Keyed, len(t.ops))
	if err := t.restore(); err != nil {
		return err
	}
	if err := t.openMemoryKeyed(); err != nil {
		return err
	}
	t.lastFlush = time.Now()
	t.lastOpFlush = t.lastFlush
	t.lastWMEmit, t.lastData, t.srcWM = t.lastFlush, t.lastFlush, NoWatermark
	j.opts.logf("task %s (%d/%d): running", t.v.Name, t.subtask+1, par)
	return nil
}

// push runs batch b, arrived on operator port port, through the chain.
func (t *task) push(port int, b *types.Batch) error {
	t.job.vertexIn[t.vi].Add(int64(b.Len()))
	if len(t.ops) == 0 {
		return t.tail.Emit(b)
	}
	return attributeOp(t.v.Operators[0].Name, t.ops[0].Process(port, b, t.emitters[0]))
}

// flush emits what the operators hold back, in chain order (with
// Options.MiniBatchLatency, only once that long passed since they last
// did: heldDue), and sends pending output batches.
func (t *task) flush() error {
	now := time.Now()
	return t.flushAt(now, t.heldDue(now))
}

// flushAll is flush with the operators' held changes due whatever
// Options.MiniBatchLatency: before a watermark, a barrier, an idle or
// paused source's wait (Flink also finishes a mini-batch at a watermark).
func (t *task) flushAll() error { return t.flushAt(time.Now(), true) }

// flushAt flushes at now: the operators' held changes if held, then the
// pending output batches.
func (t *task) flushAt(now time.Time, held bool) error {
	t.lastFlush = now
	if !held {
		if t.x == nil {
			return nil
		}
		return t.x.flush()
	}
	t.lastOpFlush = now
	for i, op := range t.ops {
		if b, ok := op.(bufferingOperator); ok && b.hasPending() {
			if err := b.emitPending(); err != nil {
				return attributeOp(t.v.Operators[i].Name, err)
			}
		}
	}
	if t.x == nil {
		return nil
	}
	return t.x.flush()
}

// pending reports whether output waits in an operator or the exchange.
func (t *task) pending() bool {
	return t.x != nil && t.x.dirty || t.holding()
}

// holding reports whether an operator holds back output.
func (t *task) holding() bool {
	for _, op := range t.ops {
		if b, ok := op.(bufferingOperator); ok && b.hasPending() {
			return true
		}
	}
	return false
}

// heldDue reports whether the operators' held changes are due at now:
// always without Options.MiniBatchLatency.
func (t *task) heldDue(now time.Time) bool {
	lat := t.job.opts.MiniBatchLatency
	return lat <= 0 || now.Sub(t.lastOpFlush) >= lat
}

// heldWake returns a channel that receives when the changes the operators
// hold are due (Options.MiniBatchLatency), or nil (never) when they hold
// none or emit them at every flush.
func (t *task) heldWake() <-chan time.Time {
	lat := t.job.opts.MiniBatchLatency
	if lat <= 0 || !t.holding() {
		return nil
	}
	d := max(time.Until(t.lastOpFlush.Add(lat)), 0)
	if t.flushTimer == nil {
		t.flushTimer = time.NewTimer(d)
	} else {
		t.flushTimer.Reset(d)
	}
	return t.flushTimer.C
}

// maybeFlush flushes when output has waited FlushInterval.
func (t *task) maybeFlush() error {
	if time.Since(t.lastFlush) < t.job.opts.FlushInterval || !t.pending() {
		return nil
	}
	return t.flush()
}

func (t *task) runSource() error {
	j := t.job
	ctx := j.ctx
	bs := j.opts.BatchSize
	b := types.NewBatch(t.v.SourceWidth, bs)
	stats, _ := t.reader.(connector.Stats)
	defer t.alignEnd()
	for {
		if stop, err := t.sourceEvents(nil, nil); stop || err != nil {
			t.stopped = stop
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if t.align != nil {
			if stop, err := t.alignPause(); stop || err != nil {
				t.stopped = stop
				return err
			}
		}
		b.Reset()
		err := io.EOF // restored ended: nothing more is read (seek)
		if !t.srcEnded {
			err = t.reader.Next(ctx, b, bs)
		}
		if stats != nil {
			j.skipped[t.sourceIdx].Store(stats.Skipped())
		}
		n := b.Len()
		var now time.Time
		if t.wmGen != nil {
			now = time.Now()
		}
		if n > 0 || t.splits != nil {
			j.rowsRead.Add(int64(n))
			if perr := t.sourceRows(b, now); perr != nil {
				return perr
			}
		}
		if errors.Is(err, io.EOF) {
			t.srcEnded = true
			return t.endWatermark()
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return fmt.Errorf("source %s: %w", t.v.SourceName, err)
		}
		if t.wmGen != nil {
			if err := t.sourceTime(now, n > 0); err != nil {
				return err
			}
		}
		if t.hasKeyed || t.hasTTL {
			if err := t.processingTime(t.clock()); err != nil {
				return err
			}
		}
		if b.Len() == 0 {
			err = t.flush()
		} else {
			err = t.maybeFlush()
		}
		if err != nil {
			return err
		}
	}
}

// sourceEvents takes what came for a source task besides its rows: a stop,
// a checkpoint trigger or a control message. Without wake (nil), it takes
// one if there is one; with it (a paused source), it waits for one, for
// wake or tick, or for the job's cancellation (then err is its cause).
// stop says that the task must return: stopped, or it took a
// stop-with-savepoint checkpoint.
func (t *task) sourceEvents(wake <-chan struct{}, tick <-chan time.Time) (stop bool, err error) {
	j := t.job
	if wake == nil {
		select {
		case <-j.stopCh:
			return true, nil
		case tr := <-t.trigger:
			return t.sourceTrigger(tr)
		case m := <-t.ctl:
			return false, t.control(m)
		default:
			return false, nil
		}
	}
	select {
	case <-j.stopCh:
		return true, nil
	case tr := <-t.trigger:
		return t.sourceTrigger(tr)
	case m := <-t.ctl:
		return false, t.control(m)
	case <-j.ctx.Done():
		return false, j.ctx.Err()
	case <-wake:
	case <-tick:
	}
	return false, nil
}

// sourceTrigger starts a checkpoint at a source task; stop says that it
// was a stop with savepoint, after whose barrier nothing follows.
func (t *task) sourceTrigger(tr triggerMsg) (stop bool, err error) {
	if err := t.sourceCheckpoint(tr.id); err != nil {
		return false, err
	}
	if tr.stop {
		t.stopping = true
		return true, nil
	}
	return false, nil
}

func (t *task) runInputs() error {
	ctx := t.job.ctx
	for !t.gate.AllEnded() {
		var m message
		if len(t.replay) > 0 {
			m = t.replay[0]
			t.replay = t.replay[1:]
			if err := t.handle(m); err != nil {
				return err
			}
			continue
		}
		select {
		case m = <-t.inbox:
		case c := <-t.ctl:
			if err := t.control(c); err != nil {
				return err
			}
			continue
		case <-ctx.Done():
			return ctx.Err()
		default:
			// Nothing to read: send what is pending before blocking.
			if err := t.flush(); err != nil {
				return err
			}
			wake, err := t.armProcessingTimer()
			if err != nil {
				return err
			}
			select {
			case m = <-t.inbox:
			case c := <-t.ctl:
				if err := t.control(c); err != nil {
					return err
				}
				continue
			case <-wake:
				if err := t.processingTime(t.clock()); err != nil {
					return err
				}
				continue
			case <-t.heldWake():
				continue // the loop's idle branch flushes them
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if t.hasTTL {
			// Expiry and write times are those of the rows' arrival.
			if err := t.processingTime(t.clock()); err != nil {
				return err
			}
		}
		if err := t.handle(m); err != nil {
			return err
		}
		if t.hasKeyed || t.hasTTL {
			if err := t.processingTime(t.clock()); err != nil {
				return err
			}
		}
		if err := t.maybeFlush(); err != nil {
			return err
		}
	}
	return nil
}

// armProcessingTimer returns a channel that receives when the earliest
// processing-time timer of the chain's keyed operators is due (nil, which
// never receives, when there is none).
func (t *task) armProcessingTimer() (<-chan time.Time, error) {
	now := t.clock()
	d, ok, err := t.nextProcessingTimer(now)
	if err != nil || !ok {
		return nil, err
	}
	// Timers are in milliseconds: wake just past the due millisecond.
	d += time.Millisecond
	if t.procTimer == nil {
		t.procTimer = time.NewTimer(d)
	} else {
		t.procTimer.Reset(d)
	}
	return t.procTimer.C, nil
}

// handle offers m to the input gate and carries out its decision.
func (t *task) handle(m message) error {
	l := t.links[m.ch]
	switch t.gate.Offer(m) {
	case gateProcess:
		// Data makes an idle channel count again; if the task had gone
		// idle downstream, it tells downstream it is active again.
		if t.valve.nIdle > 0 && t.valve.activate(int(m.ch)) {
			if err := t.active(); err != nil {
				l.release(t.job, m)
				return err
			}
		}
		err := t.push(t.ports[m.ch], m.batch)
		l.release(t.job, m)
		return err
	case gateWatermark:
		l.release(t.job, m)
		return t.channelWatermark(m)
	case gateEnded, gateAllEnded:
		l.release(t.job, m)
		if m.stopped {
			t.stopped = true
			for len(t.endStopped) <= int(m.ch) {
				t.endStopped = append(t.endStopped, false)
			}
			t.endStopped[m.ch] = true
		}
		if err := t.afterValve(t.valve.End(int(m.ch))); err != nil {
			return err
		}
		if err := t.endInput(int(m.ch)); err != nil {
			return err
		}
		if t.gate.AlignedAfterEnd() {
			return t.aligned()
		}
	case gateQueued:
	case gateBarrier:
		l.release(t.job, m)
		if t.alignStart.IsZero() {
			t.alignStart = time.Now()
		}
		return t.job.fault(FaultMidAlignment)
	case gateAligned:
		l.release(t.job, m)
		if t.alignStart.IsZero() {
			t.alignStart = time.Now()
		}
		return t.aligned()
	case gateSubsumed:
		// Abandon the older checkpoint: process what was held, then this barrier.
		t.alignStart = time.Time{}
		t.replay = append(append(t.gate.ReleaseAll(), m), t.replay...)
	case gateStale:
		l.release(t.job, m)
	}
	return nil
}

// endInput tells the first operator, if it is an InputEndOperator, that
// the input port of channel ch has ended when ch, just ended, was the
// last of the port's channels to end, and none of them ended stopped
// (its input did not end: a stop, after which a restore goes on with it).
func (t *task) endInput(ch int) error {
	if len(t.ops) == 0 {
		return nil
	}
	eo, ok := t.ops[0].(InputEndOperator)
	if !ok {
		return nil
	}
	port := t.ports[ch]
	for c, p := range t.ports {
		if p == port && (!t.gate.Ended(c) || c < len(t.endStopped) && t.endStopped[c]) {
			return nil
		}
	}
	return attributeOp(t.v.Operators[0].Name, eo.EndInput(port, t.emitters[0]))
}

// aligned runs when the barriers of a checkpoint have arrived on every open
// input: snapshot, forward the barrier, ack, then process what was held.
func (t *task) aligned() error {
	id := t.gate.Aligning()
	align := time.Since(t.alignStart)
	t.alignStart = time.Time{}
	if err := t.checkpoint(id, align, true, false); err != nil {
		return err
	}
	t.replay = append(t.gate.ReleaseAll(), t.replay...)
	return nil
}

// finish ends the operators after all input ended, then flushes the output
// and sends end of input downstream (or flushes the sink).
func (t *task) finish() error {
	for i, op := range t.ops {
		if err := op.Finish(t.emitters[i]); err != nil {
			return attributeOp(t.v.Operators[i].Name, err)
		}
	}
	if t.writer != nil {
		if err := t.writer.Flush(); err != nil {
			return fmt.Errorf("flush sink %s: %w", t.v.SinkName, err)
		}
	}
	if t.x != nil {
		if err := t.x.endOfInput(t.stopped); err != nil {
			return err
		}
	}
	t.job.opts.logf("task %s (%d/%d): finished", t.v.Name, t.subtask+1, t.v.Parallelism)
	return t.finishCheckpointing()
}

// close releases everything the task opened and returns the first error.
// close releases what the task holds; runErr is how its run ended. A sink
// commits what it holds only when the job ends well: after a failure
// (this task's or another's) it aborts, so that no partial output of a
// failed job becomes visible, with checkpoints or without.
func (t *task) close(runErr error) error {
	var first error
	keep := func(err error) {
		if first == nil && err != nil {
			first = err
		}
	}
	if t.procTimer != nil {
		t.procTimer.Stop()
	}
	for i, op := range t.ops {
		if err := op.Close(); err != nil {
			keep(fmt.Errorf("close operator %s: %w", t.v.Operators[i].Name, err))
		}
	}
	for i, st := range t.stores {
		if st == nil {
			continue
		}
		if err := st.Close(); err != nil {
			keep(fmt.Errorf("close state of %s: %w", t.v.Operators[i].Name, err))
		}
		if err := os.RemoveAll(st.Dir()); err != nil {
			keep(fmt.Errorf("remove working state of %s: %w", t.v.Operators[i].Name, err))
		}
	}
	failed := runErr != nil || t.job.failed()
	if tw, txnl := t.writer.(connector.TransactionalWriter); txnl && (t.job.ck != nil && !t.finalDone || failed) {
		// Not committed by a checkpoint (the job failed or was cancelled),
		// or the job failed: what is not pre-committed goes; a restore
		// recovers the rest.
		if err := tw.Abort(); err != nil {
			keep(fmt.Errorf("abort sink %s: %w", t.v.SinkName, err))
		}
	} else if txnl && t.job.ck == nil {
		// Without checkpoints a transactional sink commits when it closes.
		// Another task may still fail: the job closes every such writer
		// once all tasks have ended, and only if none failed.
		t.job.deferClose(deferredSink{name: t.v.SinkName, subtask: t.subtask, parallelism: t.v.Parallelism, w: tw})
	} else if t.writer != nil {
		if err := t.writer.Close(); err != nil {
			keep(fmt.Errorf("close sink %s: %w", t.v.SinkName, err))
		}
	}
	if t.reader != nil {
		if err := t.reader.Close(); err != nil {
			keep(fmt.Errorf("close source %s: %w", t.v.SourceName, err))
		}
	}
	return first
}
