package statestore

import (
	"errors"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2"
)

// ErrClosed is returned by operations on a closed Store.
var ErrClosed = errors.New("statestore: store is closed")

// Store is the keyed state of one stateful subtask: a Pebble database in a
// working folder with a bounded write-back cache in front of it. See the
// package documentation for the key layout and concurrency rules.
type Store struct {
	dir   string
	opts  Options
	db    *pebble.DB
	cache *writeCache

	keyBuf   []byte  // reused for encoding keys on the hot path
	dirtyBuf []int32 // reused by flush
	batch    *pebble.Batch
	through  *throughWriter // PutThrough writes not yet committed
	closed   bool
	failed   error // a write that failed: the store no longer holds what its user wrote

	// hooks run at the start of every Snapshot (OnSnapshot).
	hooks []func() error

	log  *storeLogger       // Pebble's logger: records its fatal errors
	sums map[fileKey]uint32 // checksums of the sstables of the last snapshot
	// sumReads counts the files Snapshot read to checksum them (for tests).
	sumReads int
}

// check returns why the store cannot be used: it is closed, or a write
// failed. After a failed write the store's content is not what its user
// wrote (the writes of a failed ingestion are gone), so every later call
// fails too: the subtask must fail and restore from a checkpoint.
func (s *Store) check() error {
	if s.closed {
		return ErrClosed
	}
	if s.failed == nil {
		if err := s.log.err(); err != nil {
			s.failed = err
		}
	}
	return s.failed
}

// guard runs fn as a guarded call (see storeLogger): a fatal error of
// Pebble during it, or one recorded before, fails the store and is
// returned.
func (s *Store) guard(fn func() error) error {
	err := guard(fn)
	if ferr := s.log.err(); ferr != nil {
		if s.failed == nil {
			s.failed = ferr
		}
		if err == nil {
			err = ferr
		}
	}
	return err
}

// fail records err, a failed write, and returns it.
func (s *Store) fail(err error) error {
	if s.failed == nil {
		s.failed = fmt.Errorf("statestore: unusable after a failed write: %w", err)
	}
	return err
}

// Open opens or creates the state database in the working folder dir.
func Open(dir string, opts Options) (*Store, error) {
	return openTuned(dir, opts, nil)
}

// openTuned is Open with a hook that may change the Pebble options (for
// benchmarks that compare settings).
func openTuned(dir string, opts Options, tune func(*pebble.Options)) (*Store, error) {
	opts = opts.withDefaults()
	if opts.MaxParallelism > 1<<16 {
		return nil, fmt.Errorf("statestore: max parallelism %d exceeds 65536", opts.MaxParallelism)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("statestore: create %s: %w", dir, err)
	}
	log := newStoreLogger(dir)
	popts := opts.pebbleOptions(log)
	if tune != nil {
		tune(popts)
	}
	popts.EnsureDefaults()
	var db *pebble.DB
	err := guard(func() error {
		var err error
		db, err = pebble.Open(dir, popts)
		return err
	})
	if err == nil {
		err = log.err()
	}
	if err != nil {
		if db != nil && !log.fatalCalled.Load() {
			_ = db.Close()
		}
		return nil, fmt.Errorf("statestore: open pebble in %s: %w", dir, err)
	}
	return &Store{
		dir:     dir,
		opts:    opts,
		log:     log,
		db:      db,
		cache:   newWriteCache(opts.CacheBytes),
		batch:   db.NewBatch(),
		through: newThroughWriter(db, popts, dir),
	}, nil
}

// Dir returns the store's working folder.
func (s *Store) Dir() string { return s.dir }

// Table returns the handle for one state of one operator. It is cheap and
// may be kept for the store's lifetime. It fails if operatorID or stateName
// is longer than 255 bytes.
func (s *Store) Table(operatorID, stateName string) (*Table, error) {
	if len(operatorID) > maxNameLen {
		return nil, fmt.Errorf("statestore: operator id %q longer than %d bytes", operatorID, maxNameLen)
	}
	if len(stateName) > maxNameLen {
		return nil, fmt.Errorf("statestore: state name %q longer than %d bytes", stateName, maxNameLen)
	}
	return &Table{s: s, opPrefix: appendOperatorPrefix(nil, operatorID), name: stateName}, nil
}

// OnSnapshot registers fn to run at the start of every Snapshot, before the
// cache is flushed: for a user of the store that keeps state in memory and
// writes what changed into the store there (as package state's Keyed does).
// An error of fn fails the Snapshot.
func (s *Store) OnSnapshot(fn func() error) { s.hooks = append(s.hooks, fn) }

// Flush writes every dirty cache entry to Pebble (in key order, as one
// batch). The cache keeps its entries, now clean.
func (s *Store) Flush() error {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.CommitThrough(); err != nil {
		return err
	}
	if s.cache.dirty == 0 {
		s.cache.pruneListed() // only freed slots are listed
		return nil
	}
	s.dirtyBuf = s.cache.dirtyEntries(s.dirtyBuf)
	b := s.batch
	b.Reset()
	for _, i := range s.dirtyBuf {
		e := &s.cache.entries[i]
		key := stringBytes(e.key)
		var err error
		if e.flags&flagAbsent != 0 {
			err = b.Delete(key, nil)
		} else {
			err = b.Set(key, e.value, nil)
		}
		if err != nil {
			return s.fail(fmt.Errorf("statestore: flush: %w", err))
		}
	}
	if err := s.guard(func() error { return b.Commit(pebble.NoSync) }); err != nil {
		return s.fail(fmt.Errorf("statestore: flush %d entries: %w", len(s.dirtyBuf), err))
	}
	b.Reset()
	s.cache.markClean(s.dirtyBuf)
	return nil
}

