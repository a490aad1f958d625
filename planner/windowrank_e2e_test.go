package planner

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"
)

// This file runs window Top-N and window deduplication end to end at
// parallelism 1, 2 and 4 and checks the rows against answers computed here.

func tsText(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000") }

// winRow is a row in one window: the window's start and end.
type winRow struct {
	r      rankRow
	ws, we int64
}

// windowsOf assigns rows to HOP windows of size and slide (TUMBLE: slide
// = size), per key.
func windowsOf(rows []rankRow, size, slide int64) map[[3]int64][]winRow {
	out := map[[3]int64][]winRow{}
	for _, r := range rows {
		for ws := r.ts - r.ts%slide - size + slide; ws <= r.ts; ws += slide {
			if ws+size <= r.ts {
				continue
			}
			k := [3]int64{int64(r.k), ws, ws + size}
			out[k] = append(out[k], winRow{r, ws, ws + size})
		}
	}
	return out
}

// runInsertOnly runs query as runRankQuery does and fails unless its
// output is insert-only (each window's rows emitted once).
func runInsertOnly(t *testing.T, dir, query string, par int) []string {
	t.Helper()
	log := runRankLog(t, dir, query, par)
	for _, r := range log {
		if r[:2] != "+I" {
			t.Fatalf("at parallelism %d: %s in the output of %s: want insert-only", par, r, query)
		}
	}
	return finalRows(log)
}

// cumulateOf assigns rows to CUMULATE windows of max size and step, per key.
func cumulateOf(rows []rankRow, size, step int64) map[[3]int64][]winRow {
	out := map[[3]int64][]winRow{}
	for _, r := range rows {
		p := r.ts - r.ts%size
		for we := p + step; we <= p+size; we += step {
			if we > r.ts {
				k := [3]int64{int64(r.k), p, we}
				out[k] = append(out[k], winRow{r, p, we})
			}
		}
	}
	return out
}

func TestWindowTopN(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	dir, rows := writeOverInput(t, seed, 500)
	vDescNullsLast := func(a, b winRow) int {
		return cmp.Or(-nullsLow(a.r.v, b.r.v), cmp.Compare(a.r.id, b.r.id)) // arrival order = id
	}
	for _, par := range []int{1, 2, 4} {
		// TUMBLE, ROW_NUMBER with the rank output.
		got := runInsertOnly(t, dir, `SELECT k, id, window_start, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY v DESC) AS rn FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))) WHERE rn <= 3`, par)
		var want []string
		for key, ws := range windowsOf(rows, 10000, 10000) {
			slices.SortFunc(ws, vDescNullsLast)
			for i, w := range ws[:min(3, len(ws))] {
				want = append(want, fmt.Sprintf("[%d, %d, %s, %d]", key[0], w.r.id, tsText(w.ws), i+1))
			}
		}
		checkRows(t, "TUMBLE Top-3 (ROW_NUMBER)", par, got, sortedLines(want))

		// HOP, RANK without the rank output, no other partition key.
		got = runInsertOnly(t, dir, `SELECT id, window_end FROM (SELECT *, RANK() OVER (PARTITION BY window_start, window_end ORDER BY k ASC) AS r FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))) WHERE r <= 2`, par)
		want = nil
		per := map[[2]int64][]winRow{}
		for key, ws := range windowsOf(rows, 10000, 5000) {
			per[[2]int64{key[1], key[2]}] = append(per[[2]int64{key[1], key[2]}], ws...)
		}
		for _, ws := range per {
			slices.SortFunc(ws, func(a, b winRow) int { return cmp.Compare(a.r.k, b.r.k) })
			rank := 0
			for i, w := range ws {
				if i == 0 || ws[i-1].r.k != w.r.k {
					rank = i + 1
				}
				if rank <= 2 {
					want = append(want, fmt.Sprintf("[%d, %s]", w.r.id, tsText(w.we)))
				}
			}
		}
		checkRows(t, "HOP RANK <= 2", par, got, sortedLines(want))

		// Window deduplication: first and last row per key and window by ts.
		for _, desc := range []bool{false, true} {
			order := "ASC"
			if desc {
				order = "DESC"
			}
			got = runInsertOnly(t, dir, `SELECT k, id, window_start FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts `+order+`) AS rn FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))) WHERE rn = 1`, par)
			want = nil
			for key, ws := range windowsOf(rows, 10000, 10000) {
				best := ws[0]
				for _, w := range ws[1:] {
					if (!desc && w.r.ts < best.r.ts) || (desc && w.r.ts >= best.r.ts) {
						best = w
					}
				}
				want = append(want, fmt.Sprintf("[%d, %d, %s]", key[0], best.r.id, tsText(best.ws)))
			}
			checkRows(t, "window deduplication ORDER BY ts "+order, par, got, sortedLines(want))
		}

		// CUMULATE, the best row per key and window (ROW_NUMBER = 1 with the rank).
		got = runInsertOnly(t, dir, `SELECT k, id, window_end, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY v DESC) AS rn FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '20' SECOND))) WHERE rn = 1`, par)
		want = nil
		for key, ws := range cumulateOf(rows, 20000, 5000) {
			slices.SortFunc(ws, vDescNullsLast)
			want = append(want, fmt.Sprintf("[%d, %d, %s, 1]", key[0], ws[0].r.id, tsText(ws[0].we)))
		}
		checkRows(t, "CUMULATE Top-1 (ROW_NUMBER)", par, got, sortedLines(want))

		// Top-2 keys by count per TUMBLE window, over a window aggregate.
		got = runInsertOnly(t, dir, `SELECT window_start, k, c, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY c DESC, k ASC) AS rn FROM (SELECT window_start, window_end, k, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k)) WHERE rn <= 2`, par)
		want = nil
		counts := map[int64]map[int]int{}
		for key, ws := range windowsOf(rows, 10000, 10000) {
			if counts[key[1]] == nil {
				counts[key[1]] = map[int]int{}
			}
			counts[key[1]][int(key[0])] = len(ws)
		}
		for ws, m := range counts {
			var ks []int
			for k := range m {
				ks = append(ks, k)
			}
			slices.SortFunc(ks, func(a, b int) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
			for i, k := range ks[:min(2, len(ks))] {
				want = append(want, fmt.Sprintf("[%s, %d, %d, %s]", tsText(ws), k, m[k], strconv.Itoa(i+1)))
			}
		}
		checkRows(t, "Top-2 over a TUMBLE window aggregate", par, got, sortedLines(want))
	}
}
