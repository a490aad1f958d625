package exec

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	"github.com/weir-sql/weir/types"
)

// The order in which a GroupAgg writes its changed groups at a snapshot:
// the order of their state keys (key group, then encoded key). The store
// writes a long run of ascending keys straight into a table file, more
// cheaply than the same keys in random order. Order is only a speed-up: any
// order is correct.

// changeEntry is a changed group on its way to the store: where its encoded
// state is in groupState.vals, and what orders its state key. For a group
// of a single integer key (ints), that is its key group, the key's kind
// and the little-endian bytes of the integer, which sort as the
// byte-reversed value (rev); for other groups the encoded key decides
// within a key group.
type changeEntry struct {
	rev    uint64
	gi     int32
	valOff uint32
	valLen uint32
	kg     uint16
	kind   types.Kind
	ints   bool
}

// sortChanges sorts entries into state-key order and returns them (in
// entries or in the state's spare buffer). Integer keys take a radix sort
// (linear, no comparisons); other keys are distributed by key group and
// each key group is sorted by its encoded keys.
func (g *groupAggOp) sortChanges(entries []changeEntry) []changeEntry {
	if len(entries) < 2 {
		return entries
	}
	st := g.st
	st.spare = slices.Grow(st.spare[:0], len(entries))[:len(entries)]
	for i := range entries {
		if !entries[i].ints {
			g.sortByKeyGroupThenKey(entries, st.spare)
			return entries
		}
	}
	return radixSortChanges(entries, st.spare)
}

// radixSortChanges sorts entries of integer keys by (key group, kind, rev)
// with a least-significant-digit radix sort over their 11 bytes, skipping
// the bytes that all entries share (the high bytes of small keys, the kind,
// the key group's high byte). tmp must be as long as a; the result is a or
// tmp.
func radixSortChanges(a, tmp []changeEntry) []changeEntry {
	const digits = 11 // rev's 8 bytes, the kind, the key group's 2 bytes
	var counts [digits][256]int32
	for i := range a {
		e := &a[i]
		for d := range 8 {
			counts[d][byte(e.rev>>(8*d))]++
		}
		counts[8][e.kind]++
		counts[9][byte(e.kg)]++
		counts[10][byte(e.kg>>8)]++
	}
	src, dst := a, tmp
	for d := range digits {
		c := &counts[d]
		if c[changeDigit(&src[0], d)] == int32(len(src)) {
			continue // every entry has this byte
		}
		var pos [256]int32
		var sum int32
		for b := range 256 {
			pos[b] = sum
			sum += c[b]
		}
		for i := range src {
			b := changeDigit(&src[i], d)
			dst[pos[b]] = src[i]
			pos[b]++
		}
		src, dst = dst, src
	}
	return src
}

// changeDigit returns byte d of an entry's sort key, least significant first.
func changeDigit(e *changeEntry, d int) byte {
	switch {
	case d < 8:
		return byte(e.rev >> (8 * d))
	case d == 8:
		return byte(e.kind)
	case d == 9:
		return byte(e.kg)
	}
	return byte(e.kg >> 8)
}

// sortByKeyGroupThenKey sorts entries in place: a counting sort by key
// group into tmp (as long as entries) and back, then each key group, small
// enough to stay in the CPU cache, by encoded key.
func (g *groupAggOp) sortByKeyGroupThenKey(entries, tmp []changeEntry) {
	starts := make([]int32, g.maxPar+1)
	for i := range entries {
		starts[entries[i].kg+1]++
	}
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	next := slices.Clone(starts[:g.maxPar])
	for _, e := range entries {
		tmp[next[e.kg]] = e
		next[e.kg]++
	}
	copy(entries, tmp)
	for kg := range g.maxPar {
		slices.SortFunc(entries[starts[kg]:starts[kg+1]], g.compareEntries)
	}
}

// compareEntries orders two changed groups of one key group by their
// encoded keys.
func (g *groupAggOp) compareEntries(a, b changeEntry) int {
	switch {
	case a.ints && b.ints:
		if a.kind != b.kind {
			return cmp.Compare(a.kind, b.kind)
		}
		return cmp.Compare(a.rev, b.rev)
	case !a.ints && !b.ints:
		return strings.Compare(g.keyStr[a.gi], g.keyStr[b.gi]) // their encoded keys
	}
	st := g.st
	st.cmpA = g.appendKey(st.cmpA[:0], a.gi)
	st.cmpB = g.appendKey(st.cmpB[:0], b.gi)
	return bytes.Compare(st.cmpA, st.cmpB)
}
