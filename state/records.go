package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/weir-sql/weir/internal/minheap"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// Records is an operator-owned, typed in-memory cache of one record per
// key, written back to the operator's statestore at checkpoints: the
// machinery of GroupAggregate's state, for any operator that keeps a
// record per key in its own typed structures (group tables, accumulators
// in slices) and wants the hot path never to call the store.
//
// The operator numbers its in-memory records (slots) and tells Records
// when one is added, changed or removed; Records keeps, per slot, its key
// group and whether it changed since the last snapshot. At a checkpoint
// (Snapshot) it asks the operator to encode the changed records, sorts
// them by state key (key group, then key) a few key groups at a time and
// streams them into the store as ascending write-through runs (sorted
// sstable ingestion); when every record is in memory and at least half of
// them changed, the run replaces the operator's state whole
// (Space.ReplaceAll: ingest and excise, no compaction). When the records
// outgrow the budget (OverBudget), Spill writes them all back and drops
// them from memory, and from then on a key not in memory is looked up in
// the store (Load). A restored Records reads its key groups' records into
// memory with one scan while they fit in the budget.
//
// The records live at op | key group | len(name) | name | key in the
// store, with key in the order-preserving encoding (AppendValue of each
// key column) and its key group KeyGroup of that encoding: the layout of a
// ValueState of the same name, through which they can be read too. So
// restore at another parallelism (statestore.RestoreKeyGroups) and key
// layout migration (MigrateLayout1) apply to them unchanged.
//
// Without a store (NewRecords alone, a job without checkpoints) every call
// is cheap and does nothing: records stay in memory, unbounded. Like the
// store, Records belongs to one goroutine.
//
// With a TTL (RecordOptions.TTL) a record not written for the TTL expires,
// in memory and in the store: see SetTime and Expire.
type Records struct {
	opts   RecordOptions
	src    RecordSource
	prefix []byte // len(name) | name
	first  int    // the key groups owned, inclusive
	last   int

	sp     *statestore.Space // nil in memory
	backed bool              // records not in memory may be in the store

	// A PartedSource's records: the second name's prefix, under which parts
	// 1.. live, and per slot how many parts the store holds.
	parted  PartedSource
	pprefix []byte
	stored  []int32
	// storedTotal is the sum of stored over the slots.
	storedTotal int64
	pbuf        []int32 // a slot's changed parts
	pend2       []pendingParts
	pk          []byte // a part's key for a deletion
	plo         []byte // the bounds of a record's parts for a scan
	phi         []byte
	all         bool // the snapshot being written replaces the state whole

	kgs     []uint16 // per slot: its key group
	live    []uint64 // per slot: a bit set while it holds a record
	changed []uint64 // per slot: a bit set while it changed since the last snapshot
	nLive   int
	nChange int
	extra   int64 // memory the operator holds beyond RecordBytes a record (SetExtraBytes)

	// Snapshot buffers, kept between snapshots and counted in the budget;
	// trimBuffers releases those that one snapshot used less than half of.
	starts  []int32  // per key group: how many records precede it (chunks)
	kgChunk []uint16 // per key group: its chunk
	bounds  []int32  // per chunk: its first key group; then maxParallelism
	pos     []int32  // per chunk: where its next slot goes in slots
	slots   []int32  // the slots to write, chunk by chunk, in slot order within each
	chunk   int      // chunkEntries (tests make it small)
	ents    []recEnt // one chunk of entries
	spare   []recEnt // the radix sort's second buffer
	kbuf    []byte   // the chunk's encoded keys
	vbuf    []byte   // the chunk's encoded records
	gbuf    []byte   // the chunk's keys and records in sorted order (gather)
	key     []byte   // prefix | key for a store call
	hb      []byte   // keys encoded for hashing
	// The most of each snapshot buffer one chunk of this snapshot used.
	usedK, usedV, usedG, usedE int

	// The state TTL (RecordOptions.TTL), in memory and with a store.
	ttl       int64    // ms; 0: records never expire
	now       int64    // the processing time (ms) of SetTime
	clockSet  bool     // SetTime was called
	wt        []int64  // per slot: its record's last write time; -1: no record
	queued    []uint64 // per slot: a bit set while it has an entry in expq
	expq      []ttlEnt // min-heap of (write time, slot), at most one per slot
	unstamped []int32  // slots written or loaded without a time before SetTime
	pend      []uint64 // per slot: a bit set while it is in unstamped
	dead      [][]byte // expired stored records found by a restore scan, to delete
}

// ttlEnt is an entry of the expiry heap: slot's record was last written at
// at or later (a later write leaves the entry; Expire finds it and pushes
// it again at the new time).
type ttlEnt struct {
	at   int64
	slot int32
}

// Less orders the expiry heap (minheap.Ordered).
func (e ttlEnt) Less(o ttlEnt) bool { return e.at < o.at }

// recTimeMark leads a stored record that carries its last write time (8
// bytes big-endian, then the operator's record): Records writes it so when
// it has a TTL. A RecordSource's records must not start with this byte.
const recTimeMark = 0xFF

