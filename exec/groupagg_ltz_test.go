package exec

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// kindRecorder records the final rows of a changelog as text and fails on
// a key value of another kind than want in column col.
type kindRecorder struct {
	t    *testing.T
	col  int
	want types.Kind
	rows []string
}

func (r *kindRecorder) Emit(b *types.Batch) error {
	for i := range b.Len() {
		row := b.Row(i)
		if k := row[r.col].Kind(); k != r.want {
			r.t.Errorf("emitted %s: key column %d is %v, want %v", types.FormatRow(b.Kinds[i], row), r.col, k, r.want)
		}
		r.rows = append(r.rows, types.FormatRow(b.Kinds[i], row))
	}
	return nil
}

// TestGroupAggLTZKeyRestore: GROUP BY a TIMESTAMP_LTZ column (alone, the
// integer fast path, and with a VARCHAR) through a checkpoint and a
// restore, with the groups loaded at once and looked up one by one: the
// keys come back as TIMESTAMP_LTZ (they share TIMESTAMP's encoding) and
// the counts and sums equal a Go model's. Encoding such a key panicked.
func TestGroupAggLTZKeyRestore(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	const base = int64(1_700_000_000_000)
	var batches []*types.Batch
	type agg struct{ n, sum int64 }
	model := map[[2]int64]*agg{} // (ts, s) -> count, sum
	b := types.NewBatch(3, 128)
	for range 6000 {
		if b.Len() == 128 {
			batches = append(batches, b)
			b = types.NewBatch(3, 128)
		}
		ts, s, v := base+r.Int64N(3000)*1000, r.Int64N(3), r.Int64N(100)
		b.Append(types.Insert, []types.Value{types.TimestampLTZValue(ts), types.BigIntValue(v), types.StringValue(fmt.Sprint("s", s))})
		if model[[2]int64{ts, s}] == nil {
			model[[2]int64{ts, s}] = &agg{}
		}
		model[[2]int64{ts, s}].n++
		model[[2]int64{ts, s}].sum += v
	}
	batches = append(batches, b)
	calls := []AggCall{
		{Func: AggCountStar, Arg: -1, Type: types.BigInt},
		{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
	}
	for _, tc := range []struct {
		name   string
		keys   []int
		budget int64
	}{
		{"ltz key, loaded", []int{0}, 64 << 20},
		{"ltz key, looked up", []int{0}, 1},
		{"varchar and ltz key, loaded", []int{2, 0}, 64 << 20},
		{"varchar and ltz key, looked up", []int{2, 0}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]*agg{}
			for k, a := range model {
				key := types.FormatRow(types.Insert, []types.Value{types.TimestampLTZValue(k[0])})[2:]
				if len(tc.keys) == 2 {
					key = types.FormatRow(types.Insert, []types.Value{types.StringValue(fmt.Sprint("s", k[1])), types.TimestampLTZValue(k[0])})[2:]
				}
				if want[key] == nil {
					want[key] = &agg{}
				}
				want[key].n += a.n
				want[key].sum += a.sum
			}
			var wantRows []string
			for key, a := range want {
				wantRows = append(wantRows, fmt.Sprintf("%s, %d, %d]", key[:len(key)-1], a.n, a.sum))
			}
			slices.Sort(wantRows)

			open := func(st *statestore.Store, restored bool, budget int64) *groupAggOp {
				op := NewGroupAgg(tc.keys, calls)().(*groupAggOp)
				if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "agg", ID: "agg", StateBudget: budget}); err != nil {
					t.Fatal(err)
				}
				if err := op.InitState(st, restored); err != nil {
					t.Fatal(err)
				}
				return op
			}
			dir := t.TempDir()
			st := openAggStore(t, filepath.Join(dir, "work"))
			out := &kindRecorder{t: t, col: len(tc.keys) - 1, want: types.KindTimestampLTZ}
			op := open(st, false, 64<<20)
			half := len(batches) / 2
			for _, b := range batches[:half] {
				if err := op.Process(0, b, out); err != nil {
					t.Fatal(err)
				}
			}
			snap := filepath.Join(dir, "snap")
			checkpointAgg(t, op, st, snap)
			st2 := restoreAggStore(t, snap, filepath.Join(dir, "work2"))
			defer st2.Close()
			op2 := open(st2, true, tc.budget)
			if op2.st.Backed() != (tc.budget == 1) {
				t.Fatalf("restored operator backed = %v with budget %d", op2.st.Backed(), tc.budget)
			}
			for _, b := range batches[half:] {
				if err := op2.Process(0, b, out); err != nil {
					t.Fatal(err)
				}
			}
			if err := op2.Finish(out); err != nil {
				t.Fatal(err)
			}
			if got := finalRows(t, out.rows); !slices.Equal(got, wantRows) {
				t.Fatalf("got %d rows, want %d:\n%v\nwant %v", len(got), len(wantRows), got[:min(5, len(got))], wantRows[:min(5, len(wantRows))])
			}
		})
	}
}
