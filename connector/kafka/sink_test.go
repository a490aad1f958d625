package kafka

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

func batch(kind types.RowKind, ids ...int64) *types.Batch {
	b := types.NewBatch(2, len(ids))
	for _, id := range ids {
		b.Append(kind, []types.Value{types.BigIntValue(id), types.StringValue(fmt.Sprint("v", id))})
	}
	return b
}

// consumeAll reads every record of topic that a franz-go consumer with the
// given isolation sees, up to the topic's end (its last stable offset for a
// read-committed consumer), as FormatRow strings of (key, value) with
// <NULL> for a missing key or a tombstone, sorted. It reads with a plain
// client, not Weir's source, so that the sink's output is checked by a
// reader that shares none of its code.
func consumeAll(t *testing.T, addr, topic string, committed bool) []string {
	t.Helper()
	ctx := testCtx(t)
	adm := kadm.NewClient(client(t, addr))
	list := adm.ListEndOffsets
	if committed {
		list = adm.ListCommittedOffsets
	}
	ends, err := list(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	next := map[int32]int64{}
	todo := 0
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			next[o.Partition] = 0
			todo++
		}
	})
	opts := []kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.KeepControlRecords()}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl := client(t, addr, opts...)
	var out []string
	text := func(b []byte) types.Value {
		if b == nil {
			return types.NullValue()
		}
		return types.StringValue(string(b))
	}
	for todo > 0 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("consume %s: %v", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, _ := ends.Lookup(topic, r.Partition)
			if r.Offset >= end.Offset {
				return
			}
			if !r.Attrs.IsControl() {
				out = append(out, types.FormatRow(types.Insert, []types.Value{text(r.Key), text(r.Value)}))
			}
			if r.Offset+1 >= end.Offset {
				todo--
			}
		})
	}
	sort.Strings(out)
	return out
}

func sinkTable(addr string, kv ...string) *connector.Table {
	return table("id BIGINT, v STRING", with(map[string]string{"connector": "kafka", "topic": "out", "properties.bootstrap.servers": addr, "format": "json"}, kv...))
}

