package exec

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/internal/sysmem"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// Job is a running job graph.
type Job struct {
	graph  *JobGraph
	opts   Options
	maxPar int

	ctx    context.Context // cancelled on the first failure, or when all is done
	cancel context.CancelFunc

	stopCh   chan struct{}
	stopOnce sync.Once

	tasks sync.WaitGroup
	done  chan struct{} // closed when every goroutine of the job has exited

	mu  sync.Mutex
	err error
	// deferred are sink writers that commit when the job ends well;
	// committing says that they do: a Cancel comes too late.
	deferred   []deferredSink
	committing bool

	openMu sync.Mutex // serializes Source.Open and Sink.Open

	// workDir is this run's working state folder (under
	// CheckpointOptions.WorkDir): one subtask folder per stateful operator.
	workDir string

	rowsRead, rowsWritten atomic.Int64
	vertexIn, vertexOut   []atomic.Int64
	vertexLate            []atomic.Int64   // late rows dropped by event-time operators, per vertex
	watermarks            [][]atomic.Int64 // per vertex, per subtask: the task's watermark
	skipped               []atomic.Int64   // per source subtask
	dropped               atomic.Int64     // rows dropped by operators (not-null enforcer DROP)
	inFlight, maxInFlight atomic.Int64     // batches sent and not yet processed
	sourcesLeft           atomic.Int64     // source subtasks still reading

	ck *checkpointer // nil when checkpointing is off
	// budget is the memory budget of each stateful operator subtask
	// (stateBudgetFor); budgetInfo describes it (StateBudget).
	budget     int64
	budgetInfo StateBudget
}

// StateBudget describes the memory a job gives its keyed state.
type StateBudget struct {
	// PerSubtask is how many bytes of state each stateful operator
	// subtask keeps in memory before it spills to its store.
	PerSubtask int64
	// Subtasks counts the job's stateful operator subtasks.
	Subtasks int
	// Auto says that PerSubtask is the automatic budget (state.cache.size
	// 'auto'): a quarter of Memory split over Subtasks, at least
	// statestore.DefaultCacheBytes.
	Auto bool
	// Memory is the memory the process may use (0: unknown).
	Memory int64
}

// StateBudget returns the memory budget of the job's keyed state.
func (j *Job) StateBudget() StateBudget { return j.budgetInfo }

// fault calls Options.Fault at a named fault point.
func (j *Job) fault(point string) error {
	if j.opts.Fault == nil {
		return nil
	}
	if err := j.opts.Fault(point); err != nil {
		return fmt.Errorf("fault %s: %w", point, err)
	}
	return nil
}

// stateBudget is the memory budget of each stateful operator subtask.
func (j *Job) stateBudget() int64 { return j.budget }

// autoStateShare is the share of the process's memory (sysmem.Total) that
// an automatic state budget gives a job's keyed state: a quarter, split
// evenly over its stateful operator subtasks. The Go heap can reach about
// twice its live data before a collection, so the state's peak stays near
// half of the memory, with the rest for the buffers between tasks,
// Pebble's block caches and memtables, and other jobs.
const autoStateShare = 4

// stateBudgetFor returns the memory budget of each of a job's stateful
// operator subtasks (stateful counts them): the configured size
// (CheckpointOptions.StateCacheBytes), or, when it is 0 (state.cache.size
// 'auto'), memory/autoStateShare split over them, never below
// statestore.DefaultCacheBytes (also the budget when memory is unknown).
func stateBudgetFor(stateful int, configured, memory int64) int64 {
	if configured > 0 {
		return configured
	}
	if memory <= 0 || stateful == 0 {
		return statestore.DefaultCacheBytes
	}
	return max(memory/autoStateShare/int64(stateful), statestore.DefaultCacheBytes)
}

// statefulSubtasks counts the operators of tasks that keep state in a
// store (StatefulOperator or KeyedOperator): one per such operator and
// subtask.
func statefulSubtasks(tasks []*task) int {
	n := 0
	for _, t := range tasks {
		for _, op := range t.ops {
			_, stateful := op.(StatefulOperator)
			_, keyed := op.(KeyedOperator)
			if stateful || keyed {
				n++
			}
		}
	}
	return n
}

