package session

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

func TestRestartStrategies(t *testing.T) {
	base := time.Unix(0, 0)
	cases := []struct {
		name     string
		conf     map[string]string
		ckpt     bool
		failures []time.Duration // when each failure happens
		allowed  []bool
	}{
		{"default without checkpoints is none", nil, false, []time.Duration{0}, []bool{false}},
		{"default with checkpoints is fixed-delay, 3 attempts", nil, true,
			[]time.Duration{0, 1, 2, 3}, []bool{true, true, true, false}},
		{"fixed-delay attempts", map[string]string{"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "1"}, true,
			[]time.Duration{0, time.Hour}, []bool{true, false}},
		{"failure-rate counts failures in the window", map[string]string{"restart-strategy.type": "failure-rate",
			"restart-strategy.failure-rate.max-failures-per-interval": "2", "restart-strategy.failure-rate.failure-rate-interval": "1 min"}, true,
			[]time.Duration{0, 10 * time.Second, 20 * time.Second, 5 * time.Minute, 5*time.Minute + time.Second, 5*time.Minute + 2*time.Second},
			[]bool{true, true, false, true, true, false}},
		{"none", map[string]string{"restart-strategy.type": "none"}, true, []time.Duration{0}, []bool{false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Session{Config: map[string]string{}}
			for k, v := range c.conf {
				s.Config[k] = v
			}
			r, err := s.restartStrategy(c.ckpt)
			if err != nil {
				t.Fatal(err)
			}
			for i, at := range c.failures {
				if got := r.allow(base.Add(at)); got != c.allowed[i] {
					t.Fatalf("failure %d at %s: allowed %v, want %v", i+1, at, got, c.allowed[i])
				}
			}
		})
	}
	s := &Session{Config: map[string]string{"restart-strategy.type": "sometimes"}}
	if _, err := s.restartStrategy(true); err == nil {
		t.Fatal("an unknown restart strategy was accepted")
	}
}

func TestCheckSet(t *testing.T) {
	cases := []struct {
		key, value string
		err        []string // substrings of the error; nil: accepted
		warn       string   // substring of the warning; "": none
	}{
		{key: "execution.checkpointing.interval", value: "5 s"},
		{key: "execution.checkpointing.interval", value: "500"},
		{"execution.checkpointing.interval", "5 parsecs", []string{"'execution.checkpointing.interval' = '5 parsecs'", "expected a duration", `unknown unit "parsecs"`}, ""},
		{"execution.checkpointing.intervall", "5 s", []string{"unknown key 'execution.checkpointing.intervall'", "did you mean 'execution.checkpointing.interval'?"}, ""},
		{"executon.checkpointing.interval", "5 s", []string{"did you mean 'execution.checkpointing.interval'?"}, ""},
		{"parallelism.default", "two", []string{"'parallelism.default' = 'two'", "expected a whole number from 1 to 128"}, ""},
		{"parallelism.default", "0", []string{"expected a whole number from 1 to 128"}, ""},
		{"parallelism.default", "1000", []string{"expected a whole number from 1 to 128"}, ""},
		{key: "parallelism.default", value: " 4 "},
		{"parallelism.defualt", "4", []string{"did you mean 'parallelism.default'?"}, ""},
		{"Parallelism.Default", "4", []string{"did you mean 'parallelism.default'?"}, ""},
		{key: "table.exec.resource.default-parallelism", value: "2"},
		{key: "pipeline.name", value: "anything at all"},
		{"pipeline.name", "a/b", []string{"'pipeline.name' = 'a/b'", "without '/'"}, ""},
		{"pipeline.name", "..", []string{"not '.' or '..'"}, ""},
		{key: "state.checkpoints.num-retained", value: "3"},
		{"state.checkpoints.num-retained", "0", []string{"expected a whole number of at least 1"}, ""},
		{"state.checkpoint.num-retained", "3", []string{"did you mean 'state.checkpoints.num-retained'?"}, ""},
		{key: "state.cache.size", value: "128 mb"},
		{key: "state.cache.size", value: "Auto"},
		{"state.cache.size", "lots", []string{"expected 'auto' or a memory size"}, ""},
		{"state.checkpoints.dir", " ", []string{"expected a folder"}, ""},
		{key: "execution.savepoint.on-stop", value: "TRUE"},
		{"execution.savepoint.on-stop", "yes", []string{"expected one of 'true', 'false'"}, ""},
		{"table.exec.mini-batch.enabled", "on", []string{"expected one of 'true', 'false'"}, ""},
		{key: "table.exec.mini-batch.allow-latency", value: "2s"},
		{"table.exec.mini-batch.allow-latency", "soon", []string{"expected a duration"}, ""},
		{key: "table.exec.mini-batch.size", value: "50000"},
		{"table.exec.mini-batch.size", "0", []string{"at least 1"}, ""},
		{key: "restart-strategy.type", value: "Fixed-Delay"},
		{"restart-strategy.type", "exponential-delay", []string{"expected one of 'none', 'fixed-delay', 'failure-rate'"}, ""},
		{"restart-strategy.fixed-delay.attempts", "-1", []string{"at least 0"}, ""},
		{"restart-strategy.failure-rate.delay", "soon", []string{"expected a duration"}, ""},
		{key: "table.exec.sink.not-null-enforcer", value: "drop"},
		{key: "table.exec.sink.not-null-enforcer", value: "ERROR"},
		{"table.exec.sink.not-null-enforcer", "ignore", []string{"expected one of 'ERROR', 'DROP'"}, ""},
		{"table.exec.sink.not-null-enforcr", "DROP", []string{"did you mean 'table.exec.sink.not-null-enforcer'?"}, ""},
		{key: "sql-client.execution.result-mode", value: "changelog"},
		{key: "pipeline.auto-watermark-interval", value: "50 ms"},
		{"pipeline.auto-watermark-interval", "0 ms", []string{"expected a duration above zero"}, ""},
		{"pipeline.auto-watermark-interval", "often", []string{"expected a duration"}, ""},
		{"pipeline.auto-watermark-intervall", "1 s", []string{"did you mean 'pipeline.auto-watermark-interval'?"}, ""},
		{key: "table.exec.source.idle-timeout", value: "10 s"},
		{key: "table.exec.source.idle-timeout", value: "0 ms"},
		{"table.exec.source.idle-timeout", "later", []string{"expected a duration"}, ""},
		{key: "table.local-time-zone", value: "default"},
		{key: "table.local-time-zone", value: "UTC"},
		{key: "table.local-time-zone", value: "GMT+08:00"},
		{"table.local-time-zone", "Mars/Olympus", []string{"unknown time zone 'Mars/Olympus'"}, ""},
		{"table.local-timezone", "UTC", []string{"did you mean 'table.local-time-zone'?"}, ""},
		{"sql-client.execution.result-mode", "grid", []string{"expected one of 'table', 'changelog', 'tableau'"}, ""},
		// Flink keys Weir does not use: accepted, with a warning.
		{key: "table.exec.state.ttl", value: "1 h"},
		{key: "table.exec.state.ttl", value: "30 min"},
		{key: "table.exec.state.ttl", value: "0"},
		{"table.exec.state.ttl", "forever", []string{"expected a duration"}, ""},
		{key: "table.exec.source.cdc-events-duplicate", value: "true", warn: "'table.exec.source.cdc-events-duplicate' is a Flink option that Weir does not use; it is ignored"},
		{key: "pipeline.jars", value: "file:///x.jar", warn: "ignored"},
		{key: "execution.runtime-mode", value: "streaming", warn: "ignored"},
		{key: "taskmanager.memory.process.size", value: "4g", warn: "ignored"},
		// Neither Weir's nor under a Flink prefix.
		{"checkpoint.interval", "5 s", []string{"unknown key 'checkpoint.interval'", "Weir's keys: ", "execution.checkpointing.interval"}, ""},
		{"table.", "x", []string{"unknown key 'table.'"}, ""},
	}
	for _, c := range cases {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			warn, err := CheckSet(c.key, c.value)
			if c.err == nil {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
			} else {
				if err == nil {
					t.Fatalf("accepted (warning %q), want an error", warn)
				}
				for _, w := range c.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
			}
			if (c.warn == "") != (warn == "") || !strings.Contains(warn, c.warn) {
				t.Errorf("warning %q, want %q", warn, c.warn)
			}
		})
	}
}

