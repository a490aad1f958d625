package state

import (
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestSlabOneGrowsInSteps grows a slab of one value a slot one slot at a
// time across several page ends (as an operator's KeyIndex.Cap does) and
// checks, at every step, that One of the slots at page ends and of the
// newest slot is the memory At gives, that a pointer One gave before a
// Grow still reaches the slot's value after it (records never move), and
// that Clear zeroes what One reaches.
func TestSlabOneGrowsInSteps(t *testing.T) {
	s := NewSlab[int64](1)
	const n = 3*slabPage + 2
	ptrs := make([]*int64, 0, n)
	for i := range int32(n) {
		s.Grow(i + 1)
		p := s.One(i)
		if p != &s.At(i)[0] {
			t.Fatalf("slot %d: One and At differ", i)
		}
		*p = int64(i) + 1
		ptrs = append(ptrs, p)
		// The slots at page ends so far, and the first slots of pages.
		for _, j := range []int32{0, slabPage - 1, slabPage, 2*slabPage - 1, 2 * slabPage, 3*slabPage - 1, 3 * slabPage} {
			if j > i {
				break
			}
			if s.One(j) != ptrs[j] || *s.One(j) != int64(j)+1 {
				t.Fatalf("after growing to %d slots: slot %d moved or changed (%d)", i+1, j, *s.One(j))
			}
		}
	}
	if len(s.ones) != len(s.pages) {
		t.Fatalf("%d array pages for %d pages", len(s.ones), len(s.pages))
	}
	for i, p := range ptrs {
		if *p != int64(i)+1 || s.One(int32(i)) != p {
			t.Fatalf("slot %d: %d", i, *p)
		}
	}
	s.Clear()
	for i := range int32(n) {
		if *s.One(i) != 0 {
			t.Fatalf("slot %d after Clear: %d", i, *s.One(i))
		}
	}
	// A slab of several values a slot keeps no array pages (At only).
	w := NewSlab[int64](2)
	w.Grow(slabPage + 1)
	if len(w.ones) != 0 {
		t.Fatalf("a slab of 2 values a slot has %d array pages", len(w.ones))
	}
}

// TestIntStoredKinds checks IntStored's bit test against the kinds it
// stands for, over every value of a Kind.
func TestIntStoredKinds(t *testing.T) {
	for k := range 256 {
		kind := types.Kind(k)
		want := false
		switch kind {
		case types.KindBoolean, types.KindInt, types.KindBigInt, types.KindTimestamp, types.KindTimestampLTZ, types.KindInterval:
			want = true
		}
		if got := IntStored(kind); got != want {
			t.Errorf("IntStored(%d) = %v, want %v", k, got, want)
		}
	}
}
