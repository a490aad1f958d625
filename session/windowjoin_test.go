package session

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/internal/testseed"
)

// This file runs window joins end to end (CSV files out of order within
// the watermark's delay, so no row is late) at parallelism 1, 2 and 4 and
// compares the output, insert-only, with windows and joins computed here:
// TUMBLE inner, left and full joins, HOP and CUMULATE joins, and semi and
// anti window joins through IN and NOT EXISTS. Late rows are tested on the
// operator (exec/windowjoin_test.go), where the watermark's timing is
// exact.

type wjRow struct {
	k    int64
	null bool // k is NULL
	v    int64
	ts   int64 // ms
}

// writeWindowRows writes n rows in time order, each moved up to 3 s from
// its place (the tables' watermark allows 5 s).
func writeWindowRows(t *testing.T, r *rand.Rand, name string, n int) ([]wjRow, string) {
	t.Helper()
	rows := make([]wjRow, n)
	for i := range rows {
		rows[i] = wjRow{k: int64(r.IntN(6)), null: r.IntN(10) == 0, v: int64(r.IntN(100)), ts: int64(i) * 700}
	}
	for i := range rows { // local disorder
		j := min(len(rows)-1, i+r.IntN(4))
		rows[i], rows[j] = rows[j], rows[i]
	}
	var b strings.Builder
	for _, x := range rows {
		k := ""
		if !x.null {
			k = fmt.Sprint(x.k)
		}
		fmt.Fprintf(&b, "%s,%d,%s\n", k, x.v, time.UnixMilli(x.ts).UTC().Format("2006-01-02 15:04:05.000"))
	}
	path := filepath.Join(t.TempDir(), name+".csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return rows, path
}

// wjWindows returns the [start, end) windows of ts: kind TUMBLE (size),
// HOP (size, slide) or CUMULATE (size, step).
func wjWindows(kind string, size, step, ts int64) [][2]int64 {
	var out [][2]int64
	switch kind {
	case "TUMBLE":
		out = append(out, [2]int64{ts / size * size, ts/size*size + size})
	case "HOP":
		for s := ts / step * step; s > ts-size; s -= step { // ts >= 0
			out = append(out, [2]int64{s, s + size})
		}
	case "CUMULATE":
		p := ts / size * size
		for e := p + step; e <= p+size; e += step {
			if e > ts {
				out = append(out, [2]int64{p, e})
			}
		}
	}
	return out
}

func TestWindowJoinsMatchBatchAnswer(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t), 22))
	left, lpath := writeWindowRows(t, r, "left", 150)
	right, rpath := writeWindowRows(t, r, "right", 150)
	ddl := func(name, path string) string {
		return fmt.Sprintf("CREATE TABLE %s (k INT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');\n", name, path)
	}
	tsText := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000") }
	kText := func(x wjRow) string {
		if x.null {
			return "<NULL>"
		}
		return fmt.Sprint(x.k)
	}
	const null = "<NULL>"
	// join computes the expected rows of a window join of kind (INNER,
	// LEFT, FULL, SEMI, ANTI) with windows of (wkind, size, step).
	join := func(kind, wkind string, size, step int64) map[string]int {
		type wr struct {
			win [2]int64
			x   wjRow
		}
		var ls, rs []wr
		for _, x := range left {
			for _, w := range wjWindows(wkind, size, step, x.ts) {
				ls = append(ls, wr{w, x})
			}
		}
		for _, x := range right {
			for _, w := range wjWindows(wkind, size, step, x.ts) {
				rs = append(rs, wr{w, x})
			}
		}
		out := map[string]int{}
		hit := make([]bool, len(rs))
		for _, l := range ls {
			n := 0
			for j, rr := range rs {
				if l.win == rr.win && !l.x.null && !rr.x.null && l.x.k == rr.x.k {
					n++
					hit[j] = true
					if kind != "SEMI" && kind != "ANTI" {
						out[row(kText(l.x), fmt.Sprint(l.x.v), kText(rr.x), fmt.Sprint(rr.x.v), tsText(l.win[0]), tsText(l.win[1]))]++
					}
				}
			}
			switch {
			case kind == "SEMI" && n > 0, kind == "ANTI" && n == 0:
				out[row(kText(l.x), fmt.Sprint(l.x.v), tsText(l.win[0]), tsText(l.win[1]))]++
			case n == 0 && (kind == "LEFT" || kind == "FULL"):
				out[row(kText(l.x), fmt.Sprint(l.x.v), null, null, tsText(l.win[0]), tsText(l.win[1]))]++
			}
		}
		if kind == "FULL" {
			for j, rr := range rs {
				if !hit[j] {
					out[row(null, null, kText(rr.x), fmt.Sprint(rr.x.v), tsText(rr.win[0]), tsText(rr.win[1]))]++
				}
			}
		}
		return out
	}
	tvf := func(table, wkind string, size, step int64) string {
		switch wkind {
		case "TUMBLE":
			return fmt.Sprintf("(SELECT * FROM TABLE(TUMBLE(TABLE %s, DESCRIPTOR(ts), INTERVAL '%d' SECOND)))", table, size/1000)
		case "HOP":
			return fmt.Sprintf("(SELECT * FROM TABLE(HOP(TABLE %s, DESCRIPTOR(ts), INTERVAL '%d' SECOND, INTERVAL '%d' SECOND)))", table, step/1000, size/1000)
		}
		return fmt.Sprintf("(SELECT * FROM TABLE(CUMULATE(TABLE %s, DESCRIPTOR(ts), INTERVAL '%d' SECOND, INTERVAL '%d' SECOND)))", table, step/1000, size/1000)
	}
	joinQuery := func(kind, wkind string, size, step int64) string {
		return fmt.Sprintf(`SELECT L.k, L.v, R.k, R.v, COALESCE(L.window_start, R.window_start), COALESCE(L.window_end, R.window_end)
			FROM %s L %s JOIN %s R ON L.k = R.k AND L.window_start = R.window_start AND L.window_end = R.window_end`,
			tvf("lt", wkind, size, step), kind, tvf("rt", wkind, size, step))
	}
	const joinCols = "lk INT, lv BIGINT, rk INT, rv BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3)"
	const semiCols = "k INT, v BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3)"
	cases := []struct {
		name, cols, query string
		want              map[string]int
	}{
		{"tumble inner", joinCols, joinQuery("INNER", "TUMBLE", 5000, 0), join("INNER", "TUMBLE", 5000, 0)},
		{"tumble left", joinCols, joinQuery("LEFT", "TUMBLE", 5000, 0), join("LEFT", "TUMBLE", 5000, 0)},
		{"tumble full", joinCols, joinQuery("FULL", "TUMBLE", 5000, 0), join("FULL", "TUMBLE", 5000, 0)},
		{"hop inner", joinCols, joinQuery("INNER", "HOP", 6000, 2000), join("INNER", "HOP", 6000, 2000)},
		{"cumulate left", joinCols, joinQuery("LEFT", "CUMULATE", 8000, 4000), join("LEFT", "CUMULATE", 8000, 4000)},
		{"tumble semi (IN)", semiCols, `SELECT L.k, L.v, L.window_start, L.window_end FROM ` + tvf("lt", "TUMBLE", 5000, 0) + ` L
			WHERE L.k IN (SELECT R.k FROM ` + tvf("rt", "TUMBLE", 5000, 0) + ` R WHERE L.window_start = R.window_start AND L.window_end = R.window_end)`,
			join("SEMI", "TUMBLE", 5000, 0)},
		{"hop anti (NOT EXISTS)", semiCols, `SELECT L.k, L.v, L.window_start, L.window_end FROM ` + tvf("lt", "HOP", 6000, 2000) + ` L
			WHERE NOT EXISTS (SELECT * FROM ` + tvf("rt", "HOP", 6000, 2000) + ` R WHERE L.k = R.k AND L.window_start = R.window_start AND L.window_end = R.window_end)`,
			join("ANTI", "HOP", 6000, 2000)},
	}
	for _, par := range []int{1, 2, 4} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/p%d", c.name, par), func(t *testing.T) {
				src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) + ddl("lt", lpath) + ddl("rt", rpath) +
					"CREATE TABLE out (" + c.cols + ") WITH ('connector' = 'print');\n" +
					"INSERT INTO out " + c.query + ";\n"
				out := runScript(t, src)
				forPrintLines(t, out, func(kind, row string) {
					if kind != "+I" {
						t.Fatalf("window join emitted %s%s", kind, row)
					}
				})
				got := applyChangelog(t, out)
				if !slices.Equal(sortedRows(got), sortedRows(c.want)) {
					var extra, missing []string
					for k, n := range got {
						if c.want[k] < n {
							extra = append(extra, k)
						}
					}
					for k, n := range c.want {
						if got[k] < n {
							missing = append(missing, k)
						}
					}
					t.Fatalf("got %d rows, want %d\n extra: %v\nmissing: %v", len(sortedRows(got)), len(sortedRows(c.want)), extra, missing)
				}
			})
		}
	}
}

