package kafka

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// TestSinkCommittedMarkers checks what the exactly-once sink reports to
// the runtime's guard (connector.DurableSink): the highest checkpoint any
// subtask of any earlier run committed, over the marker groups of every
// parallelism; a transaction a dead run left open (its marker included)
// does not count; a run without checkpoints commits at close above the
// marker, never below it.
func TestSinkCommittedMarkers(t *testing.T) {
	_, addr := broker(t, kfake.SeedTopics(1, "out"))
	tbl := sinkTable(addr, "sink.delivery-guarantee", "exactly-once", "sink.transactional-id-prefix", "job1")
	s, err := NewSink(tbl, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	ds, ok := s.(connector.DurableSink)
	if !ok {
		t.Fatal("the exactly-once sink is not a connector.DurableSink")
	}
	if got, want := ds.Location(), "kafka topic out (transactional ids job1-*)"; got != want {
		t.Fatalf("location %q, want %q", got, want)
	}
	committed := func(want int64) {
		t.Helper()
		got, err := ds.Committed()
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("committed %d, want %d", got, want)
		}
	}
	committed(0)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// A run at parallelism 3: subtask 0 commits checkpoints 1 to 3,
	// subtask 2 checkpoint 5 (subtask 1 writes nothing).
	writers := make([]connector.TransactionalWriter, 3)
	for i := range writers {
		w, err := s.Open(i, 3)
		must(err)
		writers[i] = w.(connector.TransactionalWriter)
	}
	for id := int64(1); id <= 3; id++ {
		must(writers[0].Write(batch(types.Insert, id)))
		txn, err := writers[0].PreCommit(id)
		must(err)
		must(writers[0].Commit(txn))
	}
	must(writers[2].Write(batch(types.Insert, 50)))
	txn, err := writers[2].PreCommit(5)
	must(err)
	must(writers[2].Commit(txn))
	for _, w := range writers {
		must(w.Abort())
	}
	committed(5)

	// A dead run left a transaction open with subtask 0's marker at 9:
	// not committed, it does not count (reading it aborts it).
	zombie := client(t, addr, kgo.TransactionalID("job1-0"))
	must(zombie.BeginTransaction())
	zombie.Produce(context.Background(), &kgo.Record{Topic: "out", Value: []byte(`{"id":99}`)}, nil)
	must(zombie.Flush(testCtx(t)))
	must(txnSink{s.(txnSink).Sink}.addMarker(testCtx(t), zombie, &txnRecords{subtask: 0, id: 9}))
	committed(5)

	// A run of subtask 2 without checkpoints commits at close as the
	// checkpoint after its marker.
	w, err := s.Open(2, 3)
	must(err)
	must(w.Write(batch(types.Insert, 60)))
	must(w.Close())
	committed(6)

	equal(t, "read committed", consumeAll(t, addr, "out", true), sorted([]string{
		`+I[<NULL>, {"id":1,"v":"v1"}]`, `+I[<NULL>, {"id":2,"v":"v2"}]`, `+I[<NULL>, {"id":3,"v":"v3"}]`,
		`+I[<NULL>, {"id":50,"v":"v50"}]`, `+I[<NULL>, {"id":60,"v":"v60"}]`}))
}
