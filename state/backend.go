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
// are valid until the next call. idx says how a key is scanned (see
// index): the in-memory backend orders only the keys that are, and keeps
// the keys of a group (idx > 0) in their group only, so every access to
// a key must pass the same idx.
type backend interface {
	get(kg int, key []byte, idx index) ([]byte, bool, error)
	put(kg int, key, value []byte, idx index) error
	del(kg int, key []byte, idx index) error
	// scan adds to c up to limit entries of key group kg with lower <= key
	// < upper, ascending (descending with reverse). With idx a group (> 0),
	// the scan stays within the group of lower[:idx]: upper is nil, in that
	// group, or the end of its prefix.
	scan(kg int, lower, upper []byte, idx index, reverse bool, limit int, c *chunk) error
}

// index says how the keys of a state are scanned: never (pointIndex:
// values), across keys of the key group (globalIndex: timers, lists), or
// within a group of keys sharing a prefix, the one of a map state and a
// current key (a positive index is the length of that prefix). The memory
// backend keeps each group in its own small ordered container, found by
// one hash lookup, so that seeks in it compare only map keys.
type index int

const (
	pointIndex  index = -1
	globalIndex index = 0
)

// chunk is a page of scanned entries, copied so that the caller may change
// state while it goes through them. A memory group's scan (memGroup.scan)
// copies nothing: it lists the entries in mem, whose keys are immutable,
// and at copies an entry's value when the caller reaches it.
type chunk struct {
	buf  []byte
	ents []chunkEntry
	mem  []*memEntry
	// lower, upper are the bounds of the scan that fills this chunk
	// (upper only if hasUpper), in key group kg.
	lower, upper []byte
	hasUpper     bool
	kg           int
	// cur is the key the scan's fn is at (nil between calls); stale is
	// set when fn wrote a key ahead of it (Keyed.noteWrite).
	cur   []byte
	stale bool
}

type chunkEntry struct{ k0, k1, v1 int }

func (c *chunk) reset() {
	c.buf, c.ents = c.buf[:0], c.ents[:0]
	clear(c.mem)
	c.mem = c.mem[:0]
}

// len returns the number of entries in the chunk.
func (c *chunk) len() int { return len(c.ents) + len(c.mem) }

// at returns entry i of a chunk filled by one scan, valid until the next
// call; ok is false for an entry of mem deleted since the scan (a change
// the caller made ahead of its position). An entry of mem is read as it
// is now: with the changes the caller made to it since the scan.
func (c *chunk) at(i int) (key, val []byte, ok bool) {
	if len(c.mem) == 0 {
		return c.key(i), c.val(i), true
	}
	e := c.mem[i]
	if e.flags&memDeleted != 0 {
		return nil, nil, false
	}
	c.buf = append(c.buf[:0], e.val...)
	return unsafeBytes(e.key)[2:], c.buf, true
}

// lastKey returns the key of the chunk's last entry, deleted or not.
func (c *chunk) lastKey() []byte {
	if n := len(c.mem); n > 0 {
		return unsafeBytes(c.mem[n-1].key)[2:]
	}
	return c.key(len(c.ents) - 1)
}

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

func (b storeBackend) get(kg int, key []byte, _ index) ([]byte, bool, error) {
	return b.sp.Get(kg, key)
}
func (b storeBackend) put(kg int, key, value []byte, _ index) error { return b.sp.Put(kg, key, value) }
func (b storeBackend) del(kg int, key []byte, _ index) error        { return b.sp.Delete(kg, key) }

func (b storeBackend) scan(kg int, lower, upper []byte, _ index, reverse bool, limit int, c *chunk) error {
	limit += len(c.ents)
	return b.sp.Scan(kg, lower, upper, reverse, func(k, v []byte) (bool, error) {
		c.add(k, v)
		return len(c.ents) < limit, nil
	})
}

