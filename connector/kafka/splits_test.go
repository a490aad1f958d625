package kafka

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

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
