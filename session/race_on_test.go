//go:build race

package session

// raceEnabled reports whether the tests run under the race detector, which
// makes the jobs' state work (Pebble built with its invariants) many times
// slower: the heaviest tests then run smaller inputs (the same checks;
// .ci/test also runs them at full size without -race).
const raceEnabled = true