// memBackend keeps state in memory: a hash map serves point reads and
// writes of the keys outside groups; the keys of a map state of one key
// (a group, see index) are only in a container of their own (memGroup),
// found by a hash of the group's prefix, and the other scanned keys
// (timers, lists) are also in one B-tree. A group's key is read and
// written with one hash of its short prefix and one search: a deleted
// key whose deletion is not yet written to the store leaves its group's
// ordered container for dead (scans never see it). On its own it is the
// state of a job
// without checkpoints; in a hybridBackend it also tracks what changed
// (track) so that the changes can be written to the store at a checkpoint.
type memBackend struct {
	points  map[string]*memEntry // the entries not in a group
	ordered *btreemap.BTreeMap[string, *memEntry]
	// pending are ordered entries put since the last scan, added to the
	// B-tree (sorted, in one go) by the next scan: state that is written
	// far more often than scanned (a join side's rows) skips the tree.
	pending []*memEntry
	groups  map[string]*memGroup // by kg | group prefix
	// dead holds, by key, the removed entries of groups whose deletion
	// is not yet written to the store (nil while none): out of their
	// group's ordered container, so that scans never walk them, and found
	// here when the key is put again (only for a group with ndead > 0).
	dead map[string]*memEntry
	// lastG is the group last used: a change to a map state scans
	// around one key and writes it, each access finding the group.
	lastG *memGroup
	hint  searchHint
	// lastP is the entry of points last found by point: a value read
	// and then written (a ValueState's Value, then Update) is found
	// once. It is in points (unpoint drops it with its key), or nil.
	lastP *memEntry
	// loose counts the entries loaded from the store (memLoose) that are
	// still in the B-tree: the store's keys do not say where a group's
	// prefix ends, so a group takes its loaded entries from the B-tree
	// when it is first used (group).
	loose   int
	treeAt  int // a group's entries move from its slice to a B-tree beyond this many
	key, hi []byte
	lk      []byte // a list element's key (writeList)

	// writes counts puts and deletions: Keyed.around reads a group in
	// place and checks with it that its callbacks changed nothing.
	writes uint64

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
	memLoose                     // loaded from the store, in the B-tree, maybe of a group
)

type memEntry struct {
	key   string // key group (2 bytes, big-endian) | key
	val   []byte
	list  *memList  // a ListState list kept as one entry (memlist.go); val is then nil
	grp   *memGroup // the group whose container holds the entry, if any
	flags uint8
}

// memEntryBytes approximates the memory of an entry beyond its key and
// value: the entry, its map slot and its B-tree or group slot.
const memEntryBytes = 120

func (e *memEntry) size() int64 {
	n := int64(len(e.key)+cap(e.val)) + memEntryBytes
	if e.list != nil {
		n += e.list.bytes()
	}
	return n
}

// memGroupBytes approximates the memory of a group beyond its entries:
// the group, its map slot and its slices' spare room.
const memGroupBytes = 160

// defaultTreeAt is the size beyond which a group keeps its entries in a
// B-tree: inserting into a sorted slice moves half of it.
const defaultTreeAt = 256

// memGroup orders the entries of one group (the keys with prefix): in
// sorted slices of their key suffixes (after prefix) and entries while
// the group is small, in a B-tree by suffix beyond the backend's treeAt.
// The suffixes are substrings of the entries' keys.
type memGroup struct {
	prefix string // kg | group prefix
	sufs   []string
	ents   []*memEntry
	tree   *btreemap.BTreeMap[string, *memEntry]
	// ndead counts the group's entries in the backend's dead: removed,
	// their deletion not yet written to the store.
	ndead int
}

func (g *memGroup) len() int {
	if g.tree != nil {
		return g.tree.Len()
	}
	return len(g.sufs)
}

// searchHint remembers the last search in a group's slices: a change to
// a map state scans on both sides of one key and then writes it, each
// access starting with a search for that key. at is the position of the
// first suffix >= s; inserts and removals in g keep it so (inserted,
// removed).
type searchHint struct {
	g  *memGroup // nil: none
	s  []byte
	at int
}

