package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// setDecState makes group 0 of a hold sum u (|u| < 2^191) over n inputs.
func setDecState(a *decSumAcc, u *big.Int, n int64) {
	m := new(big.Int).Set(u)
	if m.Sign() < 0 {
		m.Add(m, new(big.Int).Lsh(big.NewInt(1), 192)) // 192-bit two's complement
	}
	var b [24]byte
	m.FillBytes(b[:])
	if len(a.s) == 0 {
		a.grow()
	}
	a.s[0] = decSumState{top: binary.BigEndian.Uint64(b[:8]), hi: binary.BigEndian.Uint64(b[8:16]), lo: binary.BigEndian.Uint64(b[16:]), n: n}
}

// wantDecResult is the result of SUM (avg false: u at scale s, n ignored)
// or AVG (u·10^(s-argScale) / n rounded half away from zero) as decText
// writes it, NULL when it has more than p digits, computed with math/big.
func wantDecResult(u *big.Int, avg bool, argScale, s, p int, n int64) string {
	if n == 0 {
		return "NULL"
	}
	x := new(big.Int).Set(u)
	if avg {
		x.Mul(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s-argScale)), nil))
		den := big.NewInt(n)
		q, r := new(big.Int).QuoRem(x, den, new(big.Int))
		// |r|·2 ≥ |n|: away from zero.
		if new(big.Int).Lsh(new(big.Int).Abs(r), 1).Cmp(new(big.Int).Abs(den)) >= 0 {
			if x.Sign()*den.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
		x = q
	}
	if len(new(big.Int).Abs(x).String()) > p {
		return "NULL"
	}
	return decText(x, s)
}

// decResultSums are sums at the edges of the 64- and 128-bit forms and of
// 38 digits, and past 128 bits.
func decResultSums(t testing.TB) []*big.Int {
	p := func(e uint) *big.Int { return new(big.Int).Lsh(big.NewInt(1), e) }
	add := func(a *big.Int, d int64) *big.Int { return new(big.Int).Add(a, big.NewInt(d)) }
	ten := func(e int64) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(e), nil) }
	base := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(5), big.NewInt(15), big.NewInt(25), big.NewInt(999_999),
		add(p(63), -1), p(63), add(p(63), 1), p(64), add(p(64), -1), ten(19), add(ten(19), 5),
		add(p(127), -1), p(127), add(p(127), 1), add(ten(38), -1), ten(38), add(ten(38), -5), ten(30),
		add(p(128), -1), p(128), p(150), add(p(190), -1)}
	var out []*big.Int
	for _, u := range base {
		out = append(out, u, new(big.Int).Neg(u))
	}
	return out
}