// Metrics are a job's live counters.
type Metrics struct {
	RowsRead    int64 // rows read by all sources
	RowsWritten int64 // rows written to all sinks
	// SourcesFinished is set once every source subtask has stopped reading
	// (the end of a bounded input, or Stop): what runs then is downstream.
	SourcesFinished bool
	// Queued is the number of batches sent between tasks and not yet
	// processed by the receiving task.
	Queued   int64
	Skipped  int64 // malformed records skipped by source readers (connector.Stats)
	Dropped  int64 // rows dropped before a sink for NULL in a NOT NULL column ('DROP' enforcer)
	LateRows int64 // rows event-time operators (windows, OVER) dropped as late, summed over Vertices
	Vertices []VertexMetrics
}

// VertexMetrics are the counters of one vertex, summed over its subtasks.
type VertexMetrics struct {
	Name    string
	RowsIn  int64 // rows read from the source or received from inputs
	RowsOut int64 // rows emitted by the chain (to the sink or the exchange)
	// Watermark is the vertex's event time: the least of its subtasks'
	// watermarks (a source subtask's generated watermark, another
	// subtask's input watermark, the minimum over its input channels), in
	// milliseconds since the epoch; NoWatermark until every subtask has
	// one, MaxWatermark after the end of input (FormatWatermark renders it).
	Watermark int64
	// SubtaskWatermarks are the subtasks' watermarks.
	SubtaskWatermarks []int64
	// LateRows counts the rows the vertex's window operators dropped as
	// late: behind the watermark, in windows that had fired.
	LateRows int64
}

// Start validates g and starts one goroutine per subtask of every vertex.
// Cancelling ctx stops the job cleanly, as Stop does.
func Start(ctx context.Context, g *JobGraph, opts Options) (*Job, error) {
	j, tasks, err := newJob(ctx, g, opts)
	if err != nil {
		return nil, err
	}
	if opts.Built != nil {
		opts.Built(j)
	}
	j.launch(ctx, tasks)
	return j, nil
}

// newJob validates g and builds the job and its tasks and channels, without
// starting anything.
func newJob(ctx context.Context, g *JobGraph, opts Options) (*Job, []*task, error) {
	opts = opts.withDefaults()
	maxPar := types.DefaultMaxParallelism
	if g != nil && g.MaxParallelism != 0 {
		maxPar = g.MaxParallelism
	}
	widths, err := validate(g, maxPar)
	if err != nil {
		return nil, nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	j := &Job{
		graph:      g,
		opts:       opts,
		maxPar:     maxPar,
		ctx:        runCtx,
		cancel:     cancel,
		stopCh:     make(chan struct{}),
		done:       make(chan struct{}),
		vertexIn:   make([]atomic.Int64, len(g.Vertices)),
		vertexLate: make([]atomic.Int64, len(g.Vertices)),
		vertexOut:  make([]atomic.Int64, len(g.Vertices)),
	}
	tasks := j.buildTasks(widths)
	memory := opts.MemoryBytes
	if memory == 0 {
		memory = sysmem.Total()
	}
	stateful := statefulSubtasks(tasks)
	var configured int64 // state.cache.size; 0 is auto
	if c := opts.Checkpoint; c != nil {
		configured = c.StateCacheBytes
	}
	j.budget = stateBudgetFor(stateful, configured, memory)
	j.budgetInfo = StateBudget{PerSubtask: j.budget, Subtasks: stateful, Memory: max(memory, 0), Auto: configured <= 0}
	alignGroups(tasks)
	var restore *checkpoint.Checkpoint
	if c := opts.Checkpoint; c != nil {
		restore = c.Restore
	}
	committed, err := checkCommittedOutput(j, restore)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	if c := opts.Checkpoint; c != nil {
		first, work, err := prepareCheckpointing(g, c)
		if err != nil {
			cancel()
			return nil, nil, err
		}
		// Checkpoint ids stay above those of committed output, so that
		// the output this run commits is never taken for a later run's.
		j.workDir = work
		j.ck = newCheckpointer(j, c, tasks, max(first, committed+1))
	}
	if err := recoverSinks(j, restore); err != nil {
		cancel()
		return nil, nil, err
	}
	return j, tasks, nil
}

// launch starts the goroutines of the job: one per task, the checkpointer,
// and the watchers that end the job.
func (j *Job) launch(ctx context.Context, tasks []*task) {
	g, opts, cancel, runCtx := j.graph, j.opts, j.cancel, j.ctx
	tasksDone := make(chan struct{})
	ckDone := make(chan struct{})
	if j.ck != nil {
		go func() {
			defer close(ckDone)
			if err := runGuarded(func() error { j.ck.run(tasksDone); return nil }); err != nil {
				j.fail(fmt.Errorf("checkpoint coordinator: %w", err))
			}
		}()
	} else {
		close(ckDone)
	}
	for _, t := range tasks {
		j.tasks.Add(1)
		go func() {
			defer j.tasks.Done()
			if err := runGuarded(t.run); err != nil {
				j.fail(fmt.Errorf("%s (%d/%d): %w", t.v.Name, t.subtask+1, t.v.Parallelism, err))
			}
		}()
	}
	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		select {
		case <-ctx.Done():
			j.Stop()
		case <-runCtx.Done():
		}
	}()
	go func() {
		j.tasks.Wait()
		close(tasksDone)
		<-ckDone
		j.closeDeferred()
		cancel()
		<-watcherDone
		opts.logf("job %s: finished", g.Name)
		close(j.done)
	}()
	opts.logf("job %s: started %d tasks", g.Name, len(tasks))
}

