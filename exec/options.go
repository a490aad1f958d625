package exec

import "time"

// Options tunes how a job runs.
type Options struct {
	// BatchSize is the number of rows per batch sent between tasks and
	// asked of source readers (default 1024).
	BatchSize int
	// ChannelBuffer is the number of batches that may be in flight on one
	// logical channel (upstream subtask → downstream subtask) before the
	// sender blocks (default 4).
	ChannelBuffer int
	// FlushInterval is how long a partially filled output batch may wait
	// before it is sent (default 5ms).
	FlushInterval time.Duration
	// MiniBatch lets aggregations hold their changes across input batches
	// and emit them when the task flushes (idle input, FlushInterval, a
	// barrier, end of input): fewer, later updates for hot keys (Flink's
	// 'table.exec.mini-batch.enabled'). Off, they emit once per batch.
	MiniBatch bool
	// MiniBatchLatency, when positive, is how long aggregations may hold
	// their changes (Flink's 'table.exec.mini-batch.allow-latency'): the
	// task emits them when that much time passed since it last did, and
	// no longer when its input is idle or every FlushInterval (output
	// batches still go then). 0: Weir's default, idle input or
	// FlushInterval. Barriers and the end of input emit them always.
	MiniBatchLatency time.Duration
	// MiniBatchSize, when positive, is the most input rows an aggregation
	// holds the changes of before it emits them (Flink's
	// 'table.exec.mini-batch.size'); 0: the operator's own bound.
	MiniBatchSize int
	// AutoWatermarkInterval is how often a source with a WATERMARK computes
	// its watermark and sends it on when it advanced (Flink's
	// 'pipeline.auto-watermark-interval'; default 200ms).
	AutoWatermarkInterval time.Duration
	// SourceIdleTimeout, if positive, is how long a source subtask with a
	// WATERMARK may go without data before it marks itself idle: downstream
	// tasks then leave it out of their watermark until it sends data again
	// (Flink's 'table.exec.source.idle-timeout'; default 0, never).
	SourceIdleTimeout time.Duration
	// StateTTL, if positive, expires the keyed state of a key that no
	// operator wrote for this long (processing time), in every
	// KeyedOperator: its state is cleared by a per-key timer, never by a
	// scan, and is never read once expired (Flink's 'table.exec.state.ttl',
	// OnCreateAndWrite, NeverReturnExpired). 0 keeps state forever.
	StateTTL time.Duration
	// MemoryBytes is the memory an automatic state budget
	// (CheckpointOptions.StateCacheBytes 0) is sized from; 0 means the
	// process's (sysmem.Total: its cgroup limit or the machine's memory);
	// negative means unknown (the budget is then statestore.DefaultCacheBytes).
	MemoryBytes int64
	// Logf, if set, receives the runtime's log lines.
	Logf func(format string, args ...any)
	// Checkpoint, if set, turns checkpointing on (and restores from
	// Checkpoint.Restore).
	Checkpoint *CheckpointOptions
	// AllowDuplicateOutput lets the job start although a durable sink
	// (connector.DurableSink) already holds output committed after the
	// checkpoint it starts from, which the job then writes again; without
	// it such a start fails with a *CommittedOutputError.
	AllowDuplicateOutput bool
	// Notice, if set, receives warnings for the user (one line each).
	Notice func(msg string)
	// Built, if set, is called by Start with the job once it is built and
	// before anything of it runs (so what it writes comes before any of
	// the job's reports), e.g. to tell its StateBudget.
	Built func(*Job)
	// Clock, if set, is the processing-time clock of the job's tasks: the
	// time of PROCTIME(), of processing-time windows and timers, of state
	// TTL and of lookup-join reloads (nil: time.Now). Tests set it to
	// drive processing time without waiting; the runtime's own waits
	// (flushes, idle timeouts, checkpoint intervals) stay on time.Now.
	Clock func() time.Time
	// Fault, if set, is called at each named fault point (FaultSourceTrigger
	// and the other Fault* constants); an error it returns fails the job
	// there. Tests use it to crash the job at exact moments.
	Fault func(point string) error

	// creditWaitHook, if set (tests only), is called by a sender that is
	// about to block waiting for a credit.
	creditWaitHook func()
}

// Defaults for Options.
const (
	DefaultBatchSize     = 1024
	DefaultChannelBuffer = 4
	DefaultFlushInterval = 5 * time.Millisecond
	// DefaultAutoWatermarkInterval is Flink's default.
	DefaultAutoWatermarkInterval = 200 * time.Millisecond
)

func (o Options) withDefaults() Options {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.ChannelBuffer <= 0 {
		o.ChannelBuffer = DefaultChannelBuffer
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = DefaultFlushInterval
	}
	if o.AutoWatermarkInterval <= 0 {
		o.AutoWatermarkInterval = DefaultAutoWatermarkInterval
	}
	return o
}

func (o Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}
