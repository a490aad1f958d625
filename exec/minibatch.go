package exec

// bufferingOperator is an operator that can hold back output across
// Process calls (a mini-batch, Options.MiniBatch) until the task flushes:
// when its input is idle, every FlushInterval, before a checkpoint
// barrier (in PrepareSnapshot) and at the end of input (in Finish).
type bufferingOperator interface {
	// enableMiniBatch, called after Open, lets the operator hold back
	// output; size > 0 bounds the input rows whose changes it holds
	// (Options.MiniBatchSize).
	enableMiniBatch(size int)
	// hasPending reports whether output is held back.
	hasPending() bool
	// emitPending emits what is held back, to the emitter of the last
	// Process call.
	emitPending() error
}

var _ bufferingOperator = (*groupAggOp)(nil)

// barrierFlusher is an operator that holds rows until a checkpoint barrier
// (the local phase of a two-phase window aggregate): the task calls
// flushBeforeBarrier, in chain order, before it flushes the chain and cuts
// the state, so what it held is in the downstream state the checkpoint
// takes and it needs no state of its own.
type barrierFlusher interface {
	flushBeforeBarrier(out Emitter) error
}