// buildTasks creates every task and the channels between them.
func (j *Job) buildTasks(widths []int) []*task {
	g := j.graph
	byVertex := make([][]*task, len(g.Vertices))
	var all []*task
	nSources := 0
	for vi, v := range g.Vertices {
		for s := range v.Parallelism {
			t := &task{job: j, v: v, vi: vi, subtask: s, outWidth: widths[vi]}
			// The operators are built here, and opened by the task: the
			// state budget depends on how many of them are stateful.
			for _, spec := range v.Operators {
				t.ops = append(t.ops, spec.New())
			}
			if v.Source != nil {
				t.sourceIdx = nSources
				nSources++
			}
			byVertex[vi] = append(byVertex[vi], t)
			all = append(all, t)
		}
	}
	j.skipped = make([]atomic.Int64, nSources)
	j.sourcesLeft.Store(int64(nSources))
	j.watermarks = make([][]atomic.Int64, len(g.Vertices))
	for vi, ts := range byVertex {
		j.watermarks[vi] = make([]atomic.Int64, len(ts))
		for s, t := range ts {
			j.watermarks[vi][s].Store(NoWatermark)
			t.wmMetric = &j.watermarks[vi][s]
		}
	}
	for vi, v := range g.Vertices {
		for _, t := range byVertex[vi] {
			if n := numChannels(g, v); n > 0 {
				t.inbox = make(chan message, n*j.opts.ChannelBuffer)
				t.gate = newInputGate(n)
				t.valve = newWatermarkValve(n)
			}
		}
		for _, in := range v.Inputs {
			j.connect(in, byVertex[in.From], byVertex[vi], widths[in.From])
		}
	}
	return all
}

// numChannels returns the number of logical input channels of each subtask of v.
func numChannels(g *JobGraph, v *Vertex) int {
	n := 0
	for _, in := range v.Inputs {
		if in.Partition.Kind == Forward {
			n++
		} else {
			n += g.Vertices[in.From].Parallelism
		}
	}
	return n
}

// connect creates the logical channels of edge in, from the upstream tasks
// ups to the downstream tasks downs: subtask i to i for Forward, every
// upstream to every downstream subtask otherwise (Global sends rows to
// subtask 0 only, but control messages to all).
func (j *Job) connect(in Input, ups, downs []*task, width int) {
	var owner []int32
	if in.Partition.Kind == Hash {
		owner = make([]int32, j.maxPar)
		for kg := range owner {
			owner[kg] = int32(types.SubtaskForKeyGroup(kg, len(downs), j.maxPar))
		}
	}
	edges := make([]*outEdge, len(ups))
	for u, up := range ups {
		nd := len(downs)
		if in.Partition.Kind == Forward {
			nd = 1
		}
		edges[u] = &outEdge{kind: in.Partition.Kind, keys: in.Partition.Keys, dests: make([]*outChannel, nd), owner: owner, maxPar: j.maxPar}
		up.outEdges = append(up.outEdges, edges[u])
	}
	link := func(u, d int, down *task) {
		l := newLink(down.inbox, len(down.links), width, j.opts.ChannelBuffer)
		down.links = append(down.links, l)
		down.ports = append(down.ports, in.Port)
		edges[u].dests[d] = &outChannel{link: l, pending: l.getBatch(j.opts.BatchSize)}
	}
	for s, down := range downs {
		if in.Partition.Kind == Forward {
			link(s, 0, down)
			continue
		}
		for u := range ups {
			link(u, s, down)
		}
	}
}

