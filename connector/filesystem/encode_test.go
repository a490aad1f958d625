package filesystem

import (
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/types"
)

// TestCSVTimestamps writes TIMESTAMP and TIMESTAMP_LTZ columns of random
// times in time order (runs within a second and jumps, before and after
// 1970) and compares each line with Go's formatting of the instant.
func TestCSVTimestamps(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	for _, zone := range []string{"UTC", "Asia/Kolkata", "America/St_Johns"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Skipf("zone %s: %v", zone, err)
		}
		cols := []types.Column{{Name: "a", Type: types.Timestamp}, {Name: "b", Type: types.Type{Kind: types.KindTimestampLTZ}}}
		e := newCSVEncoder(format{name: formatCSV, delim: ',', quote: '"', loc: loc}, cols)
		b := types.NewBatch(2, 16)
		var want []string
		ms := r.Int63n(4e12) - 2e12
		const layout = "2006-01-02 15:04:05.000"
		for range 3000 {
			switch r.Intn(4) {
			case 0:
				ms += r.Int63n(1e9)
			case 1:
				ms -= r.Int63n(3000)
			default:
				ms += r.Int63n(400)
			}
			b.Append(types.Insert, []types.Value{types.TimestampValue(ms), types.TimestampLTZValue(ms)})
			want = append(want, time.UnixMilli(ms).UTC().Format(layout)+","+time.UnixMilli(ms).In(loc).Format(layout))
		}
		got, err := e.encode(nil, b)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
		for i := range want {
			if lines[i] != want[i] {
				t.Fatalf("seed %d: zone %s: row %d: %q, want %q", seed, zone, i, lines[i], want[i])
			}
		}
	}
}
