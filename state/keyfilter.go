package state

import "math/bits"

// keyFilter is a Bloom filter of the keys a Records has in its store: a
// key it reports absent is not there, so Load skips the store lookup (and
// the store's caching of the miss) for a key never written, the common
// case after a spill (a new group, a new DISTINCT value). It grows in
// segments, each four times the keys of the last, so its memory follows
// the keys written (about 12 bits a key) without keeping them; a lookup
// reads one word per segment. Each key sets 4 bits of one 64-bit word
// (a blocked filter: one cache line a segment), a false positive rate of
// a few percent; deletions are not taken out (a deleted key is a false
// positive).
type keyFilter struct {
	segs  []filterSeg
	first int // the keys of the first segment (0: filterFirstKeys)
}

// filterSeg is a segment of a keyFilter.
type filterSeg struct {
	words  []uint64
	shift  uint // 64 - log2(len(words))
	n, max int
}

const (
	filterFirstKeys = 1 << 16
	filterBitsKey   = 12
)

// filterHash mixes a key's hash: its low bits give the key group, so they
// are the same for much of a subtask's keys.
func filterHash(key []byte) uint64 {
	h := HashKey(key)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// filterMask returns the bits a key of hash h sets in its word.
func filterMask(h uint64) uint64 {
	return 1<<(h&63) | 1<<(h>>6&63) | 1<<(h>>12&63) | 1<<(h>>18&63)
}

// add records key.
func (f *keyFilter) add(key []byte) {
	if len(f.segs) == 0 || f.segs[len(f.segs)-1].n >= f.segs[len(f.segs)-1].max {
		keys := max(f.first, filterFirstKeys)
		if len(f.segs) > 0 {
			keys = 4 * f.segs[len(f.segs)-1].max
		}
		words := 1 << bits.Len(uint(keys*filterBitsKey/64-1))
		f.segs = append(f.segs, filterSeg{words: make([]uint64, words), shift: uint(64 - bits.TrailingZeros(uint(words))), max: keys})
	}
	h := filterHash(key)
	s := &f.segs[len(f.segs)-1]
	s.words[h>>s.shift] |= filterMask(h)
	s.n++
}

// mayHold reports whether key may have been added.
func (f *keyFilter) mayHold(key []byte) bool {
	h := filterHash(key)
	m := filterMask(h)
	for i := range f.segs {
		s := &f.segs[i]
		if s.words[h>>s.shift]&m == m {
			return true
		}
	}
	return false
}

// bytes returns the filter's memory.
func (f *keyFilter) bytes() int64 {
	var n int64
	for _, s := range f.segs {
		n += int64(cap(s.words)) * 8
	}
	return n
}
