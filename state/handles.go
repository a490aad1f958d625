package state

import (
	"encoding/binary"
	"fmt"
)

// ValueState is one value per key, in the spirit of Flink's ValueState.
type ValueState[T any] struct {
	k      *Keyed
	prefix []byte
	codec  Codec[T]
}

// NewValueState registers a value state named name on k.
func NewValueState[T any](k *Keyed, name string, c Codec[T]) (*ValueState[T], error) {
	s := &ValueState[T]{k: k, codec: c}
	p, err := k.register(name, s)
	if err != nil {
		return nil, err
	}
	s.prefix = p
	return s, nil
}

// Value returns the current key's value and whether it has one.
func (s *ValueState[T]) Value() (T, bool, error) {
	var zero T
	k := s.k
	if k.ttl.ms > 0 {
		if exp, err := k.expired(); err != nil || exp {
			return zero, false, err
		}
	}
	b, ok, err := k.be.get(k.kg, k.stateKey(s.prefix, nil), pointIndex)
	if err != nil || !ok {
		return zero, false, err
	}
	v, err := s.codec.Decode(b)
	if err != nil {
		return zero, false, fmt.Errorf("state %s: %w", s.prefix[1:], err)
	}
	return v, true, nil
}

// Update sets the current key's value.
func (s *ValueState[T]) Update(v T) error {
	k := s.k
	if k.ttl.ms > 0 {
		if err := k.touch(); err != nil {
			return err
		}
	}
	k.vb = s.codec.Append(k.vb[:0], v)
	return k.put(k.kg, k.stateKey(s.prefix, nil), k.vb, pointIndex)
}

// Clear removes the current key's value.
func (s *ValueState[T]) Clear() error { return s.clearKey() }

func (s *ValueState[T]) clearKey() error {
	return s.k.del(s.k.kg, s.k.stateKey(s.prefix, nil), pointIndex)
}

// mapState is the map of MapState and SortedMapState: entries at
// prefix | current key | encoded map key.
type mapState[K, V any] struct {
	k      *Keyed
	prefix []byte
	kc     Codec[K]
	vc     Codec[V]
	// views: the map's keys and values are []byte with BytesView codecs
	// (decoding is the identity: around skips it).
	views  bool
	ub     []byte // the map key's encoding
	pb, eb []byte // prefix and end of the current key's entries
	lb, hb []byte // Range's bounds
}

func (s *mapState[K, V]) entryKey(key K) []byte {
	s.ub = s.kc.Append(s.ub[:0], key)
	return s.k.stateKey(s.prefix, s.ub)
}

func (s *mapState[K, V]) get(key K) (V, bool, error) {
	var zero V
	k := s.k
	if k.ttl.ms > 0 {
		if exp, err := k.expired(); err != nil || exp {
			return zero, false, err
		}
	}
	b, ok, err := k.be.get(k.kg, s.entryKey(key), s.group())
	if err != nil || !ok {
		return zero, false, err
	}
	v, err := s.vc.Decode(b)
	if err != nil {
		return zero, false, fmt.Errorf("state %s: %w", s.prefix[1:], err)
	}
	return v, true, nil
}

func (s *mapState[K, V]) put(key K, v V) error {
	k := s.k
	if k.ttl.ms > 0 {
		if err := k.touch(); err != nil {
			return err
		}
	}
	k.vb = s.vc.Append(k.vb[:0], v)
	return k.put(k.kg, s.entryKey(key), k.vb, s.group())
}

func (s *mapState[K, V]) remove(key K) error {
	k := s.k
	if k.ttl.ms > 0 {
		if err := k.touch(); err != nil {
			return err
		}
	}
	return k.del(k.kg, s.entryKey(key), s.group())
}

func (s *mapState[K, V]) clearKey() error {
	s.pb = append(s.pb[:0], s.k.stateKey(s.prefix, nil)...)
	return s.k.clearPrefix(s.pb, s.group())
}

// group is the index of the current key's entries: their own group.
func (s *mapState[K, V]) group() index { return index(len(s.prefix) + len(s.k.cur)) }

