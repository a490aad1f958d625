package planner

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// This file runs OVER aggregates over updating input, and over
// insert-only input ordered by a plain column, end to end at parallelism
// 1, 2 and 4, and checks that the changelog, applied, equals the batch
// OVER over the final input, computed here in Go. Rows of equal sort key
// are ordered by their values (the operator's tie-break).

// overUpdRow is one row of the OVER's input: partition k, sort value s
// (nil: NULL), the aggregated value a, and the columns that break ties.
type overUpdRow struct {
	k   int
	s   *int
	a   int
	tie []int
}

// overBatch computes each row's aggregate over its frame (the rows
// lo(i) to i, or for RANGE UNBOUNDED all rows with a sort key not after
// its own) per partition, rows sorted by cmpRow.
func overBatch(rows []overUpdRow, cmpRow func(a, b overUpdRow) int, rangeMode bool, n int,
	agg func(fr []overUpdRow) string, text func(r overUpdRow, agg string) string) []string {
	per := map[int][]overUpdRow{}
	for _, r := range rows {
		per[r.k] = append(per[r.k], r)
	}
	var out []string
	for _, rs := range per {
		slices.SortFunc(rs, cmpRow)
		for i, r := range rs {
			var fr []overUpdRow
			switch {
			case rangeMode:
				for _, q := range rs {
					if nullsLow(q.s, r.s) <= 0 {
						fr = append(fr, q)
					}
				}
			case n < 0:
				fr = rs[:i+1]
			default:
				fr = rs[max(0, i-n) : i+1]
			}
			out = append(out, text(r, agg(fr)))
		}
	}
	return sortedLines(out)
}

// applyStrict applies a changelog and fails on a retraction of a row that
// is not there.
func applyStrict(t *testing.T, log []string) []string {
	t.Helper()
	count := map[string]int{}
	for _, r := range log {
		body := r[2:]
		if strings.HasPrefix(r, "+I") || strings.HasPrefix(r, "+U") {
			count[body]++
		} else {
			if count[body] == 0 {
				t.Fatalf("changelog retracts %s, which is not there", r)
			}
			count[body]--
		}
	}
	var out []string
	for body, n := range count {
		for range n {
			out = append(out, body)
		}
	}
	slices.Sort(out)
	return out
}

func sumA(fr []overUpdRow) string {
	s := 0
	for _, r := range fr {
		s += r.a
	}
	return strconv.Itoa(s)
}

func TestOverUpdatingInput(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	dir, rows := writeRankInput(t, seed, 500)

	// Over a grouped aggregate (its counts update): ordered by the count
	// (ties), ties by the row (k, v, c): v with NULLs first.
	type kv struct {
		k int
		v string
	}
	counts := map[kv]int{}
	vals := map[kv]*int{}
	for _, r := range rows {
		g := kv{r.k, vText(r.v)}
		counts[g]++
		vals[g] = r.v
	}
	var groups []overUpdRow
	for g, c := range counts {
		groups = append(groups, overUpdRow{k: g.k, s: &c, a: c, tie: tieOf(vals[g])})
	}
	byCountThenV := func(a, b overUpdRow) int {
		return cmp.Or(cmp.Compare(*a.s, *b.s), slices.Compare(a.tie, b.tie))
	}
	groupText := func(r overUpdRow, agg string) string {
		return fmt.Sprintf("[%d, %s, %d, %s]", r.k, tieText(r.tie), r.a, agg)
	}
	// Over a Top-N (the 4 highest ids per k: rows leave with -D), ordered
	// by v (ties, NULLs), ties by id.
	per := byKey(rows)
	var top []overUpdRow
	for k, rs := range per {
		rs = slices.Clone(rs)
		slices.SortFunc(rs, func(a, b rankRow) int { return cmp.Compare(b.id, a.id) })
		for _, r := range rs[:min(4, len(rs))] {
			top = append(top, overUpdRow{k: k, s: r.v, a: r.id, tie: []int{r.id}})
		}
	}
	byV := func(a, b overUpdRow) int {
		return cmp.Or(nullsLow(a.s, b.s), slices.Compare(a.tie, b.tie))
	}
	topText := func(r overUpdRow, agg string) string {
		return fmt.Sprintf("[%d, %s, %d, %s]", r.k, vText(r.s), r.a, agg)
	}
	// Insert-only input ordered by v DESC (NULLs last), ties by id.
	var all []overUpdRow
	for _, r := range rows {
		all = append(all, overUpdRow{k: r.k, s: r.v, a: r.id, tie: []int{r.id}})
	}
	byVDesc := func(a, b overUpdRow) int {
		return cmp.Or(-nullsLow(a.s, b.s), slices.Compare(a.tie, b.tie))
	}

	for _, par := range []int{1, 2, 4} {
		got := applyStrict(t, runRankLog(t, dir, `SELECT k, v, c, SUM(c) OVER (PARTITION BY k ORDER BY c ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM (SELECT k, v, COUNT(*) AS c FROM t GROUP BY k, v)`, par))
		checkRows(t, "SUM OVER ROWS 2 PRECEDING over GROUP BY", par, got, overBatch(groups, byCountThenV, false, 2, sumA, groupText))

		got = applyStrict(t, runRankLog(t, dir, `SELECT k, v, c, COUNT(*) OVER (PARTITION BY k ORDER BY c) FROM (SELECT k, v, COUNT(*) AS c FROM t GROUP BY k, v)`, par))
		checkRows(t, "COUNT(*) OVER RANGE UNBOUNDED over GROUP BY", par, got, overBatch(groups, byCountThenV, true, 0,
			func(fr []overUpdRow) string { return strconv.Itoa(len(fr)) }, groupText))

		got = applyStrict(t, runRankLog(t, dir, `SELECT k, v, id, SUM(id) OVER (PARTITION BY k ORDER BY v ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM (SELECT k, v, id FROM (SELECT k, v, id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY id DESC) AS rn FROM t) WHERE rn <= 4)`, par))
		checkRows(t, "SUM OVER ROWS 1 PRECEDING over a Top-N (deletes)", par, got, overBatch(top, byV, false, 1, sumA, topText))

		// The same with a column before the others that nothing reads:
		// pruned below the OVER, whose partition, order and argument move.
		got = applyStrict(t, runRankLog(t, dir, `SELECT k, v, id, SUM(id) OVER (PARTITION BY k ORDER BY v ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM (SELECT id * 3 AS unread, k, v, id FROM (SELECT k, v, id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY id DESC) AS rn FROM t) WHERE rn <= 4)`, par))
		checkRows(t, "SUM OVER ROWS 1 PRECEDING over a Top-N, an unread column pruned", par, got, overBatch(top, byV, false, 1, sumA, topText))

		got = applyStrict(t, runRankLog(t, dir, `SELECT k, v, id, MAX(id) OVER (PARTITION BY k ORDER BY v DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM (SELECT k, v, id FROM t)`, par))
		checkRows(t, "MAX OVER ROWS UNBOUNDED, ORDER BY v DESC, insert-only", par, got, overBatch(all, byVDesc, false, -1, func(fr []overUpdRow) string {
			m := fr[0].a
			for _, r := range fr {
				m = max(m, r.a)
			}
			return strconv.Itoa(m)
		}, topText))
	}
}

// tieOf is v as a tie-break key: NULL first.
func tieOf(v *int) []int {
	if v == nil {
		return []int{0}
	}
	return []int{1, *v}
}

func tieText(tie []int) string {
	if tie[0] == 0 {
		return "<NULL>"
	}
	return strconv.Itoa(tie[1])
}
