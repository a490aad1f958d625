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
			// The parts a snapshot writes, all then the changed ones
			// after a few rows come and go.
			for round, all := range []bool{true, false} {
				if !all {
					for range 1 + r.IntN(3) {
						for c := 1; c < len(kinds); c++ {
							row[c] = randValue(r, kinds[c])
						}
						s.insert(kr, slot, true, row, 1)
					}
					l := s.list(slot)
					gone := append([]types.Value(nil), l.row(r.IntN(l.n()), s.w)...)
					if err := s.remove(slot, true, gone); err != nil {
						t.Fatal(err)
					}
				}
				hint := s.EncodedSize(slot, state.ChangedPartsHint)
				if all {
					hint = s.EncodedSize(slot, state.AllPartsHint)
				}
				np, parts := s.ChangedParts(nil, slot, all)
				if want := int32((s.list(slot).n() + 63) / 64); np != want {
					t.Fatalf("%s key %d: %d parts, want %d", s.what, key, np, want)
				}
				sum := 0
				for _, p := range parts {
					enc := len(s.AppendRecordPart(nil, slot, p))
					if got := s.EncodedSize(slot, p); got != enc {
						t.Fatalf("%s key %d part %d: hinted %d bytes, encoded %d", s.what, key, p, got, enc)
					}
					sum += enc
				}
				if hint != sum {
					t.Fatalf("%s key %d round %d: the parts written hinted %d bytes, encoded %d (%d parts)", s.what, key, round, hint, sum, len(parts))
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
					assoc = *l.assocAt(j)
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

// TestRowListBlocks drives a join key's row list through random appends
// (with and without the hash table's lookups), drops and resets, against
// a model: after each step the rows, counts, hashes and match counts are
// the model's, the head block holds at most rowBlockRows rows, every
// later block is made whole (rowBlockRows rows, never regrown) and all
// but the last are full; the rows found by identity are the model's.
func TestRowListBlocks(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 31))
	const w = 3
	type mrow struct {
		vals  [w]int64
		m     rowMeta
		assoc int64
	}
	for _, track := range []bool{false, true} {
		var l rowList
		var model []mrow
		most := 0
		check := func(step int) {
			t.Helper()
			if l.n() != len(model) {
				t.Fatalf("track %v step %d: %d rows, want %d", track, step, l.n(), len(model))
			}
			if cap(l.head.meta) > rowBlockRows || cap(l.head.vals) > rowBlockRows*w {
				t.Fatalf("track %v step %d: head block of capacity %d rows", track, step, cap(l.head.meta))
			}
			if len(l.more) > 0 && len(l.head.meta) != rowBlockRows {
				t.Fatalf("track %v step %d: head of %d rows before %d blocks", track, step, len(l.head.meta), len(l.more))
			}
			for i, b := range l.more {
				if cap(b.meta) != rowBlockRows || cap(b.vals) != rowBlockRows*w || (track && cap(b.assoc) != rowBlockRows) {
					t.Fatalf("track %v step %d: block %d of capacity %d rows, want %d", track, step, i, cap(b.meta), rowBlockRows)
				}
				if n := len(b.meta); n == 0 || (i < len(l.more)-1 && n != rowBlockRows) {
					t.Fatalf("track %v step %d: block %d of %d holds %d rows", track, step, i, len(l.more), n)
				}
			}
			for j, m := range model {
				for c := range w {
					if got := l.row(j, w)[c].Int(); got != m.vals[c] {
						t.Fatalf("track %v step %d: row %d col %d = %d, want %d", track, step, j, c, got, m.vals[c])
					}
				}
				if *l.metaAt(j) != m.m || (track && *l.assocAt(j) != m.assoc) {
					t.Fatalf("track %v step %d: row %d meta %v assoc, want %v %d", track, step, j, *l.metaAt(j), m.m, m.assoc)
				}
			}
			if l.idx != nil {
				for j := range model {
					if l.idx[l.idxPos(int32(j))] != int32(j) {
						t.Fatalf("track %v step %d: row %d not in the table", track, step, j)
					}
				}
			} else if len(model) > idxMinRows {
				t.Fatalf("track %v step %d: %d rows without a table", track, step, len(model))
			}
		}
		row := make([]types.Value, w)
		for step := range 4000 {
			switch op := r.IntN(1000); {
			case op == 0:
				l.reset()
				model = model[:0]
				if l.more != nil || cap(l.head.meta) > rowBlockRows {
					t.Fatalf("track %v step %d: reset kept %d blocks", track, step, cap(l.more))
				}
			case op < 400 && len(model) > 0:
				j := r.IntN(len(model))
				l.drop(j, w, joinChunkShift)
				last := len(model) - 1
				model[j] = model[last]
				model = model[:last]
			default:
				var m mrow
				for c := range w {
					m.vals[c] = r.Int64()
					row[c] = types.BigIntValue(m.vals[c])
				}
				m.m = rowMeta{hash: r.Uint64(), cnt: 1 + r.Int64N(5)}
				if track {
					m.assoc = r.Int64N(10)
				}
				l.add(row, m.m.cnt, m.assoc, m.m.hash, track)
				model = append(model, m)
			}
			most = max(most, len(model))
			if step%50 == 0 || len(model) < 3 {
				check(step)
			}
			if step == 2000 {
				// Grow past many blocks, then shrink to nothing.
				for range 1000 {
					var m mrow
					m.m = rowMeta{hash: r.Uint64(), cnt: 1}
					for c := range w {
						row[c] = types.BigIntValue(0)
					}
					l.add(row, 1, 0, m.m.hash, track)
					model = append(model, m)
				}
				check(step)
				for len(model) > 0 {
					l.drop(0, w, joinChunkShift)
					model[0] = model[len(model)-1]
					model = model[:len(model)-1]
				}
				check(step)
			}
		}
		t.Logf("track %v: at most %d rows between resets", track, most)
	}
}

// TestRowListAppendAllocs checks that a long list's appends allocate a
// few times per block of rows, not per row, and copy no block.
func TestRowListAppendAllocs(t *testing.T) {
	row := []types.Value{types.BigIntValue(1), types.BigIntValue(2)}
	var l rowList
	for range 2 * rowBlockRows {
		l.push(row, rowMeta{}, 0, true)
	}
	first := &l.more[0].vals[0]
	allocs := testing.AllocsPerRun(10, func() {
		for range rowBlockRows {
			l.push(row, rowMeta{}, 0, true)
		}
	})
	if allocs > 4 { // three slices of a block, and now and then the block list
		t.Fatalf("%v allocations per %d rows appended", allocs, rowBlockRows)
	}
	if &l.more[0].vals[0] != first {
		t.Fatal("a full block was copied")
	}
}
