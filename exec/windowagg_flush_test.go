package exec

import (
	"testing"

	"github.com/weir-sql/weir/types"
)

// partialCounter counts a local window aggregate's partial rows per slice
// end.
type partialCounter struct {
	perSlice map[int64]int
	rows     int
}

func (c *partialCounter) Emit(b *types.Batch) error {
	for i := range b.Len() {
		c.perSlice[b.Row(i)[1].Int()]++
		c.rows++
	}
	return nil
}

// TestLocalWindowFlushesBehindNewestSlice feeds a local TUMBLE aggregate
// rows in time order over many slices with no watermark at all: each slice
// goes out, once per key, as soon as rows of the next slice come, so the
// operator holds at most two slices' groups (before this it held every
// slice until the watermark or its group bound). Then a row one slice
// behind the newest comes: from then on the operator keeps the slice
// before the newest too, and the late row's slice is not sent twice.
func TestLocalWindowFlushesBehindNewestSlice(t *testing.T) {
	calls := windowTestCalls(t)[:2]
	spec := WindowSpec{Kind: WindowTumble, Size: 100, TimeCol: 2}
	l := NewLocalWindowAgg([]int{0}, spec, calls)().(*localWindowAggOp)
	if err := l.Open(&OpContext{MaxParallelism: 128, Name: "local"}); err != nil {
		t.Fatal(err)
	}
	const keys, nslices, perSlice = 50, 40, 500
	out := &partialCounter{perSlice: map[int64]int{}}
	b := types.NewBatch(3, 64)
	maxHeld := 0
	send := func() {
		if err := l.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		maxHeld = max(maxHeld, l.held)
		b.Reset()
	}
	for i := range nslices * perSlice {
		ts := int64(i) * 100 / perSlice
		b.Append(types.Insert, []types.Value{types.BigIntValue(int64(i % keys)), types.BigIntValue(1), types.TimestampValue(ts)})
		if b.Len() == 64 {
			send()
		}
	}
	send()
	if maxHeld > 2*keys {
		t.Errorf("held %d groups at most, want at most two slices' (%d)", maxHeld, 2*keys)
	}
	// Every slice but the newest went out, each key once.
	for s := int64(1); s < nslices; s++ {
		if n := out.perSlice[s*100]; n != keys {
			t.Errorf("slice ending at %d: %d partial rows, want %d", s*100, n, keys)
		}
	}
	if n := out.perSlice[nslices*100]; n != 0 {
		t.Errorf("the newest slice sent %d partial rows before it was complete", n)
	}
	// A row one slice behind the newest (its slice went out already: it
	// goes out again, as a second partial).
	b.Append(types.Insert, []types.Value{types.BigIntValue(0), types.BigIntValue(1), types.TimestampValue((nslices-2)*100 + 5)})
	send()
	if l.reach != 1 {
		t.Fatalf("reach %d after a row one slice behind, want 1", l.reach)
	}
	// Rows of the next slice: the slice before it is kept now.
	for k := range keys {
		b.Append(types.Insert, []types.Value{types.BigIntValue(int64(k)), types.BigIntValue(1), types.TimestampValue(nslices*100 + 1)})
	}
	send()
	if n := out.perSlice[nslices*100]; n != 0 {
		t.Errorf("with rows one slice behind, the slice before the newest went out early (%d partial rows)", n)
	}
	if err := l.Finish(out); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range out.perSlice {
		total += n
	}
	// One partial per key and slice, plus the one late row's second partial.
	if want := keys*(nslices+1) + 1; total != want {
		t.Errorf("%d partial rows in all, want %d", total, want)
	}
}
