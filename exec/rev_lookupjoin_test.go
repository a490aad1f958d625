package exec

import (
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// TestLookupJoinReloadSwitchesIndex: reloads driven by the task clock
// (OpContext.Clock, no spec.Now) rebuild the index each time, also when
// the table's keys change from integers to text and back: a key gone
// from the table stops matching, a new one matches, and a BIGINT left key
// never matches a VARCHAR table key of the same digits.
func TestLookupJoinReloadSwitchesIndex(t *testing.T) {
	i, s := types.IntValue, types.StringValue
	versions := [][][]types.Value{
		{{i(1), s("a")}, {i(2), s("b")}, {i(-7), s("n")}},
		{{i(2), s("c")}, {i(3), s("d")}, {i(2), s("c2")}},
		{{s("2"), s("e")}},
		{{types.Value{}, s("null")}, {i(3), s("f")}},
	}
	want := [][]string{ // per version: the matches of left keys 1, 2, 3, -7
		{"1a", "2b", "-7n"},
		{"2c", "2c2", "3d"},
		nil,
		{"3f"},
	}
	version := 0
	now := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC) // ahead of the wall clock: a reload by time.Now never comes
	spec := LookupJoinSpec{Type: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 1, RightWidth: 2,
		SourceWidth: 2, Reload: time.Minute, Table: "t",
		Open: func() (connector.Source, error) { return &sliceSource{width: 2, rows: versions[version]}, nil }}
	op := NewLookupJoin(spec)().(*lookupJoinOp)
	if err := op.Open(&OpContext{MaxParallelism: 128, Clock: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	for v := range versions {
		if v > 0 {
			version = v
			now = now.Add(time.Minute) // the reload is due
		}
		out := &rowsEmitter{}
		b := types.NewBatch(1, 4)
		for _, k := range []int64{1, 2, 3, -7} {
			b.Append(types.Insert, []types.Value{types.BigIntValue(k)})
		}
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		if err := op.Finish(out); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, row := range out.rows {
			got = append(got, row[0].String()+row[2].Str())
		}
		if !slices.Equal(got, want[v]) {
			t.Fatalf("table version %d: got %v, want %v", v, got, want[v])
		}
	}
}