// TestDecimalResultEdges: SUM's and AVG's result for sums at the edges of
// 64 and 128 bits and of 38 digits, over counts that divide exactly, tie
// at a half and reach MaxInt64, at argument and result scales and result
// precisions of the planner's and others, is math/big's.
func TestDecimalResultEdges(t *testing.T) {
	counts := []int64{1, 2, 3, 4, 7, 10, 1000, 1 << 31, 1<<62 + 1, math.MaxInt64, -1, -3}
	scales := [][3]int{{0, 6, 38}, {2, 6, 38}, {6, 6, 38}, {10, 10, 38}, {18, 18, 38}, {0, 38, 38}, {38, 38, 38},
		{0, 0, 38}, {2, 6, 20}, {0, 6, 10}, {4, 12, 19}, {4, 12, 18}}
	checked := 0
	for _, sc := range scales {
		argScale, s, p := sc[0], sc[1], sc[2]
		for _, avg := range []bool{false, true} {
			typ := types.Type{Kind: types.KindDecimal, P: uint8(p), S: uint8(s)}
			if !avg {
				typ.S = uint8(argScale)
			}
			a := &decSumAcc{typ: typ, argScale: argScale, avg: avg}
			for _, u := range decResultSums(t) {
				for _, n := range counts {
					if !avg && n != 1 {
						continue
					}
					setDecState(a, u, n)
					got := valText(a.result(0))
					want := "NULL"
					if !avg {
						want = wantDecResult(u, false, argScale, argScale, p, 1)
					} else {
						want = wantDecResult(u, true, argScale, s, p, n)
					}
					if got != want {
						t.Fatalf("avg %v DECIMAL(%d, %d) of scale %d: sum %s over %d: got %s, want %s", avg, p, typ.S, argScale, u, n, got, want)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d results checked", checked)
}

// TestDecimalResultRandom: AVG over random sums of up to 130 bits and
// random counts, at the planner's result scales and at any, is
// math/big's.
func TestDecimalResultRandom(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 5))
	for i := range 20000 {
		argScale := r.IntN(19)
		s := max(argScale, 6) + r.IntN(3)
		if i%2 == 1 { // any result scale: products up to 2^253
			s = argScale + r.IntN(39-argScale)
		}
		a := &decSumAcc{typ: types.Type{Kind: types.KindDecimal, P: 38, S: uint8(s)}, argScale: argScale, avg: true}
		u := randBig(r, 1+r.IntN(130))
		if i%4 == 3 {
			u = randBig(r, 64+r.IntN(64)) // fits in 128 bits, beyond 64
		}
		n := int64(1 + r.Uint64N(1<<uint(1+r.IntN(62))))
		if i%4 == 3 {
			// A count that brings the mean within 38 digits: the product's
			// high words count.
			x := new(big.Int).Mul(new(big.Int).Abs(u), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s-argScale)), nil))
			x.Rsh(x, uint(60+r.IntN(66)))
			n = 1
			if x.IsInt64() && x.Int64() > 0 {
				n = x.Int64()
			} else if !x.IsInt64() {
				n = math.MaxInt64
			}
		}
		setDecState(a, u, n)
		if got, want := valText(a.result(0)), wantDecResult(u, true, argScale, s, 38, n); got != want {
			t.Fatalf("seed %d case %d: AVG scale %d → %d of sum %s over %d: got %s, want %s", seed, i, argScale, s, u, n, got, want)
		}
	}
}

// randBig returns a random integer of up to bitLen bits, of either sign.
func randBig(r *rand.Rand, bitLen int) *big.Int {
	u := new(big.Int)
	for range (bitLen + 63) / 64 {
		u.Lsh(u, 64)
		u.Or(u, new(big.Int).SetUint64(r.Uint64()))
	}
	u.Rsh(u, uint((bitLen+63)/64*64-bitLen))
	if r.IntN(2) == 0 {
		u.Neg(u)
	}
	return u
}

// TestDecimalResultAllocs: an AVG or SUM result from a sum that fits in
// 128 bits allocates nothing when the result's unscaled value fits in an
// int64, and only the wide value's 16 bytes otherwise.
func TestDecimalResultAllocs(t *testing.T) {
	for _, tc := range []struct {
		avg      bool
		sum      string
		n        int64
		argScale int
		allocs   float64
	}{
		{true, "123456789", 7, 2, 0},
		{true, "-99999999999999999", 3, 6, 0},
		{true, "12345678901234567890123456789", 11, 2, 1}, // a 128-bit sum, a wide mean
		{true, "-170141183460469231731687303715884105727", 9, 6, 1},
		{false, "12345678901234567890123456789", 1, 2, 1},
	} {
		t.Run(fmt.Sprintf("avg=%v/%s", tc.avg, tc.sum), func(t *testing.T) {
			typ := types.Type{Kind: types.KindDecimal, P: 38, S: uint8(max(tc.argScale, 6))}
			if !tc.avg {
				typ.S = uint8(tc.argScale)
			}
			a := &decSumAcc{typ: typ, argScale: tc.argScale, avg: tc.avg}
			setDecState(a, bigDec(t, tc.sum), tc.n)
			if v := a.result(0); v.IsNull() {
				t.Fatalf("result NULL")
			}
			if got := testing.AllocsPerRun(100, func() { _ = a.result(0) }); got > tc.allocs {
				t.Fatalf("%v allocations per result, want at most %v", got, tc.allocs)
			}
		})
	}
}

// BenchmarkDecimalAvgResult: AVG(DECIMAL(18, 2)) results (a sum within an
// int64, a mean at scale 6), as a window or group emits them.
func BenchmarkDecimalAvgResult(b *testing.B) {
	a := &decSumAcc{typ: types.Type{Kind: types.KindDecimal, P: 38, S: 6}, argScale: 2, avg: true}
	setDecState(a, big.NewInt(123_456_789_012), 977)
	b.ReportAllocs()
	for b.Loop() {
		_ = a.result(0)
	}
}
