package statestore

import (
	"slices"
	"strings"
)

// entryOverhead approximates the memory of one cache entry beyond its key
// and value bytes: the entry struct, the map slot and the string header.
const entryOverhead = 96

// Entry flags.
const (
	flagDirty  uint8 = 1 << iota // differs from Pebble; must be written back
	flagAbsent                   // the key has no value (a delete, or a cached miss)
	flagRef                      // recently used (CLOCK eviction)
	flagListed                   // in writeCache.dirtyList
	flagForget                   // removed once flushed (Space.DeleteUncached)
)

// cacheEntry is one cached key. A free slot has an empty key and flags 0 and
// is listed in writeCache.free.
type cacheEntry struct {
	key   string
	value []byte
	flags uint8
	slot  int32 // its index in writeCache.entries
}

func (e *cacheEntry) size() int64 {
	return int64(len(e.key)+cap(e.value)) + entryOverhead
}

// writeCache is a bounded write-back cache of encoded keys. It knows nothing
// of Pebble: the Store flushes dirty entries (flushList) and then asks the
// cache to evict clean ones (evict).
type writeCache struct {
	index   map[string]int32
	entries []cacheEntry
	free    []int32
	bytes   int64
	budget  int64
	hand    int // CLOCK hand into entries
	dirty   int // number of dirty entries
	// dirtyList holds the slots of the dirty entries (and of slots freed
	// since they were listed), so that a flush visits only them: a scan
	// flushes the cache, and most scans find few entries dirty. Only a
	// dirty entry is flagged listed, so once no entry is dirty the list
	// holds only freed slots and is emptied (pruneListed): entries
	// dropped with their operator's state (dropPrefix) are never flushed,
	// and without that the list grew by every key deleted between two
	// replacements of the state.
	dirtyList []int32
}

// markDirty sets e's dirty flag and lists it.
func (c *writeCache) markDirty(e *cacheEntry, i int32) {
	if e.flags&flagDirty == 0 {
		e.flags |= flagDirty
		c.dirty++
	}
	if e.flags&flagListed == 0 {
		e.flags |= flagListed
		c.dirtyList = append(c.dirtyList, i)
	}
}

func newWriteCache(budget int64) *writeCache {
	return &writeCache{index: make(map[string]int32), budget: budget}
}

// lookup returns the entry for key, or nil. It does not allocate, and an
// empty cache does not hash the key (state written through, never cached,
// looks up every key).
func (c *writeCache) lookup(key []byte) *cacheEntry {
	if len(c.index) == 0 {
		return nil
	}
	i, ok := c.index[string(key)]
	if !ok {
		return nil
	}
	e := &c.entries[i]
	e.flags |= flagRef
	return e
}

// wouldOverflow reports whether adding n more bytes exceeds the budget.
func (c *writeCache) wouldOverflow(n int64) bool { return c.bytes+n > c.budget }

// insert adds a new entry (the key must not be cached) holding a copy of
// value, and returns it.
func (c *writeCache) insert(key []byte, value []byte, flags uint8) *cacheEntry {
	var i int32
	if n := len(c.free); n > 0 {
		i = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		c.entries = append(c.entries, cacheEntry{})
		i = int32(len(c.entries) - 1)
	}
	e := &c.entries[i]
	e.slot = i
	e.key = string(key)
	e.value = append(e.value[:0], value...)
	e.flags = flags&^flagDirty | flagRef
	if flags&flagDirty != 0 {
		c.markDirty(e, i)
	}
	c.index[e.key] = i
	c.bytes += e.size()
	return e
}

// set overwrites an existing entry with value (nil value and absent=true
// for a delete) and marks it dirty; with forget, the flush that writes it
// removes it.
func (c *writeCache) set(e *cacheEntry, value []byte, absent, forget bool) {
	before := e.size()
	e.flags &^= flagForget
	if forget {
		e.flags |= flagForget
	}
	if absent {
		e.value = e.value[:0]
		e.flags |= flagAbsent
	} else {
		e.value = append(e.value[:0], value...)
		e.flags &^= flagAbsent
	}
	c.markDirty(e, e.slot)
	c.bytes += e.size() - before
}

// dirtyEntries returns the dirty entries sorted by key, reusing buf.
func (c *writeCache) dirtyEntries(buf []int32) []int32 {
	buf = buf[:0]
	for _, i := range c.dirtyList {
		// A slot freed and reused since it was listed may be listed
		// twice: flagListed lets it in once.
		if f := c.entries[i].flags; f&flagDirty != 0 && f&flagListed != 0 {
			c.entries[i].flags &^= flagListed
			buf = append(buf, i)
		}
	}
	c.dirtyList = c.dirtyList[:0]
	slices.SortFunc(buf, func(a, b int32) int {
		return strings.Compare(c.entries[a].key, c.entries[b].key)
	})
	return buf
}

// markClean clears the dirty flag of every entry (after a successful
// flush), and removes those to forget once flushed.
func (c *writeCache) markClean(idx []int32) {
	for _, i := range idx {
		e := &c.entries[i]
		e.flags &^= flagDirty
		if e.flags&flagForget != 0 {
			c.remove(i)
		}
	}
	c.dirty = 0
}

// dropPrefix removes every entry whose key starts with prefix, dirty or not.
func (c *writeCache) dropPrefix(prefix []byte) {
	p := string(prefix)
	for i := range c.entries {
		e := &c.entries[i]
		if e.key == "" || !strings.HasPrefix(e.key, p) {
			continue
		}
		if e.flags&flagDirty != 0 {
			c.dirty--
		}
		c.remove(int32(i))
	}
	c.pruneListed()
}

// pruneListed drops the freed slots from dirtyList: all of it when no
// entry is dirty, else the slots no longer flagged listed (a slot freed and
// listed again since stays, once: dirtyEntries takes it once).
func (c *writeCache) pruneListed() {
	if c.dirty == 0 {
		c.dirtyList = c.dirtyList[:0]
		return
	}
	c.dirtyList = slices.DeleteFunc(c.dirtyList, func(i int32) bool {
		return c.entries[i].flags&flagListed == 0
	})
}

// remove frees entry i.
func (c *writeCache) remove(i int32) {
	e := &c.entries[i]
	c.bytes -= e.size()
	delete(c.index, e.key)
	e.key = ""
	e.value = nil
	e.flags = 0
	c.free = append(c.free, i)
}

// evict removes clean entries, least recently used first (CLOCK), until
// the cache holds at most target bytes or only dirty entries remain.
func (c *writeCache) evict(target int64) {
	if len(c.entries) == 0 {
		return
	}
	// Two full turns of the hand are enough: the first clears reference
	// bits, the second evicts.
	for steps := 2 * len(c.entries); steps > 0 && c.bytes > target; steps-- {
		if c.hand >= len(c.entries) {
			c.hand = 0
		}
		e := &c.entries[c.hand]
		i := int32(c.hand)
		c.hand++
		switch {
		case e.key == "" && e.flags == 0:
			// free slot
		case e.flags&flagDirty != 0:
			// must be flushed first
		case e.flags&flagRef != 0:
			e.flags &^= flagRef
		default:
			c.remove(i)
		}
	}
}