// RecordOptions configure Records.
type RecordOptions struct {
	// Name is the state's name (1 to 200 bytes, not starting with _).
	Name string
	// OperatorID prefixes the operator's keys in its store.
	OperatorID string
	// MaxParallelism is the number of key groups (default
	// types.DefaultMaxParallelism); Subtask and Parallelism give the key
	// groups this subtask owns.
	MaxParallelism, Subtask, Parallelism int
	// Budget bounds the memory of the records in memory (RecordBytes
	// each) together with Records' own per-record bookkeeping and
	// snapshot buffers (state.cache.size). Whatever the budget,
	// MinRecords records may stay in memory.
	Budget int64
	// RecordBytes estimates the memory one in-memory record costs the
	// operator.
	RecordBytes int64
	// Exclusive says that these records are the operator's only state, so
	// a snapshot may replace the operator's whole key range with them.
	Exclusive bool
	// TTL, if positive, expires a record not written (AddedKey, AddedInt,
	// Changed) for this long in processing time (SetTime), as Flink's
	// state TTL: Expire hands the operator its expired in-memory records
	// to drop, and a stored record past its TTL is never loaded. Each
	// record's last write time is kept in memory and stored with it, so a
	// restore keeps it.
	TTL time.Duration
}

// MinRecords is how many records Records keeps in memory whatever the
// budget.
const MinRecords = 1024

// RecordSource is what the operator supplies to Records: its records'
// encoding. Slots are the operator's numbers for its in-memory records.
type RecordSource interface {
	// AppendRecordKey appends the key of the record in slot, in the
	// order-preserving encoding (AppendValue of each key column).
	AppendRecordKey(dst []byte, slot int32) []byte
	// AppendRecord appends the encoded record in slot. Its first byte
	// must not be 0xFF (with a TTL, Records marks records with their write
	// time so).
	AppendRecord(dst []byte, slot int32) []byte
	// LoadRecord makes an in-memory record from a stored one (key as
	// AppendRecordKey wrote it, rec as AppendRecord did) and returns its
	// slot. The slices are valid only during the call.
	LoadRecord(key, rec []byte) (int32, error)
	// DropRecords forgets every in-memory record: they were written to
	// the store (Spill).
	DropRecords()
}

// PartedSource is a RecordSource whose records may be long (a join key's
// rows): each is stored in parts, so that a snapshot rewrites only the
// parts that changed. Part 0 is AppendRecord's, under the record's key as
// for any record, and tells how many parts follow (PendingParts); part p >=
// 1 lives under the key followed by p (4 bytes big-endian) in a second
// name, Name+PartSuffix, in the same key group. Records writes part 0 of
// every changed record (it carries the write time with a TTL), the changed
// parts after it, and deletes the parts a shrunk record no longer has.
type PartedSource interface {
	RecordSource
	// ChangedParts returns the number of parts slot's record has (at
	// least 1) and appends to dst its parts >= 1 that changed since the
	// last call, ascending, or all of them when all; it forgets the marks.
	ChangedParts(dst []int32, slot int32, all bool) (int32, []int32)
	// AppendRecordPart appends part p >= 1 of slot's record.
	AppendRecordPart(dst []byte, slot int32, p int32) []byte
	// PendingParts returns how many parts after part 0 the record that
	// LoadRecord made in slot has (its part 0 says).
	PendingParts(slot int32) int32
	// LoadRecordPart adds part p of slot's record; Records calls it for
	// p = 1, 2, … PendingParts after LoadRecord. rec is valid only
	// during the call.
	LoadRecordPart(slot int32, p int32, rec []byte) error
}

// PartSuffix ends the name under which a PartedSource's parts >= 1 live.
const PartSuffix = "+p"

// pendingParts is a record loaded by a restore scan whose parts >= 1 are
// still to load.
type pendingParts struct {
	slot int32
	kg   int
	key  []byte
}

// recEnt is a changed record on its way to the store, in a chunk: where
// its key and record are in kbuf and vbuf, and what orders it. For keys of
// one fixed length up to 9 bytes, hi and num hold the key (its first byte
// and the rest big-endian, or, for keys up to 8 bytes, num alone), so a
// radix sort orders the chunk without comparisons.
type recEnt struct {
	num        uint64
	koff, klen uint32
	voff, vlen uint32
	kg         uint16
	hi         uint8
}

// errStopLoad stops the restore scan when the budget is full.
var errStopLoad = errors.New("state budget full")

// NewRecords returns Records in memory, for an operator whose records
// src encodes; Attach gives it a store.
func NewRecords(opts RecordOptions, src RecordSource) (*Records, error) {
	if opts.MaxParallelism <= 0 {
		opts.MaxParallelism = types.DefaultMaxParallelism
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = 1
	}
	switch {
	case opts.Name == "" || len(opts.Name) > 200 || opts.Name[0] == '_':
		return nil, fmt.Errorf("state: record state name %q must have 1 to 200 bytes and not start with _", opts.Name)
	case opts.Parallelism > opts.MaxParallelism || opts.Subtask < 0 || opts.Subtask >= opts.Parallelism:
		return nil, fmt.Errorf("state: subtask %d of %d with max parallelism %d", opts.Subtask, opts.Parallelism, opts.MaxParallelism)
	}
	opts.RecordBytes = max(opts.RecordBytes, 1)
	if opts.TTL < 0 {
		return nil, fmt.Errorf("state: negative TTL %v", opts.TTL)
	}
	r := &Records{opts: opts, src: src, prefix: namePrefix(opts.Name), chunk: chunkEntries}
	if ps, ok := src.(PartedSource); ok {
		r.parted, r.pprefix = ps, namePrefix(opts.Name+PartSuffix)
	}
	if opts.TTL > 0 {
		r.ttl = max(opts.TTL.Milliseconds(), 1)
	}
	r.first, r.last = KeyGroupRange(opts.Subtask, opts.Parallelism, opts.MaxParallelism)
	return r, nil
}