// TestJoinWindowExample runs examples/join_window.sql and checks its rows
// against its data files, read and cut into 15-minute windows here.
func TestJoinWindowExample(t *testing.T) {
	src, err := os.ReadFile("../examples/join_window.sql")
	if err != nil {
		t.Fatal(err)
	}
	script := strings.ReplaceAll(string(src), "'examples/data/", "'../examples/data/")
	read := func(name string, tsCol int) (rows [][]string, wins []time.Time) {
		data, err := os.ReadFile("../examples/data/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			f := strings.Split(l, ",")
			ts, err := time.Parse("2006-01-02 15:04:05.000", f[tsCol])
			if err != nil {
				t.Fatal(err)
			}
			rows, wins = append(rows, f), append(wins, ts.Truncate(15*time.Minute))
		}
		return rows, wins
	}
	orders, ow := read("orders.csv", 4)
	visits, vw := read("visits.csv", 2)
	const layout = "2006-01-02 15:04:05.000"
	want := map[string]int{}
	for i, o := range orders {
		start, end := ow[i].Format(layout), ow[i].Add(15*time.Minute).Format(layout)
		n := 0
		for j, v := range visits {
			if v[0] == o[1] && vw[j].Equal(ow[i]) {
				want[row(o[0], o[1], v[1], start, end)]++
				n++
			}
		}
		if n == 0 {
			want[row(o[0], o[1], "<NULL>", start, end)]++
			want[row(o[0], o[1], start)]++
		}
	}
	var lines []string
	for _, l := range strings.Split(runScript(t, script), "\n") {
		if m := printLine.FindStringSubmatch(l); m != nil {
			if m[1] != "+I" {
				t.Fatalf("window join emitted %s", l)
			}
			lines = append(lines, l)
		}
	}
	got := applyChangelog(t, strings.Join(lines, "\n"))
	if !slices.Equal(sortedRows(got), sortedRows(want)) {
		t.Fatalf("got\n%v\nwant\n%v", sortedRows(got), sortedRows(want))
	}
}
