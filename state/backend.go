package state

import (
	"encoding/binary"
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

// memBackend keeps state in memory only, for jobs without checkpoints: a
// hash map serves point reads and writes, and a B-tree orders the keys of
// the states that are scanned.
type memBackend struct {
	points  map[string]*memEntry
	ordered *btreemap.BTreeMap[string, *memEntry]
	key, hi []byte
}

type memEntry struct{ val []byte }

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
	if e == nil {
		return nil, false, nil
	}
	return e.val, true, nil
}

func (m *memBackend) put(kg int, key, value []byte, ordered bool) error {
	k := m.memKey(kg, key)
	if e := m.points[string(k)]; e != nil {
		e.val = append(e.val[:0], value...)
		return nil
	}
	e := &memEntry{val: append([]byte(nil), value...)}
	s := string(k)
	m.points[s] = e
	if ordered {
		m.ordered.ReplaceOrInsert(s, e)
	}
	return nil
}

func (m *memBackend) del(kg int, key []byte, ordered bool) error {
	k := m.memKey(kg, key)
	if _, ok := m.points[string(k)]; !ok {
		return nil
	}
	delete(m.points, string(k))
	if ordered {
		m.ordered.Delete(unsafeString(k))
	}
	return nil
}

func (m *memBackend) scan(kg int, lower, upper []byte, reverse bool, limit int, c *chunk) error {
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

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
func unsafeBytes(s string) []byte  { return unsafe.Slice(unsafe.StringData(s), len(s)) }
