package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/types"
)

// The DECIMAL SUM/AVG tests compute every answer with math/big here: the
// sum of the values present, NULL for a SUM beyond 38 digits, AVG the sum
// over the count rounded half up, NULL when it does not fit DECIMAL(38, S).

// bigDec parses a decimal integer (the unscaled value) for a test.
func bigDec(t testing.TB, s string) *big.Int {
	t.Helper()
	u, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("bad integer %q", s)
	}
	return u
}

// decOf returns the DECIMAL value u × 10^-scale (u has at most 38 digits).
func decOf(t testing.TB, u *big.Int, scale int) types.Value {
	t.Helper()
	v, err := types.DecimalFromBig(u, scale)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// decText formats u × 10^-scale as a DECIMAL of that scale prints, or
// NULL when u has more than 38 digits.
func decText(u *big.Int, scale int) string {
	digits := new(big.Int).Abs(u).String()
	if len(digits) > 38 {
		return "NULL"
	}
	sign := ""
	if u.Sign() < 0 {
		sign = "-"
	}
	if scale == 0 {
		return sign + digits
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
}

// valText is v as decText writes it.
func valText(v types.Value) string {
	if v.IsNull() {
		return "NULL"
	}
	return v.String()
}

// decModel is the answer: the exact sum and count of the values present.
type decModel struct {
	sum *big.Int
	n   int64
}

func newDecModel() *decModel { return &decModel{sum: new(big.Int)} }

func (m *decModel) apply(u *big.Int, retract bool) {
	if retract {
		m.sum.Sub(m.sum, u)
		m.n--
	} else {
		m.sum.Add(m.sum, u)
		m.n++
	}
}

// sum is SUM's result at the argument's scale.
func (m *decModel) sumText(scale int) string {
	if m.n == 0 {
		return "NULL"
	}
	return decText(m.sum, scale)
}

// avgText is AVG's result: sum·10^(avgScale-scale) / n, half away from zero.
func (m *decModel) avgText(scale, avgScale int) string {
	if m.n == 0 {
		return "NULL"
	}
	x := new(big.Int).Mul(m.sum, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(avgScale-scale)), nil))
	n := big.NewInt(m.n)
	q, r := new(big.Int).QuoRem(x, n, new(big.Int))
	if new(big.Int).Lsh(new(big.Int).Abs(r), 1).Cmp(new(big.Int).Abs(n)) >= 0 {
		if x.Sign()*n.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return decText(q, avgScale)
}

// decCalls returns SUM(v) and AVG(v) of column col of type DECIMAL(38,
// scale) with the result types the planner gives them.
func decCalls(col, scale int) []AggCall {
	arg := types.Decimal(38, scale)
	return []AggCall{
		{Func: AggSum, Arg: col, ArgType: arg, Type: types.Decimal(38, scale), Name: "SUM(v)"},
		{Func: AggAvg, Arg: col, ArgType: arg, Type: types.Decimal(38, max(scale, 6)), Name: "AVG(v)"},
	}
}

// decOp is one input of a case: add or retract the unscaled value.
type decOp struct {
	retract bool
	u       *big.Int
}

func (o decOp) String() string {
	if o.retract {
		return "-" + o.u.String()
	}
	return "+" + o.u.String()
}

// decOps parses "+a -b …": + adds, - retracts, the number unscaled
// (it may carry its own sign: "+-5" adds -5).
func decOps(t testing.TB, s string) []decOp {
	t.Helper()
	var ops []decOp
	for _, f := range strings.Fields(s) {
		rep := 1
		if i := strings.IndexByte(f, 'x'); i > 0 {
			fmt.Sscan(f[i+1:], &rep)
			f = f[:i]
		}
		for range rep {
			ops = append(ops, decOp{retract: f[0] == '-', u: bigDec(t, f[1:])})
		}
	}
	return ops
}

const (
	dec2p126   = "85070591730234615865843651857942052864" // 2^126, 38 digits
	decMax     = "99999999999999999999999999999999999999" // 10^38 - 1
	decTo2p127 = "70141183460469231731687303715884105728" // 2^127 - 1 - decMax
)

// decEdgeCases are sums at the edges of 128 bits and of 38 digits, with
// the SUM and AVG wanted after the last input (the model checks every step).
var decEdgeCases = []struct {
	name, ops string
	scale     int
	sum, avg  string
}{
	{"just below 2^127", "+" + decMax + " +" + decTo2p127, 0, "NULL", "NULL"},
	{"just below 2^127 and back", "+" + decMax + " +" + decTo2p127 + " -" + decMax, 0, decTo2p127, "NULL"},
	{"at 2^127 and back", "+" + decMax + " +" + decTo2p127 + " +1 -" + decMax, 0, "70141183460469231731687303715884105729", "NULL"},
	{"2^128 wraps to 0", "+" + dec2p126 + "x4", 0, "NULL", "NULL"},
	{"2^128 + 5 wraps to 5", "+" + dec2p126 + "x4 +5", 0, "NULL", "NULL"},
	{"2^128 + 5 and back", "+" + dec2p126 + "x4 +5 -" + dec2p126 + "x3", 0, "85070591730234615865843651857942052869", "NULL"},
	{"-2^128 - 5 wraps to -5", "+-" + dec2p126 + "x4 +-5", 0, "NULL", "NULL"},
	{"-2^128 - 5 and back", "+-" + dec2p126 + "x4 +-5 --" + dec2p126 + "x3 +5", 0, "-" + dec2p126, "NULL"},
	{"10^38 - 1", "+" + decMax, 0, decMax, "NULL"},
	{"10^38", "+" + decMax + " +1", 0, "NULL", "NULL"},
	{"10^38 and back", "+" + decMax + " +1 -1", 0, decMax, "NULL"},
	{"-(10^38)", "+-" + decMax + " +-1", 0, "NULL", "NULL"},
	{"-(10^38) and back", "+-" + decMax + " +-1 --1", 0, "-" + decMax, "NULL"},
	{"20 × (10^38 - 1) and back", "+" + decMax + "x20 -" + decMax + "x19", 0, decMax, "NULL"},
	{"retracted before added", "-" + dec2p126 + "x3 +" + dec2p126 + "x4", 0, dec2p126, "NULL"},
	// Scale 6: AVG is DECIMAL(38, 6) too, so an average of 38 digits shows.
	{"AVG of a sum past 2^128", "+" + dec2p126 + "x4", 6, "NULL", "85070591730234615865843651857942.052864"},
	{"AVG of a sum past 2^128 + 5", "+" + dec2p126 + "x4 +5", 6, "NULL", "68056473384187692692674921486353.642292"},
	{"AVG of 10^38 - 1 scale 6", "+" + decMax + "x3 +-" + decMax, 6, "NULL", "50000000000000000000000000000000.000000"},
	{"small", "+1 +2 --3 +4", 6, "0.000010", "0.000005"},
}

// decAccPaths runs ops through SUM and AVG accumulators the way each
// operator path uses them and returns, per path, the results after each
// op: "group" (update with a batch of one row, as GroupAgg), "slices"
// (the ops alternate between two groups merged into a third for each
// result, as window slices and sessions), "two-phase" (each op in a local
// accumulator saved and merged into the global one, as the mini-batch and
// window local/global aggregates), "restored" (the state saved and loaded
// into a new accumulator after each op, as a checkpoint and restore).
func decAccPaths(t *testing.T, scale int, ops []decOp) map[string][][2]string {
	t.Helper()
	calls := decCalls(0, scale)
	newAccs := func() []accumulator {
		var accs []accumulator
		for _, c := range calls {
			acc, err := newAccumulator(c)
			if err != nil {
				t.Fatal(err)
			}
			accs = append(accs, acc)
		}
		return accs
	}
	grow := func(accs []accumulator, n int) {
		for _, a := range accs {
			for range n {
				a.grow()
			}
		}
	}
	results := func(accs []accumulator, g int32) [2]string {
		return [2]string{valText(accs[0].result(g)), valText(accs[1].result(g))}
	}
	out := map[string][][2]string{}
	group, slices, local, global, restored := newAccs(), newAccs(), newAccs(), newAccs(), newAccs()
	grow(group, 1)
	grow(slices, 3)
	grow(local, 2) // group 1 is mergeSaved's scratch
	grow(global, 2)
	grow(restored, 1)
	b := types.NewBatch(1, 1)
	var buf []byte
	for i, op := range ops {
		v := decOf(t, op.u, scale)
		kind := types.Insert
		if op.retract {
			kind = types.Delete
		}
		b.Reset()
		b.Append(kind, []types.Value{v})
		for _, a := range group {
			a.update([]int32{0}, b, 0)
		}
		out["group"] = append(out["group"], results(group, 0))

		for _, a := range slices {
			a.update([]int32{int32(i % 2)}, b, 0)
			a.reset(2)
			a.merge(2, 0)
			a.merge(2, 1)
		}
		out["slices"] = append(out["slices"], results(slices, 2))

		for j, a := range local {
			a.reset(0)
			a.update([]int32{0}, b, 0)
			buf = a.save(0, buf[:0])
			rest, err := mergeSaved(global[j], 0, 1, buf)
			if err != nil || len(rest) != 0 {
				t.Fatalf("op %d: merging the saved local state: %v, %d bytes left", i, err, len(rest))
			}
		}
		out["two-phase"] = append(out["two-phase"], results(global, 0))

		next := newAccs()
		grow(next, 1)
		for j, a := range restored {
			a.update([]int32{0}, b, 0)
			buf = a.save(0, buf[:0])
			rest, err := next[j].load(0, buf)
			if err != nil || len(rest) != 0 {
				t.Fatalf("op %d: loading the saved state: %v, %d bytes left", i, err, len(rest))
			}
		}
		restored = next
		out["restored"] = append(out["restored"], results(restored, 0))
	}
	return out
}

// checkDecPaths compares every path's results after each op with the model's.
func checkDecPaths(t *testing.T, scale int, ops []decOp, seed string) {
	t.Helper()
	m := newDecModel()
	var want [][2]string
	for _, op := range ops {
		m.apply(op.u, op.retract)
		want = append(want, [2]string{m.sumText(scale), m.avgText(scale, max(scale, 6))})
	}
	for path, got := range decAccPaths(t, scale, ops) {
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s%s: after op %d (%v): SUM, AVG = %v, want %v", seed, path, i, ops[i], got[i], want[i])
			}
		}
	}
}

