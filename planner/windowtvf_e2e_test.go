package planner

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// This file runs the rows of window TVFs (no aggregation) end to end at
// parallelism 1, 2 and 4 against answers computed here.

func TestWindowTVFRows(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	dir, rows := writeOverInput(t, seed, 300)
	answer := func(wins map[[3]int64][]winRow) []string {
		var out []string
		for _, ws := range wins {
			for _, w := range ws {
				out = append(out, fmt.Sprintf("[%d, %d, %s, %s, %s]", w.r.id, w.r.k, tsText(w.ws), tsText(w.we), tsText(w.we-1)))
			}
		}
		sort.Strings(out)
		return out
	}
	for _, c := range []struct {
		tvf  string
		want []string
	}{
		{"TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)", answer(windowsOf(rows, 10_000, 10_000))},
		{"HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)", answer(windowsOf(rows, 15_000, 5_000))},
		{"CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '4' SECOND, INTERVAL '12' SECOND)", answer(cumulateOf(rows, 12_000, 4_000))},
	} {
		q := "SELECT id, k, window_start, window_end, window_time FROM TABLE(" + c.tvf + ")"
		for _, par := range []int{1, 2, 4} {
			got := runInsertOnly(t, dir, q, par)
			if !slices.Equal(got, c.want) {
				t.Errorf("p%d %s: got %d rows, want %d\ngot  %v\nwant %v", par, c.tvf, len(got), len(c.want), got, c.want)
			}
		}
	}
}

// TestWindowTVFRowsCascade: a window aggregate over the window_time of a
// window TVF's rows (a time attribute).
func TestWindowTVFRowsCascade(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	dir, rows := writeOverInput(t, seed, 300)
	counts := map[int64]int{}
	for _, r := range rows {
		wt := r.ts - r.ts%5_000 + 5_000 - 1 // the inner TUMBLE's window_time
		counts[wt-wt%20_000]++
	}
	var want []string
	for ws, n := range counts {
		want = append(want, fmt.Sprintf("[%s, %d]", tsText(ws), n))
	}
	sort.Strings(want)
	q := `WITH w AS (SELECT k, window_time AS wt FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND)))
SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE w, DESCRIPTOR(wt), INTERVAL '20' SECOND)) GROUP BY window_start, window_end`
	for _, par := range []int{1, 2, 4} {
		got := runInsertOnly(t, dir, q, par)
		if !slices.Equal(got, want) {
			t.Errorf("p%d:\ngot  %v\nwant %v", par, got, want)
		}
	}
}
