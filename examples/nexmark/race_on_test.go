//go:build race

package nexmark_test

// defaultEvents is the batch check's event count: smaller under the race
// detector, which slows the engine and SQLite several times.
const defaultEvents = 6000
