package session

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// upsertByKey applies print-sink output as an upsert stream keyed by the
// first column: +I/+U set the key's row, -D removes it, -U is ignored. An
// at-least-once sink replays rows after a restore; applied this way the
// final rows are still the job's final state.
func upsertByKey(t *testing.T, out string) []string {
	t.Helper()
	rows := map[string]string{}
	forPrintLines(t, out, func(kind, row string) {
		key, _, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(row, "["), "]"), ",")
		switch kind {
		case "+I", "+U":
			rows[key] = row
		case "-D":
			delete(rows, key)
		}
	})
	var out2 []string
	for _, r := range rows {
		out2 = append(out2, r)
	}
	sort.Strings(out2)
	return out2
}

// keyedSumScript sums a datagen sequence 0..n-1 per id % keys into a print
// table, with checkpoints every few milliseconds and a fast restart strategy.
func keyedSumScript(dir string, n, keys, par int) string {
	return keyedSumScriptInto(dir, n, keys, par, "'connector' = 'print'")
}

// keyedSumScriptInto is keyedSumScript with the sink table's WITH options.
func keyedSumScriptInto(dir string, n, keys, par int, sinkWith string) string {
	return fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.checkpoints.num-retained' = '2';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '150000');
CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH (%s);
INSERT INTO sums SELECT id %% %d, SUM(id), COUNT(*) FROM ev GROUP BY id %% %d;
`, par, dir, n-1, sinkWith, keys, keys)
}

func keyedSumAnswer(n, keys int) []string {
	sum := make([]int64, keys)
	cnt := make([]int64, keys)
	for i := 0; i < n; i++ {
		sum[i%keys] += int64(i)
		cnt[i%keys]++
	}
	var out []string
	for k := range keys {
		if cnt[k] > 0 {
			out = append(out, fmt.Sprintf("[%d, %d, %d]", k, sum[k], cnt[k]))
		}
	}
	sort.Strings(out)
	return out
}

// TestFaultPointsRestartFromLatestCheckpoint fails the job at each fault
// point of the checkpoint algorithm; the restart strategy restores the
// latest checkpoint and the final state must equal the batch answer. Each
// armed fault must fire exactly once.
func TestFaultPointsRestartFromLatestCheckpoint(t *testing.T) {
	const n, keys = 40000, 500
	want := keyedSumAnswer(n, keys)
	// An error mid-snapshot (K3) declines the checkpoint and the job goes
	// on; an error anywhere else fails the job, which restarts.
	cases := []struct {
		spec     string
		fired    []string
		expect   string // on stderr
		twoPhase bool   // a local pre-aggregation before the exchange
	}{
		{"K1@4=error", []string{"K1"}, "restarting", false},
		{"K2@3=error", []string{"K2"}, "restarting", false},
		{"K3@3=error", []string{"K3"}, "declined checkpoint", false},
		{"K4@5=error", []string{"K4"}, "restarting", false},
		{"K5@2=error", []string{"K5"}, "restarting", false},
		{"K7@2=error", []string{"K7"}, "restarting", false},
		{"K4@5=error,K8=error", []string{"K4", "K8"}, "restarting", false},
		{"K2@3=error", []string{"K2"}, "restarting", true},
		{"K4@5=error,K8=error", []string{"K4", "K8"}, "restarting", true},
	}
	for _, tc := range cases {
		name := tc.spec
		if tc.twoPhase {
			name += "/two-phase"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // its own session and folder; the runs partly wait on the rate-limited source
			script := keyedSumScript(t.TempDir(), n, keys, 2)
			if tc.twoPhase {
				script = "SET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';\n" + script
			}
			run := runWithFaults(t, script, tc.spec, RunOptions{JobName: "faults", Exec: exec.Options{BatchSize: 128}})
			run.expectFired(t, tc.fired)
			if !strings.Contains(run.Stderr, tc.expect) {
				t.Fatalf("stderr does not say %q:\n%s", tc.expect, run.Stderr)
			}
			if tc.expect == "restarting" {
				run.expectRestored(t)
			}
			got := upsertByKey(t, run.Stdout)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("final state differs from the batch answer: %d rows, want %d\nfirst got %v\nfirst want %v\nstderr:\n%s",
					len(got), len(want), head(got), head(want), run.Stderr)
			}
		})
	}
}

// TestFailedStateWriteRestarts breaks the operators' state stores between
// two checkpoints (their sstable folder becomes a file, so the next
// snapshot cannot write the state). The checkpoint must not be declined
// with the job going on, as its stores no longer hold the state the
// operators think is written: the job must fail, restart from the latest
// checkpoint and still reach the batch answer.
func TestFailedStateWriteRestarts(t *testing.T) {
	const n, keys = 40000, 500
	want := keyedSumAnswer(n, keys)
	dir := t.TempDir()
	var once sync.Once
	var triggers atomic.Int32
	broken := 0
	fault := func(point string) error {
		// At checkpoint 3 (each of the two sources passes K1 once per
		// checkpoint), when the stores have written sstables before.
		if point != exec.FaultSourceTrigger || triggers.Add(1) < 5 {
			return nil
		}
		once.Do(func() {
			work, _ := filepath.Glob(filepath.Join(dir, "failed-write", "_work", "run-*", "*", "ingest"))
			for _, w := range work {
				if os.RemoveAll(w) == nil && os.WriteFile(w, nil, 0o644) == nil {
					broken++
				}
			}
		})
		return nil
	}
	var stdout, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	err := s.RunScript(context.Background(), keyedSumScript(dir, n, keys, 2),
		RunOptions{JobName: "failed-write", Exec: exec.Options{BatchSize: 128, Fault: fault}})
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	if broken == 0 {
		t.Fatalf("no state store was broken (no ingest folder yet?)\nstderr:\n%s", stderr.String())
	}
	for _, w := range []string{"failed: GroupAggregate", "not a directory", "restarting", "weir: restoring checkpoint"} {
		if !strings.Contains(stderr.String(), w) {
			t.Fatalf("stderr does not say %q:\n%s", w, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "declined") {
		t.Fatalf("a checkpoint whose state could not be written was declined, the job going on:\n%s", stderr.String())
	}
	if got := upsertByKey(t, stdout.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("final state differs from the batch answer: %d rows, want %d", len(got), len(want))
	}
}

// watchWriter collects what is written and calls onLine for every line.
type watchWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	onLine func(string)
	part   string
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.part += string(p)
	for {
		i := strings.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		line := w.part[:i]
		w.part = w.part[i+1:]
		if w.onLine != nil {
			w.onLine(line)
		}
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestRestoreSkipsDamagedCheckpoints stops a job after several checkpoints,
// damages the newest ones in three ways, and restores: each damaged one is
// reported and skipped for the previous good one, and the final state still
// equals the batch answer.
func TestRestoreSkipsDamagedCheckpoints(t *testing.T) {
	const n, keys = 400000, 300
	dir := t.TempDir()
	script := strings.Replace(keyedSumScript(dir, n, keys, 2), "'state.checkpoints.num-retained' = '2'", "'state.checkpoints.num-retained' = '5'", 1)
	script = strings.Replace(script, "'rows-per-second' = '150000'", "'rows-per-second' = '100000'", 1)

	// First run: stop it once checkpoint 5 is complete.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out1 bytes.Buffer
	stderr1 := &watchWriter{onLine: func(l string) {
		if strings.HasPrefix(l, "weir: checkpoint 5 complete") {
			cancel()
		}
	}}
	s := New(connector.Env{Stdout: &out1, Stderr: stderr1})
	if err := s.RunScript(ctx, script, RunOptions{JobName: "damaged"}); err != nil {
		t.Fatalf("first run: %v\n%s", err, stderr1.String())
	}
	if !strings.Contains(stderr1.String(), "checkpoint 5 complete") {
		t.Fatalf("the first run ended before checkpoint 5:\n%s", stderr1.String())
	}
	st, err := checkpoint.NewStorage(checkpoint.OSFS{}, dir, "damaged")
	if err != nil {
		t.Fatal(err)
	}
	infos, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	var valid []checkpoint.Info
	for _, in := range infos {
		if in.Valid() {
			valid = append(valid, in)
		}
	}
	if len(valid) < 4 {
		t.Fatalf("want at least 4 valid checkpoints, have %v", infos)
	}
	newest := valid[len(valid)-1]
	// Damage: truncate the newest _metadata; delete an sstable of the one
	// before; and leave a newer folder without _metadata.
	meta := filepath.Join(newest.Path, checkpoint.MetadataFile)
	data, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(meta, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	second := valid[len(valid)-2]
	ssts, _ := filepath.Glob(filepath.Join(second.Path, "op-*", "*.sst"))
	if len(ssts) == 0 {
		t.Fatalf("checkpoint %d has no sstables", second.ID)
	}
	if err := os.Remove(ssts[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(st.Dir(), fmt.Sprintf("chk-%d", newest.ID+1), "op-x-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	good := valid[len(valid)-3]

	var out2 bytes.Buffer
	stderr2 := &watchWriter{}
	s = New(connector.Env{Stdout: &out2, Stderr: stderr2})
	if err := s.RunScript(context.Background(), script, RunOptions{JobName: "damaged", Restore: RestoreLatest}); err != nil {
		t.Fatalf("restore run: %v\n%s", err, stderr2.String())
	}
	log := stderr2.String()
	for _, want := range []string{
		fmt.Sprintf("skipping checkpoint %d", newest.ID+1),
		fmt.Sprintf("skipping checkpoint %d", newest.ID),
		fmt.Sprintf("skipping checkpoint %d", second.ID),
		fmt.Sprintf("restoring checkpoint %d", good.ID),
	} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr does not say %q:\n%s", want, log)
		}
	}
	got := upsertByKey(t, out1.String()+out2.String())
	want := keyedSumAnswer(n, keys)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("final state differs from the batch answer (%d rows, want %d)", len(got), len(want))
	}
}

// TestStateLargerThanMemory runs a keyed sum whose groups far exceed a tiny
// state cache budget, so groups spill to Pebble and are read back, across
// a failure and a restore; the final state equals the batch answer.
// Under -race it sums half the rows over half the keys (still far more
// groups than the cache holds; at full size its checkpoints of spilled
// state were most of the package's -race time); CI also runs it at full
// size without -race.
func TestStateLargerThanMemory(t *testing.T) {
	n, keys := 60000, 20000
	if raceEnabled {
		n, keys = 30000, 10000
	}
	script := strings.Replace(keyedSumScript(t.TempDir(), n, keys, 2), "SET 'parallelism.default'",
		"SET 'state.cache.size' = '64kb';\nSET 'parallelism.default'", 1)
	hook, err := ParseFaults("K4@13=error", "")
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	stderr := &watchWriter{}
	s := New(connector.Env{Stdout: &stdout, Stderr: stderr})
	if err := s.RunScript(context.Background(), script, RunOptions{JobName: "big", Exec: exec.Options{BatchSize: 256, Fault: hook}}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "weir: restoring checkpoint") {
		t.Fatalf("no restore happened:\n%s", stderr.String())
	}
	got := upsertByKey(t, stdout.String())
	want := keyedSumAnswer(n, keys)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("final state differs from the batch answer (%d rows, want %d)", len(got), len(want))
	}
}
