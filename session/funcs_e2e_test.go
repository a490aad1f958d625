package session

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAggregateFilterMatchesBatchAnswer runs aggregates with FILTER
// (WHERE ...), COUNT(DISTINCT ...) FILTER among them (Nexmark q15), at
// parallelism 1, 2 and 4, and compares the final rows with an answer
// computed here.
func TestAggregateFilterMatchesBatchAnswer(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rows, path := writeOrders(t, 3000, seed)
	type st struct {
		pos      int64
		negNames map[string]bool
		annSum   int64
		annN     int64
	}
	groups := map[int64]*st{}
	for _, o := range rows {
		g := groups[o.k]
		if g == nil {
			g = &st{negNames: map[string]bool{}}
			groups[o.k] = g
		}
		if !o.null && o.v > 0 {
			g.pos++
		}
		if !o.null && o.v < 0 {
			g.negNames[o.name] = true
		}
		if !o.null && o.name == "ann" {
			g.annSum += o.v
			g.annN++
		}
	}
	var want []string
	for k, g := range groups {
		want = append(want, fmt.Sprintf("[%d, %d, %d, %s]", k, g.pos, len(g.negNames), nullable(g.annN > 0, g.annSum)))
	}
	sort.Strings(want)
	for _, par := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("p%d", par), func(t *testing.T) {
			src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) + fmt.Sprintf(ordersDDL, path) +
				"CREATE TABLE out_t (k BIGINT, p BIGINT, n BIGINT, s BIGINT) WITH ('connector' = 'print');\n" +
				"INSERT INTO out_t SELECT k, COUNT(*) FILTER (WHERE v > 0), COUNT(DISTINCT name) FILTER (WHERE v < 0), " +
				"SUM(v) FILTER (WHERE name = 'ann') FROM orders GROUP BY k;\n"
			got := sortedRows(applyChangelog(t, runScript(t, src)))
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("result differs from the batch answer\ngot  %d rows: %v\nwant %d rows: %v", len(got), head(got), len(want), head(want))
			}
		})
	}
}

// TestNewAggregatesOverUpdatingInput runs the new aggregates over the
// updating result of another aggregate (their input has -U/+U), at
// parallelism 1 and 4, and compares the final rows with an answer
// computed here: variances within 1e-6, LISTAGG's pieces as a multiset
// (their order is the order of arrival), FIRST_VALUE one of the values.
func TestNewAggregatesOverUpdatingInput(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rows, path := writeOrders(t, 3000, seed)
	// Inner: SUM(v) per (name, k) over non-NULL v; outer: per name.
	sums := map[string]map[int64]int64{}
	for _, o := range rows {
		if o.null {
			continue
		}
		if sums[o.name] == nil {
			sums[o.name] = map[int64]int64{}
		}
		sums[o.name][o.k] += o.v
	}
	for _, par := range []int{1, 4} {
		t.Run(fmt.Sprintf("p%d", par), func(t *testing.T) {
			src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) + fmt.Sprintf(ordersDDL, path) +
				"CREATE TABLE out_t (name STRING, sp DOUBLE, vs DOUBLE, band BOOLEAN, bor BOOLEAN, ks STRING, fv BIGINT) WITH ('connector' = 'print');\n" +
				"INSERT INTO out_t SELECT name, STDDEV_POP(CAST(s AS DOUBLE)), VAR_SAMP(CAST(s AS DOUBLE)), BOOL_AND(s > -500), BOOL_OR(s > 300), " +
				"LISTAGG(CAST(k AS STRING), ';'), FIRST_VALUE(s) FROM (SELECT name, k, SUM(v) AS s FROM orders WHERE v IS NOT NULL GROUP BY name, k) GROUP BY name;\n"
			got := applyChangelog(t, runScript(t, src))
			if len(got) != len(sums) {
				t.Fatalf("got %d rows, want %d: %v", len(got), len(sums), sortedRows(got))
			}
			for row := range got {
				f := strings.Split(strings.Trim(row, "[]"), ", ")
				if len(f) != 7 {
					t.Fatalf("row %s: want 7 fields", row)
				}
				ks := sums[f[0]]
				if ks == nil {
					t.Fatalf("row %s: unknown name", row)
				}
				var vals []float64
				var keys []string
				band, bor := true, false
				present := map[string]bool{}
				for k, s := range ks {
					vals = append(vals, float64(s))
					keys = append(keys, strconv.FormatInt(k, 10))
					band = band && s > -500
					bor = bor || s > 300
					present[strconv.FormatInt(s, 10)] = true
				}
				n := float64(len(vals))
				mean := 0.0
				for _, v := range vals {
					mean += v
				}
				mean /= n
				ss := 0.0
				for _, v := range vals {
					ss += (v - mean) * (v - mean)
				}
				checkFloat(t, row, f[1], math.Sqrt(ss/n))
				if len(vals) > 1 {
					checkFloat(t, row, f[2], ss/(n-1))
				} else if f[2] != "<NULL>" {
					t.Errorf("row %s: VAR_SAMP of one value, want <NULL>", row)
				}
				if f[3] != strconv.FormatBool(band) || f[4] != strconv.FormatBool(bor) {
					t.Errorf("row %s: BOOL_AND, BOOL_OR want %v, %v", row, band, bor)
				}
				gotKeys := strings.Split(f[5], ";")
				sort.Strings(gotKeys)
				sort.Strings(keys)
				if strings.Join(gotKeys, ";") != strings.Join(keys, ";") {
					t.Errorf("row %s: LISTAGG pieces %v, want %v", row, gotKeys, keys)
				}
				if !present[f[6]] {
					t.Errorf("row %s: FIRST_VALUE %s is none of the sums present", row, f[6])
				}
			}
		})
	}
}

func checkFloat(t *testing.T, row, got string, want float64) {
	t.Helper()
	g, err := strconv.ParseFloat(got, 64)
	if err != nil || math.Abs(g-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("row %s: %s, want %v", row, got, want)
	}
}