// makeRoom ensures n more bytes fit in the cache budget: it evicts clean
// entries and, if that is not enough, flushes dirty ones and evicts again,
// down to three quarters of the budget so that flushes are batched.
func (s *Store) makeRoom(n int64) error {
	c := s.cache
	if !c.wouldOverflow(n) {
		return nil
	}
	target := c.budget * 3 / 4
	c.evict(target)
	if c.bytes <= target {
		return nil
	}
	if err := s.Flush(); err != nil {
		return err
	}
	c.evict(target)
	return nil
}

// CommitThrough commits the writes of PutThrough to Pebble (without sync:
// durability comes from snapshots). Flush and Snapshot commit them too.
func (s *Store) CommitThrough() error {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.guard(s.through.commit); err != nil {
		return s.fail(err)
	}
	return nil
}

// ReplaceOperator declares that the PutThrough writes that follow, up to
// the next CommitThrough (or Flush, Snapshot, or a Get that must read
// Pebble), are the complete state of operator operatorID: when they are
// committed, every other key of the operator, in all its tables, is
// deleted. Writes the operator has in the write-back cache are dropped now.
// Writes in ascending key order are cheapest: they replace the operator's
// state without a compaction.
func (s *Store) ReplaceOperator(operatorID string) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.replacePrefix(appendOperatorPrefix(nil, operatorID))
}

// replacePrefix is ReplaceOperator for the operator whose keys start with
// prefix start.
func (s *Store) replacePrefix(start []byte) error {
	end := prefixSuccessor(start)
	if end == nil {
		return fmt.Errorf("statestore: operator prefix %x has no key range to replace", start)
	}
	if err := s.CommitThrough(); err != nil {
		return err
	}
	s.cache.dropPrefix(start)
	if err := s.through.beginReplace(start, end); err != nil {
		return s.fail(err)
	}
	return nil
}

// putThrough writes an encoded key straight to the write-through writer
// (see throughWriter) unless the cache holds the key (then the cache takes
// the write, so that it never holds a stale value).
func (s *Store) putThrough(key, value []byte, filter bool) error {
	if s.cache.lookup(key) != nil {
		return s.put(key, value, false)
	}
	if err := s.through.set(key, value, filter); err != nil {
		return s.fail(err)
	}
	return nil
}

// get returns the value of an encoded key through the cache, loading it
// from Pebble on a miss.
func (s *Store) get(key []byte) ([]byte, bool, error) {
	if e := s.cache.lookup(key); e != nil {
		return e.value, e.flags&flagAbsent == 0, nil
	}
	if !s.through.empty() {
		// Reads must see what was written through.
		if err := s.CommitThrough(); err != nil {
			return nil, false, err
		}
	}
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		if err := s.makeRoom(int64(len(key)) + entryOverhead); err != nil {
			return nil, false, err
		}
		s.cache.insert(key, nil, flagAbsent)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("statestore: get: %w", err)
	}
	defer closer.Close()
	if err := s.makeRoom(int64(len(key)+len(v)) + entryOverhead); err != nil {
		return nil, false, err
	}
	e := s.cache.insert(key, v, 0)
	return e.value, true, nil
}

// put sets (or, with absent, deletes) an encoded key in the cache.
func (s *Store) put(key, value []byte, absent bool) error {
	return s.write(key, value, absent, false)
}

// write is put; with forget, the flush that writes the key to Pebble also
// drops it from the cache (as an eviction would).
func (s *Store) write(key, value []byte, absent, forget bool) error {
	if e := s.cache.lookup(key); e != nil {
		if grow := int64(len(value) - cap(e.value)); grow > 0 && s.cache.wouldOverflow(grow) {
			// Make room first. Eviction may remove e itself (once
			// flushed, it is clean), so look it up again.
			if err := s.makeRoom(grow); err != nil {
				return err
			}
			e = s.cache.lookup(key)
			if e == nil {
				return s.insertNew(key, value, absent, forget)
			}
		}
		s.cache.set(e, value, absent, forget)
		return nil
	}
	return s.insertNew(key, value, absent, forget)
}

func (s *Store) insertNew(key, value []byte, absent, forget bool) error {
	if err := s.makeRoom(int64(len(key)+len(value)) + entryOverhead); err != nil {
		return err
	}
	flags := flagDirty
	if forget {
		flags |= flagForget
	}
	if absent {
		flags |= flagAbsent
		value = nil
	}
	s.cache.insert(key, value, flags)
	return nil
}

// Close flushes nothing (the working folder is scratch space: state that
// matters is in snapshots) and releases the database.
func (s *Store) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := errors.Join(s.batch.Close(), s.through.close())
	if s.log.fatalCalled.Load() {
		// Pebble broke off where it did not expect to return and may hold
		// its locks: abandon the database rather than hang closing it, and
		// say why the store is unusable.
		return fmt.Errorf("statestore: %s abandoned: %w", s.dir, s.log.err())
	}
	if cerr := guard(s.db.Close); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("statestore: close %s: %w", s.dir, err)
	}
	return nil
}

// Level0Sublevels returns the depth of the store's level 0 (Pebble's
// sublevels): how many files a read may have to look in before the lower
// levels. Each checkpoint's ingested sstable, and each memtable flush,
// that overlaps the files before it adds one; a compaction clears them.
func (s *Store) Level0Sublevels() int { return int(s.db.Metrics().Levels[0].Sublevels) }
