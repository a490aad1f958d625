//go:build race

package planner

// raceEnabled skips the tests that measure allocations of very large
// statements: the race detector multiplies them.
const raceEnabled = true
