package exec

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/kafka"
	"github.com/weir-sql/weir/types"
)

// TestKafkaPartitionWatermarks runs a kafka source over a topic of two
// partitions through the split harness (the test is S's clock): the
// subtask's watermark is the minimum over the partitions, a partition
// without records for the idle timeout leaves the minimum, and it counts
// again, with its old watermark, when it sends.
func TestKafkaPartitionWatermarks(t *testing.T) {
	send, step := kafkaSplitSteps(t)
	// S's clock: 200 ms a step; the idle timeout is 1 s; the watermark
	// is ts - 2 ms.
	send(0, 10) // 200 ms
	step("partition 1 is assigned and holds the watermark before its first record", "data 10")
	send(1, 5) // 400
	step("partition 1's first record: min(8, 3)", "data 5 | wm 3")
	send(0, 20) // 600
	send(0, 30) // 800
	send(0, 40) // 1000
	send(0, 50) // 1200
	step("partition 1 holds the minimum at 3", "data 20 | data 30 | data 40 | data 50")
	send(0, 60) // 1400: partition 1 quiet for 1 s
	step("partition 1 idle: partition 0 alone", "data 60 | wm 58")
	send(1, 100) // 1600
	step("partition 1 rejoins at 98, above 58", "data 100")
	send(0, 200) // 1800
	step("min(198, 98)", "data 200 | wm 98")
}

// TestKafkaEmptyPartitionIdle: a partition that never sends a record
// holds the subtask's watermark from its assignment (the reader lists its
// partitions), and the idle timeout, counted from the assignment, lets
// the watermark progress without it.
func TestKafkaEmptyPartitionIdle(t *testing.T) {
	send, step := kafkaSplitSteps(t)
	// S's clock: 200 ms a step; the idle timeout is 1 s; the watermark
	// is ts - 2 ms; partition 1 is assigned at the first step (200 ms).
	send(0, 10) // 200 ms
	send(0, 20) // 400
	send(0, 30) // 600
	send(0, 40) // 800
	send(0, 50) // 1000
	step("empty partition 1 holds the watermark", "data 10 | data 20 | data 30 | data 40 | data 50")
	send(0, 60) // 1200: partition 1 assigned 1 s ago, still empty
	step("partition 1 idle: partition 0 alone", "data 60 | wm 58")
}

// kafkaSplitSteps starts a broker with a topic "in" of two partitions and
// a kafka source over it (json, id BIGINT, ts TIMESTAMP) in the split
// harness, whose clock the test is. send writes a record with event time
// ts (ms) to partition p, reads it from the source (waiting for it, not
// for a time), then lets the auto-watermark interval pass on the clock;
// step checks what the source emitted since the last step.
func kafkaSplitSteps(t *testing.T) (send func(p int32, ts int64), step func(name, want string)) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "in"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := strings.Join(c.ListenAddrs(), ",")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	src, err := kafka.NewSource(&connector.Table{Name: "in",
		Schema: types.Schema{Columns: []types.Column{{Name: "id", Type: types.BigInt}, {Name: "ts", Type: types.Timestamp}}},
		Options: map[string]string{"connector": "kafka", "topic": "in", "properties.bootstrap.servers": addr,
			"format": "json", "scan.startup.mode": "earliest-offset"}}, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	h := newSplitHarnessOf(t, src)
	send = func(p int32, ts int64) {
		t.Helper()
		v := fmt.Sprintf(`{"id":1,"ts":"%s"}`, time.UnixMilli(ts).UTC().Format("2006-01-02 15:04:05.000"))
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "in", Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		b := types.NewBatch(2, 16)
		for b.Len() == 0 {
			if err := h.s.reader.Next(ctx, b, 16); err != nil {
				t.Fatal(err)
			}
		}
		if split, _ := h.s.reader.(connector.SplitReader).LastSplit(); split != fmt.Sprintf("in-%d", p) {
			t.Fatalf("split %q, want in-%d", split, p)
		}
		h.now = h.now.Add(wmInterval)
		if err := h.s.sourceRows(b, h.now); err != nil {
			t.Fatal(err)
		}
		if err := h.s.sourceTime(h.now, true); err != nil {
			t.Fatal(err)
		}
		if err := h.s.flush(); err != nil {
			t.Fatal(err)
		}
	}
	step = func(name, want string) {
		t.Helper()
		if got := h.output(); got != want {
			t.Errorf("%s:\n got  %q\n want %q", name, got, want)
		}
	}
	return send, step
}
