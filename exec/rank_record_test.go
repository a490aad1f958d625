package exec

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// refTopRecord builds a partition's "top" record as the format says: per
// row, the uvarint length and sort key, the uvarint length and the
// state.Values encoding of the row.
func refTopRecord(sks [][]byte, rows [][]types.Value) []byte {
	var out []byte
	for j, sk := range sks {
		out = binary.AppendUvarint(out, uint64(len(sk)))
		out = append(out, sk...)
		enc := state.Values{}.Append(nil, rows[j])
		out = binary.AppendUvarint(out, uint64(len(enc)))
		out = append(out, enc...)
	}
	return out
}

// TestRankTopRecord loads partitions' records whose rows encode to fewer
// than 128 bytes, 128 to 16,383 and more (the three sizes of their
// length), checks that the in-memory Top-N writes them back byte for
// byte, then inserts rows (reusing a dropped row's buffers) and checks the
// record against the list computed here.
func TestRankTopRecord(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 6))
	kinds := []types.Kind{types.KindBigInt, types.KindBigInt, types.KindVarchar}
	spec := RankSpec{Partition: []int{0}, Order: []SortKey{{Col: 1, Desc: true}}, Func: RowNumber, Start: 1, End: 3, OutputRank: true, Strategy: AppendFast, Kinds: kinds}
	for range 30 {
		o := &rankMemOp{spec: spec, w: len(kinds), end: 3}
		o.keys = state.NewKeyIndex(spec.Partition, kinds)
		o.parts = state.NewSlab[rankPart](1)
		o.out = types.NewBatch(len(kinds)+1, 16)
		text := func() string {
			return strings.Repeat("x", []int{0, 5, 100, 130, 5000, 16400, 20000}[r.IntN(7)])
		}
		var sks [][]byte
		var rows [][]types.Value
		for j := range 1 + r.IntN(3) {
			row := []types.Value{types.BigIntValue(7), types.BigIntValue(int64(100 - 10*j)), types.StringValue(text())}
			rows = append(rows, row)
			sks = append(sks, encodeSortKey(nil, spec.Order, row))
		}
		rec := refTopRecord(sks, rows)
		s, err := o.LoadRecord([]byte("k"), rec)
		if err != nil {
			t.Fatalf("seed %d: load: %v", seed, err)
		}
		if got := o.AppendRecord(nil, s); !bytes.Equal(got, rec) {
			t.Fatalf("seed %d: written back %d bytes, want the %d loaded", seed, len(got), len(rec))
		}
		for range 4 {
			row := []types.Value{types.BigIntValue(7), types.BigIntValue(int64(r.IntN(120))), types.StringValue(text())}
			o.sk = encodeSortKey(o.sk[:0], spec.Order, row)
			o.insert(s, row)
			// The list here: after its ties, the first 3 kept.
			pos := len(rows)
			for j, k := range sks {
				if bytes.Compare(k, o.sk) > 0 {
					pos = j
					break
				}
			}
			if pos < 3 {
				sks = append(sks[:pos], append([][]byte{bytes.Clone(o.sk)}, sks[pos:]...)...)
				rows = append(rows[:pos], append([][]types.Value{row}, rows[pos:]...)...)
				sks, rows = sks[:min(len(sks), 3)], rows[:min(len(rows), 3)]
			}
			if got, want := o.AppendRecord(nil, s), refTopRecord(sks, rows); !bytes.Equal(got, want) {
				t.Fatalf("seed %d: after an insert: %d bytes, want %d", seed, len(got), len(want))
			}
		}
	}
}
