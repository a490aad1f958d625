package state

import (
	"github.com/weir-sql/weir/types"
)

// KeyIndex maps the keys of an operator's in-memory records to slots, the
// numbers under which the operator keeps each key's typed record (in a Slab
// or its own slices) and tells Records about it. A key of one integer-stored
// column (INT, BIGINT, BOOLEAN, TIMESTAMP, TIMESTAMP_LTZ, INTERVAL) is held
// in an IntTable without encoding it, and a key of two such columns (both
// not NULL) in an Int2Table; any other key under its order-preserving
// encoding (AppendValue of each key column) in a map. Which table holds a
// key changes nothing outside: Key, AppendKey and Added see the same
// encoded key either way.
// Freed slots are reused, so slots stay dense.
//
// The usual flow of an operator over Records:
//
//	s, ok := ix.Find(row)
//	if !ok && st.Backed() {
//		s, ok, err = st.Load(ix.Key()) // LoadRecord calls ix.Insert(row) for it
//	}
//	if !ok {
//		s = ix.Insert(row)
//		ix.Added(st, s)
//	}
//
// Like Records, a KeyIndex belongs to one goroutine.
type KeyIndex struct {
	cols   []int // the key columns of a row
	intCol int   // the single integer-stored key column, or -1
	pair   bool  // two integer-stored key columns, cols[0] and cols[1]

	ints   *IntTable
	ints2  Int2Table // the keys of two integer-stored columns (pair)
	strs   map[string]int32
	keyStr []string   // per slot: its encoded key when in strs
	key2   []int64    // per slot: its second integer when in ints2
	ab     []byte     // Added's encoding of a key in ints2
	slots  []slotInfo // per slot: the rest, together (one cache line)
	free   []int32
	n      int

	// The key of the last Find, for Key and Insert.
	kb      []byte
	kbValid bool
	last    []types.Value
}

// slotInfo is what a KeyIndex knows of a slot besides a string key: its
// integer key and that key's kind when in ints, whether it is (inInts),
// and whether the slot holds a key; 16 bytes, so that adding or removing
// a key reads one line of them. A key in ints2 (inInts2) keeps its first
// integer and kind here, its second kind in kind2 and its second integer
// in KeyIndex.key2.
type slotInfo struct {
	intKey  int64
	kind    types.Kind
	kind2   types.Kind
	inInts  bool
	inInts2 bool
	used    bool
}

// NewKeyIndex returns an empty index of the keys made of columns cols of
// rows whose columns have kinds.
func NewKeyIndex(cols []int, kinds []types.Kind) *KeyIndex {
	x := &KeyIndex{cols: cols, intCol: -1, ints: NewIntTable(), strs: map[string]int32{}}
	if len(cols) == 1 && IntStored(kinds[cols[0]]) {
		x.intCol = cols[0]
	}
	if len(cols) == 2 && IntStored(kinds[cols[0]]) && IntStored(kinds[cols[1]]) {
		x.pair = true
	}
	return x
}

// IntStored reports whether values of kind k are integers an IntTable can
// key (Value.Int holds them whole).
func IntStored(k types.Kind) bool {
	return k < 64 && intStoredKinds&(1<<k) != 0
}

// intStoredKinds has bit k set for each kind k that IntStored accepts (one
// test of a bit, where a switch compared the kind with each in turn).
const intStoredKinds = 1<<types.KindBoolean | 1<<types.KindInt | 1<<types.KindBigInt | 1<<types.KindTimestamp |
	1<<types.KindTimestampLTZ | 1<<types.KindInterval

// intOf returns row's key as an integer when it is held in ints.
func (x *KeyIndex) intOf(row []types.Value) (int64, bool) {
	if x.intCol < 0 {
		return 0, false
	}
	v := row[x.intCol]
	if !IntStored(v.Kind()) {
		return 0, false // NULL
	}
	return v.Int(), true
}

// pairOf returns row's key as two integers when it is held in ints2.
func (x *KeyIndex) pairOf(row []types.Value) (a, b types.Value, ok bool) {
	if !x.pair {
		return a, b, false
	}
	a, b = row[x.cols[0]], row[x.cols[1]]
	return a, b, IntStored(a.Kind()) && IntStored(b.Kind()) // else a NULL
}

// Find returns the slot of row's key. It remembers the key for Key.
func (x *KeyIndex) Find(row []types.Value) (int32, bool) {
	x.last = row
	if n, ok := x.intOf(row); ok {
		x.kbValid = false
		return x.ints.Get(n)
	}
	if a, b, ok := x.pairOf(row); ok {
		x.kbValid = false
		return x.ints2.Get(a.Int(), b.Int())
	}
	x.kb = x.AppendKeyOf(x.kb[:0], row)
	x.kbValid = true
	s, ok := x.strs[string(x.kb)]
	return s, ok
}