// search returns g.search(s), from the hint if it answers (lookup).
func (h *searchHint) search(g *memGroup, s string) int {
	if i, ok := h.lookup(g, s); ok {
		return i
	}
	i := g.search(s)
	h.g, h.s, h.at = g, append(h.s[:0], s...), i
	return i
}

// lookup returns g.search(s) without a search if the hint answers it: s
// is the last search's suffix, or the suffix at its position (the first
// suffix >= the last search's: every suffix before it is below s too),
// such as the key a retraction's scan found by its prefix, then removed.
func (h *searchHint) lookup(g *memGroup, s string) (int, bool) {
	if h.g != g {
		return 0, false
	}
	if (h.at < len(g.sufs) && g.sufs[h.at] == s) || unsafeString(h.s) == s {
		return h.at, true
	}
	return 0, false
}

// inserted is called when suffix s is inserted at position i of g's
// slices (where g.search placed it): the position of the first suffix >=
// the hint's moves up if s goes before it.
func (h *searchHint) inserted(g *memGroup, s string, i int) {
	if h.g == g && (i < h.at || (i == h.at && s < unsafeString(h.s))) {
		h.at++
	}
}

// removed is called when the suffix at position i of g's slices is
// removed: the position of the first suffix >= the hint's moves down if
// the removed one was before it (the one after a removed first suffix >=
// the hint's is >= it too). g.remove searches its suffix through the
// hint first, so there i is the hint's position and it stays.
func (h *searchHint) removed(g *memGroup, i int) {
	if h.g == g && i < h.at {
		h.at--
	}
}

