package kafka

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/connector"
)

// seedJSON writes n records {"id":i,"v":"p<partition>"} to each of the
// topic's partitions, record i of partition p with timestamp base+i, and
// returns the rows a reader should produce for offsets [from, to) of each.
var testTime = time.UnixMilli(1_700_000_000_000)

func seedJSON(t *testing.T, cl *kgo.Client, topic string, parts, n int, base time.Time) func(from, to int) []string {
	var recs []*kgo.Record
	for p := range parts {
		for i := range n {
			r := rec(topic, int32(p), "", fmt.Sprintf(`{"id":%d,"v":"p%d"}`, i, p))
			r.Timestamp = base.Add(time.Duration(i) * time.Millisecond)
			recs = append(recs, r)
		}
	}
	produce(t, cl, recs...)
	return func(from, to int) []string {
		var out []string
		for p := range parts {
			for i := from; i < to; i++ {
				out = append(out, fmt.Sprintf("+I[%d, p%d]", i, p))
			}
		}
		return sorted(out)
	}
}

func TestSourceStartupAndBoundedModes(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(3, "in"))
	cl := manual(t, addr)
	base := time.UnixMilli(1_700_000_000_000)
	want := seedJSON(t, cl, "in", 3, 10, base)
	// The group has committed offset 4 on every partition.
	adm := kadm.NewClient(cl)
	offs := kadm.Offsets{}
	for p := range int32(3) {
		offs.Add(kadm.Offset{Topic: "in", Partition: p, At: 4, LeaderEpoch: -1})
	}
	if _, err := adm.CommitOffsets(testCtx(t), "g", offs); err != nil {
		t.Fatal(err)
	}
	opts := map[string]string{"connector": "kafka", "topic": "in", "properties.bootstrap.servers": addr, "format": "json", "scan.bounded.mode": "latest-offset"}
	specific := "partition:0,offset:7;partition:1,offset:7;partition:2,offset:7"
	cases := []struct {
		name string
		kv   []string
		want []string
	}{
		{"earliest", []string{"scan.startup.mode", "earliest-offset"}, want(0, 10)},
		{"latest", []string{"scan.startup.mode", "latest-offset"}, nil},
		{"group", []string{"properties.group.id", "g"}, want(4, 10)},
		{"group without commits falls back to auto.offset.reset", []string{"properties.group.id", "other", "properties.auto.offset.reset", "earliest"}, want(0, 10)},
		{"timestamp", []string{"scan.startup.mode", "timestamp", "scan.startup.timestamp-millis", fmt.Sprint(base.UnixMilli() + 6)}, want(6, 10)},
		{"specific", []string{"scan.startup.mode", "specific-offsets", "scan.startup.specific-offsets", specific}, want(7, 10)},
		{"bounded by timestamp", []string{"scan.startup.mode", "earliest-offset", "scan.bounded.mode", "timestamp", "scan.bounded.timestamp-millis", fmt.Sprint(base.UnixMilli() + 3)}, want(0, 3)},
		{"bounded by specific offsets", []string{"scan.startup.mode", "earliest-offset", "scan.bounded.mode", "specific-offsets", "scan.bounded.specific-offsets", "partition:0,offset:2;partition:1,offset:2;partition:2,offset:2"}, want(0, 2)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := NewSource(table("id INT, v STRING", with(opts, c.kv...)), connector.Env{})
			if err != nil {
				t.Fatal(err)
			}
			if !src.Bounded() {
				t.Fatal("bounded source says unbounded")
			}
			for _, p := range []int{1, 2, 4} {
				equal(t, fmt.Sprintf("parallelism %d", p), readAll(t, src, 2, p), c.want)
			}
		})
	}
}

func TestSourceGroupModeNeedsGroup(t *testing.T) {
	_, err := NewSource(table("id INT", map[string]string{"connector": "kafka", "topic": "in", "properties.bootstrap.servers": "x:1", "format": "json"}), connector.Env{})
	if err == nil || !strings.Contains(err.Error(), "properties.group.id") {
		t.Fatalf("got %v", err)
	}
}