// TestSetErrorsAtTheStatement checks that a bad SET fails at once, with the
// line and column of the SET, and that a rejected SET changes nothing.
func TestSetErrorsAtTheStatement(t *testing.T) {
	var stdout, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	src := "SET 'parallelism.default' = '2';\nCREATE TABLE t (k INT) WITH ('connector' = 'datagen');\n  SET 'execution.checkpointing.intervall' = '1 s';\n"
	err := s.RunScript(context.Background(), src, RunOptions{Quiet: true})
	if err == nil {
		t.Fatal("a misspelled SET key was accepted")
	}
	want := "line 3:3: SET: unknown key 'execution.checkpointing.intervall' (did you mean 'execution.checkpointing.interval'?)"
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "  SET 'execution") {
		t.Fatalf("error %q, want %q with the line", err, want)
	}
	if _, ok := s.Config["execution.checkpointing.intervall"]; ok {
		t.Fatal("the rejected key was stored")
	}
	err = s.RunScript(context.Background(), "SET 'parallelism.default' = 'two';", RunOptions{Quiet: true})
	if err == nil || !strings.Contains(err.Error(), "line 1:1: SET 'parallelism.default' = 'two': expected a whole number") {
		t.Fatalf("error %v", err)
	}
	if s.Config["parallelism.default"] != "2" {
		t.Fatalf("parallelism.default = %q after a rejected SET, want the earlier 2", s.Config["parallelism.default"])
	}
	stderr.Reset()
	if err := s.RunScript(context.Background(), "\nSET 'table.exec.source.cdc-events-duplicate' = 'true';", RunOptions{Quiet: true}); err != nil {
		t.Fatal(err)
	}
	if got := stderr.String(); got != "weir: warning: line 2:1: 'table.exec.source.cdc-events-duplicate' is a Flink option that Weir does not use; it is ignored\n" {
		t.Fatalf("stderr %q", got)
	}
}

