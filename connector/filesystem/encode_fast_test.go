package filesystem

import (
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestEightDigits checks eightDigits, the word-at-a-time digits of
// appendInt, against strconv on every value below 10^4 in each of its two
// halves and on random values, and the lane divisions it and the
// timestamp's milliseconds rely on on their whole ranges.
func TestEightDigits(t *testing.T) {
	for x := uint64(0); x < 10000; x++ {
		if x*10486>>20 != x/100 {
			t.Fatalf("%d*10486>>20 = %d, want %d", x, x*10486>>20, x/100)
		}
		if x < 100 && x*103>>10 != x/10 {
			t.Fatalf("%d*103>>10 = %d, want %d", x, x*103>>10, x/10)
		}
		if x < 1000 && x*41>>12 != x/100 {
			t.Fatalf("%d*41>>12 = %d, want %d", x, x*41>>12, x/100)
		}
	}
	check := func(u uint64) {
		d := eightDigits(u)
		var b [8]byte
		for i := range b {
			b[i] = byte(d>>(8*i)) + '0'
		}
		if want := strconv.FormatUint(u+1e8, 10)[1:]; string(b[:]) != want {
			t.Fatalf("eightDigits(%d) = %q, want %q", u, b[:], want)
		}
	}
	for x := uint64(0); x < 10000; x++ {
		check(x)
		check(x * 10000)
		check(x*10000 + 9999 - x)
	}
	seed := int64(testseed.Seed(t))
	r := rand.New(rand.NewSource(seed))
	for range 200000 {
		check(uint64(r.Int63n(1e8)))
	}
}

// TestAppendIntGrow checks appendInt where the buffer has no room, or
// just room, for the eight bytes it stores at once.
func TestAppendIntGrow(t *testing.T) {
	for _, v := range []int64{7, 12, 1234567, 99999999, 100000000, 1234567890123456, 9999999999999999, 10000000000000000, -42, math.MinInt64} {
		for room := range 10 {
			dst := make([]byte, 3, 3+room)
			copy(dst, "abc")
			got := appendInt(dst, v)
			if want := "abc" + strconv.FormatInt(v, 10); string(got) != want {
				t.Fatalf("appendInt(%d) with room %d = %q, want %q", v, room, got, want)
			}
		}
	}
}

// TestCSVAppendRow writes random rows of every kind the encoder has a
// case for (and NULLs, and kinds it has none for) through appendRow, with
// columns picked in random order, and through encode, and compares each
// record with one built here from strconv and Go's time formatting.
func TestCSVAppendRow(t *testing.T) {
	seed := int64(testseed.Seed(t))
	r := rand.New(rand.NewSource(seed))
	loc, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		loc = time.FixedZone("x", 5*3600+1800)
	}
	const layout = "2006-01-02 15:04:05.000"
	cols := []types.Column{
		{Name: "big", Type: types.BigInt}, {Name: "int", Type: types.Type{Kind: types.KindInt}},
		{Name: "small", Type: types.Type{Kind: types.KindSmallInt}}, {Name: "tiny", Type: types.Type{Kind: types.KindTinyInt}},
		{Name: "s", Type: types.Varchar}, {Name: "ts", Type: types.Timestamp},
		{Name: "ltz", Type: types.Type{Kind: types.KindTimestampLTZ}}, {Name: "b", Type: types.Type{Kind: types.KindBoolean}},
	}
	f := format{name: formatCSV, delim: ',', quote: '"', loc: loc, nullLiteral: "NA", hasNullLiteral: true}
	e := newCSVEncoder(f, cols)
	ms := int64(1_700_000_000_000)
	for range 2000 {
		ms += r.Int63n(3000) - 500
		ints := []int64{r.Int63() >> r.Intn(63), int64(int32(r.Uint32())), int64(int16(r.Uint32())), int64(int8(r.Uint32()))}
		if r.Intn(2) == 0 {
			ints[0] = -ints[0]
		}
		s := strings.Repeat("ab, \"c", r.Intn(4)) + strings.Repeat("x", r.Intn(20))
		if r.Intn(20) == 0 {
			s = "NA"
		}
		row := []types.Value{types.BigIntValue(ints[0]), types.IntValue(ints[1]), types.SmallIntValue(ints[2]), types.TinyIntValue(ints[3]),
			types.StringValue(s), types.TimestampValue(ms), types.TimestampLTZValue(ms), types.BoolValue(r.Intn(2) == 0)}
		texts := []string{strconv.FormatInt(ints[0], 10), strconv.FormatInt(ints[1], 10), strconv.FormatInt(ints[2], 10), strconv.FormatInt(ints[3], 10),
			refCSVField(s, ',', '"', "NA", true), time.UnixMilli(ms).UTC().Format(layout), time.UnixMilli(ms).In(loc).Format(layout),
			strconv.FormatBool(row[7].Bool())}
		for c := range row {
			if r.Intn(10) == 0 {
				row[c], texts[c] = types.NullValue(), "NA"
			}
		}
		pick := r.Perm(len(row))[:1+r.Intn(len(row))]
		var want []string
		for _, c := range pick {
			want = append(want, texts[c])
		}
		if got := string(e.appendRow([]byte("x"), row, pick)); got != "x"+strings.Join(want, ",")+"\n" {
			t.Fatalf("seed %d: columns %v of %v: %q, want %q", seed, pick, row, got, "x"+strings.Join(want, ",")+"\n")
		}
		b := types.NewBatch(len(row), 1)
		b.Append(types.Insert, row)
		got, err := e.encode([]byte("x"), b)
		if err != nil {
			t.Fatal(err)
		}
		if want := "x" + strings.Join(texts, ",") + "\n"; string(got) != want {
			t.Fatalf("seed %d: encode %v: %q, want %q", seed, row, got, want)
		}
	}
}
