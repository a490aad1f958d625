package kafka

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/connectortest"
)

// TestSourceRescale reads a topic in stages at parallelism 2, then 3,
// then 1, each restoring the positions of the stage before with SeekAll:
// together they read every record exactly once.
func TestSourceRescale(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(5, "in"))
	want := seedJSON(t, manual(t, addr), "in", 5, 20, testTime)(0, 20)
	src, err := NewSource(table("id INT, v STRING", map[string]string{"connector": "kafka", "topic": "in", "properties.bootstrap.servers": addr,
		"format": "json", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	for _, stages := range [][]int{{2, 3, 1}, {4, 1, 3}, {1, 5, 2}} {
		cuts := []int{15, 5, -1}
		got, err := connectortest.ReadRescaled(testCtx(t), src, 2, 7, stages, func(stage, _ int) int { return cuts[stage] })
		if err != nil {
			t.Fatal(err)
		}
		equal(t, fmt.Sprint("stages ", stages), sorted(got), want)
	}
}

// TestSourceDiscoversPartitions reads partitions added to a topic while
// the source runs, from their beginning.
func TestSourceDiscoversPartitions(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(1, "in"))
	cl := manual(t, addr)
	produce(t, cl, rec("in", 0, "", `{"id":0}`))
	src, err := NewSource(table("id INT", map[string]string{"connector": "kafka", "topic": "in", "properties.bootstrap.servers": addr,
		"format": "json", "scan.startup.mode": "earliest-offset", "scan.topic-partition-discovery.interval": "10 ms"}), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := src.Open(0, 1)
	defer r.Close()
	rows, err := drain(testCtx(t), r, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kadm.NewClient(cl).CreatePartitions(testCtx(t), 2, "in"); err != nil {
		t.Fatal(err)
	}
	produce(t, manual(t, addr), rec("in", 1, "", `{"id":1}`), rec("in", 2, "", `{"id":2}`)) // a client that sees 3 partitions
	more, err := drain(testCtx(t), r, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "rows", sorted(append(rows, more...)), []string{"+I[0]", "+I[1]", "+I[2]"})
}