// Attach gives Records the operator's store, before any record is added.
// After a restore (restored), the store holds the operator's records for
// this subtask's key groups: they are loaded into memory with one scan as
// long as they fit in the budget, and the rest are looked up as their keys
// come (Load).
func (r *Records) Attach(store *statestore.Store, restored bool) error {
	sp, err := store.Space(r.opts.OperatorID)
	if err != nil {
		return err
	}
	if sp.MaxParallelism() != r.opts.MaxParallelism {
		return fmt.Errorf("state: max parallelism %d differs from the store's %d", r.opts.MaxParallelism, sp.MaxParallelism())
	}
	if r.nLive > 0 {
		return errors.New("state: records attached to a store after records were added")
	}
	r.sp, r.backed = sp, restored
	if restored {
		return r.loadAll()
	}
	return nil
}

// loadAll loads the restored records into memory, key group by key group,
// while they fit. One sequential scan costs a small fraction of a lookup
// per key, and with every record in memory Records is no longer backed:
// no lookups for new keys, and snapshots may replace the state whole.
func (r *Records) loadAll() error {
	end := prefixEnd(nil, r.prefix)
	limit := r.limit()
	for kg := r.first; kg <= r.last; kg++ {
		r.dead = r.dead[:0]
		err := r.sp.Scan(kg, r.prefix, end, false, func(k, v []byte) (bool, error) {
			if r.nLive >= limit {
				return false, errStopLoad
			}
			at, rec, timed := splitRecTime(v)
			if r.expiredAt(at, timed) {
				r.dead = append(r.dead, append([]byte(nil), k...))
				return true, nil
			}
			slot, err := r.src.LoadRecord(k[len(r.prefix):], rec)
			if err != nil {
				return false, fmt.Errorf("record %x: %w", k, err)
			}
			r.setKG(slot, kg)
			r.loaded(slot, at, timed)
			if r.parted != nil && r.parted.PendingParts(slot) > 0 {
				// Scanned once the key group's scan is done: fn may
				// not call the store.
				r.pend2 = append(r.pend2, pendingParts{slot: slot, kg: kg, key: append([]byte(nil), k[len(r.prefix):]...)})
			} else if r.parted != nil {
				r.setStored(slot, 1)
			}
			return true, nil
		})
		for _, pp := range r.pend2 {
			if perr := r.loadParts(pp.slot, pp.kg, pp.key); perr != nil && (err == nil || errors.Is(err, errStopLoad)) {
				err = perr
			}
		}
		r.pend2 = r.pend2[:0]
		for _, k := range r.dead {
			if derr := r.sp.Delete(kg, k); derr != nil && err == nil {
				err = derr
			}
			if r.parted != nil {
				if derr := r.deleteAllParts(kg, k[len(r.prefix):]); derr != nil && err == nil {
					err = derr
				}
			}
		}
		r.dead = r.dead[:0]
		switch {
		case errors.Is(err, errStopLoad):
			return nil // still backed
		case err != nil:
			return fmt.Errorf("state %s: load: %w", r.opts.Name, err)
		}
	}
	r.backed = false
	return nil
}

// Persisted reports whether Records has a store.
func (r *Records) Persisted() bool { return r.sp != nil }

// Backed reports whether records not in memory may be in the store (after
// a spill, or a restore that did not fit): a key not in memory must then be
// looked up with Load.
func (r *Records) Backed() bool { return r.backed }

// Len returns the number of records in memory.
func (r *Records) Len() int { return r.nLive }

// KeyGroups returns the key groups [first, last] this subtask owns.
func (r *Records) KeyGroups() (first, last int) { return r.first, r.last }

// AddedKey tells Records that slot now holds a new record of key (encoded
// as AppendRecordKey does). A new record is not changed until Changed.
func (r *Records) AddedKey(slot int32, key []byte) {
	if r.ttl > 0 {
		r.written(slot)
	}
	if r.sp == nil {
		return
	}
	r.setKG(slot, KeyGroup(key, r.opts.MaxParallelism))
}

// AddedInt is AddedKey for a single-column key of an integer kind (INT,
// BIGINT, TIMESTAMP, INTERVAL or BOOLEAN) holding n, without encoding it.
func (r *Records) AddedInt(slot int32, kind types.Kind, n int64) {
	if r.ttl > 0 {
		r.written(slot)
	}
	if r.sp == nil {
		return
	}
	h, ok := HashIntKey(kind, n)
	if !ok {
		r.hb = AppendValue(r.hb[:0], types.BigIntValue(n).WithKind(kind))
		h = HashKey(r.hb)
	}
	r.setKG(slot, KeyGroupOfHash(h, r.opts.MaxParallelism))
}

func (r *Records) setKG(slot int32, kg int) {
	for int(slot) >= len(r.kgs) {
		r.kgs = append(r.kgs, 0)
	}
	if r.parted != nil {
		for int(slot) >= len(r.stored) {
			r.stored = append(r.stored, 0)
		}
		r.setStored(slot, 0)
	}
	if w := int(slot>>6) + 1; w > len(r.live) {
		r.live = append(r.live, make([]uint64, w-len(r.live))...)
		r.changed = append(r.changed, make([]uint64, w-len(r.changed))...)
	}
	r.kgs[slot] = uint16(kg)
	if bit := uint64(1) << (slot & 63); r.live[slot>>6]&bit == 0 {
		r.live[slot>>6] |= bit
		r.nLive++
	}
}

