package expr

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// randPattern builds a random pattern over a small alphabet, with groups,
// alternation, classes, anchors and quantifiers (greedy and lazy).
func randPattern(r *rand.Rand, depth int) string {
	atoms := []string{"a", "b", "&", "=", "c", "é", ".", "[^&]", "[^é]", `\P{L}`, "[a-c]", "[^a]", `\b`, "^", "$", "(?i)A", "x", `\d`, "ab", "channel_id="}
	var b strings.Builder
	n := 1 + r.IntN(4)
	for range n {
		if depth > 0 && r.IntN(3) == 0 {
			b.WriteString("(")
			if r.IntN(4) == 0 {
				b.WriteString("?:")
			}
			b.WriteString(randPattern(r, depth-1))
			if r.IntN(2) == 0 {
				b.WriteString("|")
				b.WriteString(randPattern(r, depth-1))
			}
			b.WriteString(")")
		} else {
			b.WriteString(atoms[r.IntN(len(atoms))])
		}
		switch r.IntN(8) {
		case 0:
			b.WriteString("*")
		case 1:
			b.WriteString("+")
		case 2:
			b.WriteString("?")
		case 3:
			b.WriteString("{1,3}")
		case 4:
			b.WriteString("*?")
		}
	}
	return b.String()
}

func randInput(r *rand.Rand) string {
	parts := []string{"a", "b", "&", "=", "c", "é", "x", "1", "\n", "\xff", "A", "ab", "channel_id=", " "}
	var b strings.Builder
	for range r.IntN(20) {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

// TestFastRegexpMatchesGo compares the fast matcher's match and groups
// with Go's regexp on random patterns and inputs.
func TestFastRegexpMatchesGo(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for range 3000 {
		p := randPattern(r, 2)
		re, err := regexp.Compile(p)
		if err != nil {
			continue
		}
		f, err := newFastRegexp(p)
		if err != nil {
			t.Fatalf("seed %d: %q compiles in Go but not here: %v", seed, p, err)
		}
		slow, err := goRegexp(p) // the form of a pattern computed per row
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			s := randInput(r)
			for _, f := range []*fastRegexp{f, slow} {
				if d := diffGo(f, re, s); d != "" {
					t.Fatalf("seed %d: %s", seed, d)
				}
			}
		}
	}
}

// TestFastRegexpFilters checks the prefilters the matcher derives, and a
// long input (past the visited bitmap) against Go's regexp.
func TestFastRegexpFilters(t *testing.T) {
	f, err := newFastRegexp("(&|^)channel_id=([^&]*)")
	if err != nil {
		t.Fatal(err)
	}
	if f.lit != "channel_id=" || f.litAt != 1 {
		t.Errorf("literal %q at most %d bytes in, want channel_id= at 1", f.lit, f.litAt)
	}
	if f.anyFirst || !f.first['&'] || !f.first['c'] || f.first['x'] || f.beginText {
		t.Errorf("first bytes: any %v & %v c %v x %v begin %v", f.anyFirst, f.first['&'], f.first['c'], f.first['x'], f.beginText)
	}
	g, _ := newFastRegexp("^ab|^c")
	if !g.beginText {
		t.Error("^ab|^c: every match begins at 0")
	}
	h, _ := newFastRegexp("(^|x)ab")
	if h.beginText {
		t.Error("(^|x)ab: a match may begin after 0")
	}
	long := strings.Repeat("a&b=", 1<<15) + "&channel_id=42&z"
	lo, hi, ok := f.Group(long, 2)
	if !ok || long[lo:hi] != "42" {
		t.Errorf("long input: %v %q", ok, long[lo:hi])
	}
	if !f.MatchString(long) || f.MatchString(long[:len(long)-16]) {
		t.Error("long input: match")
	}
}

// TestRegexpExtractAllocs checks that REGEXP_EXTRACT on a literal pattern
// allocates nothing per row.
func TestRegexpExtractAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop the pooled matcher at random")
	}
	f, err := newFastRegexp("(&|^)channel_id=([^&]*)")
	if err != nil {
		t.Fatal(err)
	}
	s := "https://www.nexmark.com/abc/def/ghi/item.htm?query=1&channel_id=1234"
	n := testing.AllocsPerRun(100, func() {
		if _, _, ok := f.Group(s, 2); !ok {
			t.Fatal("no match")
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per match, want 0", n)
	}
}

// TestFastRegexpLoops compares patterns whose greedy loops run as one
// scan (and meet positions an earlier thread already tried) with Go's
// regexp, on random inputs of the loops' bytes.
func TestFastRegexpLoops(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	patterns := []string{
		`(&|^)channel_id=([^&]*)`, `([^&]*)*x`, `(a|[a-c]*)*c`, `[a-c]*[a-c]*b`, `(a*)(a*)(b)`,
		`((ab)*|[^b]*)b`, `x([^x]*)x([^x]*)$`, `(.*)=(.*)`, `(?i)(k*)K`, `(é*)([^é]*)é`, `a*?b`, `(a*)+$`,
	}
	alphabet := []string{"a", "b", "c", "&", "=", "x", "k", "K", "é", "\xff", "channel_id=", "\n"}
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		f, err := newFastRegexp(p)
		if err != nil {
			t.Fatal(err)
		}
		for range 400 {
			var b strings.Builder
			for range r.IntN(40) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			if d := diffGo(f, re, b.String()); d != "" {
				t.Fatalf("seed %d: %s", seed, d)
			}
		}
	}
}

