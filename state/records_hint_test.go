package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
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
	if part == ChangedPartsHint || part == AllPartsHint {
		n := 0
		for p := int32(1); p < f.nParts(slot); p++ {
			if part == AllPartsHint || f.dirty[slot][p] {
				n += f.EncodedSize(slot, p)
			}
		}
		return n
	}
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
				// A record may not start with 0xFF (RecordSource): the
				// uvarint of its length does for 127 mod 128 from 128 on.
				for i := 0; i < n || (len(own.vals[slot]) >= 128 && len(own.vals[slot])%128 == 127); i++ {
					p := int32(len(own.vals[slot]) / partVals)
					own.vals[slot] = append(own.vals[slot], r.Int64N(math.MaxInt64)>>r.IntN(64)-r.Int64N(100))
					own.dirty[slot][p] = true
				}
				rec.Changed(slot)
				model[string(key)] = slices.Clone(own.vals[slot])
			}
			rec.kbuf = nil // grow from nothing
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

// blobOwner is a SizeHinter of records of given lengths, for chunks.
type blobOwner struct{ recs [][]byte }

func (f *blobOwner) AppendRecordKey(dst []byte, slot int32) []byte {
	return AppendValue(dst, types.BigIntValue(int64(slot)))
}
func (f *blobOwner) AppendRecord(dst []byte, slot int32) []byte { return append(dst, f.recs[slot]...) }
func (f *blobOwner) LoadRecord(_, _ []byte) (int32, error)      { return 0, fmt.Errorf("not stored") }
func (f *blobOwner) DropRecords()                               {}
func (f *blobOwner) EncodedSize(slot int32, _ int32) int        { return len(f.recs[slot]) }

// TestChunksByBytes checks that a snapshot of records a SizeHinter says
// are long ends its chunks by chunkBytes, well before chunkEntries
// records, that each chunk holds whole key groups in order, and that the
// records written are those of the source.
func TestChunksByBytes(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	own := &blobOwner{}
	rec, err := NewRecords(RecordOptions{Name: "blobs", OperatorID: "op", Budget: 1 << 30, RecordBytes: 100}, own)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Attach(openStore(t, t.TempDir()), false); err != nil {
		t.Fatal(err)
	}
	const keys = 400
	total := 0
	for k := range int32(keys) {
		b := make([]byte, 1+r.IntN(200_000))
		for i := range b {
			b[i] = byte(r.IntN(255)) // never 0xFF first
		}
		own.recs = append(own.recs, b)
		key := AppendValue(nil, types.BigIntValue(int64(k)))
		rec.AddedKey(k, key)
		rec.Changed(k)
		total += len(b)
	}
	perKG := map[uint16]int{}
	kgMost := 0
	for k := range int32(keys) {
		perKG[rec.kgs[k]] += len(own.recs[k])
		kgMost = max(kgMost, perKG[rec.kgs[k]])
	}
	n, lastEnd := 0, 0
	err = rec.chunks(rec.changed, true, func(slots []int32, first, end int) error {
		if first != lastEnd {
			return fmt.Errorf("chunk %d starts at key group %d, after %d", n, first, lastEnd)
		}
		size := 0
		for _, s := range slots {
			size += len(own.recs[s])
		}
		if size > chunkBytes+kgMost { // the key group that passed chunkBytes is in
			return fmt.Errorf("chunk %d of %d records holds %d bytes", n, len(slots), size)
		}
		n++
		lastEnd = end
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := total / chunkBytes; n < want || lastEnd != types.DefaultMaxParallelism {
		t.Fatalf("%d bytes of records in %d chunks up to key group %d, want at least %d chunks", total, n, lastEnd, want)
	}
	t.Logf("%d bytes of records in %d chunks", total, n)
	if err := rec.Snapshot(); err != nil {
		t.Fatal(err)
	}
	sp, err := rec.sp, error(nil)
	got := 0
	for kg := range types.DefaultMaxParallelism {
		err = sp.Scan(kg, rec.prefix, prefixEnd(nil, rec.prefix), false, func(k, v []byte) (bool, error) {
			key, _, err := DecodeValue(k[len(rec.prefix):])
			if err != nil {
				return false, err
			}
			if !bytes.Equal(v, own.recs[key.Int()]) {
				return false, fmt.Errorf("record %d: %d bytes stored, want %d", key.Int(), len(v), len(own.recs[key.Int()]))
			}
			got++
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if got != keys {
		t.Fatalf("%d records stored, want %d", got, keys)
	}
}
