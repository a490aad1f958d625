package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// upsertByKey applies print-sink output as an upsert stream keyed by the
// first column: +I/+U set the key's row, -D removes it, -U is ignored. An
// at-least-once sink replays rows after a restore; applied this way the
// final rows are still the job's final state.
func upsertByKey(t *testing.T, out string) []string {
	t.Helper()
	line := regexp.MustCompile(`^(?:\S*> )?([+-][IUD])\[([^,\]]*)(.*)\]$`)
	rows := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unexpected print line %q", l)
		}
		switch m[1] {
		case "+I", "+U":
			rows[m[2]] = "[" + m[2] + m[3] + "]"
		case "-D":
			delete(rows, m[2])
		}
	}
	var out2 []string
	for _, r := range rows {
		out2 = append(out2, r)
	}
	sort.Strings(out2)
	return out2
}

// keyedSumScript sums a datagen sequence 0..n-1 per id % keys, with
// checkpoints every few milliseconds and a fast restart strategy.
func keyedSumScript(dir string, n, keys, par int) string {
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
CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH ('connector' = 'print');
INSERT INTO sums SELECT id %% %d, SUM(id), COUNT(*) FROM ev GROUP BY id %% %d;
`, par, dir, n-1, keys, keys)
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
		spec   string
		fired  []string
		expect string // on stderr
	}{
		{"K1@4=error", []string{"K1"}, "restarting"},
		{"K2@3=error", []string{"K2"}, "restarting"},
		{"K3@3=error", []string{"K3"}, "declined checkpoint"},
		{"K4@5=error", []string{"K4"}, "restarting"},
		{"K5@2=error", []string{"K5"}, "restarting"},
		{"K7@2=error", []string{"K7"}, "restarting"},
		{"K4@5=error,K8=error", []string{"K4", "K8"}, "restarting"},
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			hook, err := ParseFaults(tc.spec, "")
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var fired []string
			counting := func(point string) error {
				err := hook(point)
				if errors.Is(err, ErrInjected) {
					mu.Lock()
					fired = append(fired, point)
					mu.Unlock()
				}
				return err
			}
			var stdout, stderr bytes.Buffer
			s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
			err = s.RunScript(context.Background(), keyedSumScript(t.TempDir(), n, keys, 2),
				RunOptions{JobName: "faults", Exec: exec.Options{BatchSize: 128, Fault: counting}})
			if err != nil {
				t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
			}
			sort.Strings(fired)
			if strings.Join(fired, ",") != strings.Join(tc.fired, ",") {
				t.Fatalf("faults fired: %v, want %v\nstderr:\n%s", fired, tc.fired, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.expect) {
				t.Fatalf("stderr does not say %q:\n%s", tc.expect, stderr.String())
			}
			if tc.expect == "restarting" && !strings.Contains(stderr.String(), "weir: restoring checkpoint") {
				t.Fatalf("the restart did not restore a checkpoint:\n%s", stderr.String())
			}
			got := upsertByKey(t, stdout.String())
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("final state differs from the batch answer: %d rows, want %d\nfirst got %v\nfirst want %v\nstderr:\n%s",
					len(got), len(want), head(got), head(want), stderr.String())
			}
		})
	}
}