// PeekInt is Find for an index of one integer-stored key column
// (IntKeyed), given the key's value, without remembering it (Key and
// Insert do not see it): for an operator that reads ahead the slots of
// the rows it is about to look up. A NULL finds nothing.
func (x *KeyIndex) PeekInt(v types.Value) (int32, bool) {
	if x.intCol < 0 || !IntStored(v.Kind()) {
		return 0, false
	}
	return x.ints.Get(v.Int())
}

// TouchInt reads the index's entry where the probe of the integer key v
// starts (IntKeyed; 0 for a NULL or another index) and returns what it
// read, with no branch on it: an operator about to look up a batch's keys
// (PeekInt, Find) reads them all ahead first, so that their cache misses
// overlap rather than wait on each probe's outcome. Nothing changes.
func (x *KeyIndex) TouchInt(v types.Value) int32 {
	if x.intCol < 0 || !IntStored(v.Kind()) {
		return 0
	}
	return x.ints.Touch(v.Int())
}

// NextFree returns the slot that the j-th next Insert (from 0) takes if it
// reuses a freed slot (no Remove in between), for an operator that reads
// ahead the records of keys it is about to add.
func (x *KeyIndex) NextFree(j int) (int32, bool) {
	if j < 0 || j >= len(x.free) {
		return 0, false
	}
	return x.free[len(x.free)-1-j], true
}

// FreeLen returns the number of freed slots that Inserts will reuse
// (NextFree(0) to NextFree(FreeLen()-1)).
func (x *KeyIndex) FreeLen() int { return len(x.free) }

// Touch reads the index's entry of slot s's key (an integer key: the home
// slot of its probe in the table) and returns what it read, so that an
// operator about to remove or look up keys can read their entries ahead
// (their cache misses overlapping) and keep the reads with a sum. Nothing
// changes.
func (x *KeyIndex) Touch(s int32) int32 {
	if i := &x.slots[s]; i.inInts {
		return x.ints.Touch(i.intKey)
	} else if i.inInts2 {
		return x.ints2.Touch(i.intKey, x.key2[s])
	}
	return 0
}

// TouchInfo reads what the index keeps of slot s apart from its key's
// entry (an integer key, its kind, whether used) and returns what it
// read, for an operator about to give a freed slot a new key (NextFree)
// to read ahead with the slot's record. Nothing changes.
func (x *KeyIndex) TouchInfo(s int32) int64 {
	if int(s) >= len(x.slots) {
		return 0
	}
	return x.slots[s].intKey
}

// IntKeyed reports whether the keys are one integer-stored column, held
// in an IntTable (see PeekInt).
func (x *KeyIndex) IntKeyed() bool { return x.intCol >= 0 }

// Key returns the encoded key of the row of the last Find (valid until the
// next call of the index).
func (x *KeyIndex) Key() []byte {
	if !x.kbValid {
		x.kb = x.AppendKeyOf(x.kb[:0], x.last)
		x.kbValid = true
	}
	return x.kb
}

// AppendKeyOf appends the key of row in the order-preserving encoding.
func (x *KeyIndex) AppendKeyOf(dst []byte, row []types.Value) []byte {
	for _, c := range x.cols {
		dst = AppendValue(dst, row[c])
	}
	return dst
}

// Insert gives row's key, which must not be in the index, a slot: a freed
// one if any, else Cap() before the call (the operator grows its records
// to Cap()).
func (x *KeyIndex) Insert(row []types.Value) int32 {
	var s int32
	if k := len(x.free); k > 0 {
		s = x.free[k-1]
		x.free = x.free[:k-1]
	} else {
		s = int32(len(x.slots))
		x.keyStr = append(x.keyStr, "")
		x.slots = append(x.slots, slotInfo{})
		if x.pair {
			x.key2 = append(x.key2, 0)
		}
	}
	x.slots[s].used = true
	x.n++
	if n, ok := x.intOf(row); ok {
		x.ints.Put(n, s)
		x.slots[s] = slotInfo{intKey: n, kind: row[x.intCol].Kind(), inInts: true, used: true}
		return s
	}
	if a, b, ok := x.pairOf(row); ok {
		x.ints2.Put(a.Int(), b.Int(), s)
		x.slots[s] = slotInfo{intKey: a.Int(), kind: a.Kind(), kind2: b.Kind(), inInts2: true, used: true}
		x.key2[s] = b.Int()
		x.kbValid, x.last = false, row
		return s
	}
	x.kb = x.AppendKeyOf(x.kb[:0], row)
	x.kbValid, x.last = true, row
	k := string(x.kb)
	x.strs[k] = s
	x.slots[s].inInts, x.slots[s].inInts2, x.keyStr[s] = false, false, k
	return s
}