// Changed records that slot's record changed since the last snapshot.
func (r *Records) Changed(slot int32) {
	if r.ttl > 0 {
		r.written(slot)
	}
	if r.sp == nil {
		return
	}
	w, bit := &r.changed[slot>>6], uint64(1)<<(slot&63)
	if *w&bit == 0 {
		*w |= bit
		r.nChange++
	}
}

// Removed tells Records that slot's record is gone (call it while
// AppendRecordKey still gives its key): the stored record is deleted at
// once, in the store's write-back cache, so that a later Load of the key
// does not find it; once flushed, the cache forgets the key
// (Space.DeleteUncached): the operator's records are in its memory, and
// an emptied key the cache kept as a miss would stay until the budget
// evicted it.
func (r *Records) Removed(slot int32) error {
	if r.ttl > 0 {
		r.wt[slot] = -1
	}
	if r.sp == nil {
		return nil
	}
	w, bit := int(slot>>6), uint64(1)<<(slot&63)
	if r.changed[w]&bit != 0 {
		r.changed[w] &^= bit
		r.nChange--
	}
	if r.live[w]&bit != 0 {
		r.live[w] &^= bit
		r.nLive--
	}
	r.key = r.src.AppendRecordKey(append(r.key[:0], r.prefix...), slot)
	kg := int(r.kgs[slot])
	if err := r.sp.DeleteUncached(kg, r.key); err != nil {
		return fmt.Errorf("state %s: %w", r.opts.Name, err)
	}
	if r.parted != nil {
		if err := r.deleteParts(kg, r.key[len(r.prefix):], 1, r.stored[slot]); err != nil {
			return fmt.Errorf("state %s: %w", r.opts.Name, err)
		}
		r.setStored(slot, 0)
	}
	return nil
}

// setStored sets how many parts of slot's record the store holds.
func (r *Records) setStored(slot int32, n int32) {
	r.storedTotal += int64(n - r.stored[slot])
	r.stored[slot] = n
}

// partKey appends the store key of part p >= 1 of the record of key.
func (r *Records) partKey(dst, key []byte, p int32) []byte {
	return binary.BigEndian.AppendUint32(append(append(dst, r.pprefix...), key...), uint32(p))
}

// deleteParts deletes parts [from, to) of the record of key.
func (r *Records) deleteParts(kg int, key []byte, from, to int32) error {
	for p := from; p < to; p++ {
		r.pk = r.partKey(r.pk[:0], key, p)
		if err := r.sp.DeleteUncached(kg, r.pk); err != nil {
			return err
		}
	}
	return nil
}

// deleteAllParts deletes the stored parts >= 1 of the record of key,
// however many there are (a record expired in the store, never loaded).
func (r *Records) deleteAllParts(kg int, key []byte) error {
	lo := append(append([]byte(nil), r.pprefix...), key...)
	var keys [][]byte
	err := r.sp.Scan(kg, lo, prefixEnd(nil, lo), false, func(k, _ []byte) (bool, error) {
		keys = append(keys, append([]byte(nil), k...))
		return true, nil
	})
	for _, k := range keys {
		if derr := r.sp.Delete(kg, k); derr != nil && err == nil {
			err = derr
		}
	}
	return err
}

// fewParts is the most parts after part 0 that loadParts reads by key
// (a lookup each); more are read with one scan.
const fewParts = 2

// loadParts loads the parts >= 1 of the record LoadRecord made in slot
// from key (of key group kg), by key when they are few and otherwise with
// one scan, and checks that none is missing.
func (r *Records) loadParts(slot int32, kg int, key []byte) error {
	want := r.parted.PendingParts(slot)
	if want > 0 && want <= fewParts {
		for p := int32(1); p <= want; p++ {
			r.pk = r.partKey(r.pk[:0], key, p)
			v, ok, err := r.sp.Get(kg, r.pk)
			switch {
			case err != nil:
				return fmt.Errorf("state %s: %w", r.opts.Name, err)
			case !ok:
				return fmt.Errorf("state %s: record %x: %d of its %d parts stored", r.opts.Name, key, p-1, want+1)
			}
			if err := r.parted.LoadRecordPart(slot, p, v); err != nil {
				return fmt.Errorf("state %s: record %x: part %d: %w", r.opts.Name, key, p, err)
			}
		}
	} else if want > 0 {
		r.plo = append(append(r.plo[:0], r.pprefix...), key...)
		r.phi = prefixEnd(r.phi, r.plo)
		next := int32(1)
		err := r.sp.Scan(kg, r.plo, r.phi, false, func(k, v []byte) (bool, error) {
			if len(k) != len(r.plo)+4 {
				return true, nil // not a part of this key
			}
			p := int32(binary.BigEndian.Uint32(k[len(r.plo):]))
			if p != next || p > want {
				return false, fmt.Errorf("record %x: part %d where part %d of %d was due", key, p, next, want)
			}
			if err := r.parted.LoadRecordPart(slot, p, v); err != nil {
				return false, fmt.Errorf("record %x: part %d: %w", key, p, err)
			}
			next++
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("state %s: %w", r.opts.Name, err)
		}
		if next-1 != want {
			return fmt.Errorf("state %s: record %x: %d of its %d parts stored", r.opts.Name, key, next-1, want+1)
		}
	}
	r.setStored(slot, want+1)
	return nil
}

// Load looks key (encoded as AppendRecordKey does) up in the store and,
// if it is there, makes it an in-memory record (LoadRecord) and returns its
// slot. It is for a key not in memory while Backed; otherwise it finds
// nothing without a lookup.
func (r *Records) Load(key []byte) (int32, bool, error) {
	if r.sp == nil || !r.backed {
		return 0, false, nil
	}
	kg := KeyGroup(key, r.opts.MaxParallelism)
	if kg < r.first || kg > r.last {
		return 0, false, fmt.Errorf("state %s: key %x is in key group %d, outside this subtask's [%d, %d]", r.opts.Name, key, kg, r.first, r.last)
	}
	r.key = append(append(r.key[:0], r.prefix...), key...)
	val, ok, err := r.sp.Get(kg, r.key)
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("state %s: %w", r.opts.Name, err)
		}
		return 0, false, err
	}
	at, rec, timed := splitRecTime(val)
	if r.expiredAt(at, timed) {
		// Expired while out of memory: gone, as if its timer had fired.
		if err := r.sp.Delete(kg, r.key); err != nil {
			return 0, false, fmt.Errorf("state %s: %w", r.opts.Name, err)
		}
		if r.parted != nil {
			if err := r.deleteAllParts(kg, key); err != nil {
				return 0, false, fmt.Errorf("state %s: %w", r.opts.Name, err)
			}
		}
		return 0, false, nil
	}
	slot, err := r.src.LoadRecord(key, rec)
	if err != nil {
		return 0, false, fmt.Errorf("state %s: record %x: %w", r.opts.Name, key, err)
	}
	r.setKG(slot, kg)
	r.loaded(slot, at, timed)
	if r.parted != nil {
		if err := r.loadParts(slot, kg, key); err != nil {
			return 0, false, err
		}
	}
	return slot, true, nil
}

