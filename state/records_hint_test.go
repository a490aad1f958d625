package state

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// hintOwner is a partOwner that tells its records' sizes (SizeHinter) and
// checks, as it encodes each part, that Records made room for it first
// and that the part is as long as it said.
type hintOwner struct {
	*partOwner
	t      *testing.T
	hinted int // parts encoded into room made for them
}

func (f *hintOwner) EncodedSize(slot int32, part int32) int {
	n := 0
	if part == 0 {
		n = UvarintSize(uint64(len(f.vals[slot])))
	}
	v := f.vals[slot]
	for _, x := range v[min(len(v), int(part)*partVals):min(len(v), int(part+1)*partVals)] {
		n += VarintSize(x)
	}
	return n
}

func (f *hintOwner) check(dst []byte, slot, part int32, enc func([]byte) []byte) []byte {
	f.t.Helper()
	want := f.EncodedSize(slot, part)
	if cap(dst)-len(dst) < want {
		f.t.Fatalf("slot %d part %d: %d bytes of room, the hint said %d", slot, part, cap(dst)-len(dst), want)
	}
	n, c := len(dst), cap(dst)
	dst = enc(dst)
	if len(dst)-n != want || cap(dst) != c {
		f.t.Fatalf("slot %d part %d: appended %d bytes (capacity %d → %d), the hint said %d", slot, part, len(dst)-n, c, cap(dst), want)
	}
	f.hinted++
	return dst
}

func (f *hintOwner) AppendRecord(dst []byte, slot int32) []byte {
	return f.check(dst, slot, 0, func(d []byte) []byte { return f.partOwner.AppendRecord(d, slot) })
}

func (f *hintOwner) AppendRecordPart(dst []byte, slot int32, p int32) []byte {
	return f.check(dst, slot, p, func(d []byte) []byte { return f.partOwner.AppendRecordPart(d, slot, p) })
}

var _ SizeHinter = (*hintOwner)(nil)

// TestRecordsSizeHint writes records of random lengths (a few values to
// thousands, with and without a TTL's write-time mark) through snapshots
// that grow the buffer from nothing: each part is encoded into room made
// for it by its hint, and a restore gives back the records of a Go model.
func TestRecordsSizeHint(t *testing.T) {
	for _, ttl := range []time.Duration{0, time.Hour} {
		seed := rand.Uint64()
		t.Logf("ttl %v seed %d", ttl, seed)
		r := rand.New(rand.NewPCG(seed, 17))
		dir := t.TempDir()
		st := openStore(t, filepath.Join(dir, "work"))
		own := &hintOwner{partOwner: newPartOwner(), t: t}
		opts := RecordOptions{Name: "lists", OperatorID: "op", Budget: 64 << 20, RecordBytes: 100, Exclusive: true, TTL: ttl}
		rec, err := NewRecords(opts, own)
		if err != nil {
			t.Fatal(err)
		}
		rec.chunk = 64 // several chunks a snapshot
		if err := rec.Attach(st, false); err != nil {
			t.Fatal(err)
		}
		rec.SetTime(1000)
		model := map[string][]int64{}
		for round := range 5 {
			for range 300 {
				key := AppendValue(nil, types.BigIntValue(r.Int64N(1000)))
				slot, ok := own.index[string(key)]
				if !ok {
					slot = own.add(key)
					rec.AddedKey(slot, key)
				}
				n := 1 + r.IntN(20)
				if r.IntN(30) == 0 {
					n = 1000 + r.IntN(3000)
				}
				for range n {
					p := int32(len(own.vals[slot]) / partVals)
					own.vals[slot] = append(own.vals[slot], r.Int64N(math.MaxInt64)>>r.IntN(64)-r.Int64N(100))
					own.dirty[slot][p] = true
				}
				rec.Changed(slot)
				model[string(key)] = slices.Clone(own.vals[slot])
			}
			rec.vbuf = nil // grow from nothing
			if err := rec.Snapshot(); err != nil {
				t.Fatal(err)
			}
			t.Logf("round %d: %d parts hinted", round, own.hinted)
		}
		snap := filepath.Join(dir, "snap")
		if _, err := st.Snapshot(snap); err != nil {
			t.Fatal(err)
		}
		first, last := KeyGroupRange(0, 1, types.DefaultMaxParallelism)
		rst, err := statestore.RestoreKeyGroups([]string{snap}, filepath.Join(dir, "restored"), first, last, statestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rst.Close() })
		o2 := newPartOwner()
		r2, err := NewRecords(opts, o2)
		if err != nil {
			t.Fatal(err)
		}
		if err := r2.Attach(rst, true); err != nil {
			t.Fatal(err)
		}
		if len(o2.index) != len(model) {
			t.Fatalf("restored %d records, want %d", len(o2.index), len(model))
		}
		for k, v := range model {
			slot, ok := o2.index[k]
			if !ok || !slices.Equal(o2.vals[slot], v) {
				t.Fatalf("key %x restored as %v, want %v", k, o2.vals[slot], v)
			}
		}
	}
}

