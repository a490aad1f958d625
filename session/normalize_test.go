package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// TestUpsertKafkaNormalizeRestore reads an upsert-kafka topic (values
// and tombstones for 300 keys) through the planner's ChangelogNormalize
// into a count per value, written as a Debezium changelog to files,
// failing the job at checkpoint fault points (K8: while a restored task
// reads its state back). The committed changelog, applied, equals the
// counts of each key's last value computed in Go: the normalizer's state
// (each key's last row) came back from the checkpoint.
func TestUpsertKafkaNormalizeRestore(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 17))
	addr, cl := kafkaBroker(t)
	const n, keys = 40000, 300
	last := map[int]int{}
	var recs []*kgo.Record
	for i := range n {
		k := r.IntN(keys)
		rec := &kgo.Record{Topic: "in", Partition: int32(k % 2), Key: []byte(fmt.Sprintf(`{"k":%d}`, k))}
		if r.IntN(10) == 0 {
			delete(last, k) // a tombstone
		} else {
			v := r.IntN(7)
			last[k] = v
			rec.Value = []byte(fmt.Sprintf(`{"k":%d,"v":%d}`, k, v))
		}
		recs = append(recs, rec)
		if len(recs) == 1000 || i == n-1 {
			if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	counts := map[int]int{}
	for _, v := range last {
		counts[v]++
	}
	var want []string
	for v, c := range counts {
		want = append(want, fmt.Sprintf("[%d, %d]", v, c))
	}
	sort.Strings(want)

	cases := []struct {
		spec  string
		fired []string
	}{
		{"", nil},
		{"K4@3=error", []string{"K4"}},
		{"K6@2=error,K8=error", []string{"K6", "K8"}},
	}
	for _, tc := range cases {
		t.Run("faults="+tc.spec, func(t *testing.T) {
			var fired []string
			var mu sync.Mutex
			var hook func(string) error
			if tc.spec != "" {
				h, err := ParseFaults(tc.spec, "")
				if err != nil {
					t.Fatal(err)
				}
				hook = func(p string) error {
					err := h(p)
					if errors.Is(err, ErrInjected) {
						mu.Lock()
						fired = append(fired, p)
						mu.Unlock()
					}
					return err
				}
			}
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			script := fmt.Sprintf(`
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '10ms';
SET 'state.checkpoints.dir' = '%s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
CREATE TABLE u (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%s', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE out (v INT, c BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
INSERT INTO out SELECT v, COUNT(*) FROM u GROUP BY v;
`, filepath.Join(dir, "ck"), addr, out)
			// upsert-kafka reads unbounded: bound it at the topic's end.
			script = strings.Replace(script, "'value.format' = 'json');", "'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');", 1)
			var stdout, stderr bytes.Buffer
			s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
			err := s.RunScript(context.Background(), script, RunOptions{JobName: "norm", Exec: exec.Options{BatchSize: 64, Fault: hook}})
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			sort.Strings(fired)
			if strings.Join(fired, ",") != strings.Join(tc.fired, ",") {
				t.Fatalf("faults fired %v, want %v\n%s", fired, tc.fired, stderr.String())
			}
			got := applyDebezium(t, out, "v", "c")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("committed result %v, want %v\n%s", got, want, stderr.String())
			}
		})
	}
}

// applyDebezium applies the Debezium JSON changelog in the final part
// files of dir and returns the rows present, as "[a, b]" of the two
// fields, sorted; a row counted other than 0 or 1 times fails the test.
func applyDebezium(t *testing.T, dir, f1, f2 string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "part-*"))
	counts := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" {
				continue
			}
			var rec struct {
				Before, After map[string]json.Number
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if rec.Before != nil {
				counts[fmt.Sprintf("[%s, %s]", rec.Before[f1], rec.Before[f2])]--
			}
			if rec.After != nil {
				counts[fmt.Sprintf("[%s, %s]", rec.After[f1], rec.After[f2])]++
			}
		}
	}
	var rows []string
	for row, c := range counts {
		switch c {
		case 0:
		case 1:
			rows = append(rows, row)
		default:
			t.Fatalf("row %s counted %d times", row, c)
		}
	}
	sort.Strings(rows)
	return rows
}