// TestDecimalSumEdges: SUM and AVG of DECIMAL(38, s) at the edges of 2^127
// and 10^38, positive and negative, and retracted back into range, on
// every path an operator takes (see decAccPaths), against math/big. A
// 128-bit sum wraps past 2^127 and shows a wrong number where the answer
// is NULL, or a wrong average.
func TestDecimalSumEdges(t *testing.T) {
	for _, tc := range decEdgeCases {
		t.Run(tc.name, func(t *testing.T) {
			ops := decOps(t, tc.ops)
			m := newDecModel()
			for _, op := range ops {
				m.apply(op.u, op.retract)
			}
			if s, a := m.sumText(tc.scale), m.avgText(tc.scale, max(tc.scale, 6)); s != tc.sum || a != tc.avg {
				t.Fatalf("the model gives SUM %s AVG %s, the case says %s %s", s, a, tc.sum, tc.avg)
			}
			checkDecPaths(t, tc.scale, ops, "")
		})
	}
}

// TestDecimalSumRandom adds and retracts random values near ±10^38 (and
// small ones), retracting only values present, on every path, against
// math/big after each op.
func TestDecimalSumRandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 17))
	limit := bigDec(t, decMax)
	for round := range 20 {
		scale := []int{0, 2, 6, 10}[round%4]
		var ops []decOp
		var live []*big.Int
		for range 200 {
			if len(live) > 0 && r.IntN(3) == 0 {
				j := r.IntN(len(live))
				ops = append(ops, decOp{retract: true, u: live[j]})
				live = append(live[:j], live[j+1:]...)
				continue
			}
			var u *big.Int
			switch r.IntN(4) {
			case 0:
				u = big.NewInt(r.Int64N(2001) - 1000)
			case 1:
				u = big.NewInt(r.Int64())
			default: // within 2^64 of ±(10^38 - 1)
				u = new(big.Int).Sub(limit, new(big.Int).SetUint64(r.Uint64()))
			}
			if r.IntN(2) == 0 {
				u.Neg(u)
			}
			ops = append(ops, decOp{u: u})
			live = append(live, u)
		}
		checkDecPaths(t, scale, ops, fmt.Sprintf("seed %d round %d: ", seed, round))
	}
}

