package state

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/RaduBerinde/btreemap"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// Options configure a Keyed.
type Options struct {
	// OperatorID prefixes the operator's keys in a statestore (Open only).
	OperatorID string
	// MaxParallelism is the number of key groups. Default
	// types.DefaultMaxParallelism; for Open it must equal the store's.
	MaxParallelism int
	// Subtask and Parallelism give the key groups this Keyed owns
	// (KeyGroupRange). Parallelism 0 means 1.
	Subtask, Parallelism int
	// TTL, when positive, expires the state of a key that was not written
	// for this long in processing time (table.exec.state.ttl): see
	// AdvanceProcessingTime.
	TTL time.Duration
}

// chunkSize is how many entries a scan copies at a time, at most. A scan
// starts with firstChunk and doubles: most scans that stop early (the
// first or last entry, the n rows before a position) need a few entries,
// and copying 256 of them, on Pebble in reverse, made each such scan cost
// the size of the map up to 256.
const (
	chunkSize  = 256
	firstChunk = 16
)

// Keyed is the keyed state of one operator subtask: the current key, the
// state handles registered on it and its timers. Handles read and write
// the current key's state. It runs in memory (NewMemory) or on a
// statestore (Open) with the same behaviour; only the latter is
// snapshotted, restored and rescaled, by the store.
//
// Like the store, a Keyed and its handles belong to one goroutine.
type Keyed struct {
	be          backend
	maxPar      int
	first, last int // the key groups owned, inclusive

	cur []byte // the current key
	kg  int    // its key group
	kb  []byte // state keys are built here
	vb  []byte // values are encoded here
	tb  []byte // timer keys are built here

	names   map[string]bool
	handles []handle

	timers [numIndexes]*timerIndex
	now    int64 // processing time (ms) of the last AdvanceProcessingTime
	wm     int64 // the last watermark passed to AdvanceWatermark

	chunks []*chunk // per scan depth
	depth  int
	firing firingBuf

	ttl ttlState
}

// handle is what Keyed needs of a registered state: clearing the current
// key's entries (for TTL).
type handle interface {
	clearKey() error
}

// NewMemory returns a Keyed that keeps its state in memory, for jobs
// without checkpoints.
func NewMemory(opts Options) (*Keyed, error) {
	return newKeyed(newMemBackend(), opts, false)
}

// Open returns a Keyed over store, which may have been restored from a
// checkpoint (statestore.Restore, or RestoreKeyGroups when rescaling):
// state and timers of the key groups it owns are read from it as needed.
func Open(store *statestore.Store, opts Options) (*Keyed, error) {
	sp, err := store.Space(opts.OperatorID)
	if err != nil {
		return nil, err
	}
	if opts.MaxParallelism == 0 {
		opts.MaxParallelism = sp.MaxParallelism()
	}
	if opts.MaxParallelism != sp.MaxParallelism() {
		return nil, fmt.Errorf("state: max parallelism %d differs from the store's %d", opts.MaxParallelism, sp.MaxParallelism())
	}
	k, err := newKeyed(nil, opts, true)
	if err != nil {
		return nil, err
	}
	h, err := newHybridBackend(sp, k.first, k.last)
	if err != nil {
		return nil, err
	}
	k.be = h
	return k, nil
}

func newKeyed(be backend, opts Options, persisted bool) (*Keyed, error) {
	if opts.MaxParallelism <= 0 {
		opts.MaxParallelism = types.DefaultMaxParallelism
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = 1
	}
	if opts.Parallelism > opts.MaxParallelism || opts.Subtask < 0 || opts.Subtask >= opts.Parallelism {
		return nil, fmt.Errorf("state: subtask %d of %d with max parallelism %d", opts.Subtask, opts.Parallelism, opts.MaxParallelism)
	}
	k := &Keyed{be: be, maxPar: opts.MaxParallelism, names: make(map[string]bool), wm: math.MinInt64}
	k.first, k.last = KeyGroupRange(opts.Subtask, opts.Parallelism, opts.MaxParallelism)
	for i := range k.timers {
		k.timers[i] = newTimerIndex(timerNames[i], k.last-k.first+1, persisted)
	}
	k.kg = k.first
	if opts.TTL > 0 {
		k.ttl = ttlState{ms: max(opts.TTL.Milliseconds(), 1), prefix: namePrefix(ttlName)}
	}
	return k, nil
}

// KeyGroups returns the key groups [first, last] this Keyed owns.
func (k *Keyed) KeyGroups() (first, last int) { return k.first, k.last }

// SetCurrentKey makes key, the concatenated encodings of the key's values
// (AppendValue), the current key. Its key group must be one this Keyed
// owns. key is copied.
func (k *Keyed) SetCurrentKey(key []byte) error {
	return k.SetCurrentKeyInGroup(key, KeyGroup(key, k.maxPar))
}

// SetCurrentKeyRow makes the values of row at cols the current key.
func (k *Keyed) SetCurrentKeyRow(row []types.Value, cols []int) error {
	b := k.cur[:0]
	for _, c := range cols {
		b = AppendValue(b, row[c])
	}
	k.cur = b
	return k.setGroup(KeyGroup(b, k.maxPar))
}