// TestFastRegexpRuneStarts checks that a match never begins inside a
// multi-byte character (Go's regexp tries rune starts only): patterns
// that fail on the character but match the invalid byte a continuation
// byte decodes to, also after a literal that sets the search's start.
func TestFastRegexpRuneStarts(t *testing.T) {
	cases := []struct{ pattern, input string }{
		{`[^é]`, "é"}, {`\P{L}`, "é"}, {`[^é]$`, "aé"}, {`[^é]`, "éé"}, {`[^€]x`, "€x"},
		{`[^é]`, "\xe2\x82"}, {`[^é]`, "\x80\x80é"}, {`a.?[^€]b`, "a€b"}, {`(.)=b`, "€=b"},
		{`[^€]=`, "€="}, {`(?:x|[^é])yz`, "éyz"}, {`[^é]*$`, "aé"},
	}
	for _, c := range cases {
		re := regexp.MustCompile(c.pattern)
		f, err := newFastRegexp(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffGo(f, re, c.input); d != "" {
			t.Error(d)
		}
	}
}

// diffGo compares f's match and groups on s with Go's regexp re; it
// returns how they differ, or "" when they agree.
func diffGo(f *fastRegexp, re *regexp.Regexp, s string) string {
	want := re.FindStringSubmatchIndex(s)
	if got := f.MatchString(s); got != (want != nil) {
		return fmt.Sprintf("%q on %q: match %v, Go %v", re, s, got, want)
	}
	for g := 0; g <= re.NumSubexp(); g++ {
		lo, hi, ok := f.Group(s, g)
		wok := want != nil && want[2*g] >= 0
		if ok != wok || ok && (lo != want[2*g] || hi != want[2*g+1]) {
			return fmt.Sprintf("%q on %q group %d: (%d,%d,%v), Go %v", re, s, g, lo, hi, ok, want)
		}
	}
	return ""
}

// TestFastRegexpVisitedOnce runs patterns whose threads meet at the same
// (instruction, position) exponentially often on inputs that do not
// match (and, with a literal, from a start the literal sets): only the
// visited marks keep the search linear (a lost mark makes the test run
// for ages, not fail), and the answers are Go's.
func TestFastRegexpVisitedOnce(t *testing.T) {
	long := strings.Repeat("a", 3000)
	for _, c := range []struct{ p, s string }{
		{`(a|aa)*b`, long},
		{`(a*)*b`, long},
		{`(a|a)*c`, long + "b"},
		{`x(a|aa)*b`, "yyyx" + long},
		{`(&|^)x=(a|aa)*([^&]*)c`, "q&x=" + long},
	} {
		re := regexp.MustCompile(c.p)
		f, err := newFastRegexp(c.p)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffGo(f, re, c.s); d != "" {
			t.Fatal(d)
		}
	}
}
