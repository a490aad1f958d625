//go:build !race

package nexmark_test

// defaultEvents is the batch check's event count.
const defaultEvents = 30000
