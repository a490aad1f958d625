package exec

import (
	"testing"
	"time"
)

// TestProctimeWindowBoundsWallClock checks that a processing-time window's
// window_start/window_end (TIMESTAMP, as in Flink) are the wall clock of
// the instant in the session time zone, computed here with package time.
func TestProctimeWindowBoundsWallClock(t *testing.T) {
	instant := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC).UnixMilli()
	for _, tc := range []struct {
		zone *time.Location
		wall time.Time
	}{
		{nil, time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)},
		{time.FixedZone("IST", 5*3600+1800), time.Date(2026, 1, 1, 5, 30, 10, 0, time.UTC)},
		{time.FixedZone("PST", -8*3600), time.Date(2025, 12, 31, 16, 0, 10, 0, time.UTC)},
	} {
		v := wallClock(instant, tc.zone)
		if got, want := v.Int(), tc.wall.UnixMilli(); got != want {
			t.Errorf("zone %v: window bound %d ms, want %d (%s)", tc.zone, got, want, tc.wall)
		}
	}
}