// TestReserve checks reserve's growth: the bytes appended stay, every
// reservation is met, and the buffer is copied O(log n) times.
func TestReserve(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	var b, want []byte
	copies := 0
	for range 5000 {
		n := r.IntN(2000)
		c := cap(b)
		b = reserve(b, n)
		if cap(b)-len(b) < n {
			t.Fatalf("reserve(%d): %d bytes of room", n, cap(b)-len(b))
		}
		if cap(b) != c {
			copies++
		}
		chunk := bytes.Repeat([]byte{byte(n)}, n)
		b, want = append(b, chunk...), append(want, chunk...)
	}
	if !bytes.Equal(b, want) {
		t.Fatal("reserve lost bytes")
	}
	if limit := 2 + int(math.Log2(float64(len(b)))); copies > limit {
		t.Fatalf("%d copies for %d bytes, want at most %d", copies, len(b), limit)
	}
}

// TestEncodedSizes checks ValueSize, ValuesSize, UvarintSize and
// VarintSize against the encoders, for values of every kind and numbers
// across the varint lengths.
func TestEncodedSizes(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	for range 2000 {
		x := r.Uint64() >> r.IntN(64)
		if got, want := UvarintSize(x), len(binary.AppendUvarint(nil, x)); got != want {
			t.Fatalf("UvarintSize(%d) = %d, want %d", x, got, want)
		}
		y := int64(x)
		if r.IntN(2) == 0 {
			y = -y
		}
		if got, want := VarintSize(y), len(binary.AppendVarint(nil, y)); got != want {
			t.Fatalf("VarintSize(%d) = %d, want %d", y, got, want)
		}
	}
	for _, y := range []int64{0, -1, 1, math.MaxInt64, math.MinInt64} {
		if got, want := VarintSize(y), len(binary.AppendVarint(nil, y)); got != want {
			t.Fatalf("VarintSize(%d) = %d, want %d", y, got, want)
		}
	}
	str := func() string {
		var sb strings.Builder
		for range r.IntN(40) {
			if r.IntN(4) == 0 {
				sb.WriteByte(0)
			} else {
				sb.WriteByte(byte('a' + r.IntN(26)))
			}
		}
		return sb.String()
	}
	var row []types.Value
	for range 500 {
		var v types.Value
		switch r.IntN(10) {
		case 0:
			v = types.Value{}
		case 1:
			v = types.BoolValue(r.IntN(2) == 0)
		case 2:
			v = types.BigIntValue(r.Int64())
		case 3:
			v = types.DoubleValue(r.NormFloat64())
		case 4:
			v = types.StringValue(str())
		case 5:
			v = types.BytesValue(str())
		case 6:
			v = types.TimestampValue(r.Int64N(1 << 45))
		case 7:
			v = types.DecimalValue(r.Int64N(1<<40)-1<<39, 2)
		case 8:
			v = types.IntValue(int64(r.Int32()))
		default:
			v = types.IntervalValue(r.Int64N(1 << 40))
		}
		if got, want := ValueSize(v), len(AppendValue(nil, v)); got != want {
			t.Fatalf("ValueSize(%v) = %d, want %d", v, got, want)
		}
		row = append(row, v)
	}
	if got, want := ValuesSize(row), len(Values{}.Append(nil, row)); got != want {
		t.Fatalf("ValuesSize = %d, want %d", got, want)
	}
}
