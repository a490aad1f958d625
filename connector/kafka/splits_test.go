package kafka

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// TestSourceSplitPerPartition checks the reader's splits
// (connector.SplitReader): the rows of one Next come from one partition,
// LastSplit names it "topic-partition", and a bounded read names each
// partition as finished once, in the call that reads its last record.
func TestSourceSplitPerPartition(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(3, "in"))
	counts := []int{7, 0, 12} // partition 1 is empty
	cl := manual(t, addr)
	for p, n := range counts {
		for i := range n {
			produce(t, cl, rec("in", int32(p), "", fmt.Sprintf(`{"id":%d,"v":"in-%d"}`, i, p)))
		}
	}
	src, err := NewSource(table("id INT, v STRING", map[string]string{"connector": "kafka", "topic": "in", "properties.bootstrap.servers": addr,
		"format": "json", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{100, 3} {
		r, err := src.Open(0, 1)
		if err != nil {
			t.Fatal(err)
		}
		sr := r.(connector.SplitReader)
		got := map[string]int{}
		var finished []string
		b := types.NewBatch(2, max)
		for {
			b.Reset()
			err := r.Next(testCtx(t), b, max)
			split, fin := sr.LastSplit()
			if b.Len() > 0 && split == "" {
				t.Fatalf("max %d: %d rows without a split", max, b.Len())
			}
			for i := range b.Len() {
				if v := b.Row(i)[1].Str(); v != split {
					t.Fatalf("max %d: row of %s in a call whose split is %q", max, v, split)
				}
				got[split]++
			}
			finished = append(finished, fin...)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		r.Close()
		slices.Sort(finished)
		if want := []string{"in-0", "in-2"}; !slices.Equal(finished, want) {
			t.Fatalf("max %d: finished %v, want %v", max, finished, want)
		}
		for p, n := range counts {
			if name := fmt.Sprintf("in-%d", p); got[name] != n {
				t.Fatalf("max %d: %d rows of %s, want %d", max, got[name], name, n)
			}
		}
	}
}

// TestSourceCommitsOffsetsOnCheckpoint checks that a complete checkpoint
// commits the offsets of its position to 'properties.group.id'
// (connector.CheckpointListener), those of the checkpoint, not of where the
// reader is now; and that a reader restored from a checkpoint ignores
// them (it continues at the checkpoint's offsets).
func TestSourceCommitsOffsetsOnCheckpoint(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(2, "in"))
	answer := seedJSON(t, manual(t, addr), "in", 2, 10, testTime)
	tbl := table("id INT, v STRING", map[string]string{"connector": "kafka", "topic": "in", "properties.bootstrap.servers": addr,
		"format": "json", "scan.startup.mode": "earliest-offset", "properties.group.id": "mon"})
	src, err := NewSource(tbl, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.Open(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := drain(testCtx(t), r, 2, 13); err != nil {
		t.Fatal(err)
	}
	pos, err := r.Position()
	if err != nil {
		t.Fatal(err)
	}
	want, err := decodePosition(pos)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(testCtx(t), r, 2, 4); err != nil { // the reader goes on
		t.Fatal(err)
	}
	if err := r.(connector.CheckpointListener).CheckpointComplete(1, pos); err != nil {
		t.Fatal(err)
	}
	resp, err := kadm.NewClient(client(t, addr)).FetchOffsets(testCtx(t), "mon")
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for k, st := range want {
		o, ok := resp.Lookup(k.topic, k.partition)
		if !ok || o.At != st.next {
			t.Fatalf("group offset of %s-%d: %v (found %v), want %d", k.topic, k.partition, o.At, ok, st.next)
		}
		total += st.next
	}
	if total != 13 || len(want) != 2 {
		t.Fatalf("checkpoint position %v, want 13 records over 2 partitions", want)
	}
	// A restored reader continues from the checkpoint, not the group.
	r2, _ := src.Open(0, 1)
	defer r2.Close()
	empty := encodePosition(map[tp]partState{{"in", 0}: {next: 0, end: -1}, {"in", 1}: {next: 0, end: -1}})
	if err := r2.Seek(empty); err != nil {
		t.Fatal(err)
	}
	rows, err := drain(testCtx(t), r2, 2, 20)
	if err != nil {
		t.Fatalf("restored reader: %v", err)
	}
	equal(t, "restored reader", sorted(rows), answer(0, 10))
}