// search returns the position of the first suffix >= s in the slices.
func (g *memGroup) search(s string) int {
	lo, hi := 0, len(g.sufs)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if g.sufs[h] < s {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

// insert adds e, whose key has the group's prefix and is not in it.
func (g *memGroup) insert(e *memEntry, treeAt int, h *searchHint) {
	s := e.key[len(g.prefix):]
	e.grp = g
	if g.tree != nil {
		g.tree.ReplaceOrInsert(s, e)
		return
	}
	if len(g.sufs) >= treeAt {
		g.tree = btreemap.New[string, *memEntry](16, strings.Compare)
		for i, x := range g.ents {
			g.tree.ReplaceOrInsert(g.sufs[i], x)
		}
		g.sufs, g.ents = nil, nil
		g.tree.ReplaceOrInsert(s, e)
		if h.g == g {
			h.g = nil // a B-tree group is searched without the hint
		}
		return
	}
	i := h.search(g, s)
	h.inserted(g, s, i)
	g.sufs = slices.Insert(g.sufs, i, s)
	g.ents = slices.Insert(g.ents, i, e)
}

// insertAt adds e, whose key has the group's prefix and is not in it, at
// position i of the group's slice (where search places its suffix).
func (g *memGroup) insertAt(e *memEntry, i int, h *searchHint) {
	e.grp = g
	s := e.key[len(g.prefix):]
	h.inserted(g, s, i)
	g.sufs = slices.Insert(g.sufs, i, s)
	g.ents = slices.Insert(g.ents, i, e)
}

// remove takes e out of the group.
func (g *memGroup) remove(e *memEntry, h *searchHint) {
	s := e.key[len(g.prefix):]
	e.grp = nil
	if g.tree != nil {
		g.tree.Delete(s)
		return
	}
	if i := h.search(g, s); i < len(g.sufs) && g.ents[i] == e {
		h.removed(g, i)
		g.sufs = slices.Delete(g.sufs, i, i+1)
		g.ents = slices.Delete(g.ents, i, i+1)
	}
}

// each calls fn for each of the group's entries, in order.
func (g *memGroup) each(fn func(*memEntry)) {
	if g.tree != nil {
		g.tree.AscendFunc(btreemap.Min[string](), btreemap.Max[string](), func(_ string, e *memEntry) bool {
			fn(e)
			return true
		})
		return
	}
	for _, e := range g.ents {
		fn(e)
	}
}

// scan adds to c.mem the group's entries with lo <= suffix < hi (no upper
// bound without hasHi), until c.mem has limit entries.
func (g *memGroup) scan(lo, hi string, hasHi, reverse bool, limit int, c *chunk, h *searchHint) {
	if g.tree != nil {
		yield := func(_ string, e *memEntry) bool {
			c.mem = append(c.mem, e)
			return len(c.mem) < limit
		}
		up := btreemap.Max[string]()
		if hasHi {
			up = btreemap.LT(hi)
		}
		if reverse {
			g.tree.DescendFunc(up, btreemap.GE(lo), yield)
		} else {
			g.tree.AscendFunc(btreemap.GE(lo), up, yield)
		}
		return
	}
	if reverse {
		j := len(g.sufs)
		if hasHi {
			j = h.search(g, hi)
		}
		for j--; j >= 0 && g.sufs[j] >= lo && len(c.mem) < limit; j-- {
			c.mem = append(c.mem, g.ents[j])
		}
		return
	}
	for i := h.search(g, lo); i < len(g.sufs) && (!hasHi || g.sufs[i] < hi) && len(c.mem) < limit; i++ {
		c.mem = append(c.mem, g.ents[i])
	}
}

func newMemBackend() *memBackend {
	return &memBackend{
		points:  make(map[string]*memEntry),
		ordered: btreemap.New[string, *memEntry](16, strings.Compare),
		groups:  make(map[string]*memGroup),
		treeAt:  defaultTreeAt,
	}
}

// memKey is key group (2 bytes, big-endian) | key.
func (m *memBackend) memKey(kg int, key []byte) []byte {
	m.key = append(binary.BigEndian.AppendUint16(m.key[:0], uint16(kg)), key...)
	return m.key
}

func (m *memBackend) get(kg int, key []byte, idx index) ([]byte, bool, error) {
	k := m.memKey(kg, key)
	var e *memEntry
	if idx > 0 {
		e, _, _ = m.inGroup(k, int(idx))
	} else {
		e = m.point(k)
	}
	if e == nil || e.flags&memDeleted != 0 {
		return nil, false, nil
	}
	return e.val, true, nil
}

// point returns the entry of points of key k (kg | key), or nil.
func (m *memBackend) point(k []byte) *memEntry {
	if e := m.lastP; e != nil && e.key == string(k) {
		return e
	}
	e := m.points[string(k)]
	if e != nil {
		m.lastP = e
	}
	return e
}

// unpoint deletes key from points.
func (m *memBackend) unpoint(key string) {
	if m.lastP != nil && m.lastP.key == key {
		m.lastP = nil
	}
	delete(m.points, key)
}

// memSlabEntries is how many entries a block of slab holds: 8 entries of
// 64 bytes, a small object (at most 512 bytes) whose pointers the garbage
// collector marks through its span's inline mark bits: a pointer into a
// larger object costs it a findObject search (cachegrind of q6: at 64
// entries a block, runtime.findObject 118–205M instructions; at 8, 55–71M).
// A smaller block also keeps fewer dead entries alive with one live one.
const memSlabEntries = 8

func (m *memBackend) newEntry(key string) *memEntry {
	if len(m.slab) == 0 {
		m.slab = make([]memEntry, memSlabEntries)
	}
	e := &m.slab[0]
	m.slab = m.slab[1:]
	e.key = key
	return e
}

// newEntryWith returns a new entry of key k and value v, both copied into
// one allocation: the key (immutable) first, then the value, whose
// capacity ends there (a longer value put later is a new slice).
func (m *memBackend) newEntryWith(k, v []byte) *memEntry {
	buf := make([]byte, len(k)+len(v))
	copy(buf, k)
	copy(buf[len(k):], v)
	e := m.newEntry(unsafeString(buf[:len(k)]))
	if len(v) > 0 {
		e.val = buf[len(k):len(buf):len(buf)]
	}
	return e
}

func (m *memBackend) changed(e *memEntry) {
	if m.track && e.flags&memDirty == 0 {
		e.flags |= memDirty
		m.dirty = append(m.dirty, e)
	}
}

func (m *memBackend) put(kg int, key, value []byte, idx index) error {
	m.writes++
	k := m.memKey(kg, key)
	if idx > 0 {
		return m.putInGroup(k, value, int(idx))
	}
	e := m.point(k)
	if e != nil {
		before := e.size()
		e.val = append(e.val[:0], value...)
		if e.flags&memDeleted != 0 {
			e.flags &^= memDeleted
			m.index(e, idx)
		}
		m.bytes += e.size() - before
		m.changed(e)
		return nil
	}
	e = m.newEntryWith(k, value)
	m.points[e.key] = e
	m.bytes += e.size()
	m.index(e, idx)
	m.changed(e)
	return nil
}

// putInGroup is put of k (kg | key) in the group of its first 2+n bytes:
// a short prefix to hash, then a search among entries the caller has
// usually just scanned (in cache).
func (m *memBackend) putInGroup(k, value []byte, n int) error {
	e, g, at := m.inGroup(k, n)
	if e != nil {
		if e.flags&memDeleted != 0 { // from dead, back into the group
			delete(m.dead, e.key)
			g.ndead--
			if at >= 0 && len(g.sufs) < m.treeAt {
				g.insertAt(e, at, &m.hint)
			} else {
				g.insert(e, m.treeAt, &m.hint)
			}
		}
		before := e.size()
		e.val = append(e.val[:0], value...)
		e.flags &^= memDeleted
		m.bytes += e.size() - before
		m.changed(e)
		return nil
	}
	e = m.newEntryWith(k, value)
	m.bytes += e.size()
	switch {
	case g == nil:
		g = &memGroup{prefix: e.key[:2+n]}
		m.groups[g.prefix] = g
		m.bytes += memGroupBytes
		g.insert(e, m.treeAt, &m.hint)
		m.lastG = g
	case at >= 0 && len(g.sufs) < m.treeAt:
		g.insertAt(e, at, &m.hint) // where inGroup's search found its place
	default:
		g.insert(e, m.treeAt, &m.hint)
	}
	m.changed(e)
	return nil
}

// index puts e, a new or deleted entry outside groups, in the ordered
// index of idx (a global index: the B-tree; a point index: none).
func (m *memBackend) index(e *memEntry, idx index) {
	if idx == globalIndex {
		m.addOrdered(e)
	}
}

// inGroup returns the entry of k (kg | key) in the group of its first
// 2+n bytes (maybe deleted: memDeleted), or nil if there is none (no such
// group, or a new key). With no entry, g is the group if there is one
// and, if its container is a slice, at is where k's suffix belongs in it
// (else -1).
func (m *memBackend) inGroup(k []byte, n int) (e *memEntry, g *memGroup, at int) {
	g = m.group(k[:2+n])
	if g == nil {
		return nil, nil, -1
	}
	s := unsafeString(k[2+n:])
	at = -1
	if g.tree != nil {
		if _, e, _ := g.tree.Get(s); e != nil {
			return e, g, -1
		}
	} else {
		at = m.hint.search(g, s)
		if at < len(g.sufs) && g.sufs[at] == s {
			return g.ents[at], g, -1
		}
	}
	if g.ndead > 0 {
		if e := m.dead[unsafeString(k)]; e != nil {
			return e, g, at // a removed entry: memDeleted
		}
	}
	return nil, g, at
}

// bury moves e, a removed entry of its group whose deletion is not yet
// written, from the group's ordered container to dead.
func (m *memBackend) bury(e *memEntry) {
	g := e.grp
	g.remove(e, &m.hint)
	e.grp = g
	if m.dead == nil {
		m.dead = make(map[string]*memEntry)
	}
	m.dead[e.key] = e
	g.ndead++
}

// group returns the group of prefix p (kg | group prefix), or nil if it
// has no entries. A group that is not there yet takes the entries loaded
// from the store under p out of the B-tree and the hash map: these are
// its entries, as
// the keys Keyed lays out are prefix-free (a group's prefix ends with the
// current key's self-delimiting encodings).
func (m *memBackend) group(p []byte) *memGroup {
	if g := m.lastG; g != nil && g.prefix == string(p) {
		return g
	}
	if g := m.groups[string(p)]; g != nil {
		m.lastG = g
		return g
	}
	if m.loose == 0 {
		return nil
	}
	m.flushPending()
	var g *memGroup
	var moved []*memEntry
	lo := btreemap.GE(unsafeString(p))
	hi := btreemap.Max[string]()
	if end := prefixEnd(m.hi, p); end != nil {
		m.hi = end
		hi = btreemap.LT(unsafeString(m.hi))
	}
	m.ordered.AscendFunc(lo, hi, func(k string, e *memEntry) bool {
		moved = append(moved, e)
		return true
	})
	for _, e := range moved {
		if e.flags&memLoose == 0 {
			continue // not loaded: not a group's (cannot happen with prefix-free keys)
		}
		m.ordered.Delete(e.key)
		m.unpoint(e.key)
		e.flags &^= memInTree | memLoose
		m.loose--
		if g == nil {
			g = &memGroup{prefix: e.key[:len(p)]}
			m.groups[g.prefix] = g
			m.bytes += memGroupBytes
		}
		g.insert(e, m.treeAt, &m.hint)
	}
	return g
}

// unindex takes e out of its ordered index.
func (m *memBackend) unindex(e *memEntry) {
	if e.flags&memInTree != 0 {
		if e.flags&memPending != 0 {
			e.flags &^= memPending // skipped by flushPending
		} else {
			m.ordered.Delete(e.key)
		}
		if e.flags&memLoose != 0 {
			e.flags &^= memLoose
			m.loose--
		}
		e.flags &^= memInTree
	}
	m.ungroup(e)
}

// ungroup takes e out of its group, if it is in one, and drops the group
// if it is left empty.
func (m *memBackend) ungroup(e *memEntry) {
	if g := e.grp; g != nil {
		if e.flags&memDeleted != 0 && g.ndead > 0 && m.dead[e.key] == e {
			delete(m.dead, e.key)
			g.ndead--
			e.grp = nil
			if len(m.dead) == 0 {
				m.dead = nil // a map does not shrink: free it
			}
		} else {
			g.remove(e, &m.hint)
		}
		if g.len() == 0 && g.ndead == 0 {
			delete(m.groups, g.prefix)
			m.bytes -= memGroupBytes
			if m.lastG == g {
				m.lastG = nil
			}
			if m.hint.g == g {
				m.hint.g = nil
			}
		}
	}
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

// load adds an entry read from the store (unchanged, ordered: in the
// B-tree and the hash map until a group takes it).
func (m *memBackend) load(k, value []byte) {
	e := m.newEntryWith(k, value)
	e.flags = memInTree | memStored | memLoose
	m.loose++
	m.points[e.key] = e
	m.ordered.ReplaceOrInsert(e.key, e)
	m.bytes += e.size()
}

func (m *memBackend) del(kg int, key []byte, idx index) error {
	m.writes++
	k := m.memKey(kg, key)
	var e *memEntry
	if idx > 0 {
		e, _, _ = m.inGroup(k, int(idx))
	} else {
		e = m.point(k)
	}
	if e == nil || e.flags&memDeleted != 0 {
		return nil
	}
	if m.track && e.flags&memStored != 0 {
		// Kept until the deletion is written to the store: in the hash
		// map, or in its group's dead.
		if e.grp == nil {
			m.unindex(e)
		} else {
			m.bury(e)
		}
		e.flags |= memDeleted
		m.bytes -= int64(cap(e.val))
		e.val = nil
		m.bytes += int64(cap(e.val))
		m.changed(e)
		return nil
	}
	// Never written to the store: forgotten (if it is in dirty, its
	// memDeleted flag tells takeDirty to skip it).
	if e.grp != nil {
		m.ungroup(e)
	} else {
		m.unindex(e)
		m.unpoint(e.key)
	}
	e.flags |= memDeleted
	m.bytes -= e.size()
	return nil
}

func (m *memBackend) scan(kg int, lower, upper []byte, idx index, reverse bool, limit int, c *chunk) error {
	limit += c.len()
	if idx > 0 {
		n := int(idx)
		g := m.group(m.memKey(kg, lower[:n]))
		if g == nil {
			return nil
		}
		hasHi := upper != nil && len(upper) >= n && string(upper[:n]) == string(lower[:n])
		var hi string
		if hasHi {
			hi = unsafeString(upper[n:])
		}
		g.scan(unsafeString(lower[n:]), hi, hasHi, reverse, limit, c, &m.hint)
		return nil
	}
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

// dirtyEnt is an entry to write with the first 32 bytes of its key, as
// four big-endian words (zero-padded): a sort compares them in place,
// and follows the pointer only when they tie.
type dirtyEnt struct {
	k [4]uint64
	e *memEntry
}

// sortDirty returns the entries of d sorted by key (distinct keys).
// Comparing the leading words in the slice, rather than the keys through
// each entry, keeps the sort in cache: a checkpoint sorts every entry
// changed since the last one (an updating OVER's rows, a million).
func sortDirty(d []*memEntry) []dirtyEnt {
	ds := make([]dirtyEnt, len(d))
	var pad [32]byte
	for i, e := range d {
		ds[i].e = e
		b := e.key
		if len(b) < 32 {
			copy(pad[:], b)
			clear(pad[len(b):])
			b = unsafeString(pad[:])
		}
		for w := range ds[i].k {
			ds[i].k[w] = binary.BigEndian.Uint64(unsafeBytes(b[8*w : 8*w+8]))
		}
	}
	// Zero padding keeps the order of the words that differ that of the
	// keys (a key shorter than 32 bytes that differs from another within
	// them differs at a byte it has, or is a prefix of the other: its
	// zeros compare below or equal); equal words leave it to the keys.
	slices.SortFunc(ds, func(a, b dirtyEnt) int {
		for w := range a.k {
			if a.k[w] != b.k[w] {
				if a.k[w] < b.k[w] {
					return -1
				}
				return 1
			}
		}
		return strings.Compare(a.e.key, b.e.key)
	})
	return ds
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
	ds := sortDirty(d)
	clear(d)
	for _, de := range ds {
		e := de.e
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
			if e.grp != nil {
				m.ungroup(e)
				m.bytes -= e.size()
			} else if m.points[e.key] == e {
				m.unpoint(e.key)
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

func (h *hybridBackend) get(kg int, key []byte, idx index) ([]byte, bool, error) {
	if h.mem == nil {
		return h.st.get(kg, key, idx)
	}
	return h.mem.get(kg, key, idx)
}

func (h *hybridBackend) put(kg int, key, value []byte, idx index) error {
	if h.mem == nil {
		return h.st.put(kg, key, value, idx)
	}
	if err := h.mem.put(kg, key, value, idx); err != nil {
		return err
	}
	if h.mem.bytes > h.budget {
		return h.spill()
	}
	return nil
}

func (h *hybridBackend) del(kg int, key []byte, idx index) error {
	if h.mem == nil {
		return h.st.del(kg, key, idx)
	}
	return h.mem.del(kg, key, idx)
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

func (h *hybridBackend) scan(kg int, lower, upper []byte, idx index, reverse bool, limit int, c *chunk) error {
	if h.mem == nil {
		return h.st.scan(kg, lower, upper, idx, reverse, limit, c)
	}
	return h.mem.scan(kg, lower, upper, idx, reverse, limit, c)
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
