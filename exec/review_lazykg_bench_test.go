package exec

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// BenchmarkReviewGroupAggNewKeys is a GroupAgg whose every row is a new
// BIGINT group (64Ki a cycle) that outlives the checkpoint that ends the
// cycle: the case where a lazy key group (state.Records.AddedInt) is
// computed at the snapshot instead of at the add. Compare instructions
// with cachegrind, base against lazy.
func BenchmarkReviewGroupAggNewKeys(b *testing.B) {
	op := newBenchSum(b)
	dir := b.TempDir()
	st, err := statestore.Open(filepath.Join(dir, "work"), statestore.Options{MaxParallelism: 128})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := op.InitState(st, false); err != nil {
		b.Fatal(err)
	}
	out := &discardEmitter2{}
	bt := types.NewBatch(2, 1024)
	next := int64(0)
	b.ResetTimer()
	for i := range b.N {
		for range 64 {
			bt.Reset()
			for range 1024 {
				bt.Append(types.Insert, []types.Value{types.BigIntValue(next * 7919), types.BigIntValue(1)})
				next++
			}
			if err := op.Process(0, bt, out); err != nil {
				b.Fatal(err)
			}
		}
		if err := op.PrepareSnapshot(); err != nil {
			b.Fatal(err)
		}
		if _, err := st.Snapshot(filepath.Join(dir, fmt.Sprintf("ck%d", i))); err != nil {
			b.Fatal(err)
		}
	}
}
