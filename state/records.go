package state

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"time"
	"unsafe"

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
// in memory and in the store: see SetTime, Expire and Snapshot.
type Records struct {
	opts   RecordOptions
	src    RecordSource
	prefix []byte // len(name) | name
	first  int    // the key groups owned, inclusive
	last   int

	sp     *statestore.Space // nil in memory
	backed bool              // records not in memory may be in the store
	// bitsOnly: with a store and without a TTL, Changed only sets the
	// slot's changed bit.
	bitsOnly bool

	// filter holds the keys of the records in the store once Records is
	// backed (those in memory at the first Spill, those written since, and
	// those a restore found): with filterOK (it holds them all), Load
	// looks up only a key it may hold.
	filter   keyFilter
	filterOK bool

	// A PartedSource's records: the second name's prefix, under which parts
	// 1.. live, and per slot how many parts the store holds.
	parted  PartedSource
	hint    SizeHinter // the source, if it tells its records' sizes
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

	// A DeltaSource's blind writes (see DeltaSource): the names under
	// which deltas and the per-key-group generation marks live, per slot
	// a bit set while it is a delta record, the generation the next
	// snapshot writes deltas with, the keys with stored deltas (a hash
	// set: a Load of any other key reads no deltas), the key groups a
	// delta of gen was written to, and the stored deltas merged since the
	// last snapshot, deleted by the next one.
	delta   DeltaSource
	dprefix []byte
	gprefix []byte
	dslot   []uint64
	dsaved  []uint64 // per delta slot: a bit set once its key is in dkeys
	nDelta  int
	gen     uint64
	dkeys   map[deltaKey]struct{}
	dall    bool                  // too many keys with deltas for dkeys: any key may have some
	dnone   map[deltaKey]struct{} // with dall: the keys with no deltas left to read until the next snapshot (noDeltas)
	dseed   [2]maphash.Seed
	dkg     []uint64
	dgone   []goneDelta
	dgbuf   []byte
	dplo    []byte
	dphi    []byte

	kgs []uint16 // per slot: its key group, unless its lazyKG bit is set
	// lazyKG has a bit per slot whose key group is not computed yet
	// (kgs holds 0): AddedInt of a fresh record leaves it to kgOf or
	// resolveKGs, so that a key added and removed between two snapshots
	// (an interval join's, nearly every one) never hashes. Every reader
	// of kgs goes through them; setKG clears the bit.
	lazyKG []uint64
	// touched has a bit per slot read (Touched) since the last Spill:
	// with a RecordDropper, Spill keeps those records in memory.
	touched  []uint64
	nTouched int
	live     []uint64 // per slot: a bit set while it holds a record
	changed  []uint64 // per slot: a bit set while it changed since the last snapshot (Changed)
	nLive    int
	extra    int64 // memory the operator holds beyond RecordBytes a record (SetExtraBytes)
	// fresh has a bit per slot whose record was added while not backed
	// and never written to the store since (no snapshot wrote it): its
	// Removed writes no deletion (windows that open and fire between two
	// checkpoints).
	fresh []uint64

	// Snapshot buffers, kept between snapshots and counted in the budget;
	// trimBuffers releases those that one snapshot used less than half of.
	starts  []int32  // per key group: how many records precede it (chunks)
	kgChunk []uint16 // per key group: its chunk
	bounds  []int32  // per chunk: its first key group; then maxParallelism
	pos     []int32  // per chunk: where its next slot goes in slots
	slots   []int32  // the slots to write, chunk by chunk, in slot order within each
	chunk   int      // chunkEntries (tests make it small)
	ents    []recEnt // one chunk of entries
	spare   []recEnt // a second buffer of entries (dealing by key group, the radix sort)
	cur     []int32  // per key group of the chunk: where its next entry goes in ents
	kgBytes []int64  // per key group: the hinted size of its records to write (chunks)
	// kbuf holds the chunk's encoded entries, each key (without the
	// state's prefix) followed by its record; offs, per entry in encoding
	// order, where its key and its record start, then len(kbuf) twice. An
	// entry's key, record and offsets are each in one place, so that
	// gather, reading the entries in sorted order, misses the cache about
	// twice an entry rather than four times (separate buffers of keys and
	// records and offset arrays of each).
	kbuf []byte
	offs []uint32
	gbuf []byte // the chunk's records (with their prefixed keys unless fixed) in sorted order (gather)
	key  []byte // prefix | key for a store call
	fkey []byte // prefix | a fixed key of a snapshot's chunk (entry)
	hb   []byte // keys encoded for hashing
	// The most of each snapshot buffer one chunk of this snapshot used.
	usedK, usedG, usedE int

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

	// The expiry index of the records held only in the store (see
	// sweepStored): entries tprefix | write time | key in the record's key
	// group, and per key group owned a lower bound of its entries' write
	// times (math.MaxInt64: none), nil until the first entry.
	tprefix []byte
	tmin    []int64
	tk      []byte     // an index key
	sweep   []sweepEnt // a batch of due index entries
	swb     []byte     // their keys
	unidx   []sweepEnt // index entries to write: a restore scan's (parts < 0: a deletion), a spill's chunk
	unb     []byte     // their keys
}

// sweepEnt is an index entry (of the keys in a buffer: off, n) of key
// group kg: a record written at at, with parts parts in the store (0:
// unknown).
type sweepEnt struct {
	at     int64
	kg     int32
	parts  int32
	off, n int32
}

// ttlIndexSuffix ends the name under which Records with a TTL indexes the
// records that only the store holds by write time.
const ttlIndexSuffix = "+t"

// sweepBatch is how many due index entries sweepStored reads at a time.
const sweepBatch = 4096

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
	// to drop, and a stored record past its TTL is never loaded; one that
	// only the store holds is deleted by the first Snapshot after its TTL
	// (an index in the store, see sweepStored). Each record's last write
	// time is kept in memory and stored with it, so a restore keeps it.
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

// RecordDropper is a RecordSource that can forget one in-memory record:
// Spill then keeps the records read since the last spill (Touched) in
// memory, when they are at most half of them, and drops the rest one by
// one, rather than dropping them all.
type RecordDropper interface {
	RecordSource
	// DropRecord forgets the in-memory record in slot (written to the
	// store) and frees the slot.
	DropRecord(slot int32)
}

// SizeHinter is a RecordSource that tells how many bytes it will append
// for a record: a snapshot then ends its chunks at chunkBytes of records
// (a join key's record is kilobytes) and makes room for a chunk's records
// at once (reserve), rather than letting the records' appends grow its
// buffer a quarter at a time (append's growth past a few hundred bytes),
// each time copying the whole buffer.
type SizeHinter interface {
	RecordSource
	// EncodedSize returns the exact number of bytes AppendRecord (part
	// 0), AppendRecordPart (part p >= 1) or, for a DeltaSource,
	// AppendDelta (part DeltaPart) appends for slot's record now; for a
	// PartedSource, with part ChangedPartsHint or AllPartsHint, the bytes
	// of the parts >= 1 that ChangedParts(slot, false) or (slot, true)
	// would return now.
	EncodedSize(slot int32, part int32) int
}

// The parts for which SizeHinter.EncodedSize tells the length of
// AppendDelta's writes, and of the parts >= 1 a snapshot writes.
const (
	DeltaPart        int32 = -1
	ChangedPartsHint int32 = -2
	AllPartsHint     int32 = -3
)

// reserve returns b with room for n more bytes: b itself if it has it,
// else a copy with at least twice b's capacity, so that the copies made
// while a buffer grows add up to less than its final length.
func reserve(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	grow := max(len(b)+n, 2*cap(b), 4096) - len(b)
	return slices.Grow(b, grow)
}

// PartSuffix ends the name under which a PartedSource's parts >= 1 live.
const PartSuffix = "+p"

// DeltaSource is a PartedSource whose records take blind writes: while
// Records is backed (a spill, or a restore that did not fit), the operator
// may give a key that is not in memory a delta record (SetDelta) instead
// of looking it up (Load), and write to it what it would write to the
// whole record (a join's row inserted or taken out), without knowing the
// record. A snapshot stores a delta record's writes since the last one as
// a delta under the key and a generation (Name+DeltaSuffix | key | 8
// bytes big-endian), leaving the stored record as it is; when the
// operator needs the whole record (Complete, or Load of a key not in
// memory), Records reads the stored record and its deltas, oldest first,
// and the source merges them, then the writes the delta record held. The
// merged record is written back whole-keyed as any changed record (its
// changed parts), and the merged deltas are deleted by the next snapshot.
//
// Generations only grow: each key group that a snapshot writes deltas to
// keeps the last generation under Name+GenSuffix, and a restored Records
// starts past the largest of its key groups'. Blind writes are off with a
// TTL (a delta would have to carry its write time).
type DeltaSource interface {
	PartedSource
	// AppendDelta appends the writes slot's delta record took since the
	// last call, and forgets them (slot stays a delta record).
	AppendDelta(dst []byte, slot int32) []byte
	// NewRecord makes an empty in-memory record of key (as
	// AppendRecordKey writes it) and returns its slot: a key whose stored
	// record is only deltas. key is valid only during the call.
	NewRecord(key []byte) (int32, error)
	// BeginMerge sets aside the writes of delta record slot and empties
	// it, to take the stored record (LoadBase and parts), its deltas
	// (LoadDelta) and then its writes back (EndMerge).
	BeginMerge(slot int32)
	// LoadBase reads part 0 of the stored record into slot (emptied by
	// BeginMerge or made by NewRecord), as LoadRecord does; the parts
	// follow (PendingParts, LoadRecordPart).
	LoadBase(slot int32, rec []byte) error
	// LoadDelta applies a stored delta (as AppendDelta wrote it) to
	// slot's record, marking the parts it changes.
	LoadDelta(slot int32, rec []byte) error
	// EndMerge applies the writes BeginMerge set aside (none for a
	// record loaded by Load) and makes slot an ordinary record.
	EndMerge(slot int32) error
}

