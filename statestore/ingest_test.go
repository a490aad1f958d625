package statestore

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ingestStep is one step of a TestIngestPath scenario.
type ingestStep struct {
	op       string // put, putdesc, del, get, commit, snap, rescale, replace
	from, to int    // key range of put/putdesc (inclusive), key of del/get
	val      string
}

// TestIngestPath checks the write-through path that streams ascending
// writes into an sstable and ingests it, against a model map: after every
// scenario, and at each get, Get and Scan must agree with the model.
func TestIngestPath(t *testing.T) {
	cases := []struct {
		name       string
		steps      []ingestStep
		wantIngest bool
	}{
		{"ascending run is ingested", []ingestStep{
			{op: "put", from: 0, to: 99, val: "a"},
		}, true},
		{"small run stays in the batch", []ingestStep{
			{op: "put", from: 0, to: 3, val: "a"},
		}, false},
		{"descending run stays in the batch", []ingestStep{
			{op: "putdesc", from: 99, to: 0, val: "a"},
		}, false},
		{"out of order after the sstable was started", []ingestStep{
			{op: "put", from: 0, to: 49, val: "a"},
			{op: "put", from: 10, to: 20, val: "b"}, // overwrite keys in the sstable
			{op: "put", from: 49, to: 49, val: "c"}, // repeat the last key
			{op: "put", from: 60, to: 70, val: "d"},
		}, true},
		{"get between write-throughs", []ingestStep{
			{op: "put", from: 0, to: 29, val: "a"},
			{op: "get", from: 5},
			{op: "put", from: 30, to: 59, val: "b"},
			{op: "get", from: 45},
			{op: "put", from: 0, to: 59, val: "c"},
		}, true},
		{"delete of an ingested key through the cache", []ingestStep{
			{op: "put", from: 0, to: 49, val: "a"},
			{op: "commit"},
			{op: "del", from: 7},
			{op: "get", from: 7},
			{op: "put", from: 0, to: 49, val: "b"}, // 7 is cached: the cache takes it
			{op: "del", from: 8},
		}, true},
		{"delete of a key still in the open sstable", []ingestStep{
			{op: "put", from: 0, to: 49, val: "a"},
			{op: "del", from: 20},
			{op: "put", from: 50, to: 60, val: "b"},
		}, true},
		{"snapshot and restore after ingest", []ingestStep{
			{op: "put", from: 0, to: 49, val: "a"},
			{op: "snap"},
			{op: "put", from: 25, to: 74, val: "b"},
			{op: "snap"},
			{op: "get", from: 30},
		}, true},
		{"restore key groups after ingest", []ingestStep{
			{op: "put", from: 0, to: 79, val: "a"},
			{op: "rescale"},
			{op: "put", from: 40, to: 99, val: "b"},
			{op: "rescale"},
		}, true},
		{"replace drops the keys not rewritten", []ingestStep{
			{op: "put", from: 0, to: 49, val: "a"},
			{op: "commit"},
			{op: "replace"},
			{op: "put", from: 10, to: 19, val: "b"},
		}, true},
		{"replace of keys in the memtable", []ingestStep{
			{op: "put", from: 0, to: 3, val: "a"}, // small: a batch, then the memtable
			{op: "commit"},
			{op: "replace"},
			{op: "put", from: 2, to: 2, val: "b"},
			{op: "get", from: 1},
		}, true},
		{"replace drops cached writes", []ingestStep{
			{op: "put", from: 0, to: 49, val: "a"},
			{op: "commit"},
			{op: "del", from: 7},  // a dirty delete in the cache
			{op: "get", from: 30}, // a clean value in the cache
			{op: "replace"},
			{op: "put", from: 0, to: 9, val: "b"},
			{op: "get", from: 30},
		}, true},
		{"replace in descending order", []ingestStep{
			{op: "put", from: 0, to: 49, val: "a"},
			{op: "commit"},
			{op: "replace"},
			{op: "putdesc", from: 29, to: 20, val: "b"},
		}, true},
		{"replace with nothing", []ingestStep{
			{op: "put", from: 0, to: 49, val: "a"},
			{op: "commit"},
			{op: "replace"},
			{op: "commit"},
		}, true},
		{"get during a replace", []ingestStep{
			{op: "put", from: 0, to: 49, val: "a"},
			{op: "commit"},
			{op: "replace"},
			{op: "put", from: 0, to: 9, val: "b"},
			{op: "get", from: 30},
			{op: "put", from: 10, to: 19, val: "c"},
		}, true},
		{"replace, snapshot and restore", []ingestStep{
			{op: "put", from: 0, to: 49, val: "a"},
			{op: "snap"},
			{op: "replace"},
			{op: "put", from: 20, to: 29, val: "b"},
			{op: "snap"},
			{op: "get", from: 5},
			{op: "rescale"},
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newIngestHarness(t)
			for _, st := range c.steps {
				h.apply(st)
			}
			h.check()
			if files, _ := filepath.Glob(filepath.Join(h.s.Dir(), ingestDir, "*")); len(files) > 0 {
				t.Errorf("files left for ingestion: %v", files)
			}
			if got := h.ingested(); got != c.wantIngest {
				t.Errorf("ingested = %v, want %v", got, c.wantIngest)
			}
		})
	}
}

