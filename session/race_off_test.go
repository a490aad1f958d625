//go:build !race

package session

// raceEnabled reports whether the tests run under the race detector (see
// race_on_test.go).
const raceEnabled = false
