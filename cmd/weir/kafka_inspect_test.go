package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCheckpointsInspectKafkaOffsets writes a known number of records to
// each partition of a topic of the local broker, reads the topic to its
// end with `weir run` and checkpointing, and checks that `weir checkpoints
// inspect` shows the source's position as each partition's next offset
// (the records written to it), not hex.
func TestCheckpointsInspectKafkaOffsets(t *testing.T) {
	needBinary(t)
	addr := kafkaBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	perPartition := []int{7, 12, 0}
	if _, err := kadm.NewClient(kafkaClient(t, addr)).CreateTopic(ctx, int32(len(perPartition)), 1, nil, "nums"); err != nil {
		t.Fatal(err)
	}
	cl := kafkaClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p, n := range perPartition {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: "nums", Partition: int32(p), Value: []byte(fmt.Sprintf(`{"n":%d}`, i))})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}

	dir := t.TempDir()
	root := filepath.Join(dir, "ckpts")
	file := writeFile(t, dir, "kin.sql", `SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100 ms';
SET 'state.checkpoints.dir' = '`+root+`';
CREATE TABLE k (n BIGINT) WITH ('connector' = 'kafka', 'topic' = 'nums', 'properties.bootstrap.servers' = '`+addr+`',
  'format' = 'json', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE o (c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO o SELECT COUNT(*) FROM k;`)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"run", file}, &stdout, &stderr); code != 0 {
		t.Fatalf("weir run: exit %d\n%s", code, stderr.String())
	}
	if want := fmt.Sprintf("%d rows read", 7+12+0); !strings.Contains(stderr.String(), want) {
		t.Fatalf("the job did not read the topic to its end (want %q):\n%s", want, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"checkpoints", "inspect", filepath.Join(root, "kin")}, &stdout, &stderr); code != 0 {
		t.Fatalf("weir checkpoints inspect: exit %d\n%s", code, stderr.String())
	}
	out := stdout.String()
	if lineWith(out, "k ('connector' = 'kafka')  id ") == "" {
		t.Errorf("no line for the kafka source of table k:\n%s", out)
	}
	for p, n := range perPartition {
		want := fmt.Sprintf("nums-%d: next offset %d, ends before %d", p, n, n)
		found := false
		for _, l := range strings.Split(out, "\n") {
			found = found || strings.HasSuffix(strings.TrimSpace(l), want)
		}
		if !found {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0x") {
		t.Errorf("a position is shown as hex:\n%s", out)
	}
}
