package exec

import "math/bits"

// intTable maps int64 keys to group numbers: an open-addressing hash table
// with linear probing, kept at most half full, with backward-shift deletion
// (no tombstones). It is the GroupAgg's index for a single integer key,
// where it is cheaper than a Go map: one multiply to hash, and the probe
// usually ends in the first slot.
type intTable struct {
	keys  []int64
	vals  []int32 // group number + 1; 0 marks an empty slot
	shift uint    // 64 - log2(len(keys))
	n     int
}

const intTableMinSlots = 64

func newIntTable() *intTable {
	t := &intTable{}
	t.init(intTableMinSlots)
	return t
}

func (t *intTable) init(slots int) {
	t.keys = make([]int64, slots)
	t.vals = make([]int32, slots)
	t.shift = uint(64 - bits.TrailingZeros(uint(slots)))
	t.n = 0
}

// home returns the slot where k's probe starts (Fibonacci hashing).
func (t *intTable) home(k int64) int {
	return int((uint64(k) * 0x9e3779b97f4a7c15) >> t.shift)
}

// get returns the group of k.
func (t *intTable) get(k int64) (int32, bool) {
	mask := len(t.keys) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		v := t.vals[i]
		if v == 0 {
			return 0, false
		}
		if t.keys[i] == k {
			return v - 1, true
		}
	}
}

// put maps k, which must not be in the table, to group g.
func (t *intTable) put(k int64, g int32) {
	if 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	mask := len(t.keys) - 1
	i := t.home(k)
	for t.vals[i] != 0 {
		i = (i + 1) & mask
	}
	t.keys[i], t.vals[i] = k, g+1
	t.n++
}

func (t *intTable) grow() {
	keys, vals := t.keys, t.vals
	t.init(2 * len(keys))
	mask := len(t.keys) - 1
	for j, v := range vals {
		if v == 0 {
			continue
		}
		i := t.home(keys[j])
		for t.vals[i] != 0 {
			i = (i + 1) & mask
		}
		t.keys[i], t.vals[i] = keys[j], v
		t.n++
	}
}

// del removes k if present. Later entries of the probe run move back so
// that every entry stays reachable from its home slot.
func (t *intTable) del(k int64) {
	mask := len(t.keys) - 1
	i := t.home(k)
	for {
		if t.vals[i] == 0 {
			return
		}
		if t.keys[i] == k {
			break
		}
		i = (i + 1) & mask
	}
	t.n--
	for j := (i + 1) & mask; t.vals[j] != 0; j = (j + 1) & mask {
		h := t.home(t.keys[j])
		// Entry j may move to the hole at i unless its home lies
		// cyclically in (i, j].
		if (i < j && i < h && h <= j) || (i > j && (i < h || h <= j)) {
			continue
		}
		t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
		i = j
	}
	t.keys[i], t.vals[i] = 0, 0
}

// len returns the number of keys.
func (t *intTable) len() int { return t.n }