func TestSourceOptionErrors(t *testing.T) {
	base := map[string]string{"connector": "kafka", "topic": "in", "properties.bootstrap.servers": "x:1", "format": "json", "scan.startup.mode": "earliest-offset"}
	for _, c := range []struct {
		kv   []string
		want string
	}{
		{[]string{"scan.startup.mode", "first"}, "scan.startup.mode"},
		{[]string{"scan.startup.mode", "timestamp"}, "scan.startup.timestamp-millis"},
		{[]string{"scan.startup.mode", "specific-offsets", "scan.startup.specific-offsets", "partition:x"}, "partition:<n>,offset:<n>"},
		{[]string{"format", "avro"}, "unknown format 'avro'"},
		{[]string{"properties.sasl.mechanism", "PLAIN"}, "unsupported option 'properties.sasl.mechanism'"},
		{[]string{"key.fields", "id"}, "needs 'key.format'"},
		{[]string{"key.format", "json", "key.fields", "nope"}, "unknown column 'nope'"},
		{[]string{"format", "raw"}, "format 'raw' holds one column"},
		{[]string{"scan.topic-partition-discovery.interval", "often"}, "not a duration"},
	} {
		_, err := NewSource(table("id INT, v STRING", with(base, c.kv...)), connector.Env{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error with %q", c.kv, err, c.want)
		}
	}
}

func TestSourceFormats(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(1, "j", "c", "r", "d"))
	cl := manual(t, addr)
	produce(t, cl,
		rec("j", 0, `{"k":7}`, `{"id":1,"v":"a"}`),
		rec("j", 0, `{"k":8}`, `{"id":2,"v":null}`),
		rec("c", 0, "", "1,a"),
		rec("c", 0, "", `2,"b,c"`),
		rec("r", 0, "key1", "hello"),
		rec("r", 0, "", "world"),
		rec("d", 0, "", `{"before":null,"after":{"id":1,"v":"a"},"op":"c"}`),
		rec("d", 0, "", `{"before":{"id":1,"v":"a"},"after":{"id":1,"v":"b"},"op":"u"}`),
		rec("d", 0, "", `{"before":{"id":1,"v":"b"},"after":null,"op":"d"}`),
	)
	base := map[string]string{"connector": "kafka", "properties.bootstrap.servers": addr, "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}
	cases := []struct {
		name, cols string
		kv         []string
		want       []string
	}{
		{"json with key fields", "k INT, id INT, v STRING", []string{"topic", "j", "key.format", "json", "key.fields", "k", "value.format", "json", "value.fields-include", "EXCEPT_KEY"},
			[]string{"+I[7, 1, a]", "+I[8, 2, <NULL>]"}},
		{"csv", "id INT, v STRING", []string{"topic", "c", "format", "csv"}, []string{"+I[1, a]", "+I[2, b,c]"}},
		{"raw with raw key", "k STRING, v STRING", []string{"topic", "r", "key.format", "raw", "key.fields", "k", "value.format", "raw", "value.fields-include", "EXCEPT_KEY"},
			[]string{"+I[<NULL>, world]", "+I[key1, hello]"}},
		{"debezium-json", "id INT, v STRING", []string{"topic", "d", "format", "debezium-json"}, []string{"+I[1, a]", "+U[1, b]", "-D[1, b]", "-U[1, a]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := NewSource(table(c.cols, with(base, c.kv...)), connector.Env{})
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "rows", readAll(t, src, strings.Count(c.cols, ",")+1, 1), sorted(c.want))
		})
	}
	src, _ := NewSource(table("id INT, v STRING", with(base, "topic", "d", "format", "debezium-json")), connector.Env{})
	if m := connector.SourceChangelogMode(src); m != connector.ModeRetract {
		t.Fatalf("debezium-json source mode %v", m)
	}
}

func TestSourceBadRecord(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(1, "in"))
	cl := manual(t, addr)
	produce(t, cl, rec("in", 0, "", `{"id":1}`), rec("in", 0, "", `{"id":"x"}`), rec("in", 0, "", `{"id":3}`))
	base := map[string]string{"connector": "kafka", "topic": "in", "properties.bootstrap.servers": addr, "format": "json", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}
	src, err := NewSource(table("id INT", base), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := src.Open(0, 1)
	defer r.Close()
	_, err = drain(testCtx(t), r, 1, -1)
	if err == nil || !strings.Contains(err.Error(), "topic in partition 0 offset 1") {
		t.Fatalf("got %v, want an error naming topic in partition 0 offset 1", err)
	}
	src, err = NewSource(table("id INT", with(base, "json.ignore-parse-errors", "true")), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := src.Open(0, 1)
	defer r2.Close()
	rows, err := drain(testCtx(t), r2, 1, -1)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "rows", rows, []string{"+I[1]", "+I[3]"})
	if n := r2.(connector.Stats).Skipped(); n != 1 {
		t.Fatalf("skipped %d, want 1", n)
	}
}

// TestReaderRecyclesRecords: the reader recycles every fetched record it
// has decoded, so the client's record slices come back to the reader's
// pool to be reused, and the rows (decoded before) stay intact.
func TestReaderRecyclesRecords(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(2, "rc"))
	cl := manual(t, addr)
	var want []string
	for batch := range 20 {
		var recs []*kgo.Record
		for i := range 200 {
			n := batch*200 + i
			recs = append(recs, rec("rc", int32(n%2), "", fmt.Sprintf(`{"id":%d,"v":"value-%d"}`, n, n)))
			want = append(want, fmt.Sprintf("+I[%d, value-%d]", n, n))
		}
		produce(t, cl, recs...)
	}
	src, err := NewSource(table("id BIGINT, v STRING", map[string]string{"connector": "kafka", "topic": "rc", "properties.bootstrap.servers": addr,
		"format": "json", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.Open(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows, err := drain(testCtx(t), r, 2, -1)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "rows", sorted(rows), sorted(want))
	p := &r.(*Reader).pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		t.Error("no record slice came back to the pool: records are not recycled")
	}
}