// bufferBytes is the memory of Records' bookkeeping and snapshot buffers.
func (r *Records) bufferBytes() int64 {
	const entBytes = 32
	return int64(cap(r.kgs))*2 + int64(cap(r.live)+cap(r.changed))*8 +
		int64(cap(r.starts)+cap(r.bounds)+cap(r.pos)+cap(r.slots))*4 + int64(cap(r.kgChunk))*2 +
		int64(cap(r.ents)+cap(r.spare))*entBytes +
		int64(cap(r.wt)+cap(r.queued))*8 + int64(cap(r.expq))*16 + int64(cap(r.stored))*4 +
		int64(cap(r.kbuf)+cap(r.vbuf)+cap(r.gbuf))
}

// SetExtraBytes tells Records how much memory the operator's in-memory
// records take beyond RecordBytes each, for records whose size varies (a
// join key's list of rows): the budget (OverBudget) counts it.
func (r *Records) SetExtraBytes(n int64) { r.extra = max(n, 0) }

// limit is how many records fit in memory: the budget less the buffers
// and the operator's extra bytes, at RecordBytes each, and at least
// MinRecords.
func (r *Records) limit() int {
	n := (r.opts.Budget - r.bufferBytes() - r.extra) / r.opts.RecordBytes
	return int(max(n, MinRecords))
}

// OverBudget reports whether the records in memory, with Records'
// buffers, exceed the budget: the operator should then emit what it holds
// and call Spill. Always false without a store.
func (r *Records) OverBudget() bool {
	return r.sp != nil && r.nLive > r.limit()
}

// Spill writes every changed record back, then has the operator drop all
// its in-memory records (DropRecords); from then on Records is backed.
func (r *Records) Spill() error {
	if r.sp == nil {
		return nil
	}
	if err := r.Snapshot(); err != nil {
		return err
	}
	r.src.DropRecords()
	r.wt, r.expq, r.unstamped = r.wt[:0], r.expq[:0], r.unstamped[:0]
	clear(r.pend)
	clear(r.queued)
	r.queued = r.queued[:0]
	r.kgs, r.stored, r.storedTotal = r.kgs[:0], r.stored[:0], 0
	clear(r.live)
	clear(r.changed)
	r.live, r.changed = r.live[:0], r.changed[:0]
	r.nLive, r.nChange = 0, 0
	r.backed = true
	return nil
}

// chunkEntries is how many changed records Snapshot encodes and sorts at a
// time (whole key groups, so a chunk may hold more).
const chunkEntries = 1 << 16

// Snapshot writes the records changed since the last call into the store
// in state-key order (deletions went to the store in Removed). When every
// record is in memory, the records are the operator's only state
// (Exclusive), and at least half of them changed, it writes all of them as
// the operator's complete state instead: the store replaces the old state
// at once rather than layering the changes over it, and writing the
// unchanged rest costs less than merging the changes in later.
func (r *Records) Snapshot() error {
	if r.sp == nil {
		return nil
	}
	all := r.opts.Exclusive && !r.backed && r.nChange > 0 && 2*r.nChange >= r.nLive
	if r.parted != nil && r.storedTotal > 4*int64(r.nLive) {
		// Long records: half the records changed says little of how many
		// of their parts did.
		all = false
	}
	if r.nChange == 0 && !all {
		return nil
	}
	if all {
		if err := r.sp.ReplaceAll(); err != nil {
			return fmt.Errorf("state %s: %w", r.opts.Name, err)
		}
	}
	bitsOf := r.changed
	if all {
		bitsOf = r.live
	}
	r.all = all
	r.usedK, r.usedV, r.usedG, r.usedE = 0, 0, 0, 0
	if err := r.chunks(bitsOf, r.writeChunk); err != nil {
		return fmt.Errorf("state %s: %w", r.opts.Name, err)
	}
	r.trimBuffers()
	clear(r.changed)
	r.nChange = 0
	return nil
}

