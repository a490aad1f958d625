//go:build race

package statestore

// raceEnabled scales large tests down under the race detector, which slows
// Pebble by an order of magnitude.
const raceEnabled = true