// SetCurrentKeyInGroup is SetCurrentKey with the key group given: for an
// operator behind an exchange that routes by another hash (see the package
// documentation). The same key must always come with the same key group.
func (k *Keyed) SetCurrentKeyInGroup(key []byte, keyGroup int) error {
	k.cur = append(k.cur[:0], key...)
	return k.setGroup(keyGroup)
}

func (k *Keyed) setGroup(kg int) error {
	if kg < k.first || kg > k.last {
		return fmt.Errorf("state: key %x is in key group %d, outside this subtask's [%d, %d]", k.cur, kg, k.first, k.last)
	}
	k.kg = kg
	k.ttl.checked, k.ttl.touched = false, false
	return nil
}

// CurrentKey returns the current key; it is valid until the key changes.
func (k *Keyed) CurrentKey() []byte { return k.cur }

// CurrentKeyGroup returns the current key's key group.
func (k *Keyed) CurrentKeyGroup() int { return k.kg }

// register checks a state name and returns its key prefix.
func (k *Keyed) register(name string, h handle) ([]byte, error) {
	switch {
	case name == "" || len(name) > 200:
		return nil, fmt.Errorf("state: state name %q must have 1 to 200 bytes", name)
	case name[0] == '_':
		return nil, fmt.Errorf("state: state name %q: names starting with _ are reserved", name)
	case k.names[name]:
		return nil, fmt.Errorf("state: state %q registered twice", name)
	}
	k.names[name] = true
	k.handles = append(k.handles, h)
	return namePrefix(name), nil
}

// namePrefix is len(name) | name.
func namePrefix(name string) []byte { return append([]byte{byte(len(name))}, name...) }

// stateKey builds prefix | current key | suffix in k.kb.
func (k *Keyed) stateKey(prefix, suffix []byte) []byte {
	b := append(k.kb[:0], prefix...)
	b = append(b, k.cur...)
	k.kb = append(b, suffix...)
	return k.kb
}

// scan calls fn for the entries of key group kg with keys in [lower,
// upper) (nil upper: to the end of the key group), ascending or descending;
// idx is the keys' index (a group: the range is within it, see backend).
// It reads entries a chunk at a time, so fn may read and change any state;
// it sees changes to keys it has not reached yet, in memory and spilled
// alike: when fn puts or deletes a key ahead of it in the scan's range
// (noteWrite), the rest of the chunk, which over the store is a copy, is
// dropped and read again after the current key. The slices passed to fn
// are valid during the call. fn returns false to stop.
func (k *Keyed) scan(kg int, lower, upper []byte, idx index, reverse bool, fn func(key, val []byte) (bool, error)) error {
	if k.depth == len(k.chunks) {
		k.chunks = append(k.chunks, &chunk{})
	}
	c := k.chunks[k.depth]
	k.depth++
	defer func() { k.depth-- }()
	c.lower = append(c.lower[:0], lower...)
	c.hasUpper = upper != nil
	c.upper = append(c.upper[:0], upper...)
	c.kg, c.cur, c.stale = kg, nil, false
	size := firstChunk
	for {
		c.reset()
		var up []byte
		if c.hasUpper {
			up = c.upper
		}
		if err := k.be.scan(kg, c.lower, up, idx, reverse, size, c); err != nil {
			return err
		}
		n := c.len()
		reread := false
		for i := range n {
			key, val, ok := c.at(i)
			if !ok {
				continue
			}
			// key stays valid while the chunk is not refilled.
			c.cur = key
			more, err := fn(key, val)
			if err != nil || !more {
				c.cur = nil
				return err
			}
			if c.stale {
				// fn changed a key ahead: read on from after key.
				c.stale, reread = false, true
				if reverse {
					c.upper = append(c.upper[:0], key...)
					c.hasUpper = true
				} else {
					c.lower = append(append(c.lower[:0], key...), 0)
				}
				break
			}
		}
		c.cur = nil
		if reread {
			continue
		}
		if n < size {
			return nil
		}
		size = min(2*size, chunkSize)
		last := c.lastKey()
		if reverse {
			c.upper = append(c.upper[:0], last...)
			c.hasUpper = true
		} else {
			c.lower = append(append(c.lower[:0], last...), 0)
		}
	}
}

// noteWrite tells the scans running (fn of a scan, maybe nested) that key
// of key group kg is put or deleted: a scan whose range holds key, other
// than the key it is at, reads the rest of its range again (scan).
func (k *Keyed) noteWrite(kg int, key []byte) {
	for _, c := range k.chunks[:k.depth] {
		if c.stale || c.kg != kg || c.cur == nil || bytes.Equal(key, c.cur) {
			continue
		}
		if bytes.Compare(key, c.lower) >= 0 && (!c.hasUpper || bytes.Compare(key, c.upper) < 0) {
			c.stale = true
		}
	}
}

