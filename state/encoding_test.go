package state

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// TestIntKindsShareKeyGroup: INT 1 and BIGINT 1 are one key, in one key
// group (they are two with types.AppendKey, key layout 1; the HASH exchange
// hashes this encoding too: exec's TestIntAndBigIntKeysMeet).
func TestIntKindsShareKeyGroup(t *testing.T) {
	for _, i := range []int64{0, 1, -1, 42, math.MaxInt32, math.MinInt32} {
		a := AppendValue(nil, types.IntValue(i))
		b := AppendValue(nil, types.BigIntValue(i))
		if !bytes.Equal(a, b) || KeyGroup(a, 128) != KeyGroup(b, 128) {
			t.Errorf("INT %d encodes as %x, BIGINT %d as %x", i, a, i, b)
		}
	}
}

// TestEncodingOrder: bytewise order of encodings is the values' order
// (types.Compare, NULL first) ascending, and the reverse descending; every
// value decodes back and encodings are self-delimiting.
func TestEncodingOrder(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	gens := []func() types.Value{
		func() types.Value { return types.BigIntValue(r.Int64() >> r.IntN(64)) },
		func() types.Value { return types.IntValue(int64(int32(r.Uint32())) >> r.IntN(32)) },
		func() types.Value { return types.TimestampValue(r.Int64N(1<<42) - 1<<41) },
		func() types.Value { return types.TimestampLTZValue(r.Int64N(1<<42) - 1<<41) },
		func() types.Value {
			specials := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), math.SmallestNonzeroFloat64, -math.MaxFloat64}
			if r.IntN(4) == 0 {
				return types.DoubleValue(specials[r.IntN(len(specials))])
			}
			return types.DoubleValue(r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10)))
		},
		func() types.Value {
			b := make([]byte, r.IntN(5))
			for i := range b {
				b[i] = []byte{0, 1, 'a', 'b', 0xFF}[r.IntN(5)]
			}
			return types.StringValue(string(b))
		},
		func() types.Value { return types.BoolValue(r.IntN(2) == 0) },
	}
	for _, gen := range gens {
		var vals []types.Value
		for range 300 {
			if r.IntN(20) == 0 {
				vals = append(vals, types.NullValue())
			} else {
				vals = append(vals, gen())
			}
		}
		for i := range vals {
			for j := range vals {
				a, b := vals[i], vals[j]
				want := types.Compare(a, b)
				got := bytes.Compare(AppendValue(nil, a), AppendValue(nil, b))
				if got != want {
					t.Fatalf("%v vs %v: encodings compare %d, values %d", a, b, got, want)
				}
				if gd := bytes.Compare(AppendValueDesc(nil, a), AppendValueDesc(nil, b)); gd != -want {
					t.Fatalf("%v vs %v: descending encodings compare %d, values %d", a, b, gd, want)
				}
			}
		}
		// Round trip of a concatenation (self-delimiting), both directions.
		var enc, dec []byte
		for _, v := range vals {
			enc = AppendValue(enc, v)
			dec = AppendValueDesc(dec, v)
		}
		for _, v := range vals {
			var got, gotD types.Value
			var err error
			if got, enc, err = DecodeValue(enc); err != nil {
				t.Fatal(err)
			}
			if gotD, dec, err = DecodeValueDesc(dec); err != nil {
				t.Fatal(err)
			}
			// INT and TIMESTAMP_LTZ share BIGINT's and TIMESTAMP's encodings.
			got, gotD = WithColumnKind(got, v.Kind()), WithColumnKind(gotD, v.Kind())
			if types.Compare(got, v) != 0 || types.Compare(gotD, v) != 0 || got.Kind() != v.Kind() {
				t.Fatalf("decoded %v (%v) and %v, want %v (%v)", got, got.Kind(), gotD, v, v.Kind())
			}
		}
		if len(enc) != 0 || len(dec) != 0 {
			t.Fatalf("%d and %d bytes left", len(enc), len(dec))
		}
	}
}

func TestDecodeMalformed(t *testing.T) {
	for _, b := range [][]byte{nil, {0}, {tagInt, 1, 2}, {tagString, 'a'}, {tagString, 0, 7}, {tagBool, 5}, {0x7F}} {
		if _, _, err := DecodeValue(b); err == nil {
			t.Errorf("%x decoded", b)
		}
	}
}

func TestStateNames(t *testing.T) {
	k, err := NewMemory(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewValueState(k, "a", Int64{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "", "_x", string(make([]byte, 201))} {
		if _, err := NewValueState(k, name, Int64{}); err == nil {
			t.Errorf("name %q accepted", name)
		}
	}
}

// TestKeyOutsideRange: a key whose key group another subtask owns is an
// error, not silently stored.
func TestKeyOutsideRange(t *testing.T) {
	k, err := NewMemory(Options{Subtask: 0, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	_, last := k.KeyGroups()
	var key []byte
	for i := int64(0); ; i++ {
		key = AppendInt64(key[:0], i)
		if KeyGroup(key, types.DefaultMaxParallelism) > last {
			break
		}
	}
	if err := k.SetCurrentKey(key); err == nil {
		t.Fatal("key of another subtask accepted")
	}
}

// TestTimerChunks fires more timers than one round reads from a key group,
// in order, with a callback that registers earlier due timers.
func TestTimerChunks(t *testing.T) {
	for _, onPebble := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "pebble"}[onPebble], func(t *testing.T) {
			testTimerChunks(t, newTestKeyed(t, onPebble, Options{MaxParallelism: 4}))
		})
	}
}

// newTestKeyed returns a Keyed in memory or on a new store with a small
// cache.
func newTestKeyed(t testing.TB, onPebble bool, opts Options) *Keyed {
	return newTestKeyedCache(t, onPebble, opts, 64<<10)
}

func newTestKeyedCache(t testing.TB, onPebble bool, opts Options, cacheBytes int64) *Keyed {
	t.Helper()
	var k *Keyed
	var err error
	if onPebble {
		st, err := statestore.Open(t.TempDir(), statestore.Options{CacheBytes: cacheBytes, MaxParallelism: opts.MaxParallelism})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		opts.OperatorID = "op"
		k, err = Open(st, opts)
	} else {
		k, err = NewMemory(opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func testTimerChunks(t *testing.T, k *Keyed) {
	var err error
	const n = 6 * timersPerGroup // more than one round reads from each of the 4 key groups
	var key []byte
	for i := range n {
		key = AppendInt64(key[:0], int64(i%500))
		if err := k.SetCurrentKey(key); err != nil {
			t.Fatal(err)
		}
		if err := k.RegisterTimer(EventTime, int64(n-i)*10, []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	var got []int64
	err = k.AdvanceWatermark(math.MaxInt64, func(tm Timer) error {
		got = append(got, tm.Timestamp)
		if tm.Namespace[0] == 1 {
			return k.RegisterTimer(EventTime, tm.Timestamp+5, []byte{2})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2*n || !slices.IsSorted(got) {
		t.Fatalf("fired %d timers (want %d), sorted %v", len(got), 2*n, slices.IsSorted(got))
	}
}
