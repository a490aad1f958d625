package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/RaduBerinde/btreemap"

	"github.com/weir-sql/weir/statestore"
)

// backend stores the bytes of one operator subtask's keyed state: keys are
// (key group, key) with the key laid out by Keyed. Values returned by get
// are valid until the next call. ordered says whether the key belongs to a
// state that is scanned (maps, lists, sorted maps, timers): the in-memory
// backend indexes only those in order.
type backend interface {
	get(kg int, key []byte) ([]byte, bool, error)
	put(kg int, key, value []byte, ordered bool) error
	del(kg int, key []byte, ordered bool) error
	// scan adds to c up to limit entries of key group kg with lower <= key
	// < upper, ascending (descending with reverse).
	scan(kg int, lower, upper []byte, reverse bool, limit int, c *chunk) error
}

// chunk is a page of scanned entries, copied so that the caller may change
// state while it goes through them.
type chunk struct {
	buf  []byte
	ents []chunkEntry
	// lower, upper are the bounds of the scan that fills this chunk.
	lower, upper []byte
}

type chunkEntry struct{ k0, k1, v1 int }

func (c *chunk) reset() { c.buf, c.ents = c.buf[:0], c.ents[:0] }

func (c *chunk) add(k, v []byte) {
	k0 := len(c.buf)
	c.buf = append(c.buf, k...)
	k1 := len(c.buf)
	c.buf = append(c.buf, v...)
	c.ents = append(c.ents, chunkEntry{k0, k1, len(c.buf)})
}

func (c *chunk) key(i int) []byte { e := c.ents[i]; return c.buf[e.k0:e.k1] }
func (c *chunk) val(i int) []byte { e := c.ents[i]; return c.buf[e.k1:e.v1] }

// storeBackend keeps state in a statestore Space (Pebble behind the
// store's write-back cache), which the task snapshots and restores.
type storeBackend struct{ sp *statestore.Space }

func (b storeBackend) get(kg int, key []byte) ([]byte, bool, error) { return b.sp.Get(kg, key) }
func (b storeBackend) put(kg int, key, value []byte, _ bool) error  { return b.sp.Put(kg, key, value) }
func (b storeBackend) del(kg int, key []byte, _ bool) error         { return b.sp.Delete(kg, key) }

func (b storeBackend) scan(kg int, lower, upper []byte, reverse bool, limit int, c *chunk) error {
	limit += len(c.ents)
	return b.sp.Scan(kg, lower, upper, reverse, func(k, v []byte) (bool, error) {
		c.add(k, v)
		return len(c.ents) < limit, nil
	})
}

// memBackend keeps state in memory: a hash map serves point reads and
// writes, and a B-tree orders the keys of the states that are scanned. On
// its own it is the state of a job without checkpoints; in a
// hybridBackend it also tracks what changed (track) so that the changes
// can be written to the store at a checkpoint.
type memBackend struct {
	points  map[string]*memEntry
	ordered *btreemap.BTreeMap[string, *memEntry]
	// pending are ordered entries put since the last scan, added to the
	// B-tree (sorted, in one go) by the next scan: state that is written
	// far more often than scanned (a join side's rows) skips the tree.
	pending []*memEntry
	key, hi []byte
	lk      []byte // a list element's key (writeList)

	track bool        // keep dirty entries in dirty, and deleted ones until written
	dirty []*memEntry // entries changed since the last takeDirty
	bytes int64       // approximate memory of the entries
	slab  []memEntry  // entries are allocated from here, a block at a time
}

// Entry flags.
const (
	memInTree  uint8 = 1 << iota // the key is in the ordered index (or in pending)
	memDirty                     // changed since the last write to the store (in dirty)
	memDeleted                   // a deletion not yet written to the store (track only)
	memStored                    // the store holds the key (track only)
	memPending                   // in pending: not in the B-tree yet
)

