//go:build race

package exec

// raceEnabled reports whether the tests run under the race detector, which
// makes the operators' state work (Pebble built with its invariants) many
// times slower: the heaviest randomized tests then draw smaller inputs
// (the same checks; .ci/test also runs them at full size without -race).
const raceEnabled = true
