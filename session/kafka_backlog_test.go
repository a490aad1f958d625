package session

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// TestKafkaBacklogWindows reads a topic of 4 partitions that already hold
// records with interleaved event times (each partition spans the whole
// range) with a TUMBLE count, at parallelism 1 and 2: reading one
// partition's backlog first must not make the others' rows late, so every
// window's count equals a count in Go of the records produced.
func TestKafkaBacklogWindows(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 4))
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "bk"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := strings.Join(c.ListenAddrs(), ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	base := int64(1_700_000_000_000)
	want := map[string]int{}
	for p := range int32(4) {
		ts := base
		var recs []*kgo.Record
		for range 5000 {
			ts += int64(r.IntN(400))
			v := fmt.Sprintf(`{"ts":"%s"}`, time.UnixMilli(ts).UTC().Format("2006-01-02 15:04:05.000"))
			recs = append(recs, &kgo.Record{Topic: "bk", Partition: p, Value: []byte(v)})
			want[time.UnixMilli(ts-ts%10_000).UTC().Format("2006-01-02 15:04:05.000")]++
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for _, par := range []int{1, 2} {
		t.Run(fmt.Sprintf("p%d", par), func(t *testing.T) {
			var stdout lockedBuffer
			var stderr bytes.Buffer
			sess := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
			script := fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'pipeline.auto-watermark-interval' = '1 ms';
CREATE TABLE ev (ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
WITH ('connector' = 'kafka', 'topic' = 'bk', 'properties.bootstrap.servers' = '%s', 'format' = 'json',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE out (ws TIMESTAMP(3), c BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end;
`, par, addr)
			if err := sess.RunScript(context.Background(), script, RunOptions{JobName: t.Name(), Quiet: true, Exec: exec.Options{BatchSize: 64}}); err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			got := map[string]int{}
			for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				f := strings.Split(strings.Trim(strings.TrimPrefix(l, "+I"), "[]"), ", ")
				if len(f) != 2 {
					t.Fatalf("line %q", l)
				}
				var n int
				fmt.Sscan(f[1], &n)
				got[f[0]] += n
			}
			if fmt.Sprint(sortedKeys(got)) != fmt.Sprint(sortedKeys(want)) {
				t.Fatalf("windows:\ngot  %v\nwant %v", sortedKeys(got), sortedKeys(want))
			}
			for k, n := range want {
				if got[k] != n {
					t.Errorf("window %s: count %d, want %d", k, got[k], n)
				}
			}
		})
	}
}
