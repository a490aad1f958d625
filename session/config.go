package session

import (
	"fmt"
	"strconv"
	"strings"
	"time"
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

// ParseDuration parses a duration the way Flink's configuration does: a
// number with an optional unit ("500", "500 ms", "10s", "1 min", "2h",
// "1 d"); a bare number is milliseconds.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9') {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid duration %q: expected a number with an optional unit (ms, s, min, h, d)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: %w", s, err)
	}
	unit := strings.TrimSpace(t[i:])
	var d time.Duration
	switch unit {
	case "", "ms", "milli", "millis", "millisecond", "milliseconds":
		d = time.Millisecond
	case "s", "sec", "secs", "second", "seconds":
		d = time.Second
	case "m", "min", "mins", "minute", "minutes":
		d = time.Minute
	case "h", "hour", "hours":
		d = time.Hour
	case "d", "day", "days":
		d = 24 * time.Hour
	case "us", "µs", "micro", "micros":
		d = time.Microsecond
	case "ns", "nano", "nanos":
		d = time.Nanosecond
	default:
		return 0, fmt.Errorf("invalid duration %q: unknown unit %q (use ms, s, min, h or d)", s, unit)
	}
	return time.Duration(n) * d, nil
}

// ParseBytes parses a memory size as Flink does: "64mb", "1 gb", "512k", "1024" (bytes).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9') {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid memory size %q: expected a number with an optional unit (b, kb, mb, gb)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid memory size %q: %w", s, err)
	}
	var m int64
	switch strings.TrimSpace(t[i:]) {
	case "", "b", "bytes":
		m = 1
	case "k", "kb", "kib", "kibibytes":
		m = 1 << 10
	case "m", "mb", "mib", "mebibytes":
		m = 1 << 20
	case "g", "gb", "gib", "gibibytes":
		m = 1 << 30
	case "t", "tb", "tib":
		m = 1 << 40
	default:
		return 0, fmt.Errorf("invalid memory size %q: unknown unit (use b, kb, mb, gb)", s)
	}
	return n * m, nil
}

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
