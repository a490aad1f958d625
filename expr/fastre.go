package expr

import (
	"math/bits"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"
)

// fastRegexp matches a compiled pattern with Go's semantics (leftmost
// match, leftmost-first among alternatives, so the same groups as
// regexp.Regexp) without allocating per match, and skips work Go's
// unanchored search does at every position:
//   - lit, a literal every match contains: a string without it has no
//     match, found by one strings.Index;
//   - first, the bytes a match can begin with: other start positions are
//     not tried.
//
// The matcher is a backtracker over the compiled program that visits each
// (instruction, position) pair at most once, so it is linear in the
// input; inputs too long for its visited bitmap go to Go's regexp. It is
// safe for concurrent use (scratch comes from a pool of its own).
type fastRegexp struct {
	re        *regexp.Regexp
	prog      *syntax.Prog
	nsub      int    // capture groups, not counting the whole match
	lit       string // a literal in every match ("" none)
	litAt     int    // bytes a match may span before lit; < 0 unbounded
	rare      int    // the offset in lit of its rarest byte (rareByte)
	first     [256]bool
	anyFirst  bool // any position may begin a match (no filter)
	beginText bool // every match begins at position 0
	info      []instInfo
	pool      sync.Pool
}

// instInfo is what the matcher precomputes about one instruction.
type instInfo struct {
	ascii asciiSet // a rune instruction: the ASCII bytes it matches
	// lit: a run of single-ASCII-rune instructions starting here, each
	// after the first reachable only from the one before it, matched by
	// one comparison; litOut follows the run. "" none.
	lit    string
	litOut uint32
	// loop: a greedy loop (this Alt's Out is a rune instruction whose Out
	// is this Alt, reachable from it only) run as one scan over the bytes
	// it consumes.
	loop bool
}

// asciiSet is a set of ASCII bytes.
type asciiSet [2]uint64

func (a *asciiSet) add(b byte)      { a[b>>6] |= 1 << (b & 63) }
func (a *asciiSet) has(b byte) bool { return a[b>>6]&(1<<(b&63)) != 0 }

// maxFastBits bounds the visited bitmap (instructions × input positions);
// longer inputs use Go's regexp.
const maxFastBits = 1 << 18

// reJob is a pending thread (pc, pos) or, when slot >= 0, a capture slot
// to restore to pos on backtracking.
type reJob struct {
	pc   uint32
	slot int32 // >= 0 a capture slot; -1 a thread; exitRange threads at lo..pos
	pos  int
	lo   int
}

// exitRange marks a job standing for the threads (pc, p) for p from pos
// down to lo: the exits of a greedy loop that consumed ASCII bytes lo..pos.
const exitRange = -2

type reScratch struct {
	// visited has a row per instruction, a bit per position from the
	// search's first start position (origin) on: bit pc*width +
	// pos-origin. A search clears only the positions it can reach (a few
	// words when the required literal places the match near the end).
	visited []uint64
	origin  int
	jobs    []reJob
	caps    []int
}

// newFastRegexp compiles pattern as regexp.Compile does (Perl syntax).
func newFastRegexp(pattern string) (*fastRegexp, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	tree = tree.Simplify()
	prog, err := syntax.Compile(tree)
	if err != nil {
		return nil, err
	}
	f := &fastRegexp{re: re, prog: prog, nsub: re.NumSubexp()}
	f.lit, f.litAt = requiredLiteral(tree)
	f.rare = rareByte(f.lit)
	f.pool.New = func() any { return &reScratch{} }
	f.firstBytes()
	f.analyze()
	return f, nil
}

