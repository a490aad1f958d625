//go:build race

package expr

// raceEnabled skips allocation counts that the race detector changes: it
// makes sync.Pool drop items at random, so a pooled matcher is sometimes
// allocated again.
const raceEnabled = true
