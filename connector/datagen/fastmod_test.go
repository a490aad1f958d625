package datagen

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
)

func TestFastModMatchesRemainder(t *testing.T) {
	spans := []uint64{0, 1, 2, 3, 7, 100, 1000, 1_000_000, 1 << 32, 1<<32 + 1, math.MaxInt32, 86_400_001,
		1<<63 - 1, 1 << 63, 1<<63 + 12345, math.MaxUint64}
	r := rand.New(rand.NewPCG(testseed.Seed(t), 2))
	for _, d := range spans {
		f := newFastMod(d)
		hs := []uint64{0, 1, d - 1, d, d + 1, math.MaxUint64, math.MaxUint64 - 1, 1 << 63}
		for range 2000 {
			hs = append(hs, r.Uint64())
		}
		for _, h := range hs {
			want := h
			if d != 0 {
				want = h % d
			}
			if got := f.reduce(h); got != want {
				t.Fatalf("%d mod %d: got %d, want %d", h, d, got, want)
			}
		}
	}
}