// fail records the first failure and cancels every task.
func (j *Job) fail(err error) {
	j.mu.Lock()
	if errors.Is(err, ErrCancelled) && j.committing {
		// Too late: every task ended well and the sinks commit.
		j.mu.Unlock()
		return
	}
	if j.err == nil {
		j.err = err
		j.opts.logf("job %s: failed: %v", j.graph.Name, err)
	}
	j.mu.Unlock()
	j.cancel()
}

// deferredSink is a transactional sink writer of a job without
// checkpoints (of subtask of parallelism), closed (committed) only when
// the whole job ended well.
type deferredSink struct {
	name                 string
	subtask, parallelism int
	w                    connector.TransactionalWriter
}

// String names the sink subtask in errors: "sink (2/3)".
func (d deferredSink) String() string {
	return fmt.Sprintf("%s (%d/%d)", d.name, d.subtask+1, d.parallelism)
}

// deferClose keeps w to be closed by closeDeferred.
func (j *Job) deferClose(d deferredSink) {
	j.mu.Lock()
	j.deferred = append(j.deferred, d)
	j.mu.Unlock()
}

// closeDeferred runs when every task has ended: it commits the deferred
// sink writers if the job did not fail, and aborts them if it did. The
// commit is all or nothing over every sink subtask of the job: first every
// connector.EndingWriter prepares its end (durable, not visible); only if
// all did, and the job was not cancelled meanwhile, are they committed,
// then the other writers closed (their Close commits and cannot be undone,
// so it comes after the commits), then the EndingWriters closed (released).
// If any step fails, every EndingWriter whose Commit was called reverts
// it, and every writer not closed aborts.
func (j *Job) closeDeferred() {
	j.mu.Lock()
	ds := j.deferred
	j.deferred = nil
	j.mu.Unlock()
	if len(ds) == 0 {
		return
	}
	if j.failed() {
		j.abortDeferred(ds, nil)
		return
	}
	txns := make([][]byte, len(ds))
	var err error
	for k, d := range ds {
		ew, ok := d.w.(connector.EndingWriter)
		if !ok {
			continue
		}
		if txns[k], err = ew.PrepareEnd(); err != nil {
			err = fmt.Errorf("close sink %s: prepare: %w", d, err)
			break
		}
	}
	if err == nil {
		err = j.beginCommit()
	}
	if err != nil {
		j.fail(err)
		j.abortDeferred(ds, nil)
		return
	}
	closed := make([]bool, len(ds))
	committing := make([]bool, len(ds)) // Commit called: Revert on failure
	commit := func() error {
		for k, d := range ds {
			ew, ok := d.w.(connector.EndingWriter)
			if !ok {
				continue
			}
			committing[k] = true
			err := j.fault(FaultEndCommit)
			if err == nil {
				err = ew.Commit(txns[k])
			}
			if err != nil {
				return fmt.Errorf("close sink %s: commit: %w", d, err)
			}
		}
		// The other writers first: their Close commits. The Close of an
		// EndingWriter only releases it, and a writer closed is not
		// aborted: were the EndingWriters closed first, a failed Close
		// of another writer would leave their files, hidden again by
		// Revert, behind in progress.
		for _, ending := range []bool{false, true} {
			for k, d := range ds {
				if _, ok := d.w.(connector.EndingWriter); ok != ending {
					continue
				}
				closed[k] = true
				if err := d.w.Close(); err != nil {
					return fmt.Errorf("close sink %s: %w", d, err)
				}
			}
		}
		return nil
	}
	if err := commit(); err != nil {
		var undo []error
		for k, d := range ds {
			if !committing[k] {
				continue
			}
			if rerr := d.w.(connector.EndingWriter).Revert(txns[k]); rerr != nil {
				undo = append(undo, fmt.Errorf("sink %s: %w", d, rerr))
			}
		}
		if len(undo) > 0 {
			err = fmt.Errorf("%w; and part of the output could not be hidden again and is visible: %w", err, errors.Join(undo...))
		}
		j.fail(err)
		j.abortDeferred(ds, closed)
	}
}

