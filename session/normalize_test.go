package session

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
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
			run := runWithFaults(t, script, tc.spec, RunOptions{JobName: "norm", Exec: exec.Options{BatchSize: 64}})
			run.expectFired(t, tc.fired)
			got := debeziumRows(t, out, "v", "c")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("committed result %v, want %v\n%s", got, want, run.Stderr)
			}
		})
	}
}
