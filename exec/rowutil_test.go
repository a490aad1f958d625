package exec

import (
	"testing"

	"github.com/weir-sql/weir/types"
)

func TestAppendRow(t *testing.T) {
	b := types.NewBatch(2, 1)
	for i := range 5 {
		appendRow(b, types.UpdateAfter, []types.Value{types.BigIntValue(int64(i)), types.StringValue("x")})
	}
	if b.Len() != 5 || b.Row(4)[0].Int() != 4 || b.Row(4)[1].Str() != "x" || b.Kinds[4] != types.UpdateAfter {
		t.Fatalf("bad batch %+v", b)
	}
}
