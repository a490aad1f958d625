package session

import (
	"strings"
)

// Config keys Weir reads, with Flink's names.
const (
	KeyParallelism        = "parallelism.default"
	KeyPipelineName       = "pipeline.name"
	KeyCheckpointInterval = "execution.checkpointing.interval"
	KeyCheckpointTimeout  = "execution.checkpointing.timeout"
	KeyCheckpointMinPause = "execution.checkpointing.min-pause"
	KeyCheckpointDir      = "state.checkpoints.dir"
	KeyNumRetained        = "state.checkpoints.num-retained"
	KeyStateCacheSize     = "state.cache.size"
	KeySavepointPath      = "execution.savepoint.path"
	KeySavepointDir       = "state.savepoints.dir"
	KeySavepointOnStop    = "execution.savepoint.on-stop"
	KeyIgnoreUnclaimed    = "execution.savepoint.ignore-unclaimed-state"
	KeyRestartType        = "restart-strategy.type"
	KeyMiniBatch          = "table.exec.mini-batch.enabled"
)

// MiniBatchEnabled reports whether aggregations hold their changes across
// input batches ('table.exec.mini-batch.enabled'). Unlike Flink, Weir turns
// it on by default: its bound is the runtime's flush interval (a few
// milliseconds) or idle input, so it costs little latency and saves most
// of the -U/+U churn of hot keys.
func (s *Session) MiniBatchEnabled() bool {
	v, ok := s.Config[KeyMiniBatch]
	if !ok {
		return true
	}
	return strings.EqualFold(strings.TrimSpace(v), "true")
}