// ingestHarness runs ingestSteps on a store and on a model.
type ingestHarness struct {
	t        *testing.T
	s        *Store
	tb       *Table
	other    *Table // of another operator
	model    map[string]string
	ingests  uint64 // ingestions by stores replaced since
	restored int
}

const (
	ingestTestOp    = "op"
	ingestTestState = "st"
	ingestTestGroup = 5
	ingestOtherOp   = "op2"
)

func newIngestHarness(t *testing.T) *ingestHarness {
	h := &ingestHarness{t: t, model: map[string]string{}}
	h.use(openTest(t, Options{CacheBytes: 1 << 20}))
	h.writeOther()
	return h
}

// use makes s the store under test, with a small ingestion threshold so
// that short runs are ingested.
func (h *ingestHarness) use(s *Store) {
	s.through.minIngest = 4
	h.s = s
	h.tb = table(h.t, s, ingestTestOp, ingestTestState)
	h.other = table(h.t, s, ingestOtherOp, ingestTestState)
}

// writeOther gives another operator, whose id extends the tested one's,
// keys that a replace of the tested operator must leave alone.
func (h *ingestHarness) writeOther() {
	for i := range 10 {
		if err := h.other.Put(ingestTestGroup, []byte(ingestKey(i)), []byte("other")); err != nil {
			h.t.Fatal(err)
		}
	}
}

func ingestKey(i int) string { return fmt.Sprintf("k%04d", i) }

