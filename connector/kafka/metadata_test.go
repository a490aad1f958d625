package kafka

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// metaTable is a table of columns id INT (the JSON value) plus the given
// metadata columns ("name KEY" with KEY a metadata key; types as the keys
// say), as CREATE TABLE with METADATA FROM builds it.
func metaTable(opts map[string]string, virtual bool, keys ...string) *connector.Table {
	t := table("id INT", opts)
	for _, k := range keys {
		var typ types.Type
		for _, mk := range MetadataKeys {
			if mk.Key == k {
				typ = mk.Type
			}
		}
		t.Metadata = append(t.Metadata, connector.MetadataColumn{Column: t.Schema.Len(), Key: k, Virtual: virtual})
		t.Schema.Columns = append(t.Schema.Columns, types.Column{Name: "m_" + k, Type: typ})
	}
	return t
}

// TestSourceMetadataColumns reads every metadata key of records written to
// two partitions with known timestamps and headers, and compares each row
// with the record it came from.
func TestSourceMetadataColumns(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(2, "in"))
	cl := manual(t, addr)
	base := time.UnixMilli(1_700_000_000_000)
	var want []string
	for p := range int32(2) {
		for i := range 5 {
			r := rec("in", p, "", fmt.Sprintf(`{"id":%d}`, i))
			r.Timestamp = base.Add(time.Duration(100*i+int(p)) * time.Millisecond)
			var hs []string
			for h := range i % 3 {
				r.Headers = append(r.Headers, kgo.RecordHeader{Key: fmt.Sprint("h", h), Value: []byte{byte(i), byte(h)}})
				hs = append(hs, fmt.Sprintf("h%d=x'%02x%02x'", h, i, h))
			}
			produce(t, cl, r)
			ts := types.TimestampLTZValue(r.Timestamp.UnixMilli()).String()
			want = append(want, fmt.Sprintf("+I[%d, in, %d, %d, %s, CreateTime, {%s}]", i, p, i, ts, strings.Join(hs, ", ")))
		}
	}
	keys := []string{metaTopic, metaPartition, metaOffset, metaTimestamp, metaTimestampType, metaHeaders}
	opts := map[string]string{"connector": "kafka", "topic": "in", "properties.bootstrap.servers": addr, "format": "json",
		"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}
	src, err := NewSource(metaTable(opts, true, keys...), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "rows", readAll(t, src, 1+len(keys), 2), sorted(want))
}

// TestSinkMetadataColumns writes the record timestamp and headers from
// metadata columns, at least once and exactly once (through a checkpoint's
// transaction), and reads them back from the records.
func TestSinkMetadataColumns(t *testing.T) {
	for _, guarantee := range []string{deliveryAtLeastOnce, deliveryExactlyOnce} {
		t.Run(guarantee, func(t *testing.T) {
			_, addr := broker(t)
			opts := map[string]string{"connector": "kafka", "topic": "out", "properties.bootstrap.servers": addr, "format": "json",
				"sink.delivery-guarantee": guarantee, "sink.transactional-id-prefix": "j"}
			if guarantee != deliveryExactlyOnce {
				delete(opts, "sink.transactional-id-prefix")
			}
			tbl := metaTable(opts, false, metaTimestamp, metaHeaders)
			s, err := NewSink(tbl, connector.Env{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := s.Open(0, 1)
			if err != nil {
				t.Fatal(err)
			}
			b := types.NewBatch(3, 4)
			var hb types.RowBuilder
			var want []string
			for i := range int64(4) {
				hb.Begin()
				hb.Add(types.StringValue("trace"))
				hb.Add(types.BytesValue(fmt.Sprint("t", i)))
				ts := types.TimestampLTZValue(1_600_000_000_000 + 1000*i)
				if i == 3 {
					ts = types.NullValue() // the produce time
				}
				b.Append(types.Insert, []types.Value{types.IntValue(i), ts, hb.Finish(types.KindMap)})
				if i < 3 {
					want = append(want, fmt.Sprintf(`{"id":%d} %d trace=t%d`, i, 1_600_000_000_000+1000*i, i))
				}
			}
			before := time.Now().Add(-time.Second)
			if err := w.Write(b); err != nil {
				t.Fatal(err)
			}
			if tw, ok := w.(connector.TransactionalWriter); ok {
				txn, err := tw.PreCommit(1)
				if err != nil {
					t.Fatal(err)
				}
				if err := tw.Commit(txn); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			c := client(t, addr, kgo.ConsumeTopics("out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			var got []string
			for len(got) < 4 {
				fs := c.PollFetches(testCtx(t))
				if err := fs.Err0(); err != nil {
					t.Fatal(err)
				}
				fs.EachRecord(func(r *kgo.Record) {
					if string(r.Value) == `{"id":3}` {
						if r.Timestamp.Before(before) {
							t.Errorf("record with a NULL timestamp column has timestamp %v, want the produce time", r.Timestamp)
						}
						got = append(got, "")
						return
					}
					var hs []string
					for _, h := range r.Headers {
						hs = append(hs, h.Key+"="+string(h.Value))
					}
					got = append(got, fmt.Sprintf("%s %d %s", r.Value, r.Timestamp.UnixMilli(), strings.Join(hs, ",")))
				})
			}
			equal(t, "records", sorted(got)[1:], sorted(want))
		})
	}
}

// TestMetadataColumnErrors checks the kafka-specific refusals: a metadata
// column named in key.fields or in upsert-kafka's primary key.
func TestMetadataColumnErrors(t *testing.T) {
	opts := map[string]string{"connector": "kafka", "topic": "in", "properties.bootstrap.servers": "x:1", "format": "json",
		"key.format": "json", "key.fields": "m_partition"}
	if _, err := NewSource(metaTable(opts, true, metaPartition), connector.Env{}); err == nil || !strings.Contains(err.Error(), "'m_partition' is a metadata column") {
		t.Errorf("key.fields on a metadata column: %v", err)
	}
	tbl := metaTable(map[string]string{"connector": "upsert-kafka", "topic": "in", "properties.bootstrap.servers": "x:1",
		"key.format": "json", "value.format": "json"}, true, metaOffset)
	tbl.PrimaryKey = []int{1}
	if _, err := NewUpsertSource(tbl, connector.Env{}); err == nil || !strings.Contains(err.Error(), "metadata column") {
		t.Errorf("primary key on a metadata column: %v", err)
	}
}

func TestTxnRecordsRoundTrip(t *testing.T) {
	in := txnRecords{subtask: 3, id: 9, recs: []txnRec{
		{key: []byte("k"), value: []byte("v")},
		{value: []byte("w"), ts: -5, hasTS: true},
		{key: []byte{}, headers: []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b"}}},
	}}
	out, err := decodeTxn(in.encode())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(*out) != fmt.Sprint(in) {
		t.Fatalf("round trip:\ngot  %v\nwant %v", *out, in)
	}
	for n := range len(in.encode()) {
		if _, err := decodeTxn(in.encode()[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
}
