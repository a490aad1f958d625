package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestIntAndBigIntKeysMeet checks that INT and BIGINT keys of equal value
// are one key through the HASH exchange at parallelism 4: one source emits
// INT keys, another BIGINT keys with the same values, and the count per key
// (a single key column, and a two-column key with a VARCHAR) must be one
// row per value, as if every key had one type.
func TestIntAndBigIntKeysMeet(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	var a, b [][]types.Value
	counts := map[string]int64{}
	for range 4000 {
		k := r.Int64N(500) - 250
		s := fmt.Sprint("s", r.IntN(3))
		if r.IntN(2) == 0 {
			a = append(a, []types.Value{types.IntValue(k), types.StringValue(s)})
		} else {
			b = append(b, []types.Value{types.BigIntValue(k), types.StringValue(s)})
		}
		counts[fmt.Sprint(k, "/", s)]++
	}
	for _, tc := range []struct {
		name string
		keys []int
	}{{"one column", []int{0}}, {"two columns", []int{1, 0}}} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]int64{}
			for ks, n := range counts {
				var k int64
				var s string
				if _, err := fmt.Sscanf(ks, "%d/%s", &k, &s); err != nil {
					t.Fatal(err)
				}
				key := fmt.Sprint(k)
				if len(tc.keys) == 2 {
					key = s + ", " + key
				}
				want[key] += n
			}
			var wantRows []string
			for k, n := range want {
				wantRows = append(wantRows, fmt.Sprintf("[%s, %d]", k, n))
			}
			slices.Sort(wantRows)
			sink := &collectSink{}
			g := &JobGraph{Name: "meet", Vertices: []*Vertex{
				{Name: "A", Parallelism: 2, Source: &sliceSource{width: 2, rows: a}, SourceWidth: 2},
				{Name: "B", Parallelism: 3, Source: &sliceSource{width: 2, rows: b}, SourceWidth: 2},
				{Name: "Count", Parallelism: 4,
					Inputs: []Input{
						{From: 0, Partition: Partitioning{Kind: Hash, Keys: tc.keys}},
						{From: 1, Partition: Partitioning{Kind: Hash, Keys: tc.keys}},
					},
					Operators: []OperatorSpec{{Name: "GroupAggregate", OutWidth: len(tc.keys) + 1, New: NewGroupAgg(tc.keys,
						[]AggCall{{Func: AggCountStar, Arg: -1, Type: types.BigInt}})}}},
				{Name: "Sink", Parallelism: 1, Inputs: []Input{{From: 2, Partition: Partitioning{Kind: Global}}}, Sink: sink},
			}}
			runJob(t, g, Options{BatchSize: 64})
			if got := applyChangelog(t, sink.rows); !slices.Equal(got, wantRows) {
				t.Fatalf("got %d rows, want %d (one per value):\n%v\nwant %v", len(got), len(wantRows), got, wantRows)
			}
		})
	}
}
