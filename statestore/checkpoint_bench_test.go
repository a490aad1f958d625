package statestore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"

	"github.com/weir-sql/weir/internal/cputime"
	"github.com/weir-sql/weir/types"
)

// w2Key is one group of the W2 workload: its key group and BIGINT key.
type w2Key struct {
	kg int
	k  int64
}

// w2Keys returns the keys that subtask 0 of 2 holds of the BIGINT keys 0..999,999
// spread over the default key groups (about 500k), in state-key
// order (key group, then encoded key), as the grouped aggregate writes them.
func w2Keys(tb testing.TB, opPrefix []byte, name string) []w2Key {
	tb.Helper()
	type sortable struct {
		w2Key
		enc []byte // the full state key
	}
	var all []sortable
	for i := range 1_000_000 {
		k := types.AppendKey(nil, types.BigIntValue(int64(i)))
		kg := types.KeyGroup(types.HashKey(k), types.DefaultMaxParallelism)
		if types.SubtaskForKeyGroup(kg, 2, types.DefaultMaxParallelism) == 0 {
			all = append(all, sortable{w2Key{kg: kg, k: int64(i)}, appendStateKey(nil, opPrefix, kg, k, name)})
		}
	}
	slices.SortFunc(all, func(a, b sortable) int { return bytes.Compare(a.enc, b.enc) })
	keys := make([]w2Key, len(all))
	for i := range all {
		keys[i] = all[i].w2Key
	}
	return keys
}

// BenchmarkCheckpointCycle models the state store of one subtask of
// benchmark W2 (SELECT k, SUM(v) FROM t GROUP BY k over 1M uniformly random
// keys, parallelism 2, a checkpoint every second): the store holds ~500k
// keys, and each cycle writes ~400k of them (new values, in state-key
// order) with PutThrough and takes a snapshot. Run it with -benchtime=30x
// or so, so that compactions reach their steady state. Besides ns/op it
// reports the process CPU per cycle including Pebble's background work
// (cpu-ms/cycle) and the wall time of Snapshot (snap-ms/cycle).
func BenchmarkCheckpointCycle(b *testing.B) {
	for _, c := range checkpointCycleCases {
		b.Run(c.name, func(b *testing.B) { benchCheckpointCycle(b, c.minIngest, c.tune) })
	}
}

// checkpointCycleCases are the settings BenchmarkCheckpointCycle and
// BenchmarkRestoreGet compare: the store as configured, and variations.
var checkpointCycleCases = []struct {
	name      string
	minIngest int
	tune      func(*pebble.Options)
}{
	{"default", ingestMinKeys, nil},
	// The write path and format before ingestion: a batch, columnar blocks.
	{"batch+columnar", math.MaxInt, func(o *pebble.Options) { o.FormatMajorVersion = pebble.FormatNewest }},
	{"columnar", ingestMinKeys, func(o *pebble.Options) { o.FormatMajorVersion = pebble.FormatNewest }},
	// The L0 compaction threshold before BenchmarkCheckpointGrowth (4 files deep).
	{"L0=8", ingestMinKeys, func(o *pebble.Options) { o.L0CompactionThreshold = 8 }},
	{"nocompress", ingestMinKeys, func(o *pebble.Options) {
		for i := range o.Levels {
			o.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
		}
	}},
}

// openCycleStore opens a store tuned by tune in a temporary folder, its
// write-through path ingesting runs of minIngest keys or more. closeStore
// closes it (a benchmark closes it itself, so that its CPU figure waits
// for the running compactions); the benchmark's cleanup closes it if that
// did not happen.
func openCycleStore(b *testing.B, minIngest int, tune func(*pebble.Options)) (s *Store, closeStore func() error) {
	b.Helper()
	s, err := openTuned(filepath.Join(b.TempDir(), "work"), Options{}, tune)
	if err != nil {
		b.Fatal(err)
	}
	s.through.minIngest = minIngest
	closed := false
	closeStore = func() error {
		if closed {
			return nil
		}
		closed = true
		return s.Close()
	}
	b.Cleanup(func() { _ = closeStore() })
	return s, closeStore
}

