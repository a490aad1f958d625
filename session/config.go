package session

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/confval"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/planner"
	"github.com/weir-sql/weir/types"
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
	KeyMiniBatchLatency   = "table.exec.mini-batch.allow-latency"
	KeyMiniBatchSize      = "table.exec.mini-batch.size"
	KeyWatermarkInterval  = "pipeline.auto-watermark-interval"
	KeySourceIdleTimeout  = "table.exec.source.idle-timeout"
	KeyStateTTL           = "table.exec.state.ttl"
	KeyNotNullEnforcer    = planner.KeyNotNullEnforcer
	KeyLocalTimeZone      = planner.KeyLocalTimeZone
	KeyAggPhaseStrategy   = planner.KeyAggPhaseStrategy
	KeyJoinInputPruning   = planner.KeyJoinInputPruning
	KeyOverInputPruning   = planner.KeyOverInputPruning
	KeyDistinctAggSplit   = planner.KeyDistinctAggSplit
	KeyDistinctAggBuckets = planner.KeyDistinctAggBuckets
	// KeyResultMode is the shell's result display (table, changelog, tableau).
	KeyResultMode = "sql-client.execution.result-mode"
)

// setKeys are the keys SET accepts, each with the check of its value (nil:
// any text).
var setKeys = map[string]func(string) error{
	KeyParallelism: checkParallelism,
	"table.exec.resource.default-parallelism": checkParallelism,
	KeyPipelineName:                         checkJobName,
	KeyCheckpointInterval:                   checkDuration,
	KeyCheckpointTimeout:                    checkDuration,
	KeyCheckpointMinPause:                   checkDuration,
	KeyCheckpointDir:                        checkNonEmpty,
	KeyNumRetained:                          checkWholeNumber(1),
	KeyStateCacheSize:                       checkMemorySizeOrAuto,
	KeySavepointPath:                        nil,
	KeySavepointDir:                         checkNonEmpty,
	KeySavepointOnStop:                      checkBool,
	KeyIgnoreUnclaimed:                      checkBool,
	KeyRestartType:                          checkRestartType,
	"restart-strategy.fixed-delay.attempts": checkWholeNumber(0),
	"restart-strategy.fixed-delay.delay":    checkDuration,
	"restart-strategy.failure-rate.max-failures-per-interval": checkWholeNumber(0),
	"restart-strategy.failure-rate.failure-rate-interval":     checkDuration,
	"restart-strategy.failure-rate.delay":                     checkDuration,
	KeyMiniBatch:                                              checkBool,
	KeyMiniBatchLatency:                                       checkDuration,
	KeyMiniBatchSize:                                          checkWholeNumber(1),
	KeyWatermarkInterval:                                      checkPositiveDuration,
	KeySourceIdleTimeout:                                      checkDuration,
	KeyStateTTL:                                               checkDuration,
	KeyNotNullEnforcer:                                        checkChoice("ERROR", "DROP"),
	KeyAllowDuplicateOutput:                                   checkBool,
	KeyResultMode:                                             checkChoice("table", "changelog", "tableau"),
	KeyLocalTimeZone:                                          checkTimeZone,
	KeyAggPhaseStrategy:                                       checkChoice("AUTO", "ONE_PHASE", "TWO_PHASE"),
	KeyJoinInputPruning:                                       checkBool,
	KeyOverInputPruning:                                       checkBool,
	KeyDistinctAggSplit:                                       checkBool,
	KeyDistinctAggBuckets:                                     checkWholeNumber(1),
}

// flinkPrefixes are the prefixes of Flink's configuration keys. SET accepts
// a key under one of them that Weir does not use, with a warning that it is
// ignored, unless the key is within edit distance 2 of one Weir uses (a
// misspelling).
var flinkPrefixes = []string{
	"table.", "pipeline.", "execution.", "state.", "sql-client.", "restart-strategy.",
	"taskmanager.", "jobmanager.", "parallelism.", "rest.", "web.", "metrics.",
	"high-availability.", "security.", "cluster.", "python.", "env.", "heartbeat.", "akka.", "pekko.",
}