// TestSetChoicesAreAccepted keeps the values offered for completion in step
// with the checks of SET.
func TestSetChoicesAreAccepted(t *testing.T) {
	for key, choices := range setChoices {
		for _, v := range choices {
			if _, err := CheckSet(key, v); err != nil {
				t.Errorf("SET '%s' = '%s' is offered but refused: %v", key, v, err)
			}
		}
		if _, err := CheckSet(key, "surely-not-a-choice"); err == nil {
			t.Errorf("SET '%s' takes any value, but has choices %v", key, choices)
		}
	}
}

// TestReset: RESET takes a key Weir knows or one that is set, and names
// the closest key for a misspelled one.
func TestReset(t *testing.T) {
	config := map[string]string{"table.optimizer.join-reorder-enabled": "true"}
	for _, tc := range []struct{ key, err string }{
		{"parallelism.default", ""},
		{"table.optimizer.join-reorder-enabled", ""},
		{"parallelism.defualt", "did you mean 'parallelism.default'?"},
		{"no.such.key", "unknown key 'no.such.key', and it is not set"},
	} {
		err := CheckReset(tc.key, config)
		if (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("RESET '%s': %v, want %q", tc.key, err, tc.err)
		}
	}
}

// TestJobOptionsMiniBatch checks that the mini-batch keys reach a job's
// options, and that the latency and size count only with mini-batch on.
func TestJobOptionsMiniBatch(t *testing.T) {
	for _, tc := range []struct {
		set     map[string]string
		mini    bool
		latency time.Duration
		size    int
	}{
		{map[string]string{}, true, 0, 0},
		{map[string]string{KeyMiniBatchLatency: "2 s", KeyMiniBatchSize: "50000"}, true, 2 * time.Second, 50000},
		{map[string]string{KeyMiniBatch: "false", KeyMiniBatchLatency: "2 s", KeyMiniBatchSize: "50000"}, false, 0, 0},
		{map[string]string{KeyMiniBatchLatency: "0 ms"}, true, 0, 0},
	} {
		s := New(connector.Env{})
		for k, v := range tc.set {
			s.Config[k] = v
		}
		o := s.JobOptions(exec.Options{})
		if o.MiniBatch != tc.mini || o.MiniBatchLatency != tc.latency || o.MiniBatchSize != tc.size {
			t.Errorf("%v: mini-batch %v, latency %v, size %d; want %v, %v, %d", tc.set, o.MiniBatch, o.MiniBatchLatency, o.MiniBatchSize, tc.mini, tc.latency, tc.size)
		}
	}
}