func benchCheckpointCycle(b *testing.B, minIngest int, tune func(*pebble.Options)) {
	s, closeStore := openCycleStore(b, minIngest, tune)
	root := b.TempDir()
	opID := "0123456789abcdef"
	tb := table(b, s, opID, "groups")
	keys := w2Keys(b, appendOperatorPrefix(nil, opID), "groups")
	rng := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 0, 16)
	var key []byte
	cycle := func(i int, frac float64) time.Duration {
		for _, k := range keys {
			if rng.Float64() >= frac {
				continue
			}
			val = append(val[:0], 1)
			val = binary.AppendVarint(val, int64(rng.IntN(100)))
			val = binary.AppendVarint(val, rng.Int64N(1<<30))
			key = types.AppendKey(key[:0], types.BigIntValue(k.k))
			if err := tb.PutThrough(k.kg, key, val); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		if _, err := s.Snapshot(filepath.Join(root, fmt.Sprintf("snap%d", i))); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		// Checkpoints older than the last two are discarded, as the
		// coordinator does.
		if err := os.RemoveAll(filepath.Join(root, fmt.Sprintf("snap%d", i-2))); err != nil {
			b.Fatal(err)
		}
		return d
	}
	cycle(-1, 1) // the initial state: every key
	b.ResetTimer()
	cpu0 := cputime.Process()
	var snap time.Duration
	for i := 0; i < b.N; i++ {
		snap += cycle(i, 0.8)
	}
	b.StopTimer()
	if os.Getenv("STATESTORE_BENCH_METRICS") != "" && b.N > 1 {
		fmt.Fprintf(os.Stderr, "%s: %d cycles\n%s\n", b.Name(), b.N, s.db.Metrics())
	}
	// Close waits for running compactions, whose CPU belongs to the cycles.
	if err := closeStore(); err != nil {
		b.Fatal(err)
	}
	cpu := cputime.Process() - cpu0
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/cycle")
	b.ReportMetric(float64(snap.Microseconds())/1e3/float64(b.N), "snap-ms/cycle")
	b.ReportMetric(float64(len(keys)), "keys")
}

// BenchmarkRestoreGet measures what follows a restore of a W2 subtask: the
// grouped aggregate loads each key's state with Get on first sight, in no
// particular order. The snapshot is taken after 12 checkpoint cycles, so
// the database has the shape (level 0 files over the base level) that the
// checkpoint settings produce. Each iteration restores the snapshot and
// reads every key once; ns/get is the cost of one such read.
func BenchmarkRestoreGet(b *testing.B) {
	for _, c := range checkpointCycleCases {
		b.Run(c.name, func(b *testing.B) { benchRestoreGet(b, c.minIngest, c.tune) })
	}
}

func benchRestoreGet(b *testing.B, minIngest int, tune func(*pebble.Options)) {
	s, _ := openCycleStore(b, minIngest, tune)
	root := b.TempDir()
	opID := "0123456789abcdef"
	tb := table(b, s, opID, "groups")
	keys := w2Keys(b, appendOperatorPrefix(nil, opID), "groups")
	rng := rand.New(rand.NewPCG(1, 2))
	var key, val []byte
	for i := range 13 {
		for _, k := range keys {
			if i > 0 && rng.Float64() >= 0.8 {
				continue
			}
			val = binary.AppendVarint(append(val[:0], 1), rng.Int64N(1<<30))
			key = types.AppendKey(key[:0], types.BigIntValue(k.k))
			if err := tb.PutThrough(k.kg, key, val); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.CommitThrough(); err != nil {
			b.Fatal(err)
		}
	}
	snap := filepath.Join(root, "snap")
	if _, err := s.Snapshot(snap); err != nil {
		b.Fatal(err)
	}
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := openRestored(snap, filepath.Join(root, fmt.Sprintf("restored%d", i)), tune)
		if err != nil {
			b.Fatal(err)
		}
		rt := table(b, r, opID, "groups")
		for _, k := range keys {
			key = types.AppendKey(key[:0], types.BigIntValue(k.k))
			if _, ok, err := rt.Get(k.kg, key); err != nil || !ok {
				b.Fatalf("get %d: %v %v", k.k, ok, err)
			}
		}
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/get")
}

// openRestored is Restore with the Pebble options changed by tune.
func openRestored(snapshotDir, workDir string, tune func(*pebble.Options)) (*Store, error) {
	if err := cloneSnapshot(snapshotDir, workDir); err != nil {
		return nil, err
	}
	return openTuned(workDir, Options{}, tune)
}

// BenchmarkCheckpointGrowth models the store of one q16 subtask: every
// checkpoint adds new keys (DISTINCT entries: 300k a cycle, spread over
// every key group, in state-key order through PutThrough, so an ingested
// sstable) and rewrites a few thousand others out of that order (the
// groups: the write-through batch, flushed by the snapshot), so each
// checkpoint adds two overlapping level-0 files over a base level that
// grows by the new keys. Compactions then rewrite the whole base level;
// cpu-ms/cycle (process CPU, Pebble's background work included) shows how
// often. Run it with -benchtime=24x.
func BenchmarkCheckpointGrowth(b *testing.B) {
	for _, c := range checkpointCycleCases {
		b.Run(c.name, func(b *testing.B) { benchCheckpointGrowth(b, c.minIngest, c.tune) })
	}
}

func benchCheckpointGrowth(b *testing.B, minIngest int, tune func(*pebble.Options)) {
	const perCycle, groups = 300_000, 4_000
	s, closeStore := openCycleStore(b, minIngest, tune)
	root := b.TempDir()
	opID := "0123456789abcdef"
	entries := table(b, s, opID, "distinct")
	grp := table(b, s, opID, "groups")
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]w2Key, perCycle)
	var key, val []byte
	cycle := func(i int) {
		// Keys i, i+N, i+2N, ... (N the most cycles): new each cycle, spread
		// over the whole key range as a new bidder's entries are.
		for j := range keys {
			k := int64(j)*1024 + int64(i+1)
			kb := types.AppendKey(key[:0], types.BigIntValue(k))
			keys[j] = w2Key{kg: types.KeyGroup(types.HashKey(kb), types.DefaultMaxParallelism), k: k}
		}
		slices.SortFunc(keys, func(a, b w2Key) int {
			if a.kg != b.kg {
				return a.kg - b.kg
			}
			return int(a.k - b.k)
		})
		for _, k := range keys {
			key = types.AppendKey(key[:0], types.BigIntValue(k.k))
			val = append(val[:0], 1, 1, 1)
			if err := entries.PutThrough(k.kg, key, val); err != nil {
				b.Fatal(err)
			}
		}
		for g := range groups {
			key = types.AppendKey(key[:0], types.BigIntValue(int64(g)))
			val = binary.AppendVarint(append(val[:0], 1), rng.Int64N(1<<30))
			if err := grp.PutThrough(g%types.DefaultMaxParallelism, key, val); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := s.Snapshot(filepath.Join(root, fmt.Sprintf("snap%d", i))); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(root, fmt.Sprintf("snap%d", i-2))); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		cycle(i)
	}
	b.StopTimer()
	m := s.db.Metrics()
	if os.Getenv("STATESTORE_BENCH_METRICS") != "" {
		fmt.Fprintf(os.Stderr, "%s: %d cycles\n%s\n", b.Name(), b.N, m)
	}
	if err := closeStore(); err != nil {
		b.Fatal(err)
	}
	cpu := cputime.Process() - cpu0
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/cycle")
	b.ReportMetric(float64(m.Compact.Count)/float64(b.N), "compactions/cycle")
}

