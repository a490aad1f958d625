package checkpoint

import (
	"bytes"
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sinkPayloads returns random binary transactions for three sink subtasks,
// the middle one empty, from seed.
func sinkPayloads(seed uint64, id int64) []SinkTransaction {
	r := rand.New(rand.NewPCG(seed, uint64(id)))
	txn := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return b
	}
	return []SinkTransaction{
		{Sink: "out", Subtask: 0, Transaction: txn(3000 + r.IntN(1000))},
		{Sink: "out", Subtask: 1},
		{Sink: "audit", Subtask: 0, Transaction: txn(1 + r.IntN(100))},
	}
}

// writeSinkCheckpoint writes checkpoint id with fake state and the sink
// transactions of sinkPayloads(seed, id).
func writeSinkCheckpoint(t *testing.T, st *Storage, seed uint64, id int64) *Checkpoint {
	t.Helper()
	p, err := st.Begin(id)
	must(t, err)
	for sub := 0; sub < 2; sub++ {
		writeFakeState(t, p.SubtaskDir("agg", sub))
	}
	m := testMeta(id)
	m.Sinks = sinkPayloads(seed, id)
	c, err := p.Complete(m)
	must(t, err)
	return c
}

func sameSinks(t *testing.T, what string, got, want []SinkTransaction) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d sink transactions, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i].Sink != want[i].Sink || got[i].Subtask != want[i].Subtask || !bytes.Equal(got[i].Transaction, want[i].Transaction) {
			t.Errorf("%s: sink %d = %s[%d] %d bytes, want %s[%d] %d bytes (or content differs)", what, i,
				got[i].Sink, got[i].Subtask, len(got[i].Transaction), want[i].Sink, want[i].Subtask, len(want[i].Transaction))
		}
	}
}

// TestSinkDataSideFile: sink transactions are written to the side file, not
// into _metadata (neither raw nor base64), and Latest, Load, a savepoint and
// inspect give them back.
func TestSinkDataSideFile(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	st, _ := newStorage(t, OSFS{})
	c := writeSinkCheckpoint(t, st, seed, 1)
	want := sinkPayloads(seed, 1)
	sameSinks(t, "Complete", c.Meta.Sinks, want)

	meta, err := os.ReadFile(filepath.Join(c.Path, MetadataFile))
	must(t, err)
	big := want[0].Transaction
	if bytes.Contains(meta, big[:64]) || bytes.Contains(meta, []byte(base64.StdEncoding.EncodeToString(big)[:64])) {
		t.Error("_metadata holds a sink transaction")
	}
	side, err := os.ReadFile(filepath.Join(c.Path, SinkDataFile))
	must(t, err)
	if len(side) != len(want[0].Transaction)+len(want[2].Transaction) {
		t.Errorf("%s is %d bytes, want the two transactions' %d", SinkDataFile, len(side), len(want[0].Transaction)+len(want[2].Transaction))
	}

	l, _, err := st.Latest()
	must(t, err)
	sameSinks(t, "Latest", l.Meta.Sinks, want)
	sp, err := Savepoint(OSFS{}, l, filepath.Join(t.TempDir(), "sp"))
	must(t, err)
	lsp, err := Load(OSFS{}, sp.Path)
	must(t, err)
	sameSinks(t, "savepoint", lsp.Meta.Sinks, want)
	report, err := Inspect(OSFS{}, c.Path)
	must(t, err)
	if !strings.Contains(report, "status:          valid\n") || !strings.Contains(report, "out[0]  transaction of ") {
		t.Errorf("inspect:\n%s", report)
	}
}

// TestSinkDataDamage: a checkpoint whose side file is damaged, truncated or
// missing is corrupt: Latest falls back to the previous one and says why,
// and retention (which checks sizes only) keeps the good one.
func TestSinkDataDamage(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	damage := []struct {
		name, text string
		apply      func(t *testing.T, file string)
	}{
		{"flipped", "is damaged", flipByte},
		{"truncated", "bytes, expected", func(t *testing.T, file string) { must(t, os.Truncate(file, 10)) }},
		{"missing", "missing " + SinkDataFile, func(t *testing.T, file string) { must(t, os.Remove(file)) }},
	}
	for _, d := range damage {
		t.Run(d.name, func(t *testing.T) {
			st, _ := newStorage(t, OSFS{})
			writeSinkCheckpoint(t, st, seed, 1)
			bad := writeSinkCheckpoint(t, st, seed, 2)
			d.apply(t, filepath.Join(bad.Path, SinkDataFile))
			c, skipped, err := st.Latest()
			must(t, err)
			if c.Meta.CheckpointID != 1 {
				t.Fatalf("Latest = %d, want 1", c.Meta.CheckpointID)
			}
			sameSinks(t, "fallback", c.Meta.Sinks, sinkPayloads(seed, 1))
			if len(skipped) != 1 || skipped[0].ID != 2 || !errors.Is(skipped[0].Reason, ErrCorruptCheckpoint) ||
				!strings.Contains(skipped[0].Reason.Error(), d.text) {
				t.Errorf("skipped %+v, want checkpoint 2 corrupt mentioning %q", skipped, d.text)
			}
			report, err := Inspect(OSFS{}, bad.Path)
			must(t, err)
			if !strings.Contains(report, "status:          corrupt checkpoint") {
				t.Errorf("inspect of a damaged side file:\n%s", report)
			}
			if d.name != "flipped" {
				// Sizes tell retention the newest is corrupt: it keeps 1.
				must(t, st.Retain(1))
				if _, err := os.Stat(filepath.Join(st.Dir(), "chk-1")); err != nil {
					t.Errorf("retention deleted the last good checkpoint: %v", err)
				}
			}
		})
	}
}