// iterate calls fn for the current key's entries with map keys in [lo, hi)
// (nil: unbounded), in map key order or reversed.
func (s *mapState[K, V]) iterate(lo, hi []byte, hasLo, hasHi, reverse bool, fn func(K, V) (bool, error)) error {
	k := s.k
	if k.ttl.ms > 0 {
		if exp, err := k.expired(); err != nil || exp {
			return err
		}
	}
	keyPrefix := k.stateKey(s.prefix, nil)
	n := len(keyPrefix)
	var lower, upper []byte
	if hasLo {
		lower = append(append(s.pb[:0], keyPrefix...), lo...)
		s.pb = lower
	} else {
		lower = append(s.pb[:0], keyPrefix...)
		s.pb = lower
	}
	if hasHi {
		upper = append(append(s.eb[:0], keyPrefix...), hi...)
	} else {
		upper = prefixEnd(s.eb, keyPrefix)
	}
	if upper != nil {
		s.eb = upper
	}
	return k.scan(k.kg, lower, upper, index(n), reverse, func(key, val []byte) (bool, error) {
		// key is in the scan's chunk, valid during fn.
		mk, err := s.kc.Decode(key[n:])
		if err != nil {
			return false, fmt.Errorf("state %s: map key: %w", s.prefix[1:], err)
		}
		v, err := s.vc.Decode(val)
		if err != nil {
			return false, fmt.Errorf("state %s: %w", s.prefix[1:], err)
		}
		return fn(mk, v)
	})
}

// around is SortedMapState.Around.
func (s *mapState[K, V]) around(at K, below, from func(K, V) (bool, error)) error {
	k := s.k
	if k.ttl.ms > 0 {
		if exp, err := k.expired(); err != nil || exp {
			return err
		}
	}
	keyPrefix := k.stateKey(s.prefix, nil)
	n := len(keyPrefix)
	s.pb = s.kc.Append(append(s.pb[:0], keyPrefix...), at)
	if s.views {
		// The codecs are views: the callbacks take the stored bytes as
		// they are, with no wrapper or Decode call per entry.
		return k.around(k.kg, s.pb, index(n), n, any(below).(func([]byte, []byte) (bool, error)),
			any(from).(func([]byte, []byte) (bool, error)))
	}
	return k.around(k.kg, s.pb, index(n), 0, func(key, val []byte) (bool, error) {
		return s.decoded(key[n:], val, below)
	}, func(key, val []byte) (bool, error) {
		return s.decoded(key[n:], val, from)
	})
}

// bytesViews reports whether kc and vc are both BytesView (then K and V
// are []byte).
func bytesViews[K, V any](kc Codec[K], vc Codec[V]) bool {
	_, k := any(kc).(BytesView)
	_, v := any(vc).(BytesView)
	return k && v
}

// decoded calls fn with the map key mk and value val decoded.
func (s *mapState[K, V]) decoded(mk, val []byte, fn func(K, V) (bool, error)) (bool, error) {
	key, err := s.kc.Decode(mk)
	if err != nil {
		return false, fmt.Errorf("state %s: map key: %w", s.prefix[1:], err)
	}
	v, err := s.vc.Decode(val)
	if err != nil {
		return false, fmt.Errorf("state %s: %w", s.prefix[1:], err)
	}
	return fn(key, v)
}

// MapState is a map per key, in the spirit of Flink's MapState. Its
// iteration order is the bytewise order of the encoded map keys.
type MapState[K, V any] struct{ m mapState[K, V] }

// NewMapState registers a map state named name on k; kc encodes the map's
// keys, vc its values.
func NewMapState[K, V any](k *Keyed, name string, kc Codec[K], vc Codec[V]) (*MapState[K, V], error) {
	s := &MapState[K, V]{m: mapState[K, V]{k: k, kc: kc, vc: vc}}
	p, err := k.register(name, &s.m)
	if err != nil {
		return nil, err
	}
	s.m.prefix = p
	return s, nil
}

// Get returns the value of key in the current key's map.
func (s *MapState[K, V]) Get(key K) (V, bool, error) { return s.m.get(key) }

// Put sets key to v in the current key's map.
func (s *MapState[K, V]) Put(key K, v V) error { return s.m.put(key, v) }

// Remove deletes key from the current key's map.
func (s *MapState[K, V]) Remove(key K) error { return s.m.remove(key) }

// Clear empties the current key's map.
func (s *MapState[K, V]) Clear() error { return s.m.clearKey() }

// All calls fn for every entry of the current key's map until fn returns
// false. fn may change state.
func (s *MapState[K, V]) All(fn func(K, V) (bool, error)) error {
	return s.m.iterate(nil, nil, false, false, false, fn)
}

