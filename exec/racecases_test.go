package exec

import "testing"

// raceRuns reports whether the case of a test's matrix at the indices idx
// runs: always without -race; under -race (raceEnabled) only every
// every-th case, those whose indices add up to a multiple of every. Given
// the index of one dimension (say, the join type) and those of the others,
// every combination of the others still runs, each with one value of that
// dimension in turn. CI runs the tests that use it without -race too, so
// that every case runs somewhere.
func raceRuns(every int, idx ...int) bool {
	if !raceEnabled {
		return true
	}
	sum := 0
	for _, i := range idx {
		sum += i
	}
	return sum%every == 0
}

// onOneGoroutine skips the test under -race: it drives operators (or a
// structure of theirs) on the test's goroutine alone, with no state store
// (so no Pebble goroutines either), where the race detector has nothing to
// find and only slows the test several times. .ci/test runs every test that
// calls it without -race (it finds them by this call).
func onOneGoroutine(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("one goroutine, no store: nothing for -race to find (CI runs it without -race)")
	}
}