func (h *ingestHarness) apply(st ingestStep) {
	t := h.t
	t.Helper()
	switch st.op {
	case "put", "putdesc":
		step := 1
		if st.op == "putdesc" {
			step = -1
		}
		for i := st.from; ; i += step {
			k := ingestKey(i)
			v := st.val + k
			if err := h.tb.PutThrough(ingestTestGroup, []byte(k), []byte(v)); err != nil {
				t.Fatal(err)
			}
			h.model[k] = v
			if i == st.to {
				break
			}
		}
	case "del":
		k := ingestKey(st.from)
		if err := h.tb.Delete(ingestTestGroup, []byte(k)); err != nil {
			t.Fatal(err)
		}
		delete(h.model, k)
	case "get":
		h.checkGet(ingestKey(st.from))
	case "commit":
		if err := h.s.CommitThrough(); err != nil {
			t.Fatal(err)
		}
	case "replace":
		if err := h.s.ReplaceOperator(ingestTestOp); err != nil {
			t.Fatal(err)
		}
		clear(h.model)
	case "snap", "rescale":
		snap := filepath.Join(t.TempDir(), "snap")
		if _, err := h.s.Snapshot(snap); err != nil {
			t.Fatal(err)
		}
		h.ingests += h.s.db.Metrics().Ingest.Count
		if err := h.s.Close(); err != nil {
			t.Fatal(err)
		}
		h.restored++
		work := filepath.Join(t.TempDir(), fmt.Sprintf("work%d", h.restored))
		var r *Store
		var err error
		if st.op == "snap" {
			r, err = Restore(snap, work, Options{CacheBytes: 1 << 20})
		} else {
			r, err = RestoreKeyGroups([]string{snap}, work, 0, 127, Options{CacheBytes: 1 << 20})
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		h.use(r)
	default:
		t.Fatalf("unknown step %q", st.op)
	}
}

func (h *ingestHarness) checkGet(k string) {
	h.t.Helper()
	v, ok := mustGet(h.t, h.tb, ingestTestGroup, k)
	want, wantOK := h.model[k]
	if v != want || ok != wantOK {
		h.t.Fatalf("get %s = %q %v, want %q %v", k, v, ok, want, wantOK)
	}
}

// check compares a scan and a get of every key with the model.
func (h *ingestHarness) check() {
	h.t.Helper()
	got := map[string]string{}
	if err := h.tb.Scan(0, 127, func(kg int, k, v []byte) error {
		if kg != ingestTestGroup {
			return fmt.Errorf("key %q in key group %d", k, kg)
		}
		got[string(k)] = string(v)
		return nil
	}); err != nil {
		h.t.Fatal(err)
	}
	if !maps.Equal(got, h.model) {
		h.t.Fatalf("scan = %v, want %v", got, h.model)
	}
	for _, k := range slices.Sorted(maps.Keys(h.model)) {
		h.checkGet(k)
	}
	h.checkGet(ingestKey(9999)) // never written
	for i := range 10 {
		if v, ok := mustGet(h.t, h.other, ingestTestGroup, ingestKey(i)); v != "other" || !ok {
			h.t.Fatalf("the other operator's key %d = %q %v", i, v, ok)
		}
	}
}

// ingested reports whether any store of the harness ingested an sstable.
func (h *ingestHarness) ingested() bool {
	return h.ingests+h.s.db.Metrics().Ingest.Count > 0
}

// TestFailedWriteMakesStoreUnusable checks that once the writes of a
// write-through run are lost (here the sstable vanishes before it is
// ingested, or the ingest folder cannot be created for a replace), every
// later call fails instead of serving or snapshotting a state that lacks
// them.
func TestFailedWriteMakesStoreUnusable(t *testing.T) {
	cases := []struct {
		name       string
		breakStore func(h *ingestHarness) error // returns the first error seen
	}{
		{"ingest of a vanished sstable", func(h *ingestHarness) error {
			h.apply(ingestStep{op: "put", from: 0, to: 49, val: "a"})
			if err := os.Remove(h.s.through.sstPath); err != nil {
				t.Fatal(err)
			}
			return h.s.CommitThrough()
		}},
		{"replace without an ingest folder", func(h *ingestHarness) error {
			dir := filepath.Join(h.s.Dir(), ingestDir)
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, nil, 0o644); err != nil { // a file where the folder goes
				t.Fatal(err)
			}
			return h.s.ReplaceOperator(ingestTestOp)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newIngestHarness(t)
			h.apply(ingestStep{op: "put", from: 0, to: 9, val: "old"})
			h.apply(ingestStep{op: "commit"})
			if err := tc.breakStore(h); err == nil {
				t.Fatal("the broken write did not fail")
			}
			if _, _, err := h.tb.Get(ingestTestGroup, []byte(ingestKey(3))); err == nil || !strings.Contains(err.Error(), "unusable after a failed write") {
				t.Errorf("get after the failure: %v", err)
			}
			if err := h.tb.PutThrough(ingestTestGroup, []byte(ingestKey(3)), []byte("x")); err == nil {
				t.Error("a write after the failure succeeded")
			}
			if _, err := h.s.Snapshot(filepath.Join(t.TempDir(), "snap")); err == nil {
				t.Error("a snapshot after the failure succeeded")
			}
		})
	}
}
