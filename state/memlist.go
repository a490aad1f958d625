package state

import (
	"encoding/binary"

	"github.com/weir-sql/weir/statestore"
)

// memList is a ListState list held in memory as one entry: the entry of
// the list's counter key (prefix | key) carries the encoded elements
// back to back, instead of an entry per element (a map slot, a B-tree
// slot, two allocations). Its layout in the store is the generic one (the
// counter at prefix | key holds the element count, element i at
// prefix | key | i as 8 big-endian bytes), written by writeDirty, so a
// restore or a spill reads it as the generic code writes it; a list loaded
// from the store stays generic in memory until it is cleared.
type memList struct {
	buf  []byte   // the elements' encodings, back to back
	ends []uint32 // per element: where its encoding ends in buf
	// stored is how many elements (0 .. stored-1) the store holds, clean
	// how many of those equal the ones in memory (a Clear sets it to 0).
	stored, clean int
}

func (l *memList) bytes() int64 { return int64(cap(l.buf) + 4*cap(l.ends)) }

func (l *memList) elem(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = l.ends[i-1]
	}
	return l.buf[start:l.ends[i]]
}

// listBackend is a backend that keeps ListState lists whole (memList);
// each method's ok is false when the list is not kept so (over the store,
// after a spill, or a generic list loaded from the store): the caller then
// uses the generic layout.
type listBackend interface {
	listAdd(kg int, key, value []byte) (ok bool, err error)
	listGet(kg int, key []byte, fn func(val []byte) (bool, error)) (ok bool, err error)
	listClear(kg int, key []byte) (ok bool, err error)
}

var (
	_ listBackend = (*memBackend)(nil)
	_ listBackend = (*hybridBackend)(nil)
)

// listEntry returns the memList entry of counter key k (kg | key), and
// whether the list may be kept as one: false when the key has a generic
// list (loaded from the store, or one whose deletion is not yet written).
func (m *memBackend) listEntry(k []byte) (*memEntry, bool) {
	e := m.points[string(k)]
	if e == nil {
		return nil, true
	}
	return e, e.list != nil
}

// listAdd appends value to the list of counter key key; ok is false when
// the list is generic (the caller then writes it entry by entry).
func (m *memBackend) listAdd(kg int, key, value []byte) (ok bool, err error) {
	k := m.memKey(kg, key)
	e, ok := m.listEntry(k)
	if !ok {
		return false, nil
	}
	if e == nil {
		e = m.newEntry(string(k))
		e.list = &memList{}
		m.points[e.key] = e
		m.bytes += e.size()
	}
	l := e.list
	before := l.bytes()
	e.flags &^= memDeleted
	l.buf = append(l.buf, value...)
	l.ends = append(l.ends, uint32(len(l.buf)))
	m.bytes += l.bytes() - before
	m.changed(e)
	return true, nil
}

// listGet calls fn for the elements of the list of counter key key, in
// order, until fn returns false; ok is false when the list is generic. fn
// may change state: elements added during the call are seen, and a Clear
// ends the iteration.
func (m *memBackend) listGet(kg int, key []byte, fn func(val []byte) (bool, error)) (ok bool, err error) {
	k := m.memKey(kg, key)
	e, ok := m.listEntry(k)
	if !ok || e == nil {
		return ok, nil
	}
	l := e.list
	for i := 0; i < len(l.ends) && e.flags&memDeleted == 0 && e.list == l; i++ {
		more, err := fn(l.elem(i))
		if err != nil || !more {
			return true, err
		}
	}
	return true, nil
}

// listClear empties the list of counter key key; ok is false when the
// list is generic.
func (m *memBackend) listClear(kg int, key []byte) (ok bool, err error) {
	k := m.memKey(kg, key)
	e, ok := m.listEntry(k)
	if !ok || e == nil || e.flags&memDeleted != 0 {
		return ok, nil
	}
	l := e.list
	if !m.track || (e.flags&memStored == 0 && l.stored == 0) {
		// Never written to the store: forgotten.
		e.flags |= memDeleted
		m.unpoint(e.key)
		m.bytes -= e.size()
		return true, nil
	}
	// Kept until the deletion is written to the store.
	before := l.bytes()
	l.buf, l.ends, l.clean = nil, nil, 0
	m.bytes += l.bytes() - before
	e.flags |= memDeleted
	m.changed(e)
	return true, nil
}

// writeList writes list entry e (key group kg, counter key key) to sp, in
// ascending key order: the counter and the elements the store lacks, or
// the deletion of what the store holds.
func (m *memBackend) writeList(sp *statestore.Space, e *memEntry, kg int, key []byte) error {
	l := e.list
	n := len(l.ends)
	if e.flags&memDeleted != 0 {
		n = 0
	}
	m.lk = append(m.lk[:0], key...)
	elemKey := func(i int) []byte {
		m.lk = binary.BigEndian.AppendUint64(m.lk[:len(key)], uint64(i))
		return m.lk
	}
	if n == 0 {
		if e.flags&memStored != 0 {
			if err := sp.Delete(kg, key); err != nil {
				return err
			}
		}
		for i := range l.stored {
			if err := sp.Delete(kg, elemKey(i)); err != nil {
				return err
			}
		}
		if m.points[e.key] == e {
			m.unpoint(e.key)
			m.bytes -= e.size()
		}
		e.flags &^= memStored
		l.stored = 0
		return nil
	}
	var cnt [8]byte
	binary.BigEndian.PutUint64(cnt[:], uint64(n))
	if err := sp.PutThrough(kg, key, cnt[:]); err != nil {
		return err
	}
	e.flags |= memStored
	for i := l.clean; i < n; i++ {
		if err := sp.PutThrough(kg, elemKey(i), l.elem(i)); err != nil {
			return err
		}
	}
	for i := n; i < l.stored; i++ {
		if err := sp.Delete(kg, elemKey(i)); err != nil {
			return err
		}
	}
	l.stored, l.clean = n, n
	return nil
}
