// Package testseed gives randomized tests their seed: the clock's, so that
// every run tests other data, or WEIR_TEST_SEED's to repeat a run. The
// seed is logged either way.
package testseed

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// Seed returns the test's seed and logs it with the way to repeat it. A
// WEIR_TEST_SEED that is not a number fails the test.
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("WEIR_TEST_SEED"); v != "" {
		if _, err := fmt.Sscan(v, &seed); err != nil {
			t.Fatalf("WEIR_TEST_SEED=%q: %v", v, err)
		}
	}
	t.Logf("seed %d (repeat with WEIR_TEST_SEED=%d)", seed, seed)
	return seed
}