// trimMin is the capacity (bytes) up to which a snapshot buffer is kept
// whatever a snapshot used of it.
const trimMin = 64 << 10

// trimBuffers releases each snapshot buffer of which the snapshot just
// written used less than half (and that is over trimMin), so that the
// buffers follow the number of records that change between checkpoints
// and not its peak: the keys held may swing with the input (an interval
// join's with the gaps between watermarks), and buffers kept at a swing's
// size raised the memory of every later checkpoint, and with it the Go
// heap's target. The next snapshot that needs more grows them again: an
// allocation per checkpoint at most, never per record.
func (r *Records) trimBuffers() {
	const entBytes = 32
	trim := func(capBytes, usedBytes int) bool { return capBytes > trimMin && capBytes > 2*usedBytes }
	if trim(cap(r.kbuf), r.usedK) {
		r.kbuf = nil
	}
	if trim(cap(r.vbuf), r.usedV) {
		r.vbuf = nil
	}
	if trim(cap(r.gbuf), r.usedG) {
		r.gbuf = nil
	}
	if trim(cap(r.ents)*entBytes, r.usedE*entBytes) {
		r.ents = nil
	}
	if trim(cap(r.spare)*entBytes, r.usedE*entBytes) {
		r.spare = nil
	}
	if trim(cap(r.slots)*4, len(r.slots)*4) {
		r.slots = nil
	}
}