// abortDeferred aborts the deferred writers not closed (closed: by index;
// nil for none), telling what could not be cleaned up (the job failed
// already).
func (j *Job) abortDeferred(ds []deferredSink, closed []bool) {
	for k, d := range ds {
		if closed != nil && closed[k] {
			continue
		}
		if err := d.w.Abort(); err != nil {
			msg := fmt.Sprintf("job %s failed, and its sink %s could not discard its files: %v", j.graph.Name, d.name, err)
			if j.opts.Notice != nil {
				j.opts.Notice(msg)
			} else {
				j.opts.logf("%s", msg)
			}
		}
	}
}

// beginCommit decides that the job commits its deferred sinks: it returns
// the job's error if it failed or was cancelled meanwhile, and otherwise
// makes a later Cancel too late to count (see Cancel).
func (j *Job) beginCommit() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	j.committing = true
	return nil
}

// failed reports whether the job has failed (so far).
func (j *Job) failed() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err != nil
}

// Wait waits until every task has exited. It returns nil when the bounded
// input was completely processed or after a clean stop, and otherwise the
// first task failure, wrapped with the vertex name and subtask.
func (j *Job) Wait() error {
	<-j.done
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Stop stops the job cleanly: sources stop reading and send end of input,
// everything downstream drains, sinks are flushed and closed. Wait then
// returns nil (unless a task failed). Stop does not wait; it may be called
// more than once.
func (j *Job) Stop() {
	j.stopOnce.Do(func() {
		j.opts.logf("job %s: stopping", j.graph.Name)
		close(j.stopCh)
	})
}

// ErrCancelled is wrapped by the error Wait returns after Cancel.
var ErrCancelled = errors.New("job cancelled")

// Cancel ends the job without draining it, as Stop would: every task stops
// at its next batch or message (a task never waits on a channel once
// cancelled), sink writers discard what they have not committed, as after
// a failure, and Wait returns an error that wraps ErrCancelled. It is how
// a job is stopped when Stop has nothing left to stop: the sources have
// finished and downstream operators still work on what they read. Cancel
// does not wait; it may be called more than once, and after Stop. A
// Cancel after every task ended well, once the sinks of a job without
// checkpoints have begun to commit its output, does nothing.
func (j *Job) Cancel() {
	j.fail(ErrCancelled)
}

// Name is the job graph's name.
func (j *Job) Name() string { return j.graph.Name }

// SourcesFinished reports whether every source subtask has stopped
// reading: at the end of its bounded input, after Stop, or on failure.
// Stop has no effect then; Cancel ends the job.
func (j *Job) SourcesFinished() bool { return j.sourcesLeft.Load() <= 0 }

// Done returns a channel that is closed when the job has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

// Metrics returns a snapshot of the job's live counters.
func (j *Job) Metrics() Metrics {
	m := Metrics{RowsRead: j.rowsRead.Load(), RowsWritten: j.rowsWritten.Load(), Dropped: j.dropped.Load(),
		SourcesFinished: j.SourcesFinished(), Queued: max(j.inFlight.Load(), 0)}
	for i := range j.skipped {
		m.Skipped += j.skipped[i].Load()
	}
	m.Vertices = make([]VertexMetrics, len(j.graph.Vertices))
	for i, v := range j.graph.Vertices {
		vm := VertexMetrics{Name: v.Name, RowsIn: j.vertexIn[i].Load(), RowsOut: j.vertexOut[i].Load(), Watermark: MaxWatermark,
			LateRows: j.vertexLate[i].Load()}
		m.LateRows += vm.LateRows
		vm.SubtaskWatermarks = make([]int64, len(j.watermarks[i]))
		for s := range j.watermarks[i] {
			w := j.watermarks[i][s].Load()
			vm.SubtaskWatermarks[s] = w
			vm.Watermark = min(vm.Watermark, w)
		}
		m.Vertices[i] = vm
	}
	return m
}

func (j *Job) batchSent() {
	n := j.inFlight.Add(1)
	for {
		m := j.maxInFlight.Load()
		if n <= m || j.maxInFlight.CompareAndSwap(m, n) {
			return
		}
	}
}

func (j *Job) batchDone() { j.inFlight.Add(-1) }

// ErrPanic is wrapped by the error of a task that panicked.
var ErrPanic = errors.New("panic")

// runGuarded runs f, turning a panic in it (an operator's, a connector's,
// Pebble's) into an error with the panic's value and stack, so that it
// fails the job it belongs to, which then restarts or fails cleanly,
// instead of the whole process and every other job in it.
func runGuarded(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v\n%s", ErrPanic, r, debug.Stack())
		}
	}()
	return f()
}
