package session

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestProctimeWindowTVFRows selects the rows of processing-time TUMBLE
// and HOP window TVFs (no aggregation): every input row comes out once per
// window (1 TUMBLE, 2 HOP windows), each window of the TVF's size, aligned
// to its slide, and containing a time of the clock between the run's
// start and end.
func TestProctimeWindowTVFRows(t *testing.T) {
	const n = 50
	for _, tc := range []struct {
		tvf         string
		size, slide time.Duration
		per         int
	}{
		{"TUMBLE(TABLE t, DESCRIPTOR(pt), INTERVAL '1' HOUR)", time.Hour, time.Hour, 1},
		{"HOP(TABLE t, DESCRIPTOR(pt), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)", 2 * time.Minute, time.Minute, 2},
	} {
		t.Run(tc.tvf[:strings.IndexByte(tc.tvf, '(')], func(t *testing.T) {
			before := time.Now().UTC()
			out := runScript(t, fmt.Sprintf(`SET 'parallelism.default' = '2';
SET 'table.local-time-zone' = 'UTC';
CREATE TABLE t (n BIGINT, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '%d');
CREATE TABLE o (n BIGINT, ws TIMESTAMP_LTZ(3), we TIMESTAMP_LTZ(3), wt TIMESTAMP_LTZ(3)) WITH ('connector' = 'print');
INSERT INTO o SELECT n, window_start, window_end, window_time FROM TABLE(%s);
`, n, tc.tvf))
			after := time.Now().UTC()
			count := map[string]int{}
			forPrintLines(t, out, func(kind, row string) {
				if kind != "+I" {
					t.Fatalf("%s%s: want insert-only", kind, row)
				}
				f := strings.Split(strings.Trim(row, "[]"), ", ")
				const layout = "2006-01-02 15:04:05.000"
				ws, err1 := time.Parse(layout, f[1])
				we, err2 := time.Parse(layout, f[2])
				wt, err3 := time.Parse(layout, f[3])
				if err1 != nil || err2 != nil || err3 != nil {
					t.Fatalf("row %s: %v %v %v", row, err1, err2, err3)
				}
				if we.Sub(ws) != tc.size || ws.Truncate(tc.slide) != ws || wt != we.Add(-time.Millisecond) {
					t.Fatalf("row %s: not a window of size %s aligned to %s", row, tc.size, tc.slide)
				}
				// The clock read when assigning lies in [before, after] and
				// in [ws, we).
				if !we.After(before.Truncate(time.Millisecond)) || ws.After(after) {
					t.Fatalf("row %s: window outside the run [%s, %s]", row, before, after)
				}
				count[f[0]]++
			})
			if len(count) != n {
				t.Fatalf("%d distinct rows, want %d", len(count), n)
			}
			for k, c := range count {
				if c != tc.per {
					t.Fatalf("row %s came %d times, want %d", k, c, tc.per)
				}
			}
		})
	}
}