// put writes key through the backend, telling the running scans.
func (k *Keyed) put(kg int, key, value []byte, idx index) error {
	if k.depth > 0 {
		k.noteWrite(kg, key)
	}
	return k.be.put(kg, key, value, idx)
}

// del deletes key through the backend, telling the running scans.
func (k *Keyed) del(kg int, key []byte, idx index) error {
	if k.depth > 0 {
		k.noteWrite(kg, key)
	}
	return k.be.del(kg, key, idx)
}

// prefixEnd appends to dst the smallest key greater than every key with
// prefix p; it returns nil if there is none (p is all 0xFF).
func prefixEnd(dst, p []byte) []byte {
	dst = append(dst[:0], p...)
	for i := len(dst) - 1; i >= 0; i-- {
		if dst[i] != 0xFF {
			dst[i]++
			return dst[:i+1]
		}
	}
	return nil
}

// clearPrefix deletes every entry of the current key group whose key
// starts with p, a state's prefix and current key; idx is their index (a
// map state's group, len(p), or globalIndex).
func (k *Keyed) clearPrefix(p []byte, idx index) error {
	var end [256]byte
	hi := prefixEnd(end[:0], p)
	kg := k.kg
	return k.scan(kg, p, hi, idx, false, func(key, _ []byte) (bool, error) {
		return true, k.del(kg, key, idx)
	})
}

// clearAll clears every registered state of the current key.
func (k *Keyed) clearAll() error {
	for _, h := range k.handles {
		if err := h.clearKey(); err != nil {
			return err
		}
	}
	return nil
}

// MemoryStats returns how many entries (state values, map and list
// entries, timers) a Keyed made by NewMemory holds and their bytes (keys
// and values), so that tests can check that state is released; ok is
// false over a store.
func (k *Keyed) MemoryStats() (entries int, bytes int64, ok bool) {
	m, isMem := k.be.(*memBackend)
	if !isMem {
		return 0, 0, false
	}
	for key, e := range m.points {
		entries++
		bytes += int64(len(key) + len(e.val))
		if e.list != nil { // its counter, then its elements
			entries += len(e.list.ends)
			bytes += int64(len(e.list.buf))
		}
	}
	for _, g := range m.groups {
		g.each(func(e *memEntry) {
			if e.flags&memDeleted == 0 {
				entries++
				bytes += int64(len(e.key) + len(e.val))
			}
		})
	}
	return entries, bytes, true
}

// errChangedInAround is returned when a callback of around changed state.
var errChangedInAround = errors.New("state changed by a callback of a two-way scan (Around)")

// around calls below for the entries of key's group (its first idx bytes,
// idx > 0) with keys < key, descending, until it returns false, then from
// for those with keys >= key, ascending, until it returns false. It is
// the two scans scan(group, key, reverse) and scan(key, group end) with
// one seek. While the state is in memory it reads the group in place
// (nothing copied: the slices passed are the entry's own, valid during
// the call), so below and from must not change state; an error is
// returned if they put or delete. Spilled state falls back to two scans.
// The keys passed to below and from lack their first skip bytes (at most
// idx: the group's prefix, or a part of it).
func (k *Keyed) around(kg int, key []byte, idx index, skip int, below, from func(key, val []byte) (bool, error)) error {
	var m *memBackend
	switch b := k.be.(type) {
	case *memBackend:
		m = b
	case *hybridBackend:
		m = b.mem
	}
	n := int(idx)
	if m == nil {
		if skip > 0 {
			b, f := below, from
			below = func(key, val []byte) (bool, error) { return b(key[skip:], val) }
			from = func(key, val []byte) (bool, error) { return f(key[skip:], val) }
		}
		var end [256]byte
		if err := k.scan(kg, key[:n], key, idx, true, below); err != nil {
			return err
		}
		return k.scan(kg, key, prefixEnd(end[:0], key[:n]), idx, false, from)
	}
	g := m.group(m.memKey(kg, key[:n]))
	if g == nil {
		return nil
	}
	s := unsafeString(key[n:])
	w := m.writes
	var err error
	// visit calls fn on e; it returns whether to go on.
	visit := func(fn func(key, val []byte) (bool, error), e *memEntry) bool {
		if e.flags&memDeleted != 0 {
			return true
		}
		var more bool
		more, err = fn(unsafeBytes(e.key)[2+skip:], e.val)
		if err == nil && m.writes != w {
			err = errChangedInAround
		}
		return more && err == nil
	}
	if g.tree != nil {
		g.tree.DescendFunc(btreemap.LT(s), btreemap.GE(""), func(_ string, e *memEntry) bool {
			return visit(below, e)
		})
		if err != nil {
			return err
		}
		g.tree.AscendFunc(btreemap.GE(s), btreemap.Max[string](), func(_ string, e *memEntry) bool {
			return visit(from, e)
		})
		return err
	}
	at := m.hint.search(g, s)
	for j := at - 1; j >= 0 && visit(below, g.ents[j]); j-- {
	}
	if err != nil {
		return err
	}
	for j := at; j < len(g.ents) && visit(from, g.ents[j]); j++ {
	}
	return err
}