// chunks calls fn for the records whose bit is set in set, a chunk of
// whole key groups [first, end) at a time, in ascending key-group order:
// each chunk holds at least chunkEntries records, or the rest. fn gets the
// chunk's slots in ascending slot order. It walks the bit set twice
// whatever the number of chunks: once to count the records per key group
// (starts), which gives the chunks, and once to deal each slot to its
// chunk.
func (r *Records) chunks(set []uint64, fn func(slots []int32, first, end int) error) error {
	maxPar := r.opts.MaxParallelism
	r.starts = slices.Grow(r.starts[:0], maxPar+1)[:maxPar+1]
	clear(r.starts)
	for w, word := range set {
		for word != 0 {
			slot := w<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			r.starts[r.kgs[slot]+1]++
		}
	}
	for i := 1; i <= maxPar; i++ {
		r.starts[i] += r.starts[i-1]
	}
	total := int(r.starts[maxPar])
	if total == 0 {
		r.slots = r.slots[:0]
		return nil
	}
	r.kgChunk = slices.Grow(r.kgChunk[:0], maxPar)[:maxPar]
	r.bounds, r.pos = r.bounds[:0], r.pos[:0]
	for kg := 0; kg < maxPar; {
		end := kg + 1
		for end < maxPar && int(r.starts[end]-r.starts[kg]) < r.chunk {
			end++
		}
		c := uint16(len(r.bounds))
		for k := kg; k < end; k++ {
			r.kgChunk[k] = c
		}
		r.bounds = append(r.bounds, int32(kg))
		r.pos = append(r.pos, r.starts[kg])
		kg = end
	}
	r.bounds = append(r.bounds, int32(maxPar))
	r.slots = slices.Grow(r.slots[:0], total)[:total]
	slots, pos, kgChunk := r.slots, r.pos, r.kgChunk
	for w, word := range set {
		for word != 0 {
			slot := int32(w<<6 | bits.TrailingZeros64(word))
			word &= word - 1
			c := kgChunk[r.kgs[slot]]
			slots[pos[c]] = slot
			pos[c]++
		}
	}
	for c := 0; c+1 < len(r.bounds); c++ {
		first, end := int(r.bounds[c]), int(r.bounds[c+1])
		if lo, hi := r.starts[first], r.starts[end]; hi > lo {
			if err := fn(slots[lo:hi], first, end); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeChunk encodes the records in slots, of key groups [first, end),
// sorts them by key and writes them through.
func (r *Records) writeChunk(slots []int32, first, end int) error {
	ents, err := r.sortedChunk(slots)
	if err != nil {
		return err
	}
	b := r.gbuf
	for i := range ents {
		e := &ents[i]
		if err := r.sp.PutThrough(int(e.kg), b[e.koff:e.koff+e.klen], b[e.voff:e.voff+e.vlen]); err != nil {
			return err
		}
	}
	return nil
}

// sortedChunk encodes the keys (with the state's prefix: the keys in the
// Space) and records of slots (one chunk's, see chunks) into r.kbuf and
// r.vbuf and returns their entries sorted by (key group, key).
//
// It visits the slots in slot order, not key group by key group: the
// records are the operator's typed state, laid out by slot, and read in
// slot order the reads of each chunk are a forward stream that the CPU
// prefetches, where reading one key group's scattered slots would miss the
// cache on nearly every record. A snapshot needs encoding buffers for one
// chunk only.
func (r *Records) sortedChunk(slots []int32) ([]recEnt, error) {
	n := len(slots)
	r.ents = slices.Grow(r.ents[:0], n)
	ents := r.ents[:0]
	kb, vb := r.kbuf[:0], r.vbuf[:0]
	parts := false // entries of parts >= 1: keys of two names
	for _, slot := range slots {
		k0, v0 := len(kb), len(vb)
		kb = r.src.AppendRecordKey(append(kb, r.prefix...), slot)
		if r.ttl > 0 {
			vb = binary.BigEndian.AppendUint64(append(vb, recTimeMark), uint64(r.wt[slot]))
		}
		vb = r.src.AppendRecord(vb, slot)
		ents = append(ents, recEnt{koff: uint32(k0), klen: uint32(len(kb) - k0), voff: uint32(v0), vlen: uint32(len(vb) - v0), kg: r.kgs[slot]})
		if r.parted == nil {
			continue
		}
		kend := len(kb)
		n, changed := r.parted.ChangedParts(r.pbuf[:0], slot, r.all)
		r.pbuf = changed
		for _, p := range changed {
			if p < 1 || p >= n {
				continue
			}
			k1, v1 := len(kb), len(vb)
			kb = append(kb, r.pprefix...)
			kb = append(kb, kb[k0+len(r.prefix):kend]...)
			kb = binary.BigEndian.AppendUint32(kb, uint32(p))
			vb = r.parted.AppendRecordPart(vb, slot, p)
			ents = append(ents, recEnt{koff: uint32(k1), klen: uint32(len(kb) - k1), voff: uint32(v1), vlen: uint32(len(vb) - v1), kg: r.kgs[slot]})
			parts = true
		}
		if !r.all && r.stored[slot] > n {
			if err := r.deleteParts(int(r.kgs[slot]), kb[k0+len(r.prefix):kend], n, r.stored[slot]); err != nil {
				return nil, err
			}
		}
		r.setStored(slot, n)
	}
	r.kbuf, r.vbuf, r.ents = kb, vb, ents // ents grew past n with parts
	r.usedK, r.usedV, r.usedE = max(r.usedK, len(kb)), max(r.usedV, len(vb)), max(r.usedE, len(ents))
	if len(kb) > math.MaxUint32 || len(vb) > math.MaxUint32 {
		return nil, fmt.Errorf("the records of %d keys to write exceed 4 GiB", len(ents))
	}
	if len(ents) == 0 {
		return ents, nil
	}
	fixed := true
	klen, p := ents[0].klen, uint32(len(r.prefix))
	for i := range ents {
		e := &ents[i]
		if parts || e.klen != klen || klen-p > 9 {
			fixed = false
			break
		}
		e.hi, e.num = fixedKey(kb[e.koff+p : e.koff+e.klen])
	}
	if fixed {
		r.spare = slices.Grow(r.spare[:0], len(ents))[:len(ents)]
		ents = radixSort(ents, r.spare)
	} else {
		slices.SortFunc(ents, func(a, b recEnt) int {
			if a.kg != b.kg {
				return int(a.kg) - int(b.kg)
			}
			return bytes.Compare(kb[a.koff:a.koff+a.klen], kb[b.koff:b.koff+b.klen])
		})
	}
	r.gather(ents)
	return ents, nil
}

// gather copies the entries' keys and records into r.gbuf in the entries'
// (sorted) order, each key followed by its record, so that the store reads
// them in memory order. In one short loop the reads of the scattered
// entries overlap; in the write loop each would stall the sstable writer.
func (r *Records) gather(ents []recEnt) {
	kb, vb := r.kbuf, r.vbuf
	out := slices.Grow(r.gbuf[:0], len(kb)+len(vb))
	for i := range ents {
		e := &ents[i]
		off := uint32(len(out))
		out = append(out, kb[e.koff:e.koff+e.klen]...)
		out = append(out, vb[e.voff:e.voff+e.vlen]...)
		e.koff, e.voff = off, off+e.klen
	}
	r.gbuf = out
	r.usedG = max(r.usedG, len(out))
}

// fixedKey splits a key of at most 9 bytes into a high byte and a number
// that order, as a pair, like the key among keys of its length.
func fixedKey(k []byte) (hi uint8, num uint64) {
	if len(k) == 9 {
		return k[0], binary.BigEndian.Uint64(k[1:])
	}
	var b [8]byte
	copy(b[:], k)
	return 0, binary.BigEndian.Uint64(b[:])
}

// radixSort sorts entries by (key group, hi, num) with a
// least-significant-digit radix sort over their 11 bytes, skipping the
// bytes that all entries share (the high bytes of small numbers, the tag
// byte, the key group's high byte). tmp must be as long as a; the result
// is a or tmp.
func radixSort(a, tmp []recEnt) []recEnt {
	const digits = 11 // num's 8 bytes, hi, the key group's 2 bytes
	var counts [digits][256]int32
	for i := range a {
		e := &a[i]
		for d := range 8 {
			counts[d][byte(e.num>>(8*d))]++
		}
		counts[8][e.hi]++
		counts[9][byte(e.kg)]++
		counts[10][byte(e.kg>>8)]++
	}
	src, dst := a, tmp
	for d := range digits {
		c := &counts[d]
		if c[digit(&src[0], d)] == int32(len(src)) {
			continue // every entry has this byte
		}
		var pos [256]int32
		var sum int32
		for b := range 256 {
			pos[b] = sum
			sum += c[b]
		}
		for i := range src {
			b := digit(&src[i], d)
			dst[pos[b]] = src[i]
			pos[b]++
		}
		src, dst = dst, src
	}
	return src
}

// digit returns byte d of an entry's sort key, least significant first.
func digit(e *recEnt, d int) byte {
	switch {
	case d < 8:
		return byte(e.num >> (8 * d))
	case d == 8:
		return e.hi
	case d == 9:
		return byte(e.kg)
	}
	return byte(e.kg >> 8)
}

// SetTime sets the processing time (ms since the epoch) that writes are
// stamped with and expiry compares with; the operator calls it before it
// handles input (with a TTL). Records written before the first SetTime,
// or loaded without a stored time, count as written then.
func (r *Records) SetTime(ms int64) {
	r.now = ms
	if !r.clockSet {
		r.clockSet = true
		for _, slot := range r.unstamped {
			if r.wt[slot] >= 0 {
				r.stamp(slot, ms)
			}
		}
		r.unstamped, r.pend = nil, nil
	}
}

// HasTTL reports whether records expire (RecordOptions.TTL).
func (r *Records) HasTTL() bool { return r.ttl > 0 }

// NextExpiry returns the earliest time (ms) at which a record in memory
// may expire, if one may: the operator's task may wake up then to Expire.
func (r *Records) NextExpiry() (int64, bool) {
	if len(r.expq) == 0 {
		return 0, false
	}
	return r.expq[0].at + r.ttl, true
}

// ExpiryDue reports whether Expire may have records to drop at the
// current time: the operator then first emits what it holds for them.
func (r *Records) ExpiryDue() bool {
	return len(r.expq) > 0 && r.expq[0].at+r.ttl <= r.now
}

// Expire calls drop for every in-memory record not written for the TTL at
// the current time (SetTime), oldest first; drop must forget it and call
// Removed, which deletes it from the store. It pops the due entries of a
// heap of write times (one entry per record, pushed again at its new time
// when the record was written since), so its cost is in the records that
// are due, never a scan. After Expire, no record in memory has expired.
func (r *Records) Expire(drop func(slot int32) error) error {
	for r.ExpiryDue() {
		e := r.popExp()
		w := r.wt[e.slot]
		switch {
		case w < 0: // removed
			r.queued[e.slot>>6] &^= 1 << (e.slot & 63)
		case w+r.ttl <= r.now:
			r.queued[e.slot>>6] &^= 1 << (e.slot & 63)
			if err := drop(e.slot); err != nil {
				return err
			}
			r.wt[e.slot] = -1
		default:
			r.pushExp(ttlEnt{at: w, slot: e.slot})
		}
	}
	return nil
}

// expiredAt reports whether a stored record written at at (when timed)
// has expired at the current time.
func (r *Records) expiredAt(at int64, timed bool) bool {
	return r.ttl > 0 && timed && r.clockSet && at+r.ttl <= r.now
}

// written stamps slot's record with the current time.
func (r *Records) written(slot int32) {
	if !r.clockSet {
		// Stamped at the first SetTime; the pend bit keeps one entry per
		// slot in unstamped.
		r.growTTL(slot)
		r.wt[slot] = 0
		if len(r.pend) <= int(slot>>6) {
			r.pend = append(r.pend, make([]uint64, int(slot>>6)+1-len(r.pend))...)
		}
		if bit := uint64(1) << (slot & 63); r.pend[slot>>6]&bit == 0 {
			r.pend[slot>>6] |= bit
			r.unstamped = append(r.unstamped, slot)
		}
		return
	}
	r.stamp(slot, r.now)
}

// loaded stamps a record loaded from the store with its stored write time,
// or as written now if it has none.
func (r *Records) loaded(slot int32, at int64, timed bool) {
	switch {
	case r.ttl == 0:
	case timed:
		r.stamp(slot, at)
	default:
		r.written(slot)
	}
}

func (r *Records) growTTL(slot int32) {
	for int(slot) >= len(r.wt) {
		r.wt = append(r.wt, -1)
	}
	if w := int(slot>>6) + 1; w > len(r.queued) {
		r.queued = append(r.queued, make([]uint64, w-len(r.queued))...)
	}
}

func (r *Records) stamp(slot int32, at int64) {
	r.growTTL(slot)
	r.wt[slot] = at
	if bit := uint64(1) << (slot & 63); r.queued[slot>>6]&bit == 0 {
		r.queued[slot>>6] |= bit
		r.pushExp(ttlEnt{at: at, slot: slot})
	}
}

func (r *Records) pushExp(e ttlEnt) { r.expq = minheap.Push(r.expq, e) }

func (r *Records) popExp() ttlEnt {
	top, q := minheap.Pop(r.expq)
	r.expq = q
	return top
}

// splitRecTime splits a stored record into its write time, if it has one
// (recTimeMark), and the operator's record.
func splitRecTime(v []byte) (at int64, rec []byte, timed bool) {
	if len(v) >= 9 && v[0] == recTimeMark {
		return int64(binary.BigEndian.Uint64(v[1:9])), v[9:], true
	}
	return 0, v, false
}

// Forget is Removed for a record the store does not hold (added since the
// last Snapshot or Spill, and not loaded): it only forgets the slot, with
// no deletion written to the store. Operators whose keys come and go
// between checkpoints (an interval join's) save a store write per key.
func (r *Records) Forget(slot int32) {
	if r.ttl > 0 {
		r.wt[slot] = -1
	}
	if r.sp == nil {
		return
	}
	w, bit := int(slot>>6), uint64(1)<<(slot&63)
	if r.changed[w]&bit != 0 {
		r.changed[w] &^= bit
		r.nChange--
	}
	if r.live[w]&bit != 0 {
		r.live[w] &^= bit
		r.nLive--
	}
	if r.parted != nil {
		r.setStored(slot, 0)
	}
}
