package state

import "math/bits"

// Int2Table maps keys of two int64s to int32 slots: IntTable's open
// addressing with linear probing and backward-shift deletion, kept at most
// three quarters full, for KeyIndex's keys of two integer-stored columns
// (a Top-N partitioned by (id, seller)). A slot holds both key parts and
// the value, 24 bytes, so a lookup of a key not in the CPU cache usually
// costs one miss, and no key is encoded or hashed as a string. The zero
// value is empty.
type Int2Table struct {
	slots []int2Slot
	shift uint // 64 - log2(len(slots))
	n     int
}

// int2Slot is one slot of an Int2Table.
type int2Slot struct {
	a, b int64
	val  int32 // slot + 1; 0 marks an empty slot
}

// home returns the slot where (a, b)'s probe starts: both parts mixed,
// then the top bits, so that keys differing in either part spread.
func (t *Int2Table) home(a, b int64) int {
	k := uint64(a)*0x9e3779b97f4a7c15 ^ uint64(b)*0xc2b2ae3d27d4eb4f
	k ^= k >> 31
	return int((k * 0xbf58476d1ce4e5b9) >> t.shift)
}

// Get returns the slot of (a, b).
func (t *Int2Table) Get(a, b int64) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	for i := t.home(a, b); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.val == 0 {
			return 0, false
		}
		if s.a == a && s.b == b {
			return s.val - 1, true
		}
	}
}

// Touch returns the value in (a, b)'s home slot: a read ahead of a Get or
// Del of it (see KeyIndex.Touch). Nothing changes.
func (t *Int2Table) Touch(a, b int64) int32 {
	if len(t.slots) == 0 {
		return 0
	}
	return t.slots[t.home(a, b)].val
}

// Put maps (a, b), which must not be in the table, to slot v (>= 0).
func (t *Int2Table) Put(a, b int64, v int32) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	t.insert(int2Slot{a: a, b: b, val: v + 1})
	t.n++
}

// insert places e in the first free slot of its probe.
func (t *Int2Table) insert(e int2Slot) {
	mask := len(t.slots) - 1
	i := t.home(e.a, e.b)
	for t.slots[i].val != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = e
}

func (t *Int2Table) grow() {
	old := t.slots
	size := max(2*len(old), intTableMinSlots)
	t.slots = make([]int2Slot, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for _, s := range old {
		if s.val != 0 {
			t.insert(s)
		}
	}
}

// Del removes (a, b) if present, moving later entries of its probe run
// back as IntTable.Del does.
func (t *Int2Table) Del(a, b int64) {
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
		if s.a == a && s.b == b {
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
	t.slots[i] = int2Slot{}
}

// Len returns the number of keys.
func (t *Int2Table) Len() int { return t.n }

// Reset empties the table and frees its slots.
func (t *Int2Table) Reset() { *t = Int2Table{} }