// TestSinkDataInlineStillLoads: a format version 4 checkpoint with the
// transactions inline in _metadata restores them.
func TestSinkDataInlineStillLoads(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	st, _ := newStorage(t, OSFS{})
	c := writeCheckpoint(t, st, 1)
	m := c.Meta
	m.FormatVersion = 4
	m.Sinks = sinkPayloads(seed, 1)
	data, err := EncodeMetadata(&m)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(c.Path, MetadataFile), data, 0o644))
	l, _, err := st.Latest()
	must(t, err)
	if l.Meta.FormatVersion != 4 || l.Meta.SinkData != nil {
		t.Errorf("Latest: format version %d, sink data %+v", l.Meta.FormatVersion, l.Meta.SinkData)
	}
	sameSinks(t, "inline", l.Meta.Sinks, sinkPayloads(seed, 1))
}

// TestSinkDataRejects: offsets outside the side file and transactions both
// inline and in the side file are corrupt metadata.
func TestSinkDataRejects(t *testing.T) {
	st, _ := newStorage(t, OSFS{})
	c := writeSinkCheckpoint(t, st, 1, 1)
	for name, change := range map[string]func(m *Metadata){
		"outside": func(m *Metadata) { m.Sinks[0].Length = m.SinkData.Size + 1 },
		"both":    func(m *Metadata) { m.Sinks[2].Transaction = []byte("x") },
		"no file": func(m *Metadata) { m.SinkData = nil },
		"name":    func(m *Metadata) { m.SinkData.Name = "../x" },
	} {
		m := c.Meta
		sd := *m.SinkData
		m.SinkData = &sd
		m.Sinks = append([]SinkTransaction(nil), m.Sinks...)
		for i := range m.Sinks {
			m.Sinks[i].Transaction = nil
		}
		change(&m)
		data, err := EncodeMetadata(&m)
		must(t, err)
		if _, err := DecodeMetadata(data); !errors.Is(err, ErrCorruptCheckpoint) {
			t.Errorf("%s: DecodeMetadata = %v, want corrupt", name, err)
		}
	}
}

// TestRetainReadsNoSinkDataAndDecodesOnce: retention reads each kept
// checkpoint's _metadata but never its side file, and decodes a _metadata
// again only when it changed.
func TestRetainReadsNoSinkDataAndDecodesOnce(t *testing.T) {
	ffs := NewFaultFS(OSFS{})
	st, _ := newStorage(t, ffs)
	for id := int64(1); id <= 3; id++ {
		writeSinkCheckpoint(t, st, 7, id)
	}
	before := ffs.Count(OpReadFile) + ffs.Count(OpOpen)
	must(t, st.Retain(3))
	if n := ffs.Count(OpReadFile) + ffs.Count(OpOpen) - before; n != 3 {
		t.Errorf("Retain(3) read %d files, want the 3 _metadata", n)
	}
	p := filepath.Join(st.Dir(), "chk-3")
	first := st.metas[p].meta
	must(t, st.Retain(3))
	if st.metas[p].meta != first || first == nil {
		t.Error("Retain decoded an unchanged _metadata again")
	}
	// A changed _metadata is decoded again.
	m := *first
	m.Query = "changed"
	data, err := EncodeMetadata(&m)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(p, MetadataFile), data, 0o644))
	must(t, st.Retain(3))
	if got := st.metas[p].meta; got == first || got.Query != "changed" {
		t.Errorf("Retain used a stale decoded _metadata: %+v", got)
	}
	// Deleted folders leave the cache.
	must(t, st.Retain(1))
	if len(st.metas) != 1 {
		t.Errorf("cache holds %d entries after Retain(1), want 1", len(st.metas))
	}
}
