package state

import "math/bits"

// IntTable maps int64 keys to int32 slots (group numbers, record slots): an
// open-addressing hash table with linear probing, kept at most three
// quarters full (10,000 keys take 16,384 slots, 256 KiB, not 32,768: the
// window aggregates' tables of a slice's keys miss the cache less),
// with backward-shift deletion (no tombstones). It is the in-memory
// operators' index for a single integer key (KeyIndex, GroupAggregate),
// where it is cheaper than a Go map: one multiply to hash, and the probe
// usually ends in the first cache line. A slot holds key and group together, so
// a lookup of a key not in the CPU cache costs one miss, not two.
type IntTable struct {
	slots []intSlot
	shift uint // 64 - log2(len(slots))
	n     int
}

// intSlot is one slot of an IntTable.
type intSlot struct {
	key int64
	val int32 // group number + 1; 0 marks an empty slot
}

const intTableMinSlots = 64

// NewIntTable returns an empty IntTable.
func NewIntTable() *IntTable {
	t := &IntTable{}
	t.init(intTableMinSlots)
	return t
}

func (t *IntTable) init(slots int) {
	t.slots = make([]intSlot, slots)
	t.shift = uint(64 - bits.TrailingZeros(uint(slots)))
	t.n = 0
}

// home returns the slot where k's probe starts (Fibonacci hashing).
func (t *IntTable) home(k int64) int {
	return int((uint64(k) * 0x9e3779b97f4a7c15) >> t.shift)
}

// Get returns the slot of k.
func (t *IntTable) Get(k int64) (int32, bool) {
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.val == 0 {
			return 0, false
		}
		if s.key == k {
			return s.val - 1, true
		}
	}
}

// Touch returns the value in k's home slot: a read ahead of a Get or Del
// of k (see KeyIndex.Touch).
func (t *IntTable) Touch(k int64) int32 { return t.slots[t.home(k)].val }

// Put maps k, which must not be in the table, to slot g (>= 0).
func (t *IntTable) Put(k int64, g int32) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	t.insert(k, g+1)
	t.n++
}

// GetOrPut returns the slot of k and true when k is in the table; when it
// is not, it maps k to slot g (>= 0) and returns g and false. A key that
// is new costs one probe, where Get then Put cost two.
func (t *IntTable) GetOrPut(k int64, g int32) (int32, bool) {
	mask := len(t.slots) - 1
	i := t.home(k)
	for ; t.slots[i].val != 0; i = (i + 1) & mask {
		if t.slots[i].key == k {
			return t.slots[i].val - 1, true
		}
	}
	if 4*(t.n+1) > 3*len(t.slots) {
		t.Put(k, g) // grows, then probes the new slots
		return g, false
	}
	t.slots[i] = intSlot{key: k, val: g + 1}
	t.n++
	return g, false
}

// insert places an entry in the first free slot of k's probe.
func (t *IntTable) insert(k int64, val int32) {
	mask := len(t.slots) - 1
	i := t.home(k)
	for t.slots[i].val != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = intSlot{key: k, val: val}
}

func (t *IntTable) grow() {
	old := t.slots
	t.init(2 * len(old))
	for _, s := range old {
		if s.val != 0 {
			t.insert(s.key, s.val)
			t.n++
		}
	}
}

// Del removes k if present. Later entries of the probe run move back so
// that every entry stays reachable from its home slot.
func (t *IntTable) Del(k int64) {
	mask := len(t.slots) - 1
	i := t.home(k)
	for {
		if t.slots[i].val == 0 {
			return
		}
		if t.slots[i].key == k {
			break
		}
		i = (i + 1) & mask
	}
	t.n--
	for j := (i + 1) & mask; t.slots[j].val != 0; j = (j + 1) & mask {
		if mayFill(i, j, t.home(t.slots[j].key)) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = intSlot{}
}

// mayFill reports whether the entry in slot j, whose probe starts at h,
// may move back to the hole at i of its run (backward-shift deletion): it
// may unless h lies cyclically in (i, j], where the move would put it
// before its home.
func mayFill(i, j, h int) bool {
	return !((i < j && i < h && h <= j) || (i > j && (i < h || h <= j)))
}

// Reset empties the table. It keeps the slots (cleared) when they are at
// most four times what its last contents needed, so a table refilled with
// about as many keys does not grow again; otherwise it shrinks back.
func (t *IntTable) Reset() {
	if t.n == 0 {
		return
	}
	if len(t.slots) > 8*max(t.n, intTableMinSlots/2) {
		t.init(intTableMinSlots)
		return
	}
	clear(t.slots)
	t.n = 0
}

// Len returns the number of keys.
func (t *IntTable) Len() int { return t.n }

// PairTable maps (int32, int64) pairs (a group number and an integer
// value of it) to int32 slots: IntTable's open addressing with linear
// probing and backward-shift deletion, for a key of two parts, kept at
// most three quarters full. A slot holds both key parts and the value, 16
// bytes, so a probe usually reads one cache line. The zero value is
// empty.
type PairTable struct {
	slots []pairSlot
	shift uint // 64 - log2(len(slots))
	n     int
}

// pairSlot is one slot of a PairTable.
type pairSlot struct {
	b   int64
	a   int32
	val int32 // slot + 1; 0 marks an empty slot
}

// home returns the slot where (a, b)'s probe starts: both parts mixed, so
// that keys differing in either spread, then the top bits.
func (t *PairTable) home(a int32, b int64) int {
	k := uint64(b)*0x9e3779b97f4a7c15 ^ uint64(uint32(a))*0xc2b2ae3d27d4eb4f
	k ^= k >> 31
	return int((k * 0xbf58476d1ce4e5b9) >> t.shift)
}

// Get returns the slot of (a, b).
func (t *PairTable) Get(a int32, b int64) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	for i := t.home(a, b); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.val == 0 {
			return 0, false
		}
		if s.b == b && s.a == a {
			return s.val - 1, true
		}
	}
}

