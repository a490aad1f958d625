package planner

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// This file runs GROUPING SETS, ROLLUP and CUBE end to end at parallelism
// 1, 2 and 4 and checks the results against answers computed here in Go.

type gsRow struct {
	k1 *string
	k2 *int
	v  int
}

func gsInput(seed uint64, n int) []gsRow {
	r := rand.New(rand.NewPCG(seed, 0))
	keys := []string{"a", "b", "c"}
	rows := make([]gsRow, n)
	for i := range rows {
		if x := r.IntN(4); x < 3 {
			rows[i].k1 = &keys[x]
		}
		if x := r.IntN(4); x < 3 {
			rows[i].k2 = &x
		}
		rows[i].v = r.IntN(100) - 20
	}
	return rows
}

func gsValues(rows []gsRow) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		k1, k2 := "CAST(NULL AS VARCHAR)", "CAST(NULL AS INT)"
		if r.k1 != nil {
			k1 = "'" + *r.k1 + "'"
		}
		if r.k2 != nil {
			k2 = fmt.Sprint(*r.k2)
		}
		parts[i] = fmt.Sprintf("(%s, %s, %d)", k1, k2, r.v)
	}
	return "(VALUES " + strings.Join(parts, ", ") + ") AS t(k1, k2, v)"
}

// gsAnswer computes, per grouping set (which of k1, k2 it keeps), the rows
// [k1, k2, GROUPING(k1), GROUPING(k2), GROUPING_ID(k1, k2), COUNT(*), SUM(v)].
func gsAnswer(rows []gsRow, sets [][2]bool) []string {
	var out []string
	for _, set := range sets {
		type agg struct{ n, sum int }
		groups := map[string]*agg{}
		for _, r := range rows {
			k1, k2 := "<NULL>", "<NULL>"
			if set[0] && r.k1 != nil {
				k1 = *r.k1
			}
			if set[1] && r.k2 != nil {
				k2 = fmt.Sprint(*r.k2)
			}
			g1, g2 := 1, 1
			if set[0] {
				g1 = 0
			}
			if set[1] {
				g2 = 0
			}
			key := fmt.Sprintf("%s, %s, %d, %d, %d", k1, k2, g1, g2, g1<<1|g2)
			a := groups[key]
			if a == nil {
				a = &agg{}
				groups[key] = a
			}
			a.n++
			a.sum += r.v
		}
		for k, a := range groups {
			out = append(out, fmt.Sprintf("[%s, %d, %d]", k, a.n, a.sum))
		}
	}
	sort.Strings(out)
	return out
}

func TestGroupingSetsRollupCube(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rows := gsInput(seed, 200)
	from := gsValues(rows)
	sel := "SELECT k1, k2, GROUPING(k1), GROUPING(k2), GROUPING(k1, k2), COUNT(*), SUM(v) FROM " + from + " GROUP BY "
	all := [][2]bool{{true, true}, {true, false}, {false, true}, {false, false}}
	for _, c := range []struct {
		groupBy string
		sets    [][2]bool
	}{
		{"GROUPING SETS ((k1, k2), (k1), ())", [][2]bool{{true, true}, {true, false}, {false, false}}},
		{"GROUPING SETS (k2, (k1, k2))", [][2]bool{{false, true}, {true, true}}},
		{"ROLLUP (k1, k2)", [][2]bool{{true, true}, {true, false}, {false, false}}},
		{"CUBE (k1, k2)", all},
		{"k1, ROLLUP (k2)", [][2]bool{{true, true}, {true, false}}},
		{"GROUPING SETS ((k1, k2), (k2, k1))", [][2]bool{{true, true}, {true, true}}},
	} {
		want := gsAnswer(rows, c.sets)
		for _, par := range []int{1, 2, 4} {
			got := finalRows(runConv(t, sel+c.groupBy, par))
			if !slices.Equal(got, want) {
				t.Errorf("p%d GROUP BY %s:\ngot  %v\nwant %v", par, c.groupBy, got, want)
			}
		}
	}
}

// TestRollupOverUpdatingInput: a ROLLUP over a GROUP BY (an updating
// input whose retractions must undo what they added to every set).
func TestRollupOverUpdatingInput(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rows := gsInput(seed, 150)
	// Inner: per (k1, k2), MAX(v); outer: ROLLUP (k1) of SUM(max), COUNT(*).
	type key struct{ k1, k2 string }
	maxes := map[key]int{}
	for _, r := range rows {
		k := key{"<NULL>", "<NULL>"}
		if r.k1 != nil {
			k.k1 = *r.k1
		}
		if r.k2 != nil {
			k.k2 = fmt.Sprint(*r.k2)
		}
		if m, ok := maxes[k]; !ok || r.v > m {
			maxes[k] = r.v
		}
	}
	type agg struct{ n, sum int }
	per := map[string]*agg{}
	total := &agg{}
	for k, m := range maxes {
		a := per[k.k1]
		if a == nil {
			a = &agg{}
			per[k.k1] = a
		}
		a.n++
		a.sum += m
		total.n++
		total.sum += m
	}
	var want []string
	for k1, a := range per {
		want = append(want, fmt.Sprintf("[%s, 0, %d, %d]", k1, a.n, a.sum))
	}
	want = append(want, fmt.Sprintf("[<NULL>, 1, %d, %d]", total.n, total.sum))
	sort.Strings(want)
	q := "SELECT k1, GROUPING(k1), COUNT(*), SUM(m) FROM (SELECT k1, k2, MAX(v) AS m FROM " + gsValues(rows) +
		" GROUP BY k1, k2) GROUP BY ROLLUP (k1)"
	for _, par := range []int{1, 2, 4} {
		got := finalRows(runConv(t, q, par))
		if !slices.Equal(got, want) {
			t.Errorf("p%d:\ngot  %v\nwant %v", par, got, want)
		}
	}
}

// TestWindowGroupingSets: GROUPING SETS over a TUMBLE window TVF, insert
// only, each window's per-key rows and its total.
func TestWindowGroupingSets(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	dir, rows := writeOverInput(t, seed, 400)
	const size = 10_000
	type agg struct {
		n   int
		sum *int
	}
	groups := map[string]*agg{}
	add := func(key string, v *int) {
		a := groups[key]
		if a == nil {
			a = &agg{}
			groups[key] = a
		}
		a.n++
		if v != nil {
			s := *v
			if a.sum != nil {
				s += *a.sum
			}
			a.sum = &s
		}
	}
	for _, r := range rows {
		ws := r.ts - r.ts%size
		add(fmt.Sprintf("%s, %d, 0", tsText(ws), r.k), r.v)
		add(fmt.Sprintf("%s, <NULL>, 1", tsText(ws)), r.v)
	}
	var want []string
	for k, a := range groups {
		want = append(want, fmt.Sprintf("[%s, %d, %s]", k, a.n, vText(a.sum)))
	}
	sort.Strings(want)
	q := `SELECT window_start, k, GROUPING(k), COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, GROUPING SETS ((k), ())`
	for _, par := range []int{1, 2, 4} {
		got := runInsertOnly(t, dir, q, par)
		if !slices.Equal(got, want) {
			t.Errorf("p%d:\ngot  %v\nwant %v", par, got, want)
		}
	}
}
