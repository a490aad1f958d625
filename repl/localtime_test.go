package repl

import (
	"testing"
	"time"

	"github.com/weir-sql/weir/types"
)

// TestLocalTimes checks that result views show a TIMESTAMP_LTZ as the
// local time of the session's zone and leave other values alone.
func TestLocalTimes(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zone database")
	}
	b := types.NewBatch(2, 2)
	inst := time.Date(2024, 7, 1, 12, 0, 0, 5e6, time.UTC).UnixMilli() // 08:00 EDT
	b.Append(types.Insert, []types.Value{types.TimestampLTZValue(inst), types.TimestampValue(inst)})
	winter := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC).UnixMilli() // 07:00 EST
	b.Append(types.Insert, []types.Value{types.TimestampLTZValue(winter), types.NullValue()})
	localTimes(b, ny)
	want := []string{"2024-07-01 08:00:00.005", "2024-07-01 12:00:00.005", "2024-01-01 07:00:00.000", "<NULL>"}
	for i, v := range b.Vals {
		if got := cellText(v); got != want[i] {
			t.Errorf("value %d: %s, want %s", i, got, want[i])
		}
	}
}