// analyze fills f.info: the ASCII sets of the rune instructions, the
// literal runs and the greedy single-rune loops.
func (f *fastRegexp) analyze() {
	insts := f.prog.Inst
	f.info = make([]instInfo, len(insts))
	refs := make([]int, len(insts))
	refs[f.prog.Start]++
	for pc := range insts {
		in := &insts[pc]
		switch in.Op {
		case syntax.InstMatch, syntax.InstFail:
			continue
		case syntax.InstAlt, syntax.InstAltMatch:
			refs[in.Arg]++
		}
		refs[in.Out]++
	}
	ascii1 := func(in *syntax.Inst) bool {
		return in.Op == syntax.InstRune1 && in.Rune[0] < utf8.RuneSelf
	}
	for pc := range insts {
		in := &insts[pc]
		inf := &f.info[pc]
		switch in.Op {
		case syntax.InstRune1, syntax.InstRune, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			for b := 0; b < utf8.RuneSelf; b++ {
				if in.MatchRune(rune(b)) {
					inf.ascii.add(byte(b))
				}
			}
		}
		if ascii1(in) {
			run := []byte{byte(in.Rune[0])}
			next := in.Out
			for ascii1(&insts[next]) && refs[next] == 1 && next != uint32(pc) {
				run = append(run, byte(insts[next].Rune[0]))
				next = insts[next].Out
			}
			if len(run) > 1 {
				inf.lit, inf.litOut = string(run), next
			}
		}
		if in.Op == syntax.InstAlt {
			switch r := &insts[in.Out]; r.Op {
			case syntax.InstRune1, syntax.InstRune, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
				inf.loop = r.Out == uint32(pc) && refs[in.Out] == 1
			}
		}
	}
}

// requiredLiteral returns the longest case-sensitive literal that is a
// term of the pattern's top-level concatenation (so in every match), and
// the most bytes the terms before it can match (< 0: no bound).
func requiredLiteral(re *syntax.Regexp) (string, int) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	lit := func(r *syntax.Regexp) string {
		if r.Op != syntax.OpLiteral || r.Flags&syntax.FoldCase != 0 {
			return ""
		}
		return string(r.Rune)
	}
	if re.Op != syntax.OpConcat {
		return lit(re), 0
	}
	best, at, width := "", 0, 0
	for _, s := range re.Sub {
		for s.Op == syntax.OpCapture {
			s = s.Sub[0]
		}
		if l := lit(s); len(l) > len(best) {
			best, at = l, width
		}
		if w := maxWidth(s); w < 0 || width < 0 {
			width = -1
		} else {
			width += w
		}
	}
	return best, at
}

// maxWidth returns the most bytes re can match, or -1 if unbounded.
func maxWidth(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return utf8.UTFMax * len(re.Rune)
		}
		n := 0
		for _, r := range re.Rune {
			n += max(utf8.RuneLen(r), 1)
		}
		return n
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxWidth(re.Sub[0])
	case syntax.OpRepeat:
		w := maxWidth(re.Sub[0])
		if re.Max < 0 || w < 0 {
			return -1
		}
		return w * re.Max
	case syntax.OpConcat, syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			w := maxWidth(s)
			if w < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				n += w
			} else {
				n = max(n, w)
			}
		}
		return n
	}
	return -1 // star, plus, anything else
}

// firstBytes computes the bytes a match can begin with, following the
// program from its start through the instructions that consume nothing.
// It over-approximates (an empty-width assertion is assumed to hold).
func (f *fastRegexp) firstBytes() {
	// seen[pc][1]: pc reached after a ^ (begin of text) on the way.
	seen := make([][2]bool, len(f.prog.Inst))
	f.beginText = true
	var walk func(pc uint32, afterBegin bool)
	walk = func(pc uint32, afterBegin bool) {
		b := 0
		if afterBegin {
			b = 1
		}
		if seen[pc][b] || f.anyFirst {
			return
		}
		seen[pc][b] = true
		in := &f.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			walk(in.Out, afterBegin)
			walk(in.Arg, afterBegin)
		case syntax.InstCapture, syntax.InstNop:
			walk(in.Out, afterBegin)
		case syntax.InstEmptyWidth:
			walk(in.Out, afterBegin || syntax.EmptyOp(in.Arg)&syntax.EmptyBeginText != 0)
		case syntax.InstFail:
		case syntax.InstRune1:
			f.beginText = f.beginText && afterBegin
			if r := in.Rune[0]; r < utf8.RuneSelf {
				f.first[r] = true
			} else {
				f.markHigh()
			}
		case syntax.InstRune:
			f.beginText = f.beginText && afterBegin
			for b := 0; b < utf8.RuneSelf; b++ {
				if in.MatchRune(rune(b)) {
					f.first[b] = true
				}
			}
			// Folded or beyond ASCII: any lead byte (and an invalid byte,
			// read as U+FFFD) may begin it.
			if syntax.Flags(in.Arg)&syntax.FoldCase != 0 || len(in.Rune) == 0 || in.Rune[len(in.Rune)-1] >= utf8.RuneSelf {
				f.markHigh()
			}
		default: // any rune, or a match of the empty string
			f.anyFirst = true
		}
	}
	walk(uint32(f.prog.Start), false)
	if f.anyFirst {
		f.beginText = false
	}
}

