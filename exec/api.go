// Package exec is Weir's runtime: it runs a job graph as tasks (goroutines),
// one per parallel subtask of each chain of operators, connected by bounded
// channels that carry batches of rows and in-band control messages.
package exec

import (
	"sync/atomic"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// Operator is one physical operator in a chain. A task calls its methods from
// one goroutine only, in this order: Open, then any number of Process calls,
// then Finish (only if every input ended normally), then Close (always, also
// after a failure or cancellation).
type Operator interface {
	// Open prepares the operator to run as one subtask.
	Open(ctx *OpContext) error
	// Process consumes batch b, which arrived on input port `input` (0 for
	// operators with one logical input; a UNION's inputs all use port 0).
	// Rows may be of any kind (+I, -U, +U, -D). Results go to out. The
	// operator must not retain b or its rows after returning.
	Process(input int, b *types.Batch, out Emitter) error
	// Finish is called once after all inputs have ended (bounded input);
	// the operator emits whatever it still holds.
	Finish(out Emitter) error
	// Close releases resources. It is called exactly once.
	Close() error
}

// Emitter receives an operator's output batches: the next operator of the
// chain, or the exchange to the next task.
type Emitter interface {
	// Emit consumes b. The callee must not retain b after returning, so the
	// caller may reset and reuse b at once.
	Emit(b *types.Batch) error
}

// OpContext tells an operator where it runs.
type OpContext struct {
	Subtask, Parallelism int
	MaxParallelism       int
	// Name is the operator's name in the plan, for errors and logs.
	Name string
	// ID is the operator's stable id (OperatorSpec.ID), the prefix of its state.
	ID string
	// StateBudget is the memory a stateful operator may use for state it
	// keeps in memory before writing it back to its state store.
	StateBudget int64
	// Dropped counts the rows operators drop by policy (the not-null
	// enforcer's DROP), for the whole job (Metrics.Dropped). It may be nil
	// in tests.
	Dropped *atomic.Int64
	// Late counts the rows event-time operators (windows, OVER) drop for
	// being behind the watermark, for the operator's vertex
	// (VertexMetrics.LateRows, Metrics.LateRows); nil in tests.
	Late *atomic.Int64
	// Watermark is the task's current watermark (NoWatermark before the
	// first), which CURRENT_WATERMARK reads; nil in tests (then it is NULL).
	Watermark *atomic.Int64
	// StateTTL is Options.StateTTL ('table.exec.state.ttl'): state not
	// written for this long expires (0: never).
	StateTTL time.Duration
	// Clock is the task's processing-time clock (Options.Clock); nil in
	// tests means time.Now. Operators read it once per batch (clockOf).
	Clock func() time.Time
}

// ClockReader is a connector.SourceReader that evaluates PROCTIME()
// itself (VALUES): right after it opens, the task gives it its
// processing-time clock (Options.Clock, else time.Now), which it reads
// once per Next call.
type ClockReader interface {
	SetClock(clock func() time.Time)
}

// clockOf returns ctx's processing-time clock: ctx.Clock, or time.Now
// when ctx or its clock is nil.
func clockOf(ctx *OpContext) func() time.Time {
	if ctx == nil || ctx.Clock == nil {
		return time.Now
	}
	return ctx.Clock
}

// StatefulOperator is an Operator with keyed state that checkpoints
// snapshot and restores. When the job checkpoints, the task gives each
// stateful operator a state store (one Pebble database per operator
// subtask) right after Open; without checkpointing InitState is not called
// and the operator keeps its state in memory only.
type StatefulOperator interface {
	Operator
	// InitState hands the operator its state store. After a restore
	// (restored is true) the store already holds the operator's state for
	// its key groups; otherwise it is empty.
	InitState(store *statestore.Store, restored bool) error
	// PrepareSnapshot writes into the store everything the operator keeps
	// in memory that changed since the last call. The task calls it at a
	// checkpoint barrier, between two Process calls, and then snapshots the
	// store.
	PrepareSnapshot() error
}

// InputEndOperator is an operator of several inputs that wants to know
// when one of them has ended for good (as Flink's
// BoundedMultiInput.endInput): the task calls EndInput on the first
// operator of its chain once per input port, when every channel of that
// port has delivered its end of input, unless the input was stopped
// rather than ended (Job.Stop, a stop with savepoint: a restore goes on
// with it, so the operator must keep what it needs for it; Finish still
// follows). The call is made from the task's
// loop, in order with the rows, watermarks and checkpoint barriers (never
// concurrently with Process), and before Finish, which still follows once
// every input has ended. Output goes to out. The ended state is not
// checkpointed: after a restore the port's channels end again (a finished
// source stays ended and ends again at once, reading nothing:
// checkpoint.SourcePosition.Ended), and EndInput is called again.
type InputEndOperator interface {
	EndInput(port int, out Emitter) error
}

// OperatorSpec describes one operator of a vertex's chain and builds its
// instances, one per subtask.
type OperatorSpec struct {
	// Name is the operator's description as EXPLAIN prints it, e.g.
	// "GroupAggregate(groupBy=[k], select=[k, SUM(v)])".
	Name string
	// ID is the operator's stable id, used to match state on restore.
	ID string
	// OutWidth is the number of columns of the rows the operator emits.
	OutWidth int
	// New builds the operator instance of one subtask.
	New func() Operator
}

// PartitionKind says how an edge distributes rows among downstream subtasks.
type PartitionKind int

// Edge partitionings.
const (
	// Forward sends subtask i's rows to subtask i (equal parallelism).
	Forward PartitionKind = iota
	// Hash sends each row to the subtask owning its key group, computed from
	// the Keys columns (see types.KeyGroup).
	Hash
	// Broadcast sends every row to every subtask.
	Broadcast
	// Rebalance spreads rows round-robin over the downstream subtasks.
	Rebalance
	// Global sends every row to subtask 0.
	Global
)

func (k PartitionKind) String() string {
	switch k {
	case Forward:
		return "FORWARD"
	case Hash:
		return "HASH"
	case Broadcast:
		return "BROADCAST"
	case Rebalance:
		return "REBALANCE"
	case Global:
		return "GLOBAL"
	}
	return "UNKNOWN"
}

// Partitioning is how an edge distributes rows.
type Partitioning struct {
	Kind PartitionKind
	Keys []int // column indexes, for Hash
}

// Input is an edge into a vertex.
type Input struct {
	From      int // index of the upstream vertex in JobGraph.Vertices
	Partition Partitioning
	Port      int // operator input port (0 unless the head operator has several inputs)
}

// Vertex is a chain of operators run as Parallelism tasks. A vertex either
// starts at a Source or at its Inputs; it may end in a Sink.
type Vertex struct {
	// ID is the vertex's stable id: for a source vertex the id of its
	// source scan, which names its positions in checkpoints.
	ID          string
	Name        string
	Parallelism int
	// Source is set for a source vertex, with SourceWidth its column count.
	Source      connector.Source
	SourceWidth int
	// SourceName names the source table, for errors and logs, and
	// SourceConnector its 'connector' (recorded with its positions in
	// checkpoints, so that they can be shown for what they mean).
	SourceName      string
	SourceConnector string
	// Watermark, if set, is the source's WATERMARK FOR: its subtasks
	// generate watermarks from the rows they read.
	Watermark *WatermarkSpec
	Inputs    []Input
	Operators []OperatorSpec // in chain order; may be empty
	// Sink, if set, consumes the chain's output; SinkName names its table.
	Sink     connector.Sink
	SinkName string
	// Statement is the number (from 1) of the statement in
	// JobGraph.Statements the vertex was planned for; 0 if unknown.
	Statement int
}

// JobGraph is the physical job: vertices in topological order (every input
// refers to an earlier vertex).
type JobGraph struct {
	Name           string
	Vertices       []*Vertex
	MaxParallelism int // number of key groups; 0 means types.DefaultMaxParallelism
	// Statements are the SQL statements the job runs (its INSERTs), in
	// order, recorded in checkpoints for `weir checkpoints inspect`.
	Statements []string
}