// DeltaSuffix ends the name under which a DeltaSource's deltas live;
// GenSuffix the name of the per-key-group generation marks.
const (
	DeltaSuffix = "+d"
	GenSuffix   = "+g"
)

// deltaKey is a key's 128-bit hash, in the set of keys with stored deltas.
type deltaKey [2]uint64

// deltaKeyBytes is the memory of a key in the set of keys with deltas (a
// map entry).
const deltaKeyBytes = 48

// goneDelta is a stored delta merged into an in-memory record, deleted by
// the next snapshot.
type goneDelta struct {
	kg     int
	off, n int // its key (Name+DeltaSuffix | key | gen) in Records.dgbuf
}

// pendingParts is a record loaded by a restore scan whose parts >= 1 are
// still to load.
type pendingParts struct {
	slot int32
	kg   int
	key  []byte
}

// recEnt is a changed record (or part of one) on its way to the store, in
// a chunk: what orders it and where it is. For keys of one length up to 9
// bytes (fixed), hi and num hold the key (its first byte and the rest
// big-endian, or, for keys up to 8 bytes, num alone), so a radix sort
// orders the chunk without comparisons and the key is rebuilt from them;
// for other keys num holds the key's first 8 bytes, which decide most
// comparisons. idx numbers the entry in the chunk's encoding order (its
// key and record in kbuf: offs); once gathered, it is
// where its record ends in gbuf, and num where its key does (not fixed).
type recEnt struct {
	num  uint64
	idx  uint32
	kg   uint16
	hi   uint8
	part uint8 // entRecord, entDelta or entPart: which name the key is under
}

// The names a recEnt's key is under, in the store's order of their
// prefixes (the record's name, then name+DeltaSuffix, then
// name+PartSuffix: longer names after, "+d" before "+p").
const (
	entRecord = 0 // the record (its part 0)
	entDelta  = 1 // a delta of a DeltaSource's record, the key followed by its generation
	entPart   = 2 // a part >= 1 of a PartedSource's record
)

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
	r.fkey = append(make([]byte, 0, len(r.prefix)+9), r.prefix...)
	if ps, ok := src.(PartedSource); ok {
		r.parted, r.pprefix = ps, namePrefix(opts.Name+PartSuffix)
	}
	if h, ok := src.(SizeHinter); ok {
		r.hint = h
	}
	if opts.TTL > 0 {
		r.ttl = max(opts.TTL.Milliseconds(), 1)
		r.tprefix = namePrefix(opts.Name + ttlIndexSuffix)
	}
	if ds, ok := src.(DeltaSource); ok {
		// Also with a TTL: deltas a restore finds are merged.
		r.delta, r.dprefix, r.gprefix = ds, namePrefix(opts.Name+DeltaSuffix), namePrefix(opts.Name+GenSuffix)
		r.dseed = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
		r.gen = 1
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
	if err := r.attach(store, restored); err != nil || !restored {
		return err
	}
	return r.loadAll(true)
}

// attach is Attach without loading the restored records: it takes the
// operator's Space and, after a restore, finds the stored deltas.
func (r *Records) attach(store *statestore.Store, restored bool) error {
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
	r.bitsOnly = r.ttl == 0
	if !restored {
		r.filterOK = true // a store not restored holds none of its records
		return nil
	}
	if err := r.findDeltas(); err != nil {
		return fmt.Errorf("state %s: %w", r.opts.Name, err)
	}
	return nil
}

// AttachDeferred is Attach of a restored store whose records are loaded
// later, by LoadRestored: until then Records is backed (a key not in
// memory is looked up), and records may be added, as an operator that
// converts an older state layout while it loads another Records does.
func (r *Records) AttachDeferred(store *statestore.Store) error {
	return r.attach(store, true)
}

// LoadRestored loads the records of a store attached with AttachDeferred
// into memory, as Attach does, while they fit in the budget with the
// records added since.
func (r *Records) LoadRestored() error {
	if r.sp == nil {
		return errors.New("state: LoadRestored before AttachDeferred")
	}
	return r.loadAll(true)
}

// IndexRestored is LoadRestored for records that are not to be loaded
// (the records they belong to are not in memory): it only notes their
// keys, so that Load looks up no key the store does not hold.
func (r *Records) IndexRestored() error {
	if r.sp == nil {
		return errors.New("state: IndexRestored before AttachDeferred")
	}
	return r.loadAll(false)
}