func (f *fastRegexp) markHigh() {
	for b := utf8.RuneSelf; b < 256; b++ {
		f.first[b] = true
	}
}

// goRegexp wraps a pattern compiled by Go's regexp only (a pattern
// computed per row: compiling the program twice would cost more than the
// matcher saves); its methods call re.
func goRegexp(pattern string) (*fastRegexp, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	return &fastRegexp{re: re, nsub: re.NumSubexp()}, nil
}

// MatchString reports whether s contains a match.
func (f *fastRegexp) MatchString(s string) bool {
	if f.prog == nil {
		return f.re.MatchString(s)
	}
	from := f.startFrom(s)
	if from < 0 {
		return false
	}
	if len(f.prog.Inst)*(len(s)+1) > maxFastBits {
		return f.re.MatchString(s)
	}
	_, _, ok := f.search(s, 0, from)
	return ok
}

// Group returns the bounds of group i (0: the whole match) of the first
// match in s; ok is false when there is no match or the group did not
// take part in it.
func (f *fastRegexp) Group(s string, i int) (lo, hi int, ok bool) {
	from := 0
	if f.prog != nil {
		if from = f.startFrom(s); from < 0 {
			return 0, 0, false
		}
	}
	if f.prog == nil || len(f.prog.Inst)*(len(s)+1) > maxFastBits {
		m := f.re.FindStringSubmatchIndex(s)
		if m == nil || m[2*i] < 0 {
			return 0, 0, false
		}
		return m[2*i], m[2*i+1], true
	}
	return f.search(s, i, from)
}

// startFrom returns the first position of s a match can begin at, by the
// required literal: -1 if s lacks it (no match).
func (f *fastRegexp) startFrom(s string) int {
	if f.lit == "" {
		return 0
	}
	i := f.indexLit(s)
	if i < 0 || f.litAt < 0 {
		return min(i, 0)
	}
	return max(i-f.litAt, 0)
}

// indexLit returns the first index of f.lit in s, or -1. It looks for
// the literal's rarest byte with IndexByte and checks the literal around
// each one found; after a few false candidates it leaves the rest to
// strings.Index. (strings.Index compares at every position of a short
// string: ~100 ns on a 60-byte URL, where one IndexByte is a few.)
func (f *fastRegexp) indexLit(s string) int {
	lit, rare := f.lit, f.rare
	c := lit[rare]
	from := 0
	for tries := 0; tries < 4; tries++ {
		if from+len(lit) > len(s) {
			return -1
		}
		j := strings.IndexByte(s[from+rare:], c)
		if j < 0 {
			return -1
		}
		i := from + j // lit would start at i
		if strings.HasPrefix(s[i:], lit) {
			return i
		}
		from = i + 1
	}
	if i := strings.Index(s[from:], lit); i >= 0 {
		return from + i
	}
	return -1
}

// rareByte returns the offset of the byte of lit least likely in text:
// punctuation before digits before letters, rare letters before common
// ones (a rough rank of English and URL text).
func rareByte(lit string) int {
	const common = "etaoinsrhldcumfpgwybvkxjqz" // most to least frequent
	rank := func(b byte) int {
		switch {
		case b >= 'A' && b <= 'Z':
			b += 'a' - 'A'
			fallthrough
		case b >= 'a' && b <= 'z':
			return 100 - strings.IndexByte(common, b)
		case b >= '0' && b <= '9':
			return 50
		case b == ' ' || b == '/' || b == '.':
			return 200 // separators are everywhere
		}
		return 10
	}
	best := 0
	for i := 1; i < len(lit); i++ {
		if rank(lit[i]) < rank(lit[best]) {
			best = i
		}
	}
	return best
}