// setChoices are the values of the keys that take one of a few (for
// completion); TestSetChoicesAreAccepted keeps them in step with setKeys.
var setChoices = map[string][]string{
	KeyResultMode:           {"table", "changelog", "tableau"},
	KeyNotNullEnforcer:      {"ERROR", "DROP"},
	KeyAggPhaseStrategy:     {"AUTO", "ONE_PHASE", "TWO_PHASE"},
	KeyRestartType:          {"none", "fixed-delay", "failure-rate"},
	KeyMiniBatch:            {"true", "false"},
	KeySavepointOnStop:      {"true", "false"},
	KeyIgnoreUnclaimed:      {"true", "false"},
	KeyAllowDuplicateOutput: {"true", "false"},
	KeyJoinInputPruning:     {"true", "false"},
	KeyOverInputPruning:     {"true", "false"},
	KeyDistinctAggSplit:     {"true", "false"},
}

// SetValueChoices returns the values key takes when they are a few (such
// as 'table', 'changelog', 'tableau'), or nil.
func SetValueChoices(key string) []string { return setChoices[key] }

// SetKeys returns the keys SET accepts, sorted (for completion and help).
func SetKeys() []string {
	keys := make([]string, 0, len(setKeys))
	for k := range setKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CheckSet checks a SET of key to value before it takes effect: a key Weir
// uses must have a valid value; an unknown key is an error naming the
// closest known key, unless it is a key of Flink that Weir does not use
// (under a known prefix and not within edit distance 2 of a known key):
// then warning says that it is ignored.
func CheckSet(key, value string) (warning string, err error) {
	check, known := setKeys[key]
	if known {
		if check == nil {
			return "", nil
		}
		if err := check(value); err != nil {
			return "", fmt.Errorf("SET '%s' = '%s': %w", key, value, err)
		}
		return "", nil
	}
	if near := confval.Closest(key, SetKeys()); near != "" {
		return "", fmt.Errorf("SET: unknown key '%s' (did you mean '%s'?)", key, near)
	}
	for _, p := range flinkPrefixes {
		if strings.HasPrefix(key, p) && len(key) > len(p) {
			return fmt.Sprintf("'%s' is a Flink option that Weir does not use; it is ignored", key), nil
		}
	}
	return "", fmt.Errorf("SET: unknown key '%s' (Weir's keys: %s)", key, strings.Join(SetKeys(), ", "))
}

// checkJobName accepts a name that can be one folder (the job's folder in
// state.checkpoints.dir): not empty, no path separator, not . or ..
func checkJobName(v string) error {
	if v == "" || v == "." || v == ".." || strings.ContainsAny(v, `/\`) || strings.ContainsRune(v, 0) {
		return fmt.Errorf("expected a name for the job's checkpoint folder: not empty, without '/' or '\\', not '.' or '..'")
	}
	return nil
}

// CheckReset checks RESET of key: a key Weir knows or one that is set (a
// Flink key SET with a warning); otherwise an error naming the closest key.
func CheckReset(key string, config map[string]string) error {
	if _, known := setKeys[key]; known {
		return nil
	}
	if _, set := config[key]; set {
		return nil
	}
	if near := confval.Closest(key, SetKeys()); near != "" {
		return fmt.Errorf("RESET: unknown key '%s' (did you mean '%s'?)", key, near)
	}
	return fmt.Errorf("RESET: unknown key '%s', and it is not set (SET lists the keys that are)", key)
}

func checkParallelism(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > types.DefaultMaxParallelism {
		return fmt.Errorf("expected a whole number from 1 to %d", types.DefaultMaxParallelism)
	}
	return nil
}

func checkDuration(v string) error {
	if _, err := confval.Duration(v); err != nil {
		return fmt.Errorf("expected a duration such as '10 s', '500 ms' or '1 min': %s", reason(v, err))
	}
	return nil
}

func checkTimeZone(v string) error {
	_, err := confval.TimeZone(v)
	return err
}

func checkPositiveDuration(v string) error {
	if err := checkDuration(v); err != nil {
		return err
	}
	if d, _ := confval.Duration(v); d <= 0 {
		return fmt.Errorf("expected a duration above zero, such as '200 ms'")
	}
	return nil
}

func checkMemorySize(v string) error {
	if _, err := confval.MemorySize(v); err != nil {
		return fmt.Errorf("expected a memory size such as '64mb' or '1 gb': %s", reason(v, err))
	}
	return nil
}

// checkMemorySizeOrAuto accepts a memory size or 'auto'.
func checkMemorySizeOrAuto(v string) error {
	if isAuto(v) {
		return nil
	}
	if _, err := confval.MemorySize(v); err != nil {
		return fmt.Errorf("expected 'auto' or a memory size such as '256mb' or '1 gb': %s", reason(v, err))
	}
	return nil
}

// isAuto reports whether a setting's value is 'auto' (any case).
func isAuto(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "auto") }

// reason is a confval error without the value it starts with (the SET
// error shows the value already).
func reason(v string, err error) string {
	return strings.TrimPrefix(err.Error(), strconv.Quote(strings.TrimSpace(v))+": ")
}

func checkNonEmpty(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("expected a folder")
	}
	return nil
}

func checkRestartType(v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "none", "off", "disable", "fixed-delay", "fixeddelay", "failure-rate", "failurerate":
		return nil
	}
	return fmt.Errorf("expected one of 'none', 'fixed-delay', 'failure-rate'")
}

func checkBool(v string) error {
	return checkChoice("true", "false")(v)
}

// checkWholeNumber accepts whole numbers of at least least.
func checkWholeNumber(least int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < least {
			return fmt.Errorf("expected a whole number of at least %d", least)
		}
		return nil
	}
}

// checkChoice accepts one of choices, case-insensitive.
func checkChoice(choices ...string) func(string) error {
	return func(v string) error {
		for _, c := range choices {
			if strings.EqualFold(strings.TrimSpace(v), c) {
				return nil
			}
		}
		return fmt.Errorf("expected one of '%s'", strings.Join(choices, "', '"))
	}
}

// EventTimeOptions sets o's watermark interval, source idle timeout and
// state TTL from 'pipeline.auto-watermark-interval' (default 200 ms),
// 'table.exec.source.idle-timeout' (default 0: sources never go idle) and
// 'table.exec.state.ttl' (default 0: state never expires). SET has checked
// the values.
func (s *Session) EventTimeOptions(o *exec.Options) {
	if d, err := confval.Duration(s.Config[KeyWatermarkInterval]); err == nil && d > 0 {
		o.AutoWatermarkInterval = d
	}
	if d, err := confval.Duration(s.Config[KeySourceIdleTimeout]); err == nil && d > 0 {
		o.SourceIdleTimeout = d
	}
	if d, err := confval.Duration(s.Config[KeyStateTTL]); err == nil && d > 0 {
		o.StateTTL = d
	}
}

// JobOptions returns base with the session's runtime settings of a job:
// mini-batch ('table.exec.mini-batch.enabled', '.allow-latency', '.size')
// and the event-time options
// (EventTimeOptions). weir run and weir bench build their jobs' options
// through it, so that a benchmark runs a script as weir run does.
func (s *Session) JobOptions(base exec.Options) exec.Options {
	base.MiniBatch = s.MiniBatchEnabled()
	if base.MiniBatch {
		if d, err := confval.Duration(s.Config[KeyMiniBatchLatency]); err == nil && d > 0 {
			base.MiniBatchLatency = d
		}
		if n, err := strconv.Atoi(strings.TrimSpace(s.Config[KeyMiniBatchSize])); err == nil && n > 0 {
			base.MiniBatchSize = n
		}
	}
	s.EventTimeOptions(&base)
	return base
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