// findDeltas reads, after a restore, the generation marks of the key
// groups owned (the next generation is past them all) and the keys with
// stored deltas (one scan of the delta keys, values unread).
func (r *Records) findDeltas() error {
	if r.delta == nil {
		return nil
	}
	end := prefixEnd(nil, r.dprefix)
	for kg := r.first; kg <= r.last; kg++ {
		v, ok, err := r.sp.Get(kg, r.gprefix)
		switch {
		case err != nil:
			return err
		case ok && len(v) != 8:
			return fmt.Errorf("key group %d: generation mark of %d bytes", kg, len(v))
		case ok:
			r.gen = max(r.gen, binary.BigEndian.Uint64(v)+1)
		default:
			continue // no delta was ever written to kg
		}
		err = r.sp.Scan(kg, r.dprefix, end, false, func(k, _ []byte) (bool, error) {
			if len(k) < len(r.dprefix)+8 {
				return false, fmt.Errorf("delta key %x too short", k)
			}
			r.addDeltaKey(k[len(r.dprefix) : len(k)-8])
			return true, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// deltaHash returns key's hash in the set of keys with stored deltas.
func (r *Records) deltaHash(key []byte) deltaKey {
	return deltaKey{maphash.Bytes(r.dseed[0], key), maphash.Bytes(r.dseed[1], key)}
}

func (r *Records) addDeltaKey(key []byte) {
	if r.dall {
		return
	}
	if r.dkeys == nil {
		r.dkeys = map[deltaKey]struct{}{}
	}
	r.dkeys[r.deltaHash(key)] = struct{}{}
	if int64(len(r.dkeys))*deltaKeyBytes > max(r.opts.Budget/8, 1<<20) {
		// The set would take more than an eighth of the budget: every
		// Load of a key not in memory reads its deltas (a seek) instead.
		r.dkeys, r.dall = nil, true
	}
}

// hasDeltas reports whether the store may hold deltas of key that were
// not merged yet.
func (r *Records) hasDeltas(key []byte) bool {
	if r.dall {
		if len(r.dnone) == 0 {
			return true
		}
		_, none := r.dnone[r.deltaHash(key)]
		return !none
	}
	if len(r.dkeys) == 0 {
		return false
	}
	_, ok := r.dkeys[r.deltaHash(key)]
	return ok
}

// loadDeltas hands the stored deltas of the record of key (key group kg)
// in slot to the source, oldest first, queues them for deletion by the
// next snapshot and forgets that key has deltas. It reports whether it
// found any.
func (r *Records) loadDeltas(slot int32, kg int, key []byte) (bool, error) {
	if !r.hasDeltas(key) {
		return false, nil
	}
	r.dplo = append(append(r.dplo[:0], r.dprefix...), key...)
	r.dphi = prefixEnd(r.dphi, r.dplo)
	found := false
	err := r.sp.Scan(kg, r.dplo, r.dphi, false, func(k, v []byte) (bool, error) {
		if len(k) != len(r.dplo)+8 {
			return true, nil // a delta of a longer key
		}
		if err := r.delta.LoadDelta(slot, v); err != nil {
			return false, fmt.Errorf("record %x: delta %x: %w", key, k[len(r.dplo):], err)
		}
		r.dgone = append(r.dgone, goneDelta{kg: kg, off: len(r.dgbuf), n: len(k)})
		r.dgbuf = append(r.dgbuf, k...)
		found = true
		return true, nil
	})
	if err != nil {
		return false, err
	}
	r.noDeltas(key)
	return found, nil
}

// noDeltas notes that key has no stored deltas left to read: they were
// merged (and are deleted by the next snapshot, which may write newer
// ones) or deleted. With dall, where any key may have deltas, the merged
// ones are still in the store until then, and a second read would apply
// them twice: dnone keeps their keys until the snapshot. (dall starts in a
// snapshot or a restore, with no merged deltas pending after it: the keys
// that dkeys forgot before need no entry.)
func (r *Records) noDeltas(key []byte) {
	if !r.dall {
		delete(r.dkeys, r.deltaHash(key))
		return
	}
	if r.dnone == nil {
		r.dnone = map[deltaKey]struct{}{}
	}
	r.dnone[r.deltaHash(key)] = struct{}{}
}

// loadAll loads the restored records into memory (with load), key group by
// key group, while they fit, and notes the keys of all of them in the
// filter. One sequential scan costs a small fraction of a lookup per key,
// and with every record in memory Records is no longer backed: no lookups
// for new keys, and snapshots may replace the state whole.
func (r *Records) loadAll(load bool) error {
	end := prefixEnd(nil, r.prefix)
	limit := r.limit()
	full := !load
	for kg := r.first; kg <= r.last; kg++ {
		r.dead = r.dead[:0]
		if r.ttl > 0 {
			if err := r.firstIdx(kg); err != nil {
				return fmt.Errorf("state %s: load: %w", r.opts.Name, err)
			}
		}
		err := r.sp.Scan(kg, r.prefix, end, false, func(k, v []byte) (bool, error) {
			at, rec, timed := splitRecTime(v)
			if r.expiredAt(at, timed) {
				r.dead = append(r.dead, append([]byte(nil), k...))
				r.queueIdx(kg, at, k[len(r.prefix):], true)
				return true, nil
			}
			r.filter.add(k)
			if full || r.nLive >= limit {
				full = true
				if timed && r.ttl > 0 {
					// Left in the store: indexed for expiry (an entry a
					// spill wrote is written again).
					r.queueIdx(kg, at, k[len(r.prefix):], false)
				}
				return true, nil // stays in the store, looked up by Load
			}
			if timed && r.ttl > 0 {
				r.queueIdx(kg, at, k[len(r.prefix):], true) // in memory now
			}
			slot, err := r.src.LoadRecord(k[len(r.prefix):], rec)
			if err != nil {
				return false, fmt.Errorf("record %x: %w", k, err)
			}
			r.setKG(slot, kg)
			r.loaded(slot, at, timed)
			if key := k[len(r.prefix):]; r.parted != nil && (r.parted.PendingParts(slot) > 0 || r.hasDeltas(key)) {
				// Scanned once the key group's scan is done: fn may
				// not call the store.
				r.pend2 = append(r.pend2, pendingParts{slot: slot, kg: kg, key: append([]byte(nil), key...)})
			} else if r.parted != nil {
				r.setStored(slot, 1)
			}
			return true, nil
		})
		for _, pp := range r.pend2 {
			perr := r.loadParts(pp.slot, pp.kg, pp.key)
			if perr == nil && r.delta != nil {
				perr = r.mergeDeltas(pp.slot, pp.kg, pp.key)
			}
			if perr != nil && err == nil {
				err = perr
			}
		}
		r.pend2 = r.pend2[:0]
		for _, k := range r.dead {
			if derr := r.deleteStored(kg, k, 0); derr != nil && err == nil {
				err = derr
			}
		}
		r.dead = r.dead[:0]
		if ierr := r.applyIdx(); ierr != nil && err == nil {
			err = ierr
		}
		if err != nil {
			return fmt.Errorf("state %s: load: %w", r.opts.Name, err)
		}
	}
	// Keys with deltas and no stored record were not loaded: still
	// backed.
	r.backed = full || len(r.dkeys) > 0 || r.dall
	r.filterOK = true
	return nil
}

// mergeDeltas applies the stored deltas of key (key group kg) to the
// record in slot, which holds its stored record, and ends the merge: the
// record changed if there were any.
func (r *Records) mergeDeltas(slot int32, kg int, key []byte) error {
	found, err := r.loadDeltas(slot, kg, key)
	if err == nil {
		err = r.delta.EndMerge(slot)
	}
	if err != nil {
		return fmt.Errorf("state %s: %w", r.opts.Name, err)
	}
	if found {
		r.Changed(slot)
	}
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
	r.setFresh(slot)
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
	if !r.backed && r.parted == nil && r.ttl == 0 {
		// A fresh record: its key group waits for kgOf or resolveKGs.
		r.setLive(slot)
		r.setFresh(slot)
		r.lazyKG[slot>>6] |= 1 << (slot & 63)
		return
	}
	h, ok := HashIntKey(kind, n)
	if !ok {
		r.hb = AppendValue(r.hb[:0], types.BigIntValue(n).WithKind(kind))
		h = HashKey(r.hb)
	}
	r.setKG(slot, KeyGroupOfHash(h, r.opts.MaxParallelism))
	r.setFresh(slot)
}

// AddedInKeyGroup is AddedKey for a record that lives in key group kg
// rather than in its own key's (a record that belongs to another record of
// the operator, as a DISTINCT value to its group: it moves with that record
// on a restore at another parallelism). Load it back with LoadInKeyGroup.
func (r *Records) AddedInKeyGroup(slot int32, kg int) {
	if r.ttl > 0 {
		r.written(slot)
	}
	if r.sp == nil {
		return
	}
	r.setKG(slot, kg)
	r.setFresh(slot)
}

// setFresh notes that slot's new record is not in the store: all the
// records are in memory (not backed), so the store holds none of its key.
// Records with parts or a TTL keep their bookkeeping of the store and are
// left out.
func (r *Records) setFresh(slot int32) {
	if r.backed || r.parted != nil || r.ttl > 0 {
		return
	}
	if w := int(slot>>6) + 1; w > len(r.fresh) {
		r.fresh = append(r.fresh, make([]uint64, w-len(r.fresh))...)
		r.lazyKG = append(r.lazyKG, make([]uint64, w-len(r.lazyKG))...)
	}
	r.fresh[slot>>6] |= 1 << (slot & 63)
}

// kgOf returns the key group of slot's record, computing it from the
// record's key if AddedInt left it for later.
func (r *Records) kgOf(slot int32) int {
	if w := int(slot >> 6); w < len(r.lazyKG) && r.lazyKG[w]&(1<<(slot&63)) != 0 {
		r.resolveKG(slot)
	}
	return int(r.kgs[slot])
}

// resolveKG computes the key group of slot's record from its key
// (AppendRecordKey, while the slot still holds it) and clears its lazyKG
// bit.
func (r *Records) resolveKG(slot int32) {
	r.hb = r.src.AppendRecordKey(r.hb[:0], slot)
	r.kgs[slot] = uint16(KeyGroup(r.hb, r.opts.MaxParallelism))
	r.lazyKG[slot>>6] &^= 1 << (slot & 63)
}

// resolveKGs computes the key groups AddedInt left for later of the
// records whose bit is set in set.
func (r *Records) resolveKGs(set []uint64) {
	for w := range min(len(set), len(r.lazyKG)) {
		for m := set[w] & r.lazyKG[w]; m != 0; m &= m - 1 {
			r.resolveKG(int32(w<<6 | bits.TrailingZeros64(m)))
		}
	}
}

// takeFresh reports whether the record of slot (word w, bit) is fresh
// (setFresh), and clears the bit.
func (r *Records) takeFresh(w int, bit uint64) bool {
	if w >= len(r.fresh) || r.fresh[w]&bit == 0 {
		return false
	}
	r.fresh[w] &^= bit
	return true
}

// KeyGroupOf returns the key group of slot's record (with a store; 0
// without).
func (r *Records) KeyGroupOf(slot int32) int {
	if r.sp == nil {
		return 0
	}
	return r.kgOf(slot)
}

// setKG records that slot holds a record of key group kg (setLive).
func (r *Records) setKG(slot int32, kg int) {
	r.setLive(slot)
	r.kgs[slot] = uint16(kg)
	if w := int(slot >> 6); w < len(r.lazyKG) {
		r.lazyKG[w] &^= 1 << (slot & 63)
	}
}

// setLive grows the per-slot bookkeeping to slot and sets its live bit;
// its key group is the caller's to set (setKG, or AddedInt's lazyKG bit).
func (r *Records) setLive(slot int32) {
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
		r.touched = append(r.touched, make([]uint64, w-len(r.touched))...)
	}
	if bit := uint64(1) << (slot & 63); r.live[slot>>6]&bit == 0 {
		r.live[slot>>6] |= bit
		r.nLive++
	}
}

// Changed records that slot's record changed since the last snapshot.
//
// It is small enough to inline: an operator calls it for every record a
// batch changes first, and with a store and no TTL (bitsOnly) it only sets
// the slot's changed bit (the snapshot counts them).
func (r *Records) Changed(slot int32) {
	if r.bitsOnly {
		r.changed[slot>>6] |= 1 << (slot & 63)
		return
	}
	r.changedSlow(slot)
}

// changedSlow is Changed without a store (nothing to record but a TTL's
// write time) or with a TTL (the write also restamps the record). Not
// inlined, so that Changed is.
//
//go:noinline
func (r *Records) changedSlow(slot int32) {
	if r.ttl > 0 {
		r.written(slot)
	}
	if r.sp != nil {
		r.changed[slot>>6] |= 1 << (slot & 63)
	}
}

// changedCount returns the number of records changed since the last
// snapshot: the changed bits set, counted here rather than kept up to
// date by Changed, which runs for every record a batch changes.
func (r *Records) changedCount() int {
	n := 0
	for _, w := range r.changed {
		n += bits.OnesCount64(w)
	}
	return n
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
	r.changed[w] &^= bit
	if r.live[w]&bit != 0 {
		r.live[w] &^= bit
		r.nLive--
	}
	r.untouch(w, bit)
	if r.takeFresh(w, bit) && !r.backed {
		return nil // never written: nothing to delete
	}
	r.key = r.src.AppendRecordKey(append(r.key[:0], r.prefix...), slot)
	kg := r.kgOf(slot)
	if r.IsDelta(slot) {
		// Neither the stored record's parts nor its deltas are known.
		r.dslot[w] &^= bit
		r.nDelta--
		if err := r.deleteStored(kg, r.key, 0); err != nil {
			return fmt.Errorf("state %s: %w", r.opts.Name, err)
		}
		r.setStored(slot, 0)
		return nil
	}
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

// dropDeltas deletes the stored deltas of key (key group kg), unread.
func (r *Records) dropDeltas(kg int, key []byte) error {
	if r.delta == nil || !r.hasDeltas(key) {
		return nil
	}
	if err := r.deleteUnder(kg, r.dprefix, key, 8); err != nil {
		return err
	}
	r.noDeltas(key)
	return nil
}

// deleteStored deletes the stored record of pkey (the state's prefix and
// a key, key group kg) that is not in memory, with its parts >= 1 (parts
// of them stored, part 0 counted; 0: unknown, found by a scan) and its
// deltas. Nothing it calls writes r.key: pkey may be r.key.
func (r *Records) deleteStored(kg int, pkey []byte, parts int32) error {
	if err := r.sp.DeleteUncached(kg, pkey); err != nil {
		return err
	}
	key := pkey[len(r.prefix):]
	if r.parted != nil {
		var err error
		if parts > 0 {
			err = r.deleteParts(kg, key, 1, parts)
		} else {
			err = r.deleteAllParts(kg, key)
		}
		if err != nil {
			return err
		}
	}
	return r.dropDeltas(kg, key)
}

// deleteUnder deletes, unread, the stored keys of key group kg that are
// name | key followed by n more bytes (a part number, a generation): not
// those of a longer key that starts with key.
func (r *Records) deleteUnder(kg int, name, key []byte, n int) error {
	lo := append(append([]byte(nil), name...), key...)
	var keys []byte // the keys found, each len(lo)+n bytes
	err := r.sp.Scan(kg, lo, prefixEnd(nil, lo), false, func(k, _ []byte) (bool, error) {
		if len(k) == len(lo)+n {
			keys = append(keys, k...)
		}
		return true, nil
	})
	for k := keys; len(k) > 0; k = k[len(lo)+n:] {
		if derr := r.sp.DeleteUncached(kg, k[:len(lo)+n]); derr != nil && err == nil {
			err = derr
		}
	}
	return err
}

// untouch clears a slot's bit in touched (word w).
func (r *Records) untouch(w int, bit uint64) {
	if r.touched[w]&bit != 0 {
		r.touched[w] &^= bit
		r.nTouched--
	}
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
	return r.deleteUnder(kg, r.pprefix, key, 4)
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
	return r.LoadInKeyGroup(KeyGroup(key, r.opts.MaxParallelism), key)
}

// LoadInKeyGroup is Load for a record added with AddedInKeyGroup: it
// looks key up in key group kg.
func (r *Records) LoadInKeyGroup(kg int, key []byte) (int32, bool, error) {
	if r.sp == nil || !r.backed {
		return 0, false, nil
	}
	if kg < r.first || kg > r.last {
		return 0, false, fmt.Errorf("state %s: key %x is in key group %d, outside this subtask's [%d, %d]", r.opts.Name, key, kg, r.first, r.last)
	}
	r.key = append(append(r.key[:0], r.prefix...), key...)
	if r.filterOK && !r.filter.mayHold(r.key) {
		if r.delta != nil && r.hasDeltas(key) {
			return r.loadOnlyDeltas(key, kg) // only deltas were written
		}
		return 0, false, nil // never written
	}
	val, ok, err := r.sp.Get(kg, r.key)
	if err != nil {
		return 0, false, fmt.Errorf("state %s: %w", r.opts.Name, err)
	}
	if !ok {
		if r.delta != nil && r.hasDeltas(key) {
			return r.loadOnlyDeltas(key, kg)
		}
		return 0, false, nil
	}
	at, rec, timed := splitRecTime(val)
	if r.expiredAt(at, timed) {
		// Expired while out of memory: gone, as if its timer had fired.
		if err := r.deleteStored(kg, r.key, 0); err != nil {
			return 0, false, fmt.Errorf("state %s: %w", r.opts.Name, err)
		}
		if err := r.unindex(kg, at, key); err != nil {
			return 0, false, fmt.Errorf("state %s: %w", r.opts.Name, err)
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
	if r.delta != nil {
		if err := r.mergeDeltas(slot, kg, key); err != nil {
			return 0, false, err
		}
	}
	if timed {
		// In memory now: its expiry is the heap's (see sweepStored).
		if err := r.unindex(kg, at, key); err != nil {
			return 0, false, fmt.Errorf("state %s: %w", r.opts.Name, err)
		}
	}
	r.Touched(slot)
	return slot, true, nil
}

// loadOnlyDeltas is Load of a key whose stored record is only deltas.
func (r *Records) loadOnlyDeltas(key []byte, kg int) (int32, bool, error) {
	slot, err := r.delta.NewRecord(key)
	if err != nil {
		return 0, false, fmt.Errorf("state %s: record %x: %w", r.opts.Name, key, err)
	}
	r.setKG(slot, kg)
	r.loaded(slot, 0, false)
	if err := r.mergeDeltas(slot, kg, key); err != nil {
		return 0, false, err
	}
	r.Touched(slot)
	return slot, true, nil
}

// SetDelta tells Records that slot, just added (AddedKey or AddedInt) for
// a key not in memory, is a delta record: it takes the operator's writes
// without the stored record (see DeltaSource). Only while Blind.
func (r *Records) SetDelta(slot int32) {
	w, bit := int(slot>>6), uint64(1)<<(slot&63)
	if w >= len(r.dslot) {
		r.dslot = append(r.dslot, make([]uint64, w+1-len(r.dslot))...)
	}
	if w >= len(r.dsaved) {
		r.dsaved = append(r.dsaved, make([]uint64, w+1-len(r.dsaved))...)
	}
	r.dsaved[w] &^= bit
	if r.dslot[w]&bit == 0 {
		r.dslot[w] |= bit
		r.nDelta++
	}
}

// Blind reports whether a key not in memory may take blind writes: a
// DeltaSource's records are backed and have no TTL.
func (r *Records) Blind() bool { return r.delta != nil && r.backed && r.ttl == 0 && r.sp != nil }

// IsDelta reports whether slot is a delta record (SetDelta), whose whole
// record Complete reads.
func (r *Records) IsDelta(slot int32) bool {
	return int(slot>>6) < len(r.dslot) && r.dslot[slot>>6]&(1<<(slot&63)) != 0
}

// Complete makes delta record slot whole: the source merges the stored
// record of its key and the stored deltas with the writes the slot took
// (DeltaSource). The record is changed; it may be empty (the operator then
// removes it).
func (r *Records) Complete(slot int32) error {
	if !r.IsDelta(slot) {
		return nil
	}
	r.dslot[slot>>6] &^= 1 << (slot & 63)
	r.nDelta--
	r.delta.BeginMerge(slot)
	kg := r.kgOf(slot)
	r.key = r.src.AppendRecordKey(append(r.key[:0], r.prefix...), slot)
	val, ok, err := r.sp.Get(kg, r.key)
	if err != nil {
		return fmt.Errorf("state %s: %w", r.opts.Name, err)
	}
	key := r.key[len(r.prefix):] // no store call below writes r.key
	if ok {
		_, rec, _ := splitRecTime(val) // blind writes are off with a TTL
		if err := r.delta.LoadBase(slot, rec); err != nil {
			return fmt.Errorf("state %s: record %x: %w", r.opts.Name, key, err)
		}
		if err := r.loadParts(slot, kg, key); err != nil {
			return err
		}
	}
	if err := r.mergeDeltas(slot, kg, key); err != nil {
		return err
	}
	r.Changed(slot)
	r.Touched(slot)
	return nil
}

// bufferBytes is the memory of Records' bookkeeping and snapshot buffers.
func (r *Records) bufferBytes() int64 {
	const entBytes = int64(unsafe.Sizeof(recEnt{}))
	return int64(cap(r.kgs))*2 + int64(cap(r.live)+cap(r.changed)+cap(r.fresh)+cap(r.lazyKG))*8 +
		int64(cap(r.kgBytes))*8 + int64(cap(r.starts)+cap(r.bounds)+cap(r.pos)+cap(r.slots)+cap(r.cur)+cap(r.offs))*4 + int64(cap(r.kgChunk))*2 +
		int64(cap(r.ents)+cap(r.spare))*entBytes +
		int64(cap(r.wt)+cap(r.queued))*8 + int64(cap(r.expq))*16 + int64(cap(r.stored))*4 +
		int64(cap(r.kbuf)+cap(r.gbuf)) + r.filter.bytes() +
		int64(cap(r.dslot)+cap(r.dsaved)+cap(r.dkg)+cap(r.touched))*8 + int64(len(r.dkeys)+len(r.dnone))*deltaKeyBytes + int64(cap(r.dgone))*int64(unsafe.Sizeof(goneDelta{})) + int64(cap(r.dgbuf)) +
		int64(cap(r.tmin))*8 + int64(cap(r.sweep)+cap(r.unidx))*int64(unsafe.Sizeof(sweepEnt{})) + int64(cap(r.swb)+cap(r.unb)+cap(r.tk))
}

// MemoryBytes estimates the memory of the records in memory (RecordBytes
// each, not counting SetExtraBytes) with Records' own bookkeeping and
// buffers: what another Records of the same operator, sharing its budget,
// counts as extra bytes.
func (r *Records) MemoryBytes() int64 {
	return int64(r.nLive)*r.opts.RecordBytes + r.bufferBytes()
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

// Bytes returns the memory the records in memory take by Records'
// account (RecordBytes each, the operator's extra bytes and Records' own
// buffers): what OverBudget compares with the budget, for an operator
// that shares one budget among several Records.
func (r *Records) Bytes() int64 { return r.MemoryBytes() + r.extra }

// OverBudget reports whether the records in memory, with Records'
// buffers, exceed the budget: the operator should then emit what it holds
// and call Spill. Always false without a store.
func (r *Records) OverBudget() bool {
	return r.sp != nil && r.nLive > r.limit()
}

// Touched tells Records that slot's record was read: with a
// RecordDropper, a spill keeps it in memory (see Spill). A record Load or
// Complete read counts as read.
func (r *Records) Touched(slot int32) {
	if r.sp == nil {
		return
	}
	if bit := uint64(1) << (slot & 63); r.touched[slot>>6]&bit == 0 {
		r.touched[slot>>6] |= bit
		r.nTouched++
	}
}

// Spill writes every changed record back, then has the operator drop its
// in-memory records; from then on Records is backed. With a
// RecordDropper and no TTL, the records read since the last spill
// (Touched), up to half of the records and delta records excepted, stay in
// memory: a spill frees at least half the records and keeps the ones in
// use, which would be loaded again at once. Otherwise the operator drops
// them all (DropRecords).
func (r *Records) Spill() error {
	if r.sp == nil {
		return nil
	}
	if !r.backed {
		// Until now the store held the records in memory and no others:
		// their keys start the filter. Size its first segment for twice
		// what fits in memory: a lookup reads a word per segment, and the
		// filter's memory counts in the budget.
		if r.filter.first == 0 {
			r.filter.first = min(2*max(r.limit(), r.nLive), 1<<24)
		}
		for w, word := range r.live {
			for word != 0 {
				slot := int32(w<<6 | bits.TrailingZeros64(word))
				word &= word - 1
				r.key = r.src.AppendRecordKey(append(r.key[:0], r.prefix...), slot)
				r.filter.add(r.key)
			}
		}
	}
	if err := r.Snapshot(); err != nil {
		return err
	}
	if d, ok := r.src.(RecordDropper); ok && r.ttl == 0 && r.nTouched > 0 {
		r.dropCold(d)
		return nil
	}
	if r.ttl > 0 {
		// Only the store holds them now: they expire by its index.
		if err := r.indexDropped(); err != nil {
			return err
		}
	}
	r.forgetMemory()
	r.backed = true
	return nil
}

// forgetMemory drops every record held in memory with the bookkeeping of
// them (slots, key groups, parts stored, delta slots, live and changed
// bits, expiry queues): what a spill of all and Clear share.
func (r *Records) forgetMemory() {
	r.src.DropRecords()
	r.wt, r.expq, r.unstamped = r.wt[:0], r.expq[:0], r.unstamped[:0]
	clear(r.pend)
	clear(r.queued)
	r.queued = r.queued[:0]
	r.kgs, r.stored, r.storedTotal = r.kgs[:0], r.stored[:0], 0
	clear(r.dslot)
	r.dslot, r.nDelta = r.dslot[:0], 0
	clear(r.live)
	clear(r.changed)
	clear(r.touched)
	clear(r.fresh)
	clear(r.lazyKG)
	r.live, r.changed, r.touched, r.fresh = r.live[:0], r.changed[:0], r.touched[:0], r.fresh[:0]
	r.lazyKG = r.lazyKG[:0]
	r.nLive, r.nTouched = 0, 0
}

// Clear forgets every record, in memory and in the store: the operator
// has no use for any of them again (a join side once the other input has
// ended). The operator's in-memory records go (DropRecords), and so do
// the stored records with their parts, deltas, generation marks and TTL
// index entries; Records is then as if new, not backed. For Exclusive
// records the operator's key range is deleted in one step (a range
// deletion); otherwise the keys under each of the state's names are
// scanned and deleted, key group by key group. A snapshot after Clear
// holds none of the records.
func (r *Records) Clear() error {
	r.forgetMemory()
	clear(r.dsaved)
	r.dsaved = r.dsaved[:0]
	r.pend2, r.dead, r.unidx, r.unb = r.pend2[:0], r.dead[:0], r.unidx[:0], r.unb[:0]
	r.dkeys, r.dall, r.dnone = nil, false, nil
	clear(r.dkg)
	r.dgone, r.dgbuf = r.dgone[:0], r.dgbuf[:0]
	r.tmin = nil
	r.filter = keyFilter{}
	r.backed, r.filterOK = false, true
	if r.sp == nil {
		return nil
	}
	if err := r.deleteAll(); err != nil {
		return fmt.Errorf("state %s: clear: %w", r.opts.Name, err)
	}
	return nil
}

// deleteAll deletes every stored key of the state (Clear).
func (r *Records) deleteAll() error {
	if r.opts.Exclusive {
		// Nothing written before the commit: the range is deleted.
		if err := r.sp.ReplaceAll(); err != nil {
			return err
		}
		return r.sp.CommitThrough()
	}
	names := [][]byte{r.prefix}
	if r.parted != nil {
		names = append(names, r.pprefix)
	}
	if r.delta != nil {
		names = append(names, r.dprefix, r.gprefix)
	}
	if r.ttl > 0 {
		names = append(names, r.tprefix)
	}
	var keys []byte
	var lens []int
	for kg := r.first; kg <= r.last; kg++ {
		keys, lens = keys[:0], lens[:0]
		for _, name := range names {
			err := r.sp.Scan(kg, name, prefixEnd(nil, name), false, func(k, _ []byte) (bool, error) {
				keys = append(keys, k...)
				lens = append(lens, len(k))
				return true, nil
			})
			if err != nil {
				return err
			}
		}
		off := 0
		for _, n := range lens {
			if err := r.sp.DeleteUncached(kg, keys[off:off+n]); err != nil {
				return err
			}
			off += n
		}
	}
	return nil
}

// dropCold has the operator drop the records in memory not read since
// the last spill, the delta records, and the read ones past half of the
// records, after a snapshot wrote them.
func (r *Records) dropCold(d RecordDropper) {
	keep := r.nLive / 2
	for w, word := range r.live {
		hot := word & r.touched[w]
		if w < len(r.dslot) {
			hot &^= r.dslot[w]
			r.dslot[w] = 0
		}
		if n := bits.OnesCount64(hot); n <= keep {
			keep -= n
		} else {
			kept := uint64(0)
			for ; keep > 0; keep-- {
				low := hot & -hot
				kept |= low
				hot &^= low
			}
			hot = kept
		}
		drop := word &^ hot
		for drop != 0 {
			slot := int32(w<<6 | bits.TrailingZeros64(drop))
			drop &= drop - 1
			d.DropRecord(slot)
			r.live[w] &^= 1 << (slot & 63)
			r.nLive--
			if r.parted != nil {
				r.setStored(slot, 0)
			}
		}
	}
	clear(r.touched)
	r.nTouched, r.nDelta = 0, 0
	r.backed = true
}

// chunkEntries is how many changed records Snapshot encodes and sorts at a
// time (whole key groups, so a chunk may hold more). A chunk's buffers take
// about 65 bytes a record of an integer key (a 16-byte entry and its copy
// dealt by key group, two offsets, the key, the record and its gathered
// copy), so about 8.5 MiB. Each chunk
// reads its records from the operator's memory in slot order, but only
// the records of its key groups: with many chunks those reads skip too
// much to stream (W2's 500,000 changed records a subtask cost 1.6x the
// CPU per record in 8 chunks as in 4).
const chunkEntries = 1 << 17

// chunkBytes is the encoded size, by a SizeHinter's hints (hintedSize),
// past which a snapshot's chunk ends even with fewer than
// chunkEntries records: a join key's record is kilobytes, and a chunk of
// them took buffers of tens of MiB (the records, then gathered), made
// afresh at each spill, where chunks of this size reuse theirs.
const chunkBytes = 8 << 20

// Snapshot writes the records changed since the last call into the store
// in state-key order (deletions went to the store in Removed). When every
// record is in memory, the records are the operator's only state
// (Exclusive), and at least half of them changed, it writes all of them as
// the operator's complete state instead: the store replaces the old state
// at once rather than layering the changes over it, and writing the
// unchanged rest costs less than merging the changes in later.
//
// With a TTL it then deletes the records only the store holds whose TTL
// has passed (see sweepStored), after the writes: a record in memory is
// stored with its current write time by then.
func (r *Records) Snapshot() error {
	if err := r.snapshot(); err != nil {
		return err
	}
	return r.sweepStored()
}

func (r *Records) snapshot() error {
	if r.sp == nil {
		return nil
	}
	nChange := r.changedCount()
	all := r.wantAll(nChange)
	if nChange == 0 && !all {
		return r.deltasDone()
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
	r.usedK, r.usedG, r.usedE = 0, 0, 0
	if err := r.chunks(bitsOf, true, r.writeChunk); err != nil {
		return fmt.Errorf("state %s: %w", r.opts.Name, err)
	}
	return r.snapshotDone(bitsOf)
}

// wantAll reports whether a snapshot of nChange changed records writes
// all of them (see Snapshot).
func (r *Records) wantAll(nChange int) bool {
	if r.parted != nil && r.storedTotal > 4*int64(r.nLive) {
		// Long records: half the records changed says little of how many
		// of their parts did.
		return false
	}
	return r.opts.Exclusive && !r.backed && nChange > 0 && 2*nChange >= r.nLive
}

// snapshotDone ends a snapshot that wrote the records of bitsOf.
func (r *Records) snapshotDone(bitsOf []uint64) error {
	r.trimBuffers()
	for w := range min(len(r.fresh), len(bitsOf)) {
		r.fresh[w] &^= bitsOf[w]
	}
	clear(r.changed)
	return r.deltasDone()
}

// SnapshotWith is Snapshot of r and then o, two Records of one operator in
// one store, that writes the changes of both as one ascending run of
// keys, key group by key group, where two Snapshots write two runs. The
// store ingests a long run as an sstable, and a second, short run over
// the same key groups went into a Pebble batch instead, whose memtable
// flush then made a second level-0 file at each checkpoint that spanned
// every key group: a GroupAgg's few changed groups beside its millions of
// new DISTINCT entries (Nexmark q16) doubled the depth that level 0 grows
// by, and so the compactions that rewrite the state.
//
// Records with parts or deltas, or that would write all their records
// (Snapshot), take two Snapshots as before.
func (r *Records) SnapshotWith(o *Records) error {
	if !r.canJoin(o) {
		if err := r.Snapshot(); err != nil {
			return err
		}
		return o.Snapshot()
	}
	if err := r.snapshotJoined(o); err != nil {
		return err
	}
	if err := r.sweepStored(); err != nil {
		return err
	}
	return o.sweepStored()
}

// canJoin reports whether SnapshotWith can write r's and o's changes in
// one run.
func (r *Records) canJoin(o *Records) bool {
	switch {
	case r == o || r.sp == nil || !r.sp.Same(o.sp) || r.opts.Name == o.opts.Name:
		return false
	case r.parted != nil || o.parted != nil || r.delta != nil || o.delta != nil:
		return false
	}
	return !r.wantAll(r.changedCount()) && !o.wantAll(o.changedCount())
}

// snapshotJoined writes the changed records of r and o in state-key
// order: the key groups ascending, and within one key group the records
// of the name that sorts first (its prefix: length, then bytes). r's
// chunks lead; o's are sorted as the key groups reach them.
func (r *Records) snapshotJoined(o *Records) error {
	oFirst := bytes.Compare(o.prefix, r.prefix) < 0
	for _, x := range [2]*Records{r, o} {
		x.all = false
		x.usedK, x.usedG, x.usedE = 0, 0, 0
	}
	j := joinedRun{o: o, oFirst: oFirst}
	if o.planChunks(o.changed, true) > 0 {
		j.chunks = len(o.bounds) - 1
	}
	if r.planChunks(r.changed, true) > 0 {
		for c := 0; c+1 < len(r.bounds); c++ {
			slots, first, end := r.chunkAt(c)
			if len(slots) == 0 {
				continue
			}
			ents, fixed, err := r.sortedChunk(slots, first, end)
			if err != nil {
				return fmt.Errorf("state %s: %w", r.opts.Name, err)
			}
			for i := range ents {
				if err := j.upTo(int(ents[i].kg)); err != nil {
					return err
				}
				if err := r.put(ents, i, fixed); err != nil {
					return fmt.Errorf("state %s: %w", r.opts.Name, err)
				}
			}
		}
	}
	if err := j.upTo(r.opts.MaxParallelism); err != nil {
		return err
	}
	if err := r.snapshotDone(r.changed); err != nil {
		return err
	}
	return o.snapshotDone(o.changed)
}

// joinedRun writes the other Records' sorted entries of a SnapshotWith as
// the leading Records' entries reach their key groups.
type joinedRun struct {
	o      *Records
	oFirst bool // within a key group, o's records come first
	chunks int  // o's chunks (planChunks)
	c      int  // o's next chunk to sort
	ents   []recEnt
	fixed  int
	i      int // o's next entry in ents
}

// upTo writes o's entries that precede a record of the leading Records in
// key group kg (all of them for kg = MaxParallelism).
func (j *joinedRun) upTo(kg int) error {
	o := j.o
	for {
		for ; j.i < len(j.ents); j.i++ {
			k := int(j.ents[j.i].kg)
			if k > kg || (k == kg && !j.oFirst) {
				return nil
			}
			if err := o.put(j.ents, j.i, j.fixed); err != nil {
				return fmt.Errorf("state %s: %w", o.opts.Name, err)
			}
		}
		if j.c == j.chunks {
			return nil
		}
		slots, first, end := o.chunkAt(j.c)
		if first > kg {
			return nil // the next chunk starts past kg
		}
		j.c++
		if len(slots) == 0 {
			continue
		}
		ents, fixed, err := o.sortedChunk(slots, first, end)
		if err != nil {
			return fmt.Errorf("state %s: %w", o.opts.Name, err)
		}
		j.ents, j.fixed, j.i = ents, fixed, 0
	}
}

// markGen notes that the snapshot wrote a delta to key group kg.
func (r *Records) markGen(kg uint16) {
	if w := int(kg>>6) + 1; w > len(r.dkg) {
		r.dkg = append(r.dkg, make([]uint64, w-len(r.dkg))...)
	}
	r.dkg[kg>>6] |= 1 << (kg & 63)
}

// deltasDone ends a snapshot's deltas: it marks the key groups that got
// deltas of this generation with it and moves to the next, and deletes the
// stored deltas merged since the last snapshot (their records were just
// written).
func (r *Records) deltasDone() error {
	if r.delta == nil {
		return nil
	}
	var mark [8]byte
	binary.BigEndian.PutUint64(mark[:], r.gen)
	wrote := false
	for w, word := range r.dkg {
		for word != 0 {
			kg := w<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			if err := r.sp.Put(kg, r.gprefix, mark[:]); err != nil {
				return fmt.Errorf("state %s: %w", r.opts.Name, err)
			}
			wrote = true
		}
	}
	clear(r.dkg)
	if wrote {
		r.gen++
	}
	for _, g := range r.dgone {
		if err := r.sp.Delete(g.kg, r.dgbuf[g.off:g.off+g.n]); err != nil {
			return fmt.Errorf("state %s: %w", r.opts.Name, err)
		}
	}
	r.dgone, r.dgbuf = r.dgone[:0], r.dgbuf[:0]
	clear(r.dnone) // merged deltas deleted, new ones written
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
	const entBytes = int(unsafe.Sizeof(recEnt{}))
	trim := func(capBytes, usedBytes int) bool { return capBytes > trimMin && capBytes > 2*usedBytes }
	if trim(cap(r.kbuf), r.usedK) {
		r.kbuf = nil
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
	// Two offsets per entry and two more.
	if trim(cap(r.offs)*4, (2*r.usedE+2)*4) {
		r.offs = nil
	}
}

// hintedSize returns the bytes a snapshot writes for slot by its
// source's hints: its delta, or part 0 and the parts >= 1 it writes
// (all of them when the snapshot writes all).
func (r *Records) hintedSize(slot int32) int {
	if r.nDelta > 0 && r.IsDelta(slot) {
		return r.hint.EncodedSize(slot, DeltaPart)
	}
	n := r.hint.EncodedSize(slot, 0)
	switch {
	case r.parted == nil:
	case r.all:
		n += r.hint.EncodedSize(slot, AllPartsHint)
	default:
		n += r.hint.EncodedSize(slot, ChangedPartsHint)
	}
	return n
}

// chunks calls fn for the records whose bit is set in set, a chunk of
// whole key groups [first, end) at a time, in ascending key-group order:
// each chunk holds at least chunkEntries records, or chunkBytes of
// records by the source's size hints when weigh (SizeHinter), or the rest.
// fn gets the chunk's slots in ascending slot order. It walks the bit set
// twice whatever the number of chunks: once to count the records per key
// group (starts), which gives the chunks, and once to deal each slot to
// its chunk.
func (r *Records) chunks(set []uint64, weigh bool, fn func(slots []int32, first, end int) error) error {
	if r.planChunks(set, weigh) == 0 {
		return nil
	}
	for c := 0; c+1 < len(r.bounds); c++ {
		slots, first, end := r.chunkAt(c)
		if len(slots) > 0 {
			if err := fn(slots, first, end); err != nil {
				return err
			}
		}
	}
	return nil
}

// chunkAt returns the slots and key groups [first, end) of chunk c of the
// plan planChunks made.
func (r *Records) chunkAt(c int) (slots []int32, first, end int) {
	first, end = int(r.bounds[c]), int(r.bounds[c+1])
	return r.slots[r.starts[first]:r.starts[end]], first, end
}

// planChunks is the planning half of chunks: it counts the records of set
// per key group (r.starts), cuts the key groups into chunks (r.bounds:
// each chunk's first key group, then MaxParallelism) and deals the slots
// to their chunks in r.slots, and returns the number of records.
func (r *Records) planChunks(set []uint64, weigh bool) int {
	maxPar := r.opts.MaxParallelism
	r.starts = slices.Grow(r.starts[:0], maxPar+1)[:maxPar+1]
	clear(r.starts)
	weigh = weigh && r.hint != nil
	r.resolveKGs(set)
	if weigh {
		r.kgBytes = slices.Grow(r.kgBytes[:0], maxPar)[:maxPar]
		clear(r.kgBytes)
	}
	for w, word := range set {
		for word != 0 {
			slot := w<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			kg := r.kgs[slot]
			r.starts[kg+1]++
			if weigh {
				r.kgBytes[kg] += int64(r.hintedSize(int32(slot)))
			}
		}
	}
	for i := 1; i <= maxPar; i++ {
		r.starts[i] += r.starts[i-1]
	}
	total := int(r.starts[maxPar])
	if total == 0 {
		r.slots, r.bounds = r.slots[:0], r.bounds[:0]
		return 0
	}
	r.kgChunk = slices.Grow(r.kgChunk[:0], maxPar)[:maxPar]
	r.bounds, r.pos = r.bounds[:0], r.pos[:0]
	for kg := 0; kg < maxPar; {
		end := kg + 1
		var size int64
		if weigh {
			size = r.kgBytes[kg]
		}
		for end < maxPar && int(r.starts[end]-r.starts[kg]) < r.chunk && size < chunkBytes {
			if weigh {
				size += r.kgBytes[end]
			}
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
	return total
}

// writeChunk encodes the records in slots, of key groups [first, end),
// sorts them by key and writes them through.
func (r *Records) writeChunk(slots []int32, first, end int) error {
	ents, fixed, err := r.sortedChunk(slots, first, end)
	if err != nil {
		return err
	}
	for i := range ents {
		if err := r.put(ents, i, fixed); err != nil {
			return err
		}
	}
	return nil
}

// put writes entry i of sortedChunk's result through to the store.
func (r *Records) put(ents []recEnt, i, fixed int) error {
	key, rec := r.entry(ents, i, fixed)
	if r.backed && ents[i].part == 0 {
		r.filter.add(key)
	}
	// Unfiltered: Load looks up only keys r.filter may hold (filterOK),
	// but for the moments of a restore before LoadRestored.
	return r.sp.PutThroughUnfiltered(int(ents[i].kg), key, rec)
}

// entry returns the key (with the state's prefix) and the record of entry
// i of sortedChunk's result, with its fixed key length; the key is valid
// until the next call. A fixed key is rebuilt after the prefix in r.fkey,
// which holds the prefix from NewRecords on.
func (r *Records) entry(ents []recEnt, i, fixed int) (key, rec []byte) {
	e := &ents[i]
	start := uint32(0)
	if i > 0 {
		start = ents[i-1].idx
	}
	if fixed >= 0 {
		r.fkey = appendFixedKey(r.fkey[:len(r.prefix)], e.hi, e.num, fixed)
		return r.fkey, r.gbuf[start:e.idx]
	}
	return r.gbuf[start:e.num], r.gbuf[e.num:e.idx]
}

// sortedChunk encodes the keys and records of slots (one chunk's, of key
// groups [first, end), see chunks) into r.kbuf (offs), sorts their
// entries by state key (key group, then key), and gathers the records in
// that order into r.gbuf (see gather). It returns the sorted entries and,
// when every key has one length of at most 9 bytes (an integer key: the
// entries hold the keys), that length, else -1.
//
// It visits the slots in slot order, not key group by key group: the
// records are the operator's typed state, laid out by slot, and read in
// slot order the reads of each chunk are a forward stream that the CPU
// prefetches, where reading one key group's scattered slots would miss the
// cache on nearly every record. Without parts, the entries are then dealt
// to their key groups (r.starts counts them), so that only each key
// group's entries, few enough to stay in the CPU cache, are sorted; a
// PartedSource's entries, with their parts, are sorted whole by
// comparisons. A snapshot needs encoding buffers for one chunk only.
func (r *Records) sortedChunk(slots []int32, first, end int) ([]recEnt, int, error) {
	n := len(slots)
	kb := r.kbuf[:0]
	offs := slices.Grow(r.offs[:0], 2*n+2)
	ents := slices.Grow(r.ents[:0], n)
	if r.hint != nil && len(r.kgBytes) >= end {
		// Room for the chunk's records (part 0 and the parts written,
		// or a delta), by the hints chunks summed (weigh), with their
		// write times, made at once (and for each record before it is
		// encoded, as the keys take room too).
		size := 0
		if r.ttl > 0 {
			size = 9 * n
		}
		for kg := first; kg < end; kg++ {
			size += int(r.kgBytes[kg])
		}
		kb = reserve(kb, size)
	}
	bucketed := r.parted == nil
	klen := -1 // the length of every key so far; -2 once two differ or one is long
	for _, slot := range slots {
		k0 := len(kb)
		if r.nDelta > 0 && r.IsDelta(slot) {
			// A delta record: its writes, under its key and the
			// generation, beside the stored record.
			// (A DeltaSource is a PartedSource: not bucketed, so every
			// key is in kb.)
			offs = append(offs, uint32(k0))
			kb = r.src.AppendRecordKey(kb, slot)
			if bit := uint64(1) << (slot & 63); r.dsaved[slot>>6]&bit == 0 {
				r.addDeltaKey(kb[k0:])
				r.dsaved[slot>>6] |= bit
			}
			kb = binary.BigEndian.AppendUint64(kb, r.gen)
			offs = append(offs, uint32(len(kb)))
			if r.hint != nil {
				kb = reserve(kb, r.hint.EncodedSize(slot, DeltaPart))
			}
			kb = r.delta.AppendDelta(kb, slot)
			ents = append(ents, recEnt{idx: uint32(len(offs)/2 - 1), kg: r.kgs[slot], part: entDelta})
			klen = -2
			r.markGen(r.kgs[slot])
			continue
		}
		kb = r.src.AppendRecordKey(kb, slot)
		kg := r.kgs[slot]
		e := recEnt{idx: uint32(len(offs) / 2), kg: kg}
		nk := e.setFixed(kb[k0:], klen)
		switch {
		case bucketed && nk >= 0:
			kb = kb[:k0] // the entry holds the key
		case bucketed && klen >= 0:
			// The first key of another length: the keys left out
			// go back in.
			old, oldK0 := kb, k0
			kb = r.unfix(kb[:k0], offs, ents, klen)
			k0 = len(kb)
			kb = append(kb, old[oldK0:]...)
		}
		klen = nk
		kend := len(kb)
		offs = append(offs, uint32(k0), uint32(kend))
		if r.ttl > 0 {
			kb = binary.BigEndian.AppendUint64(append(kb, recTimeMark), uint64(r.wt[slot]))
		}
		if r.hint != nil {
			// The keys share the buffer: room for the record itself.
			kb = reserve(kb, r.hint.EncodedSize(slot, 0))
		}
		kb = r.src.AppendRecord(kb, slot)
		ents = append(ents, e)
		if bucketed {
			continue
		}
		np, changed := r.parted.ChangedParts(r.pbuf[:0], slot, r.all)
		r.pbuf = changed
		for _, p := range changed {
			if p < 1 || p >= np {
				continue
			}
			offs = append(offs, uint32(len(kb)))
			kb = append(kb, kb[k0:kend]...)
			kb = binary.BigEndian.AppendUint32(kb, uint32(p))
			offs = append(offs, uint32(len(kb)))
			if r.hint != nil {
				kb = reserve(kb, r.hint.EncodedSize(slot, p))
			}
			kb = r.parted.AppendRecordPart(kb, slot, p)
			ents = append(ents, recEnt{idx: uint32(len(offs)/2 - 1), kg: kg, part: entPart})
			klen = -2
		}
		if !r.all && r.stored[slot] > np {
			if err := r.deleteParts(int(kg), kb[k0:kend], np, r.stored[slot]); err != nil {
				return nil, 0, err
			}
		}
		r.setStored(slot, np)
	}
	offs = append(offs, uint32(len(kb)), uint32(len(kb)))
	r.kbuf, r.offs, r.ents = kb, offs, ents
	r.usedK, r.usedE = max(r.usedK, len(kb)), max(r.usedE, len(ents))
	if len(kb)+len(ents)*max(len(r.prefix), len(r.pprefix), len(r.dprefix)) > math.MaxUint32 {
		return nil, 0, fmt.Errorf("the records of %d keys to write exceed 4 GiB", len(ents))
	}
	if len(ents) == 0 {
		return ents, -1, nil
	}
	if !bucketed {
		klen = -2 // sorted by compareEnts
	}
	onlyRecords := true // no delta among the entries: all of one name
	if klen < 0 {
		// Compare by the keys' first 9 bytes (hi and num), then whole.
		for i := range ents {
			e := &ents[i]
			e.hi, e.num = leadKey(kb[offs[2*e.idx]:offs[2*e.idx+1]])
			onlyRecords = onlyRecords && e.part == entRecord
		}
	}
	if !bucketed {
		slices.SortFunc(ents, r.compareEnts)
	} else {
		// Deal the entries to their key groups' places, [starts[kg],
		// starts[kg+1]) of the chunk, in slot order: a counting sort by key
		// group, whose counts chunks made. Then each key group's entries,
		// few enough to stay in the CPU cache, are sorted by key.
		r.cur = slices.Grow(r.cur[:0], end-first)[:end-first]
		cur := r.cur
		for kg := first; kg < end; kg++ {
			cur[kg-first] = r.starts[kg] - r.starts[first]
		}
		dealt := slices.Grow(r.spare[:0], n)[:n]
		for _, e := range ents {
			c := &cur[int(e.kg)-first]
			dealt[*c] = e
			*c++
		}
		ents, r.spare = dealt, ents
		for kg := first; kg < end; kg++ {
			lo, hi := r.starts[kg]-r.starts[first], r.starts[kg+1]-r.starts[first]
			seg := ents[lo:hi]
			switch {
			case len(seg) < 2:
			case klen < 0 && (len(seg) < radixMin || !onlyRecords):
				slices.SortFunc(seg, r.compareEnts)
			case klen < 0:
				// By the first 9 bytes without comparisons, then the
				// runs that share them (one value of many groups: a
				// DISTINCT entry's key) by their whole keys.
				if s := radixSort(seg, r.spare[lo:hi]); &s[0] != &seg[0] {
					copy(seg, s)
				}
				r.sortTies(seg)
			case len(seg) < radixMin:
				slices.SortFunc(seg, compareFixed)
			default:
				if s := radixSort(seg, r.spare[lo:hi]); &s[0] != &seg[0] {
					copy(seg, s)
				}
			}
		}
	}
	r.ents = ents
	r.gather(ents, klen >= 0)
	return ents, klen, nil
}

// unfix puts the keys of the chunk's entries so far, all of length klen,
// which the entries hold and kb (their records, see sortedChunk) left
// out, back before their records, once an entry comes whose key is of
// another length. It returns the new buffer and rewrites offs;
// the old buffer becomes r.gbuf (which gather overwrites), and its content
// stays valid until then.
func (r *Records) unfix(kb []byte, offs []uint32, ents []recEnt, klen int) []byte {
	nb := slices.Grow(r.gbuf[:0], 2*(len(kb)+len(ents)*klen))
	for i := range ents {
		e := &ents[i]
		rs, end := offs[2*i+1], uint32(len(kb))
		if i+1 < len(ents) {
			end = offs[2*i+2]
		}
		offs[2*i] = uint32(len(nb))
		nb = appendFixedKey(nb, e.hi, e.num, klen)
		offs[2*i+1] = uint32(len(nb))
		nb = append(nb, kb[rs:end]...)
	}
	r.gbuf = kb[:0]
	return nb
}

// setFixed sets hi and num from key, of a length up to 9 bytes, when klen
// (the length of every key before, or -1 for none) is still fixed, and
// returns the new klen: -2 once the keys are not all of one length up to 9
// bytes.
func (e *recEnt) setFixed(key []byte, klen int) int {
	if (klen == -1 && len(key) <= 9) || klen == len(key) {
		e.hi, e.num = fixedKey(key)
		return len(key)
	}
	return -2
}

// radixMin is the fewest entries of a key group that sortedChunk sorts
// with a radix sort rather than by comparisons.
const radixMin = 256

// compareFixed orders the entries of fixed-length keys of one key group.
func compareFixed(a, b recEnt) int {
	if a.hi != b.hi {
		return int(a.hi) - int(b.hi)
	}
	return cmp.Compare(a.num, b.num)
}

// compareEnts orders entries by state key: key group, the record or its
// parts (the second name, which sorts after the first: its length byte is
// larger), then the key, first by its leading 9 bytes (hi, num: leadKey),
// then whole.
func (r *Records) compareEnts(a, b recEnt) int {
	switch {
	case a.kg != b.kg:
		return int(a.kg) - int(b.kg)
	case a.part != b.part:
		return int(a.part) - int(b.part)
	case a.hi != b.hi:
		return int(a.hi) - int(b.hi)
	case a.num != b.num:
		return cmp.Compare(a.num, b.num)
	}
	of := r.offs
	return bytes.Compare(r.kbuf[of[2*a.idx]:of[2*a.idx+1]], r.kbuf[of[2*b.idx]:of[2*b.idx+1]])
}

// gather copies the entries' records into r.gbuf in the entries' (sorted)
// order, each preceded by its prefixed key unless fixed (then r.kbuf holds
// only the records), and leaves in
// each entry where its record ends in r.gbuf (idx) and, unless fixed,
// where its key does (num). In one short loop the reads of the scattered
// entries overlap; in the write loop each would stall the sstable writer.
func (r *Records) gather(ents []recEnt, fixed bool) {
	kb, of := r.kbuf, r.offs
	size := len(kb) // keys and records, or records (fixed: no keys)
	if !fixed {
		size += len(ents) * max(len(r.prefix), len(r.pprefix), len(r.dprefix))
	}
	out := slices.Grow(r.gbuf[:0], size)
	for i := range ents {
		e := &ents[i]
		if fixed {
			out = append(out, kb[of[2*e.idx+1]:of[2*e.idx+2]]...)
			e.idx = uint32(len(out))
			continue
		}
		switch e.part {
		case entRecord:
			out = append(out, r.prefix...)
		case entDelta:
			out = append(out, r.dprefix...)
		default:
			out = append(out, r.pprefix...)
		}
		// The key and the record follow each other in kbuf.
		j := 2 * e.idx
		ks, rs, end := of[j], of[j+1], of[j+2]
		out = append(out, kb[ks:end]...)
		e.num = uint64(len(out) - int(end-rs))
		e.idx = uint32(len(out))
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
	return 0, leadNum(k)
}

// appendFixedKey appends the key of length n (at most 9) that fixedKey
// split into hi and num.
func appendFixedKey(dst []byte, hi uint8, num uint64, n int) []byte {
	if n == 9 {
		return binary.BigEndian.AppendUint64(append(dst, hi), num)
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], num)
	return append(dst, b[:n]...)
}

// leadKey returns the first 9 bytes of k (padded with zeros) as a high
// byte and a number: keys whose pairs differ order as the pairs do.
func leadKey(k []byte) (hi uint8, num uint64) {
	if len(k) == 0 {
		return 0, 0
	}
	return k[0], leadNum(k[1:])
}

// sortTies sorts by whole keys each run of entries that radixSort left in
// place because they share their first 9 bytes (hi, num). The entries are
// of one key group and all records (sortedChunk's radix case), so only
// their keys differ, and within a run only past the bytes they share: a
// short run (a value of a few groups: q16's DISTINCT entries) is sorted
// by insertion on those rest bytes, without compareEnts' calls.
func (r *Records) sortTies(seg []recEnt) {
	for i := 0; i < len(seg); {
		j := i + 1
		for j < len(seg) && seg[j].num == seg[i].num && seg[j].hi == seg[i].hi {
			j++
		}
		switch {
		case j-i > tieInsertMax:
			slices.SortFunc(seg[i:j], r.compareEnts)
		case j-i > 1:
			r.insertTies(seg[i:j])
		}
		i = j
	}
}

// tieInsertMax is the longest run of ties that sortTies sorts by
// insertion.
const tieInsertMax = 12

// insertTies sorts run, entries of one key group and name whose keys'
// first 9 bytes (padded with zeros: leadKey) are equal, by key, by
// insertion. Two such keys agree on their first min(9, both lengths)
// bytes, so the rest decides.
func (r *Records) insertTies(run []recEnt) {
	kb, of := r.kbuf, r.offs
	for i := 1; i < len(run); i++ {
		e := run[i]
		k := kb[of[2*e.idx]:of[2*e.idx+1]]
		j := i
		for ; j > 0; j-- {
			p := kb[of[2*run[j-1].idx]:of[2*run[j-1].idx+1]]
			s := min(9, len(k), len(p))
			if bytes.Compare(p[s:], k[s:]) <= 0 {
				break
			}
			run[j] = run[j-1]
		}
		run[j] = e
	}
}

// leadNum returns the first 8 bytes of k (padded with zeros) big-endian:
// keys whose leadNums differ order as their leadNums do.
func leadNum(k []byte) uint64 {
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

// radixSort sorts the entries of one key group by (hi, num) with a
// least-significant-digit radix sort over their 9 bytes, skipping the bytes
// that all entries share (the high bytes of small numbers, an integer
// key's tag byte). tmp must be as long as a; the result is a or tmp.
//
// One pass over the entries finds the bytes in which some differ; only
// those are counted and dealt, each in a pass of its own (the entries of a
// key group stay in the CPU cache). Integer keys of one key group mostly
// differ in their low two or three bytes, and counting all nine bytes of
// every entry cost more than the passes.
func radixSort(a, tmp []recEnt) []recEnt {
	var diff uint64
	var diffHi uint8
	num0, hi0 := a[0].num, a[0].hi
	for i := range a {
		diff |= a[i].num ^ num0
		diffHi |= a[i].hi ^ hi0
	}
	src, dst := a, tmp
	for d := range 9 { // num's 8 bytes, then hi
		if (d < 8 && byte(diff>>(8*d)) == 0) || (d == 8 && diffHi == 0) {
			continue // every entry has this byte
		}
		var pos [256]int32
		for i := range src {
			pos[digit(&src[i], d)]++
		}
		var sum int32
		for b := range 256 {
			c := pos[b]
			pos[b] = sum
			sum += c
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

// digit returns byte d of an entry's sort key within its key group, least
// significant first.
func digit(e *recEnt, d int) byte {
	if d < 8 {
		return byte(e.num >> (8 * d))
	}
	return e.hi
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
		// Stored without a time (before the TTL was set): written now, and
		// stored so by the next snapshot.
		r.Changed(slot)
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
	r.changed[w] &^= bit
	if r.live[w]&bit != 0 {
		r.live[w] &^= bit
		r.nLive--
	}
	r.untouch(w, bit)
	r.takeFresh(w, bit)
	if r.parted != nil {
		r.setStored(slot, 0)
	}
	if r.IsDelta(slot) {
		r.dslot[w] &^= bit
		r.nDelta--
	}
}