// search runs the backtracker from each possible start position from on,
// tracking the capture slots of group g only.
func (f *fastRegexp) search(s string, g, from int) (lo, hi int, ok bool) {
	sc := f.pool.Get().(*reScratch)
	defer f.pool.Put(sc)
	first := runeStartAtOrAfter(s, from)
	sc.origin = first
	words := (len(f.prog.Inst)*(len(s)+1-first) + 63) / 64
	if cap(sc.visited) < words {
		sc.visited = make([]uint64, words)
	} else {
		sc.visited = sc.visited[:words]
		clear(sc.visited)
	}
	ncap := 2 * (g + 1)
	if cap(sc.caps) < ncap {
		sc.caps = make([]int, ncap)
	}
	sc.caps = sc.caps[:ncap]
	for i := range sc.caps {
		sc.caps[i] = -1
	}
	// Start positions step a rune at a time, as Go's regexp does: a
	// match never begins inside a character.
	for pos := first; pos <= len(s); pos += runeWidth(s, pos) {
		if pos > 0 && f.beginText {
			break
		}
		if pos > from && !f.anyFirst && (pos == len(s) || !f.first[s[pos]]) {
			continue
		}
		if f.try(sc, s, pos) {
			lo, hi = sc.caps[2*g], sc.caps[2*g+1]
			return lo, hi, lo >= 0
		}
	}
	return 0, 0, false
}

// runeWidth returns the bytes of the rune at pos as Go decodes s (1 for
// an invalid byte), and 1 at the end of s.
func runeWidth(s string, pos int) int {
	if pos >= len(s) || s[pos] < utf8.RuneSelf {
		return 1
	}
	_, w := utf8.DecodeRuneInString(s[pos:])
	return w
}

// runeStartAtOrAfter returns the first position at or after from that
// decoding s rune by rune from 0 reaches (where Go's regexp tries a
// match). A byte that is not a continuation byte is always such a
// position (a valid rune spans only continuation bytes after its first),
// so it decodes forward from the nearest one at most 3 bytes back.
func runeStartAtOrAfter(s string, from int) int {
	if from >= len(s) || utf8.RuneStart(s[from]) {
		return from
	}
	p := from
	for p > 0 && from-p < utf8.UTFMax-1 && !utf8.RuneStart(s[p]) {
		p--
	}
	if !utf8.RuneStart(s[p]) {
		return from // no rune could span from: it begins one
	}
	for p < from {
		p += runeWidth(s, p)
	}
	return p
}

