package exec

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// TestExchangeKeyGroupMemo checks outEdge.keyGroupOf, the memo of a Hash
// edge's key groups over several columns, against state.KeyGroup of each
// row's encoded key: keys of shared and copied strings (the same bytes at
// another address), NULLs, integers of two kinds with one number, doubles
// and more distinct keys than the memo has entries (so entries are
// replaced and picked by other keys).
func TestExchangeKeyGroupMemo(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 5))
	e := &outEdge{kind: Hash, keys: []int{2, 0}, maxPar: 128}
	var strs []string
	for i := range 3000 {
		strs = append(strs, "channel-"+strconv.Itoa(i))
	}
	row := make([]types.Value, 3)
	var buf []byte
	for i := range 200000 {
		clear(row)
		switch r.IntN(6) {
		case 0: // NULL
		case 1:
			row[0] = types.IntValue(int64(r.IntN(50)))
		case 2:
			row[0] = types.BigIntValue(int64(r.IntN(50)))
		case 3:
			row[0] = types.DoubleValue(float64(r.IntN(50)) / 4)
		default:
			row[0] = types.StringValue(strs[r.IntN(8)])
		}
		s := strs[r.IntN(len(strs))]
		if r.IntN(2) == 0 {
			s = strs[r.IntN(4)] // hot
		}
		if r.IntN(4) == 0 {
			s = strings.Clone(s)
		}
		if r.IntN(10) > 0 {
			row[2] = types.StringValue(s)
		}
		buf = state.AppendValue(state.AppendValue(buf[:0], row[2]), row[0])
		want := state.KeyGroup(buf, e.maxPar)
		if got := e.keyGroupOf(row); got != want {
			t.Fatalf("seed %d row %d %v: key group %d, want %d", seed, i, row, got, want)
		}
		if got := e.keyGroupOf(row); got != want { // a hit of the memo
			t.Fatalf("seed %d row %d %v: again: key group %d, want %d", seed, i, row, got, want)
		}
	}
}