func TestSinkAtLeastOnce(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(2, "out"))
	s, err := NewSink(sinkTable(addr), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(connector.TransactionalSink); ok {
		t.Fatal("at-least-once sink is transactional")
	}
	w, err := s.Open(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(batch(types.Insert, 1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	// After Flush (a checkpoint), every record is in the topic.
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	equal(t, "records", consumeAll(t, addr, "out", false), []string{
		`+I[<NULL>, {"id":1,"v":"v1"}]`, `+I[<NULL>, {"id":2,"v":"v2"}]`, `+I[<NULL>, {"id":3,"v":"v3"}]`})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSinkAppendOnlyFormatRefusesUpdates(t *testing.T) {
	s, err := NewSink(sinkTable("x:1"), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if connector.SinkChangelogMode(s) != connector.ModeInsertOnly {
		t.Fatal("json sink accepts updates")
	}
	_, fix := s.(connector.ChangelogSink).ChangelogHint()
	if !strings.Contains(fix, "upsert-kafka") || !strings.Contains(fix, "debezium-json") {
		t.Fatalf("hint %q", fix)
	}
	if _, err := NewSink(sinkTable("x:1", "sink.delivery-guarantee", "exactly-once"), connector.Env{}); err == nil || !strings.Contains(err.Error(), "sink.transactional-id-prefix") {
		t.Fatalf("exactly-once without prefix: %v", err)
	}
}

// TestSinkExactlyOnceAcrossCrash: checkpoint 1 commits; checkpoint 2 is
// pre-committed and its commit dies halfway (records produced in an open
// transaction); rows after it were never pre-committed. A restore of
// checkpoint 2 recovers both transactions: a read-committed consumer then
// sees every row of checkpoints 1 and 2 once, none of the lost ones twice,
// and the rows the restored run writes after it.
func TestSinkExactlyOnceAcrossCrash(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(1, "out"))
	tbl := sinkTable(addr, "sink.delivery-guarantee", "exactly-once", "sink.transactional-id-prefix", "job1")
	s, err := NewSink(tbl, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := s.Open(0, 1)
	tw := w.(connector.TransactionalWriter)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tw.Write(batch(types.Insert, 1, 2)))
	txn1, err := tw.PreCommit(1)
	must(err)
	must(tw.Commit(txn1))
	must(tw.Write(batch(types.Insert, 3, 4)))
	txn2, err := tw.PreCommit(2)
	must(err)
	must(tw.Write(batch(types.Insert, 5))) // lost with the crash; the restored run writes it again
	// The crash: the commit of checkpoint 2 produced its records in a
	// transaction that never ended.
	zombie := client(t, addr, kgo.TransactionalID("job1-0"))
	must(zombie.BeginTransaction())
	t2, _ := decodeTxn(txn2)
	for _, r := range t2.recs {
		zombie.Produce(context.Background(), &kgo.Record{Topic: "out", Key: r.key, Value: r.value}, nil)
	}
	must(zombie.Flush(testCtx(t)))
	// (the old writer is gone without Abort; its client just closes)
	w.(*txnWriter).cl.Close()

	// The restore: a new sink recovers the checkpoint's transactions (the
	// runtime passes those not yet committed; txn1 too, to check that a
	// committed one is skipped) twice, as a second crash during recovery
	// would.
	s2, _ := NewSink(tbl, connector.Env{})
	for range 2 {
		must(s2.(connector.TransactionalSink).Recover([][]byte{txn1, txn2}))
	}
	w2, _ := s2.Open(0, 1)
	tw2 := w2.(connector.TransactionalWriter)
	must(tw2.Write(batch(types.Insert, 5, 6)))
	txn3, err := tw2.PreCommit(3)
	must(err)
	must(tw2.Commit(txn3))
	must(tw2.Commit(txn3)) // idempotent
	must(tw2.Write(batch(types.Insert, 7)))
	must(tw2.Close()) // a finished job commits the rest

	var want []string
	for id := 1; id <= 7; id++ {
		want = append(want, fmt.Sprintf(`+I[<NULL>, {"id":%d,"v":"v%d"}]`, id, id))
	}
	equal(t, "read committed", consumeAll(t, addr, "out", true), sorted(want))
}

// TestUpsertKafka writes an updating changelog to upsert-kafka (-U
// dropped, -D a tombstone) and reads it back as a changelog.
func TestUpsertKafka(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(3, "u"))
	tbl := table("id BIGINT, v STRING", map[string]string{"connector": "upsert-kafka", "topic": "u", "properties.bootstrap.servers": addr,
		"key.format": "json", "value.format": "json"})
	tbl.PrimaryKey = []int{0}
	s, err := NewUpsertSink(tbl, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.AcceptsUpdates() {
		t.Fatal("upsert-kafka refuses updates")
	}
	w, _ := s.Open(0, 1)
	b := types.NewBatch(2, 8)
	row := func(id int64, v string) []types.Value {
		return []types.Value{types.BigIntValue(id), types.StringValue(v)}
	}
	b.Append(types.Insert, row(1, "a"))
	b.Append(types.Insert, row(2, "b"))
	b.Append(types.UpdateBefore, row(1, "a"))
	b.Append(types.UpdateAfter, row(1, "c"))
	b.Append(types.Delete, row(2, "b"))
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw := consumeAll(t, addr, "u", true)
	equal(t, "records", raw, sorted([]string{`+I[{"id":1}, {"id":1,"v":"a"}]`, `+I[{"id":1}, {"id":1,"v":"c"}]`,
		`+I[{"id":2}, {"id":2,"v":"b"}]`, `+I[{"id":2}, <NULL>]`}))
	// (the delete of id 2 is a tombstone; the upsert source below reads it as -D)

	src, err := NewUpsertSource(tbl, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if connector.SourceChangelogMode(src) != connector.ModeUpsert {
		t.Fatal("upsert-kafka source is not an upsert changelog")
	}
	r, _ := src.Open(0, 1)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rows, err := drain(ctx, r, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Per record: a value is +U of its key's row, a tombstone -D of the
	// key alone (the planner's ChangelogNormalize makes the retractions).
	equal(t, "changelog", sorted(rows), sorted([]string{"+U[1, a]", "+U[1, c]", "+U[2, b]", "-D[2, <NULL>]"}))
}

// TestUpsertKafkaExactlyOnceLastPerKey: an exactly-once upsert-kafka
// transaction carries each key's last record of the checkpoint (a
// tombstone if that was a delete), each key at the place of its first
// record; the next checkpoint starts afresh.
func TestUpsertKafkaExactlyOnceLastPerKey(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(1, "u"))
	tbl := table("id BIGINT, v STRING", map[string]string{"connector": "upsert-kafka", "topic": "u", "properties.bootstrap.servers": addr,
		"key.format": "json", "value.format": "json", "sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "up"})
	tbl.PrimaryKey = []int{0}
	s, err := NewUpsertSink(tbl, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Open(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	tw := w.(connector.TransactionalWriter)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	row := func(id int64, v string) []types.Value {
		return []types.Value{types.BigIntValue(id), types.StringValue(v)}
	}
	b := types.NewBatch(2, 8)
	b.Append(types.Insert, row(1, "a"))
	b.Append(types.Insert, row(2, "b"))
	b.Append(types.UpdateBefore, row(1, "a"))
	b.Append(types.UpdateAfter, row(1, "c"))
	must(tw.Write(b))
	b = types.NewBatch(2, 8)
	b.Append(types.Insert, row(3, "d"))
	b.Append(types.Delete, row(2, "b"))
	b.Append(types.UpdateBefore, row(1, "c"))
	b.Append(types.UpdateAfter, row(1, "cc"))
	must(tw.Write(b))
	txn, err := tw.PreCommit(1)
	must(err)
	must(tw.Commit(txn))
	b = types.NewBatch(2, 8)
	b.Append(types.UpdateAfter, row(1, "e"))
	b.Append(types.Insert, row(2, "f"))
	must(tw.Write(b))
	txn, err = tw.PreCommit(2)
	must(err)
	must(tw.Commit(txn))
	must(tw.Close())

	cl := client(t, addr, kgo.ConsumeTopics("u"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	want := []string{`{"id":1}={"id":1,"v":"cc"}`, `{"id":2}=<tombstone>`, `{"id":3}={"id":3,"v":"d"}`, `{"id":1}={"id":1,"v":"e"}`, `{"id":2}={"id":2,"v":"f"}`}
	var got []string
	ctx := testCtx(t)
	for len(got) < len(want) {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("consume: %v (got %q)", err, got)
		}
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			if r.Value == nil {
				v = "<tombstone>"
			}
			got = append(got, string(r.Key)+"="+v)
		})
	}
	equal(t, "records in offset order", got, want)
}

// TestExactlyOnceWriteAllocs: the exactly-once writer encodes rows into
// its buffer without an allocation per row (once its buffers have grown).
func TestExactlyOnceWriteAllocs(t *testing.T) {
	for _, connectorName := range []string{"kafka", "upsert-kafka"} {
		opts := map[string]string{"connector": connectorName, "topic": "out", "properties.bootstrap.servers": "127.0.0.1:1",
			"sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "a"}
		if connectorName == "kafka" {
			opts["format"] = "json"
		} else {
			opts["key.format"], opts["value.format"] = "json", "json"
		}
		tbl := table("id BIGINT, v STRING", opts)
		newSink := NewSink
		if connectorName == "upsert-kafka" {
			tbl.PrimaryKey = []int{0}
			newSink = NewUpsertSink
		}
		s, err := newSink(tbl, connector.Env{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.Open(0, 1)
		if err != nil {
			t.Fatal(err)
		}
		tw := w.(*txnWriter)
		b := types.NewBatch(2, 1000)
		for i := range 1000 {
			b.Append(types.UpdateAfter, []types.Value{types.BigIntValue(int64(i % 50)), types.StringValue("value")})
		}
		if connectorName == "kafka" {
			b.Kinds = b.Kinds[:0]
			for range 1000 {
				b.Kinds = append(b.Kinds, types.Insert)
			}
		}
		step := func() {
			if err := tw.Write(b); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.PreCommit(1); err != nil {
				t.Fatal(err)
			}
		}
		step()
		// PreCommit allocates the encoded transaction: a few per call.
		if n := testing.AllocsPerRun(20, step); n > 5 {
			t.Errorf("%s: %.0f allocations per 1000-row Write and PreCommit, want at most 5", connectorName, n)
		}
	}
}