// try runs the threads from start position start in priority order and
// reports whether one reaches a match (its captures left in sc.caps).
func (f *fastRegexp) try(sc *reScratch, s string, start int) bool {
	insts := f.prog.Inst
	width := len(s) + 1 - sc.origin
	jobs := append(sc.jobs[:0], reJob{pc: uint32(f.prog.Start), slot: -1, pos: start})
	for len(jobs) > 0 {
		j := jobs[len(jobs)-1]
		jobs = jobs[:len(jobs)-1]
		if j.slot >= 0 {
			sc.caps[j.slot] = j.pos
			continue
		}
		if j.slot == exitRange && j.pos > j.lo {
			jobs = append(jobs, reJob{pc: j.pc, slot: exitRange, pos: j.pos - 1, lo: j.lo})
		}
		pc, pos := j.pc, j.pos
	thread:
		for {
			bit := uint(int(pc)*width + pos - sc.origin)
			if sc.visited[bit>>6]&(1<<(bit&63)) != 0 {
				break
			}
			sc.visited[bit>>6] |= 1 << (bit & 63)
			in := &insts[pc]
			switch in.Op {
			case syntax.InstFail:
				break thread
			case syntax.InstAlt, syntax.InstAltMatch:
				if inf := &f.info[pc]; inf.loop {
					// Consume the loop's ASCII bytes at once; the exits at
					// each position wait in one job, longest first.
					end, ok := f.loopScan(sc, s, pc, pos, width)
					if !ok {
						// The loop was here before: this thread ends.
						jobs = append(jobs, reJob{pc: in.Arg, slot: exitRange, pos: end, lo: pos})
						break thread
					}
					if end < len(s) && s[end] >= utf8.RuneSelf {
						// A rune beyond ASCII: the loop goes on one
						// instruction at a time from here.
						jobs = append(jobs, reJob{pc: in.Arg, slot: exitRange, pos: end, lo: pos})
						pos, pc = end, in.Out
						continue
					}
					if end > pos {
						jobs = append(jobs, reJob{pc: in.Arg, slot: exitRange, pos: end - 1, lo: pos})
					}
					pc, pos = in.Arg, end
					continue
				}
				jobs = append(jobs, reJob{pc: in.Arg, slot: -1, pos: pos})
				pc = in.Out
			case syntax.InstNop:
				pc = in.Out
			case syntax.InstCapture:
				// Only group g's slots (the last two) are tracked: no
				// other group changes whether or where a thread matches.
				if int(in.Arg)>>1 == len(sc.caps)/2-1 {
					jobs = append(jobs, reJob{slot: int32(in.Arg), pos: sc.caps[in.Arg]})
					sc.caps[in.Arg] = pos
				}
				pc = in.Out
			case syntax.InstEmptyWidth:
				if syntax.EmptyOp(in.Arg)&^emptyContext(s, pos) != 0 {
					break thread
				}
				pc = in.Out
			case syntax.InstMatch:
				// Group 0 is the whole match: the program has no
				// capture instructions for it.
				sc.caps[0], sc.caps[1] = start, pos
				sc.jobs = jobs[:0]
				return true
			default:
				if pos >= len(s) {
					break thread
				}
				inf := &f.info[pc]
				if inf.lit != "" {
					if !strings.HasPrefix(s[pos:], inf.lit) {
						break thread
					}
					pos += len(inf.lit)
					pc = inf.litOut
					continue
				}
				if c := s[pos]; c < utf8.RuneSelf {
					if !inf.ascii.has(c) {
						break thread
					}
					pos++
					pc = in.Out
					continue
				}
				r, n := utf8.DecodeRuneInString(s[pos:])
				switch in.Op {
				case syntax.InstRune1:
					if r != in.Rune[0] {
						break thread
					}
				case syntax.InstRune:
					if !in.MatchRune(r) {
						break thread
					}
				case syntax.InstRuneAnyNotNL:
					if r == '\n' {
						break thread
					}
				}
				pos += n
				pc = in.Out
			}
		}
	}
	sc.jobs = jobs[:0]
	return false
}

// loopScan runs the greedy loop at Alt pc from pos (already visited):
// it consumes the ASCII bytes the loop's rune instruction matches and
// marks the Alt visited at each position after pos. It returns the end
// position; or, when the Alt had been visited at a position (the thread
// ends there), the one before it and false. The rune instruction is
// reachable from the Alt only, so it needs no marks of its own.
func (f *fastRegexp) loopScan(sc *reScratch, s string, pc uint32, pos, width int) (int, bool) {
	set := &f.info[f.prog.Inst[pc].Out].ascii
	end := pos
	for end < len(s) && s[end] < utf8.RuneSelf && set.has(s[end]) {
		end++
	}
	// Marks (pc, pos+1..end): stop at the first already set.
	base := int(pc)*width - sc.origin
	for p := pos + 1; p <= end; {
		bit := base + p
		w, off := bit>>6, uint(bit&63)
		n := min(64-int(off), end-p+1) // bits of this word in range
		mask := (^uint64(0) >> (64 - uint(n))) << off
		if seen := sc.visited[w] & mask; seen != 0 {
			first := bits.TrailingZeros64(seen) - int(off) + p
			sc.visited[w] |= mask & (1<<uint(first-p+int(off)) - 1)
			return first - 1, false
		}
		sc.visited[w] |= mask
		p += n
	}
	return end, true
}

// emptyContext returns the empty-width assertions that hold at pos of s.
func emptyContext(s string, pos int) syntax.EmptyOp {
	r1, r2 := rune(-1), rune(-1)
	if pos > 0 {
		r1 = rune(s[pos-1])
		if r1 >= utf8.RuneSelf {
			r1, _ = utf8.DecodeLastRuneInString(s[:pos])
		}
	}
	if pos < len(s) {
		r2 = rune(s[pos])
		if r2 >= utf8.RuneSelf {
			r2, _ = utf8.DecodeRuneInString(s[pos:])
		}
	}
	return syntax.EmptyOpContext(r1, r2)
}
