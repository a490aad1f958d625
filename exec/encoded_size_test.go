package exec

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// randValue returns a random value of kind k (NULL one time in ten), with
// strings that may hold zero bytes and integers across the varint lengths.
func randValue(r *rand.Rand, k types.Kind) types.Value {
	if r.IntN(10) == 0 {
		return types.Value{}
	}
	n := r.Int64() >> r.IntN(64)
	if r.IntN(2) == 0 {
		n = -n
	}
	switch k {
	case types.KindVarchar, types.KindBytes:
		var sb strings.Builder
		for range r.IntN(300) {
			if r.IntN(8) == 0 {
				sb.WriteByte(0)
			} else {
				sb.WriteByte(byte('a' + r.IntN(26)))
			}
		}
		if k == types.KindBytes {
			return types.BytesValue(sb.String())
		}
		return types.StringValue(sb.String())
	case types.KindDouble:
		return types.DoubleValue(r.NormFloat64())
	case types.KindDecimal:
		return types.DecimalValue(n>>8, 2)
	case types.KindTimestamp:
		return types.TimestampValue(n)
	case types.KindBoolean:
		return types.BoolValue(n&1 == 0)
	case types.KindInt:
		return types.IntValue(int64(int32(n)))
	}
	return types.BigIntValue(n)
}

// TestJoinRowsEncodedSize checks the join's size hint (state.SizeHinter)
// against its encoders: for keys of a few to a few hundred rows of mixed
// kinds, with and without match counts, every part's EncodedSize is the
// length AppendRecord or AppendRecordPart appends, and a delta list's is
// AppendDelta's.
func TestJoinRowsEncodedSize(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 23))
	kinds := []types.Kind{types.KindBigInt, types.KindVarchar, types.KindDouble, types.KindTimestamp,
		types.KindDecimal, types.KindBytes, types.KindBoolean, types.KindInt}
	side := JoinSide{Keys: []int{0}, Kinds: kinds}
	op := NewJoin(JoinSpec{Type: LeftOuterJoin, Left: side, Right: side})().(*joinOp)
	if err := op.Open(&OpContext{ID: "join", Parallelism: 1, MaxParallelism: joinTestMaxPar}); err != nil {
		t.Fatal(err)
	}
	row := make([]types.Value, len(kinds))
	for _, s := range op.sides { // the left side counts matches, the right does not
		for key := range int64(20) {
			kr := []types.Value{types.BigIntValue(key)}
			n := 1 + r.IntN(8)
			if key%4 == 0 {
				n = 60 + r.IntN(300)
			}
			for range n {
				row[0] = kr[0]
				for c := 1; c < len(kinds); c++ {
					row[c] = randValue(r, kinds[c])
				}
				slot, found, err := s.find(kr)
				if err != nil {
					t.Fatal(err)
				}
				s.insert(kr, slot, found, row, r.Int64N(1<<40)>>r.IntN(40))
			}
			slot, _, err := s.find(kr)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := s.EncodedSize(slot, 0), len(s.AppendRecord(nil, slot)); got != want {
				t.Fatalf("%s key %d (%d rows): part 0 hinted %d bytes, encoded %d", s.what, key, n, got, want)
			}
			np, parts := s.ChangedParts(nil, slot, true)
			if want := int32((n + 63) / 64); np != want {
				t.Fatalf("%s key %d: %d parts, want %d", s.what, key, np, want)
			}
			for _, p := range parts {
				if got, want := s.EncodedSize(slot, p), len(s.AppendRecordPart(nil, slot, p)); got != want {
					t.Fatalf("%s key %d part %d: hinted %d bytes, encoded %d", s.what, key, p, got, want)
				}
			}
			// The same rows as a delta list's writes, taken out one time
			// in three.
			l := s.list(slot)
			var d rowList
			for j := range l.n() {
				cnt := int64(1)
				if r.IntN(3) == 0 {
					cnt = -1
				}
				var assoc int64
				if s.track {
					assoc = l.assoc[j]
				}
				d.addOp(l.row(j, s.w), cnt, assoc, s.track)
			}
			*l, d = d, *l
			hint := s.EncodedSize(slot, state.DeltaPart)
			if got := len(s.AppendDelta(nil, slot)); got != hint {
				t.Fatalf("%s key %d delta: hinted %d bytes, encoded %d", s.what, key, hint, got)
			}
			*l = d
		}
	}
}

// TestRankEncodedSize checks the in-memory Top-N's size hint against
// AppendRecord for partitions of random rows with long strings.
func TestRankEncodedSize(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 29))
	kinds := []types.Kind{types.KindBigInt, types.KindBigInt, types.KindVarchar, types.KindDecimal, types.KindTimestamp}
	spec := RankSpec{Partition: []int{0}, Order: []SortKey{{Col: 1, Desc: true, NullsLast: true}}, Func: RowNumber,
		Start: 1, End: 10, Strategy: AppendFast, Kinds: kinds}
	op := NewRank(spec)().(*rankMemOp)
	if err := op.Open(&OpContext{Name: "Rank", Parallelism: 1, MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		b := types.NewBatch(len(kinds), 64)
		for range 64 {
			row := []types.Value{types.BigIntValue(r.Int64N(30))}
			for _, k := range kinds[1:] {
				row = append(row, randValue(r, k))
			}
			b.Append(types.Insert, row)
		}
		if err := op.Process(0, b, &recorder{}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for slot := range op.keys.Cap() {
		if !op.keys.Used(slot) {
			continue
		}
		n++
		if got, want := op.EncodedSize(slot, 0), len(op.AppendRecord(nil, slot)); got != want {
			t.Fatalf("partition in slot %d (%d rows): hinted %d bytes, encoded %d", slot, len(op.part(slot).rows), got, want)
		}
	}
	if n == 0 {
		t.Fatal("no partition kept")
	}
}