// IsEmpty reports whether the current key's map has no entries.
func (s *MapState[K, V]) IsEmpty() (bool, error) { return isEmpty(&s.m) }

func isEmpty[K, V any](m *mapState[K, V]) (bool, error) {
	empty := true
	err := m.iterate(nil, nil, false, false, false, func(K, V) (bool, error) {
		empty = false
		return false, nil
	})
	return empty, err
}

// SortedMapState is an ordered map per key: for Top-N, interval joins, OVER
// aggregates and MIN/MAX under retraction. Its key codec must be
// order-preserving (Int64, String, Values, or Desc of one of them).
type SortedMapState[K, V any] struct{ m mapState[K, V] }

// NewSortedMapState registers a sorted map state named name on k.
func NewSortedMapState[K, V any](k *Keyed, name string, kc Codec[K], vc Codec[V]) (*SortedMapState[K, V], error) {
	s := &SortedMapState[K, V]{m: mapState[K, V]{k: k, kc: kc, vc: vc, views: bytesViews(kc, vc)}}
	p, err := k.register(name, &s.m)
	if err != nil {
		return nil, err
	}
	s.m.prefix = p
	return s, nil
}

// Get returns the value of key in the current key's map.
func (s *SortedMapState[K, V]) Get(key K) (V, bool, error) { return s.m.get(key) }

// Put sets key to v in the current key's map.
func (s *SortedMapState[K, V]) Put(key K, v V) error { return s.m.put(key, v) }

// Remove deletes key from the current key's map.
func (s *SortedMapState[K, V]) Remove(key K) error { return s.m.remove(key) }

// Clear empties the current key's map.
func (s *SortedMapState[K, V]) Clear() error { return s.m.clearKey() }

// IsEmpty reports whether the current key's map has no entries.
func (s *SortedMapState[K, V]) IsEmpty() (bool, error) { return isEmpty(&s.m) }

// Ascend calls fn for the current key's entries in ascending key order
// until fn returns false. fn may change state.
func (s *SortedMapState[K, V]) Ascend(fn func(K, V) (bool, error)) error {
	return s.m.iterate(nil, nil, false, false, false, fn)
}

// Descend calls fn for the current key's entries in descending key order.
func (s *SortedMapState[K, V]) Descend(fn func(K, V) (bool, error)) error {
	return s.m.iterate(nil, nil, false, false, true, fn)
}

// Range calls fn, in ascending order, for the entries with lo <= key < hi.
func (s *SortedMapState[K, V]) Range(lo, hi K, fn func(K, V) (bool, error)) error {
	s.m.lb = s.m.kc.Append(s.m.lb[:0], lo)
	s.m.hb = s.m.kc.Append(s.m.hb[:0], hi)
	return s.m.iterate(s.m.lb, s.m.hb, true, true, false, fn)
}

// AscendFrom calls fn, in ascending order, for the entries with key >= lo.
func (s *SortedMapState[K, V]) AscendFrom(lo K, fn func(K, V) (bool, error)) error {
	s.m.lb = s.m.kc.Append(s.m.lb[:0], lo)
	return s.m.iterate(s.m.lb, nil, true, false, false, fn)
}

// DescendBelow calls fn, in descending order, for the entries with key < hi.
func (s *SortedMapState[K, V]) DescendBelow(hi K, fn func(K, V) (bool, error)) error {
	s.m.hb = s.m.kc.Append(s.m.hb[:0], hi)
	return s.m.iterate(nil, s.m.hb, false, true, true, fn)
}

// Around calls below, in descending order, for the entries with key < at
// until it returns false, then from, in ascending order, for the entries
// with key >= at until it returns false: DescendBelow(at, below) and
// AscendFrom(at, from) with one seek. Unlike those, below and from must
// not change state (Around returns an error if they put or remove): in
// memory the entries are read in place, and the key and value passed are
// valid only during the call (with a view codec such as BytesView).
func (s *SortedMapState[K, V]) Around(at K, below, from func(K, V) (bool, error)) error {
	return s.m.around(at, below, from)
}

// First returns the smallest entry of the current key's map.
func (s *SortedMapState[K, V]) First() (K, V, bool, error) { return s.edge(false) }

