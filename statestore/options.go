package statestore

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/weir-sql/weir/types"
)

// DefaultCacheBytes is the default write-back cache budget.
const DefaultCacheBytes = 64 << 20

// DefaultBlockCacheBytes is the default size of Pebble's block cache, per
// store. Keyed state that outgrows the write-back cache looks keys up in
// Pebble, mostly keys it never wrote (a deduplication's or an aggregate's
// new keys, a join's new rows); each lookup reads the bloom filter and
// index blocks of the files it may be in, and at 10M Nexmark events those
// blocks of one subtask's store outgrow 8 MiB, so that every lookup read
// them from the files again (q18's deduplication spent 65% of its time
// there; with 64 MiB it ran 1.8x faster per core at 4M events, at the same
// peak RSS). The cache fills only with blocks read.
const DefaultBlockCacheBytes = 64 << 20

// Options configure a Store. The zero value is usable: zero fields take
// their defaults.
type Options struct {
	// CacheBytes bounds the memory of the write-back cache (keys, values and
	// per-entry overhead). Default DefaultCacheBytes.
	CacheBytes int64
	// MaxParallelism is the number of key groups; key groups must lie in
	// [0, MaxParallelism). Default types.DefaultMaxParallelism; at most 65536.
	MaxParallelism int
	// BlockCacheBytes is Pebble's block cache size. Default
	// DefaultBlockCacheBytes.
	BlockCacheBytes int64
	// MemTableBytes is Pebble's memtable size. Default 16 MiB.
	MemTableBytes uint64
}

func (o Options) withDefaults() Options {
	if o.CacheBytes <= 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.MaxParallelism <= 0 {
		o.MaxParallelism = types.DefaultMaxParallelism
	}
	if o.BlockCacheBytes <= 0 {
		o.BlockCacheBytes = DefaultBlockCacheBytes
	}
	if o.MemTableBytes == 0 {
		o.MemTableBytes = 16 << 20
	}
	return o
}

// maxManifestBytes is the size past which a store's Pebble starts a new
// MANIFEST (see pebbleOptions).
const maxManifestBytes = 8 << 10

// pebbleOptions returns the Pebble options used for every state database,
// with log as its logger and event listener.
func (o Options) pebbleOptions(log *storeLogger) *pebble.Options {
	po := &pebble.Options{
		// The write-ahead log is disabled. A state database is a scratch
		// working copy: after a crash it is thrown away and the subtask is
		// restored from the latest complete checkpoint, so durability of
		// individual writes buys nothing and a WAL (even with NoSync) would
		// write every byte twice. Snapshot flushes the memtable before taking
		// Pebble's checkpoint, so a snapshot consists of sstables only.
		DisableWAL:   true,
		CacheSize:    o.BlockCacheBytes,
		MemTableSize: o.MemTableBytes,
		// The newest format major version with row-oriented sstable blocks
		// (table format Pebblev4). The columnar blocks of later versions
		// cost more CPU to write, and state databases write far more than
		// they read: with W2's checkpoints (400k of 500k keys rewritten every
		// second) this format cuts the CPU of ingestions and compactions by
		// about 10-15%, with no measurable cost to the reads after a restore
		// (BenchmarkCheckpointCycle, BenchmarkRestoreGet). Databases restored
		// from snapshots written in a newer format keep that format.
		FormatMajorVersion: pebble.FormatFlushableIngestExcises,
		// Pebble's default logger prints informational messages to stderr;
		// state stores are many and that chatter is not useful to a user.
		// Fatal errors and corruption become errors of the store, never a
		// crash (see storeLogger).
		Logger:        log,
		EventListener: log.eventListener(),
		// Every checkpoint adds its changed state to L0: an ingested
		// sstable, and the memtable flush of the write-through batch (keys
		// out of order, short runs), two overlapping files when both are
		// written. In a small database the base level is L6, so every L0
		// compaction rewrites the whole state. Pebble v2 compacts L0 once
		// 2*sublevels/L0CompactionThreshold reaches 1: at 16, when L0 is 8
		// files deep (at 8 it was 4, every second checkpoint of a
		// GROUP BY with DISTINCT, whose state grows by millions of new keys
		// a checkpoint and whose compactions took 40% of its CPU). The cost
		// is read amplification for keys loaded back (up to 8 L0 files;
		// Records' own key filter and the flushed files' Bloom filters
		// skip most).
		L0CompactionThreshold: 16,
		L0StopWritesThreshold: 64,
		// Every checkpoint adds a few version edits to the MANIFEST, and
		// Pebble's Checkpoint copies the whole MANIFEST record by record
		// with a 32 KiB buffer each (Go's io.Copy): at the default 128 MiB
		// before a new MANIFEST starts, the copy grew with the job's age
		// (W10 after 5 minutes: 300 records, 10 MB of garbage a subtask at
		// every checkpoint, a third of all its allocation) and with it the
		// Go heap's peaks. A new MANIFEST starts once this one passes
		// maxManifestBytes and holds more edits than the version has files
		// (Pebble's rule), so it stays a few dozen records long.
		MaxManifestFileSize: maxManifestBytes,
	}
	// Bloom filters in every level: keyed state that outgrows the cache
	// looks up keys that were never written (a join's new rows), which
	// without filters costs a read of every L0 file and a block per level.
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	return po
}