// FindOrInsert returns the slot of row's key and true when it is in the
// index; when it is not, it Inserts it and returns its new slot and
// false. A key of one integer-stored column costs one probe of the table
// (Find then Insert cost two) and Key does not see it: for an operator
// whose keys are all in memory (nothing to Load first).
func (x *KeyIndex) FindOrInsert(row []types.Value) (int32, bool) {
	n, ok := x.intOf(row)
	if !ok {
		if s, found := x.Find(row); found {
			return s, true
		}
		return x.Insert(row), false
	}
	// The slot a new key takes: the last freed, or a new one.
	s := int32(len(x.slots))
	k := len(x.free)
	if k > 0 {
		s = x.free[k-1]
	}
	if got, found := x.ints.GetOrPut(n, s); found {
		return got, true
	}
	if k > 0 {
		x.free = x.free[:k-1]
	} else {
		x.keyStr = append(x.keyStr, "")
		x.slots = append(x.slots, slotInfo{})
	}
	x.n++
	x.slots[s] = slotInfo{intKey: n, kind: row[x.intCol].Kind(), inInts: true, used: true}
	return s, false
}

// Added tells st that slot s holds a new record of the key Insert gave it.
func (x *KeyIndex) Added(st *Records, s int32) {
	if i := &x.slots[s]; i.inInts {
		st.AddedInt(s, i.kind, i.intKey)
		return
	} else if i.inInts2 {
		x.ab = x.AppendKey(x.ab[:0], s)
		st.AddedKey(s, x.ab)
		return
	}
	st.AddedKey(s, unsafeBytes(x.keyStr[s]))
}

// AppendKey appends slot s's key in the order-preserving encoding (for
// RecordSource.AppendRecordKey).
func (x *KeyIndex) AppendKey(dst []byte, s int32) []byte {
	if i := &x.slots[s]; i.inInts {
		return AppendValue(dst, types.BigIntValue(i.intKey).WithKind(i.kind))
	} else if i.inInts2 {
		dst = AppendValue(dst, types.BigIntValue(i.intKey).WithKind(i.kind))
		return AppendValue(dst, types.BigIntValue(x.key2[s]).WithKind(i.kind2))
	}
	return append(dst, x.keyStr[s]...)
}

// IntKey returns slot s's key (of an IntKeyed index).
func (x *KeyIndex) IntKey(s int32) int64 { return x.slots[s].intKey }

// Remove frees slot s and forgets its key.
func (x *KeyIndex) Remove(s int32) {
	i := &x.slots[s]
	if !i.used {
		return
	}
	if i.inInts {
		x.ints.Del(i.intKey)
	} else if i.inInts2 {
		x.ints2.Del(i.intKey, x.key2[s])
	} else {
		delete(x.strs, x.keyStr[s])
		x.keyStr[s] = ""
	}
	i.used = false
	x.n--
	x.free = append(x.free, s)
}

// Used reports whether slot s holds a key.
func (x *KeyIndex) Used(s int32) bool { return int(s) < len(x.slots) && x.slots[s].used }

// Len returns the number of keys.
func (x *KeyIndex) Len() int { return x.n }

// Cap returns the number of slots handed out so far, free or not: every
// slot is below it.
func (x *KeyIndex) Cap() int32 { return int32(len(x.slots)) }

// Reset forgets every key and slot (Records.Spill dropped the records).
func (x *KeyIndex) Reset() {
	x.ints = NewIntTable()
	x.ints2.Reset()
	x.strs = map[string]int32{}
	x.keyStr, x.slots, x.free, x.key2 = x.keyStr[:0], x.slots[:0], x.free[:0], x.key2[:0]
	x.n, x.kbValid, x.last = 0, false, nil
}

// Slab holds an operator's typed records, w values of T per slot, in pages
// of slabPage slots, so that growing to millions of slots never copies the
// records already there.
type Slab[T any] struct {
	w     int
	pages [][]T
	// ones holds the pages of a slab of one value a slot as arrays, for
	// One: an index into an array of constant length needs no bounds
	// check, and the page's length is not loaded.
	ones []*[slabPage]T
}

const slabPage = 4096

// NewSlab returns an empty slab of w values per slot.
func NewSlab[T any](w int) *Slab[T] { return &Slab[T]{w: w} }

// Grow makes slots below n addressable.
func (s *Slab[T]) Grow(n int32) {
	for int(n) > len(s.pages)*slabPage {
		p := make([]T, slabPage*s.w)
		s.pages = append(s.pages, p)
		if s.w == 1 {
			s.ones = append(s.ones, (*[slabPage]T)(p))
		}
	}
}

// At returns slot i's w values (Grow first).
func (s *Slab[T]) At(i int32) []T {
	p, o := int(i)/slabPage, int(i)%slabPage*s.w
	return s.pages[p][o : o+s.w : o+s.w]
}

// One returns a pointer to slot i's value in a slab of one value a slot
// (NewSlab(1); Grow first): At without the slice, for the operators that
// reach a slot's record for every row.
func (s *Slab[T]) One(i int32) *T {
	u := uint32(i)
	return &s.ones[u/slabPage][u%slabPage]
}

// Clear zeroes every slot (their values may hold references).
func (s *Slab[T]) Clear() {
	for _, p := range s.pages {
		clear(p)
	}
}
