package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestValuesIn decodes random rows into one arena, in blocks, and checks each row against Values.Decode, after every row was
// decoded (a grown arena leaves the rows before it intact), and that
// appending to a row leaves the next alone.
func TestValuesIn(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	kinds := []types.Kind{types.KindInt, types.KindBigInt, types.KindVarchar, types.KindTimestamp}
	plain := Values{Kinds: kinds}
	var arena []types.Value
	in := ValuesIn{Values: plain, Arena: &arena}
	var got, want [][]types.Value
	for i := range 2000 {
		row := []types.Value{types.IntValue(int64(r.Int32())), types.BigIntValue(r.Int64()),
			types.StringValue(fmt.Sprint("s", r.IntN(1000))), types.TimestampValue(r.Int64N(1 << 40))}
		if r.IntN(5) == 0 {
			row[r.IntN(len(row))] = types.Value{}
		}
		enc := in.Append(nil, row)
		w, err := plain.Decode(enc)
		must(t, err)
		g, err := in.Decode(enc)
		must(t, err)
		if fmt.Sprint(g) != fmt.Sprint(w) || fmt.Sprint(g) != fmt.Sprint(row) {
			t.Fatalf("seed %d, row %d: %v, want %v", seed, i, g, w)
		}
		got, want = append(got, g), append(want, w)
	}
	for i := range got {
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
			t.Fatalf("seed %d: row %d became %v, want %v", seed, i, got[i], want[i])
		}
	}
	_ = append(got[0], types.BigIntValue(-1))
	if fmt.Sprint(got[1]) != fmt.Sprint(want[1]) {
		t.Fatalf("appending to row 0 changed row 1: %v", got[1])
	}
	if _, err := in.Decode(Values{}.Append(nil, []types.Value{types.BigIntValue(1)})); err == nil {
		t.Fatal("a row of 1 value decoded with 4 kinds")
	}
	if cap(arena) != ValuesInBlock || len(arena) != 4*len(got)%ValuesInBlock {
		t.Fatalf("arena block of %d values (cap %d) after %d rows (and a bad one)", len(arena), cap(arena), len(got))
	}
	last := got[len(got)-1]
	if !slices.Equal(arena[len(arena)-4:], last) {
		t.Fatal("the arena's last values are not the last row")
	}
}