// Last returns the largest entry of the current key's map.
func (s *SortedMapState[K, V]) Last() (K, V, bool, error) { return s.edge(true) }

func (s *SortedMapState[K, V]) edge(reverse bool) (key K, v V, ok bool, err error) {
	err = s.m.iterate(nil, nil, false, false, reverse, func(mk K, mv V) (bool, error) {
		key, v, ok = mk, mv, true
		return false, nil
	})
	return key, v, ok, err
}

// ListState is a list per key, in the spirit of Flink's ListState. Add is
// O(1): each element is its own entry, numbered by a per-key counter. In
// memory a list is one entry holding its elements back to back (memList),
// written to the store in that layout at checkpoints.
type ListState[T any] struct {
	k      *Keyed
	prefix []byte
	codec  Codec[T]
	sb     [8]byte
	pb, eb []byte
}

// NewListState registers a list state named name on k.
func NewListState[T any](k *Keyed, name string, c Codec[T]) (*ListState[T], error) {
	s := &ListState[T]{k: k, codec: c}
	p, err := k.register(name, s)
	if err != nil {
		return nil, err
	}
	s.prefix = p
	return s, nil
}

// Add appends v to the current key's list.
func (s *ListState[T]) Add(v T) error {
	k := s.k
	if k.ttl.ms > 0 {
		if err := k.touch(); err != nil {
			return err
		}
	}
	k.vb = s.codec.Append(k.vb[:0], v)
	if lb, ok := k.be.(listBackend); ok {
		if ok, err := lb.listAdd(k.kg, k.stateKey(s.prefix, nil), k.vb); ok || err != nil {
			return err
		}
	}
	// The counter is at prefix | key; elements at prefix | key | seq.
	var seq uint64
	b, ok, err := k.be.get(k.kg, k.stateKey(s.prefix, nil), pointIndex)
	if err != nil {
		return err
	}
	if ok {
		if len(b) != 8 {
			return fmt.Errorf("state %s: list counter of %d bytes", s.prefix[1:], len(b))
		}
		seq = binary.BigEndian.Uint64(b)
	}
	binary.BigEndian.PutUint64(s.sb[:], seq+1)
	if err := k.put(k.kg, k.kb, s.sb[:], globalIndex); err != nil {
		return err
	}
	binary.BigEndian.PutUint64(s.sb[:], seq)
	return k.put(k.kg, k.stateKey(s.prefix, s.sb[:]), k.vb, globalIndex)
}

// Get calls fn for the current key's elements in the order they were
// added, until fn returns false. fn may change state.
func (s *ListState[T]) Get(fn func(T) (bool, error)) error {
	k := s.k
	if k.ttl.ms > 0 {
		if exp, err := k.expired(); err != nil || exp {
			return err
		}
	}
	p := k.stateKey(s.prefix, nil)
	if lb, ok := k.be.(listBackend); ok {
		ok, err := lb.listGet(k.kg, p, func(val []byte) (bool, error) {
			v, err := s.codec.Decode(val)
			if err != nil {
				return false, fmt.Errorf("state %s: %w", s.prefix[1:], err)
			}
			return fn(v)
		})
		if ok || err != nil {
			return err
		}
	}
	s.eb = prefixEnd(s.eb, p)
	s.pb = append(append(s.pb[:0], p...), 0) // after the counter
	return k.scan(k.kg, s.pb, s.eb, globalIndex, false, func(_, val []byte) (bool, error) {
		v, err := s.codec.Decode(val)
		if err != nil {
			return false, fmt.Errorf("state %s: %w", s.prefix[1:], err)
		}
		return fn(v)
	})
}

// Update replaces the current key's list with vs.
func (s *ListState[T]) Update(vs []T) error {
	if err := s.clearKey(); err != nil {
		return err
	}
	for _, v := range vs {
		if err := s.Add(v); err != nil {
			return err
		}
	}
	return nil
}

// Clear empties the current key's list.
func (s *ListState[T]) Clear() error { return s.clearKey() }

func (s *ListState[T]) clearKey() error {
	k := s.k
	if lb, ok := k.be.(listBackend); ok {
		if ok, err := lb.listClear(k.kg, k.stateKey(s.prefix, nil)); ok || err != nil {
			return err
		}
	}
	s.pb = append(s.pb[:0], s.k.stateKey(s.prefix, nil)...)
	return s.k.clearPrefix(s.pb, globalIndex)
}
