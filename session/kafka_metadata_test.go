package session

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// kafkaBroker starts an in-process kfake broker with topic in of two
// partitions; closed when the test ends.
func kafkaBroker(t *testing.T) (string, *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1), kfake.SeedTopics(2, "in"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := strings.Join(c.ListenAddrs(), ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return addr, cl
}

// TestKafkaRecordTimestampWindows runs a TUMBLE window over the record
// timestamps of a topic (ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
// a watermark on it), with the partition and offset as metadata columns
// too, and compares the counts per window and partition with a count in
// Go of the records produced.
func TestKafkaRecordTimestampWindows(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 16))
	addr, cl := kafkaBroker(t)
	base := int64(1_700_000_000_000)
	want := map[string]int{}
	offsetSum := map[int32]int64{}
	for p := range int32(2) {
		ts := base
		var recs []*kgo.Record
		for i := range 300 {
			ts += int64(r.IntN(2000))
			recs = append(recs, &kgo.Record{Topic: "in", Partition: p, Value: []byte(fmt.Sprintf(`{"v":%d}`, i)), Timestamp: time.UnixMilli(ts)})
			ws := ts - ts%60_000
			want[fmt.Sprintf("+I[%s, %d, %d]", time.UnixMilli(ws).UTC().Format("2006-01-02 15:04:05.000"), p, 0)]++
			offsetSum[p] += int64(i)
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// Two print sinks in one job write stdout from two tasks: a locked
	// buffer, as os.Stdout is safe for that.
	var stdout lockedBuffer
	var stderr bytes.Buffer
	sess := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	script := fmt.Sprintf(`
SET 'parallelism.default' = '1';
CREATE TABLE ev (
  v BIGINT,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  p INT METADATA FROM 'partition' VIRTUAL,
  `+"`offset`"+` BIGINT METADATA VIRTUAL,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = '%s', 'format' = 'json',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE out (ws TIMESTAMP_LTZ(3), p INT, c BIGINT) WITH ('connector' = 'print');
CREATE TABLE offs (p INT, s BIGINT, c BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'offs');
INSERT INTO out SELECT window_start, p, COUNT(*) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, p;
INSERT INTO offs SELECT p, SUM(`+"`offset`"+`), COUNT(*) FROM ev GROUP BY p;
`, addr)
	if err := sess.RunScript(context.Background(), script, RunOptions{JobName: t.Name(), Quiet: true, Exec: exec.Options{BatchSize: 64}}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	got := map[string]int{}
	finalOffs := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "offs> "); ok {
			f := strings.SplitN(strings.Trim(rest[2:], "[]"), ", ", 2)
			finalOffs[f[0]] = rest
			continue
		}
		// +I[ws, p, c]: count c rows of window ws in partition p.
		f := strings.Split(strings.Trim(l[2:], "[]"), ", ")
		var c int
		fmt.Sscan(f[2], &c)
		got[fmt.Sprintf("+I[%s, %s, 0]", f[0], f[1])] += c
	}
	if fmt.Sprint(sortedKeys(got)) != fmt.Sprint(sortedKeys(want)) {
		t.Fatalf("windows:\ngot  %v\nwant %v", sortedKeys(got), sortedKeys(want))
	}
	for p := range int32(2) {
		w := fmt.Sprintf("+U[%d, %d, 300]", p, offsetSum[p])
		if g := finalOffs[fmt.Sprint(p)]; g != w {
			t.Errorf("partition %d offsets: last %q, want %q", p, g, w)
		}
	}
}

// TestKafkaSinkRecordTimestamp writes a kafka sink whose timestamp
// metadata column comes from the query, and checks every record's
// timestamp against the row it came from.
func TestKafkaSinkRecordTimestamp(t *testing.T) {
	addr, _ := kafkaBroker(t)
	runScript(t, fmt.Sprintf(`
CREATE TABLE nums (n BIGINT) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '50');
CREATE TABLE out (
  n BIGINT,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  off BIGINT METADATA FROM 'offset' VIRTUAL
) WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = '%s', 'format' = 'json');
INSERT INTO out SELECT n, TO_TIMESTAMP_LTZ(1600000000000 + n * 1000, 3) FROM nums;
`, addr))
	c, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got, want []string
	for n := 1; n <= 50; n++ {
		want = append(want, fmt.Sprintf(`{"n":%d} %d`, n, 1_600_000_000_000+int64(n)*1000))
	}
	for len(got) < 50 {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, fmt.Sprintf("%s %d", r.Value, r.Timestamp.UnixMilli())) })
	}
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records:\ngot  %v\nwant %v", got, want)
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// sortedKeys renders a count map as sorted "key xN" lines.
func sortedKeys(m map[string]int) []string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s x%d", k, n))
	}
	sort.Strings(out)
	return out
}