// Touch reads the slot where the probe of each pair (a[i], b[i]) starts
// and returns a sum of what it read: a batch's lookups call it first, so
// that their cache misses overlap rather than come one at a time.
func (t *PairTable) Touch(a []int32, b []int64) int32 {
	if t.n == 0 {
		return 0
	}
	var sum int32
	for i := range a {
		sum += t.slots[t.home(a[i], b[i])].val
	}
	return sum
}

// Put maps (a, b), which must not be in the table, to slot v (>= 0).
func (t *PairTable) Put(a int32, b int64, v int32) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	t.insert(pairSlot{b: b, a: a, val: v + 1})
	t.n++
}

func (t *PairTable) insert(e pairSlot) {
	mask := len(t.slots) - 1
	i := t.home(e.a, e.b)
	for t.slots[i].val != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = e
}

func (t *PairTable) grow() {
	old := t.slots
	size := max(2*len(old), intTableMinSlots)
	t.slots = make([]pairSlot, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for _, s := range old {
		if s.val != 0 {
			t.insert(s)
		}
	}
}

// Del removes (a, b) if present, moving later entries of its probe run
// back as IntTable.Del does.
func (t *PairTable) Del(a int32, b int64) {
	if t.n == 0 {
		return
	}
	mask := len(t.slots) - 1
	i := t.home(a, b)
	for {
		s := &t.slots[i]
		if s.val == 0 {
			return
		}
		if s.b == b && s.a == a {
			break
		}
		i = (i + 1) & mask
	}
	t.n--
	for j := (i + 1) & mask; t.slots[j].val != 0; j = (j + 1) & mask {
		if mayFill(i, j, t.home(t.slots[j].a, t.slots[j].b)) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = pairSlot{}
}

// Len returns the number of keys.
func (t *PairTable) Len() int { return t.n }

// Reset empties the table and frees its slots.
func (t *PairTable) Reset() { *t = PairTable{} }

// Bytes returns the memory of the table's slots.
func (t *PairTable) Bytes() int64 { return int64(cap(t.slots)) * 16 }

// CountTable maps integers to positive counts (a DISTINCT set's values
// and how many rows hold each): IntTable's open addressing with linear
// probing and backward-shift deletion, kept at most half full, with key and
// count in one slot. Its keys are mixed before the top bits pick the home
// slot, so that keys differing in any bits spread (IntTable's Fibonacci
// hashing alone clusters some value sets). The zero value is empty.
type CountTable struct {
	slots []countSlot
	shift uint // 64 - log2(len(slots))
	n     int
}

// countSlot is one slot of a CountTable.
type countSlot struct {
	key uint64
	n   int64 // 0 marks an empty slot
}

const countTableMinSlots = 8

// home returns the slot where k's probe starts.
func (t *CountTable) home(k uint64) int {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	return int((k * 0x9e3779b97f4a7c15) >> t.shift)
}

// Add adds c (> 0) to k's count and reports whether k was new.
func (t *CountTable) Add(k uint64, c int64) bool {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		e := &t.slots[i]
		if e.n == 0 {
			*e = countSlot{key: k, n: c}
			t.n++
			return true
		}
		if e.key == k {
			e.n += c
			return false
		}
	}
}

func (t *CountTable) grow() {
	old := t.slots
	size := max(2*len(old), countTableMinSlots)
	t.slots = make([]countSlot, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	mask := size - 1
	for _, e := range old {
		if e.n == 0 {
			continue
		}
		i := t.home(e.key)
		for t.slots[i].n != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = e
	}
}

// Sub takes one from k's count and reports whether that removed k (its
// count reached 0); a key not present is left alone (false).
func (t *CountTable) Sub(k uint64) bool {
	if t.n == 0 {
		return false
	}
	mask := len(t.slots) - 1
	i := t.home(k)
	for {
		e := &t.slots[i]
		if e.n == 0 {
			return false
		}
		if e.key == k {
			if e.n--; e.n > 0 {
				return false
			}
			break
		}
		i = (i + 1) & mask
	}
	t.n--
	for j := (i + 1) & mask; t.slots[j].n != 0; j = (j + 1) & mask {
		if mayFill(i, j, t.home(t.slots[j].key)) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = countSlot{}
	return true
}

// Len returns the number of keys.
func (t *CountTable) Len() int { return t.n }

// Range calls fn for every key and its count, in no particular order.
func (t *CountTable) Range(fn func(k uint64, n int64)) {
	for _, e := range t.slots {
		if e.n != 0 {
			fn(e.key, e.n)
		}
	}
}