// BenchmarkCheckpointGrowthRuns is BenchmarkCheckpointGrowth through a
// Space, as state.Records writes: "two runs" writes the new entries and
// then the groups (two Snapshots: the groups go to the batch, whose flush
// is a second level-0 file a checkpoint), "one run" writes each key
// group's groups and then its entries in one ascending run
// (Records.SnapshotWith). Run it with -benchtime=24x.
func BenchmarkCheckpointGrowthRuns(b *testing.B) {
	for _, joined := range []bool{false, true} {
		name := "two runs"
		if joined {
			name = "one run"
		}
		b.Run(name, func(b *testing.B) { benchCheckpointGrowthRuns(b, joined) })
	}
}

func benchCheckpointGrowthRuns(b *testing.B, joined bool) {
	const perCycle, groups = 300_000, 4_000
	maxPar := types.DefaultMaxParallelism
	s, closeStore := openCycleStore(b, ingestMinKeys, nil)
	root := b.TempDir()
	sp, err := s.Space("0123456789abcdef")
	if err != nil {
		b.Fatal(err)
	}
	// Records' prefixes: the name's length, then the name; the keys
	// big-endian, so that each run ascends (types.AppendKey does not
	// order as the numbers do).
	gpre, epre := append([]byte{6}, "groups"...), append([]byte{8}, "distinct"...)
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]w2Key, perCycle)
	var key, val []byte
	putGroups := func(kg int) {
		for g := kg; g < groups; g += maxPar {
			key = binary.BigEndian.AppendUint64(append(key[:0], gpre...), uint64(g))
			val = binary.AppendVarint(append(val[:0], 1), rng.Int64N(1<<30))
			if err := sp.PutThroughUnfiltered(kg, key, val); err != nil {
				b.Fatal(err)
			}
		}
	}
	cycle := func(i int) {
		for j := range keys {
			k := int64(j)*1024 + int64(i+1)
			kb := types.AppendKey(key[:0], types.BigIntValue(k))
			keys[j] = w2Key{kg: types.KeyGroup(types.HashKey(kb), maxPar), k: k}
		}
		slices.SortFunc(keys, func(a, b w2Key) int {
			if a.kg != b.kg {
				return a.kg - b.kg
			}
			return int(a.k - b.k)
		})
		kg := -1
		for _, k := range keys {
			for joined && kg < k.kg {
				kg++
				putGroups(kg)
			}
			key = binary.BigEndian.AppendUint64(append(key[:0], epre...), uint64(k.k))
			val = append(val[:0], 1, 1, 1)
			if err := sp.PutThroughUnfiltered(k.kg, key, val); err != nil {
				b.Fatal(err)
			}
		}
		if !joined {
			kg = -1
		}
		for kg+1 < maxPar {
			kg++
			putGroups(kg)
		}
		if _, err := s.Snapshot(filepath.Join(root, fmt.Sprintf("snap%d", i))); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(root, fmt.Sprintf("snap%d", i-2))); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		cycle(i)
	}
	b.StopTimer()
	m := s.db.Metrics()
	if err := closeStore(); err != nil {
		b.Fatal(err)
	}
	cpu := cputime.Process() - cpu0
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/cycle")
	b.ReportMetric(float64(m.Compact.Count)/float64(b.N), "compactions/cycle")
	b.ReportMetric(float64(m.Levels[0].Sublevels), "L0-depth")
}