// TestDecimalSumStateLayouts: a sum that fits in 128 bits is saved as
// before the sum had 192 bits (lo, hi, count), so a state saved by that
// version loads (here written by hand as it wrote it); a wider sum is saved
// with the wide mark and reads back exactly; a truncated or malformed
// state is an error, not a panic.
func TestDecimalSumStateLayouts(t *testing.T) {
	newAcc := func() *decSumAcc {
		acc, err := newAccumulator(decCalls(0, 0)[0])
		if err != nil {
			t.Fatal(err)
		}
		acc.grow()
		return acc.(*decSumAcc)
	}
	// oldLayout is the state the 128-bit accumulator saved: the sum's two
	// 64-bit words little-endian, then the count as a varint.
	oldLayout := func(u *big.Int, n int64) []byte {
		m := new(big.Int).And(u, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))) // two's complement, 128 bits
		var w [16]byte
		m.FillBytes(w[:])
		var dst []byte
		for i := 15; i >= 0; i-- { // big-endian to little-endian
			dst = append(dst, w[i])
		}
		return binary.AppendVarint(dst, n)
	}
	for _, tc := range []struct {
		sum string
		n   int64
	}{{"0", 0}, {"5", 1}, {"-5", 3}, {decMax, 64}, {"-" + decMax, -70}, {"170141183460469231731687303715884105727", 2}, {"-170141183460469231731687303715884105728", 2}} {
		u := bigDec(t, tc.sum)
		old := oldLayout(u, tc.n)
		acc := newAcc()
		rest, err := acc.load(0, append(old, 0xAB))
		if err != nil || len(rest) != 1 || rest[0] != 0xAB {
			t.Fatalf("old state of %s: %v, rest %x", tc.sum, err, rest)
		}
		if got := acc.s[0].big(); got.Cmp(u) != 0 || acc.s[0].n != tc.n {
			t.Fatalf("old state of %s, %d: loaded %s, %d", tc.sum, tc.n, got, acc.s[0].n)
		}
		if saved := acc.save(0, nil); string(saved) != string(old) {
			t.Fatalf("sum %s saved as %x, want the old layout %x", tc.sum, saved, old)
		}
	}
	// Wide sums: beyond 128 bits both ways.
	for _, ops := range []string{"+" + dec2p126 + "x4 +5", "+-" + dec2p126 + "x4 +-5", "+" + decMax + "x3", "+" + decMax + "x1000", "+-" + decMax + "x1000"} {
		acc := newAcc()
		m := newDecModel()
		for _, op := range decOps(t, ops) {
			acc.apply(0, ptr(decOf(t, op.u, 0)), op.retract)
			m.apply(op.u, op.retract)
		}
		saved := acc.save(0, nil)
		if !bytes.Contains(saved[16:], []byte{decWideMark0, decWideMark1}) {
			t.Fatalf("sum %s saved without the wide mark: %x", m.sum, saved)
		}
		back := newAcc()
		rest, err := back.load(0, append(saved, 0xCD))
		if err != nil || len(rest) != 1 || rest[0] != 0xCD {
			t.Fatalf("wide state of %s: %v, rest %x", m.sum, err, rest)
		}
		if got := back.s[0].big(); got.Cmp(m.sum) != 0 || back.s[0].n != m.n {
			t.Fatalf("wide state of %s, %d: loaded %s, %d", m.sum, m.n, got, back.s[0].n)
		}
		for cut := range len(saved) {
			if _, err := newAcc().load(0, saved[:cut]); err == nil {
				t.Fatalf("state %x cut to %d bytes loaded", saved, cut)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// BenchmarkDecimalSumUpdate is SUM and AVG of DECIMAL(38, 2) over batches
// of 1024 rows into 64 groups, a quarter of the values beyond int64, an
// eighth of the rows retractions; ns/op is per row.
func BenchmarkDecimalSumUpdate(b *testing.B) {
	calls := decCalls(0, 2)
	var accs []accumulator
	for _, c := range calls {
		acc, err := newAccumulator(c)
		if err != nil {
			b.Fatal(err)
		}
		for range 64 {
			acc.grow()
		}
		accs = append(accs, acc)
	}
	r := rand.New(rand.NewPCG(1, 2))
	batch := types.NewBatch(1, 1024)
	gis := make([]int32, 1024)
	for i := range 1024 {
		u := big.NewInt(r.Int64N(1_000_000_000))
		if i%4 == 0 {
			u.Lsh(u, 70)
		}
		kind := types.Insert
		if i%8 == 7 {
			kind = types.Delete
		}
		batch.Append(kind, []types.Value{decOf(b, u, 2)})
		gis[i] = int32(r.IntN(64))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 1024 {
		for _, a := range accs {
			a.update(gis, batch, 0)
		}
	}
}