type memEntry struct {
	key   string // key group (2 bytes, big-endian) | key
	val   []byte
	list  *memList // a ListState list kept as one entry (memlist.go); val is then nil
	flags uint8
}

// memEntryBytes approximates the memory of an entry beyond its key and
// value: the entry, its map slot and its B-tree slot.
const memEntryBytes = 112

func (e *memEntry) size() int64 {
	n := int64(len(e.key)+cap(e.val)) + memEntryBytes
	if e.list != nil {
		n += e.list.bytes()
	}
	return n
}

func newMemBackend() *memBackend {
	return &memBackend{
		points:  make(map[string]*memEntry),
		ordered: btreemap.New[string, *memEntry](16, strings.Compare),
	}
}

// memKey is key group (2 bytes, big-endian) | key.
func (m *memBackend) memKey(kg int, key []byte) []byte {
	m.key = append(binary.BigEndian.AppendUint16(m.key[:0], uint16(kg)), key...)
	return m.key
}

func (m *memBackend) get(kg int, key []byte) ([]byte, bool, error) {
	e := m.points[string(m.memKey(kg, key))]
	if e == nil || e.flags&memDeleted != 0 {
		return nil, false, nil
	}
	return e.val, true, nil
}

func (m *memBackend) newEntry(key string) *memEntry {
	if len(m.slab) == 0 {
		m.slab = make([]memEntry, 64)
	}
	e := &m.slab[0]
	m.slab = m.slab[1:]
	e.key = key
	return e
}

func (m *memBackend) changed(e *memEntry) {
	if m.track && e.flags&memDirty == 0 {
		e.flags |= memDirty
		m.dirty = append(m.dirty, e)
	}
}

func (m *memBackend) put(kg int, key, value []byte, ordered bool) error {
	k := m.memKey(kg, key)
	if e := m.points[string(k)]; e != nil {
		before := e.size()
		e.val = append(e.val[:0], value...)
		if e.flags&memDeleted != 0 {
			e.flags &^= memDeleted
			if ordered {
				m.addOrdered(e)
			}
		}
		m.bytes += e.size() - before
		m.changed(e)
		return nil
	}
	e := m.newEntry(string(k))
	e.val = append([]byte(nil), value...)
	m.points[e.key] = e
	if ordered {
		m.addOrdered(e)
	}
	m.bytes += e.size()
	m.changed(e)
	return nil
}

// addOrdered puts e in the ordered index, through pending.
func (m *memBackend) addOrdered(e *memEntry) {
	e.flags |= memInTree
	if e.flags&memPending == 0 {
		e.flags |= memPending
		m.pending = append(m.pending, e)
	}
}

// flushPending adds the pending entries to the B-tree, in key order.
func (m *memBackend) flushPending() {
	if len(m.pending) == 0 {
		return
	}
	p := m.pending[:0]
	for _, e := range m.pending {
		if e.flags&memPending != 0 {
			e.flags &^= memPending
			if e.flags&memInTree != 0 {
				p = append(p, e)
			}
		}
	}
	slices.SortFunc(p, func(a, b *memEntry) int { return strings.Compare(a.key, b.key) })
	for i, e := range p {
		m.ordered.ReplaceOrInsert(e.key, e)
		p[i] = nil
	}
	clear(m.pending[len(p):])
	m.pending = m.pending[:0]
}

// load adds an entry read from the store (unchanged, ordered).
func (m *memBackend) load(k, value []byte) {
	e := m.newEntry(string(k))
	e.val = append([]byte(nil), value...)
	e.flags = memInTree | memStored
	m.points[e.key] = e
	m.ordered.ReplaceOrInsert(e.key, e)
	m.bytes += e.size()
}

func (m *memBackend) del(kg int, key []byte, _ bool) error {
	k := m.memKey(kg, key)
	e := m.points[string(k)]
	if e == nil || e.flags&memDeleted != 0 {
		return nil
	}
	if e.flags&memInTree != 0 {
		if e.flags&memPending != 0 {
			e.flags &^= memPending // skipped by flushPending
		} else {
			m.ordered.Delete(e.key)
		}
		e.flags &^= memInTree
	}
	if m.track && e.flags&memStored != 0 {
		// Kept until the deletion is written to the store.
		e.flags |= memDeleted
		m.bytes -= int64(cap(e.val))
		e.val = nil
		m.bytes += int64(cap(e.val))
		m.changed(e)
		return nil
	}
	// Never written to the store: forgotten (if it is in dirty, its
	// memDeleted flag tells takeDirty to skip it).
	e.flags |= memDeleted
	delete(m.points, e.key)
	m.bytes -= e.size()
	return nil
}

func (m *memBackend) scan(kg int, lower, upper []byte, reverse bool, limit int, c *chunk) error {
	m.flushPending()
	lo := m.memKey(kg, lower)
	// The bounds alias buffers that do not change during the call.
	hi := btreemap.Max[string]()
	switch {
	case upper != nil:
		m.hi = append(binary.BigEndian.AppendUint16(m.hi[:0], uint16(kg)), upper...)
		hi = btreemap.LT(unsafeString(m.hi))
	case kg < 0xFFFF:
		m.hi = binary.BigEndian.AppendUint16(m.hi[:0], uint16(kg+1))
		hi = btreemap.LT(unsafeString(m.hi))
	}
	limit += len(c.ents)
	yield := func(k string, e *memEntry) bool {
		c.add(unsafeBytes(k)[2:], e.val)
		return len(c.ents) < limit
	}
	if reverse {
		m.ordered.DescendFunc(hi, btreemap.GE(unsafeString(lo)), yield)
	} else {
		m.ordered.AscendFunc(btreemap.GE(unsafeString(lo)), hi, yield)
	}
	return nil
}

// writeDirty writes the entries changed since the last call to sp, in key
// order: values through the store's write-through path (ascending runs
// become ingested sstables), deletions of stored keys through its cache.
func (m *memBackend) writeDirty(sp *statestore.Space) error {
	// Entries put and deleted since the last call (never written) are
	// dropped before sorting: with short-lived state (an interval join's
	// rows, timers) they are most of the list.
	d := m.dirty[:0]
	for i, e := range m.dirty {
		m.dirty[i] = nil
		if e.flags&(memDeleted|memStored) == memDeleted && (e.list == nil || e.list.stored == 0) {
			e.flags &^= memDirty
			continue
		}
		d = append(d, e)
	}
	slices.SortFunc(d, func(a, b *memEntry) int { return strings.Compare(a.key, b.key) })
	for i, e := range d {
		d[i] = nil
		e.flags &^= memDirty
		kg := int(binary.BigEndian.Uint16(unsafeBytes(e.key)))
		key := unsafeBytes(e.key)[2:]
		switch {
		case e.list != nil:
			if err := m.writeList(sp, e, kg, key); err != nil {
				return err
			}
		case e.flags&memDeleted == 0:
			if err := sp.PutThrough(kg, key, e.val); err != nil {
				return err
			}
			e.flags |= memStored
		case e.flags&memStored != 0:
			if err := sp.Delete(kg, key); err != nil {
				return err
			}
			if m.points[e.key] == e {
				delete(m.points, e.key)
				m.bytes -= e.size()
			}
		}
	}
	m.dirty = d[:0]
	return nil
}

// hybridBackend keeps a subtask's keyed state in memory (a tracking
// memBackend) while it fits in the store's cache budget, and writes what
// changed into the store at every snapshot (Store.OnSnapshot): point reads
// of absent keys and scans never touch Pebble. The memory holds all the
// state of the subtask's key groups (restored state is loaded at open), so
// it is complete. When it outgrows the budget, every change is written
// back, the memory is dropped and from then on the state is read and
// written in the store (through its write-back cache).
type hybridBackend struct {
	mem    *memBackend // nil once spilled
	st     storeBackend
	budget int64
}

func newHybridBackend(sp *statestore.Space, first, last int) (*hybridBackend, error) {
	h := &hybridBackend{mem: newMemBackend(), st: storeBackend{sp}, budget: sp.CacheBytes()}
	h.mem.track = true
	sp.OnSnapshot(h.writeBack)
	if err := h.loadAll(first, last); err != nil {
		return nil, err
	}
	return h, nil
}

var errLoadStop = errors.New("over budget")

// loadAll reads the state of key groups [first, last] from the store into
// memory, or, if it does not fit, leaves it in the store.
func (h *hybridBackend) loadAll(first, last int) error {
	m := h.mem
	for kg := first; kg <= last; kg++ {
		err := h.st.sp.Scan(kg, nil, nil, false, func(k, v []byte) (bool, error) {
			m.load(m.memKey(kg, k), v)
			if m.bytes > h.budget {
				return false, errLoadStop
			}
			return true, nil
		})
		if errors.Is(err, errLoadStop) {
			h.mem = nil // nothing changed yet: the store has it all
			return nil
		}
		if err != nil {
			return fmt.Errorf("state: load: %w", err)
		}
	}
	return nil
}

// writeBack writes the changes held in memory into the store.
func (h *hybridBackend) writeBack() error {
	if h.mem == nil {
		return nil
	}
	if err := h.mem.writeDirty(h.st.sp); err != nil {
		return fmt.Errorf("state: write back: %w", err)
	}
	return nil
}

// spilled reports whether the state is in the store only.
func (h *hybridBackend) spilled() bool { return h.mem == nil }

func (h *hybridBackend) get(kg int, key []byte) ([]byte, bool, error) {
	if h.mem == nil {
		return h.st.get(kg, key)
	}
	return h.mem.get(kg, key)
}

func (h *hybridBackend) put(kg int, key, value []byte, ordered bool) error {
	if h.mem == nil {
		return h.st.put(kg, key, value, ordered)
	}
	if err := h.mem.put(kg, key, value, ordered); err != nil {
		return err
	}
	if h.mem.bytes > h.budget {
		return h.spill()
	}
	return nil
}

func (h *hybridBackend) del(kg int, key []byte, ordered bool) error {
	if h.mem == nil {
		return h.st.del(kg, key, ordered)
	}
	return h.mem.del(kg, key, ordered)
}

// listAdd, listGet and listClear keep ListState lists as memList entries
// while the state is in memory (see memBackend.listAdd); ok is false once
// spilled or for a generic list.
func (h *hybridBackend) listAdd(kg int, key, value []byte) (ok bool, err error) {
	if h.mem == nil {
		return false, nil
	}
	if ok, err := h.mem.listAdd(kg, key, value); !ok || err != nil {
		return ok, err
	}
	if h.mem.bytes > h.budget {
		return true, h.spill()
	}
	return true, nil
}

func (h *hybridBackend) listGet(kg int, key []byte, fn func(val []byte) (bool, error)) (bool, error) {
	if h.mem == nil {
		return false, nil
	}
	return h.mem.listGet(kg, key, fn)
}

func (h *hybridBackend) listClear(kg int, key []byte) (bool, error) {
	if h.mem == nil {
		return false, nil
	}
	return h.mem.listClear(kg, key)
}

func (h *hybridBackend) scan(kg int, lower, upper []byte, reverse bool, limit int, c *chunk) error {
	if h.mem == nil {
		return h.st.scan(kg, lower, upper, reverse, limit, c)
	}
	return h.mem.scan(kg, lower, upper, reverse, limit, c)
}

// spill writes every change back and drops the memory.
func (h *hybridBackend) spill() error {
	if err := h.writeBack(); err != nil {
		return err
	}
	h.mem = nil
	return nil
}

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
func unsafeBytes(s string) []byte  { return unsafe.Slice(unsafe.StringData(s), len(s)) }
