package session

import (
	"context"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// TestGroupingSetsExample runs examples/grouping_sets.sql and checks its
// three sinks against answers computed here from examples/data/orders.csv:
// the ROLLUP subtotals, the hourly GROUPING SETS and the HOP TVF's rows.
func TestGroupingSetsExample(t *testing.T) {
	src, err := os.ReadFile("../examples/grouping_sets.sql")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../examples/data/orders.csv")
	if err != nil {
		t.Fatal(err)
	}
	const layout = "2006-01-02 15:04:05.000"
	type agg struct {
		n     int
		total float64
	}
	rollup := map[string]*agg{}
	add := func(key string, amount float64) {
		a := rollup[key]
		if a == nil {
			a = &agg{}
			rollup[key] = a
		}
		a.n++
		a.total += amount
	}
	hourly := map[string]int{}
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(l, ",")
		amount, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := time.Parse(layout, f[4])
		if err != nil {
			t.Fatal(err)
		}
		add(row(f[1], f[2], "detail"), amount)
		add(row(f[1], "<NULL>", "customer"), amount)
		add(row("<NULL>", "<NULL>", "all"), amount)
		hour := ts.Truncate(time.Hour).Format(layout)
		hourly[row(hour, f[2], "0")]++
		hourly[row(hour, "<NULL>", "1")]++
		for ws := ts.Truncate(15 * time.Minute).Add(-15 * time.Minute); !ws.After(ts); ws = ws.Add(15 * time.Minute) {
			if ws.Add(30 * time.Minute).After(ts) {
				rows = append(rows, row(f[0], ws.Format(layout), ws.Add(30*time.Minute).Format(layout)))
			}
		}
	}
	var wantHourly []string
	for k, n := range hourly {
		wantHourly = append(wantHourly, strings.TrimSuffix(k, "]")+", "+strconv.Itoa(n)+"]")
	}
	sort.Strings(wantHourly)
	sort.Strings(rows)

	script := strings.ReplaceAll(string(src), "'examples/data/", "'../examples/data/")
	// Three INSERT jobs print concurrently: a locked buffer.
	var stdout, stderr lockedBuffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	if err := s.RunScript(context.Background(), script, RunOptions{JobName: t.Name(), Quiet: true, Exec: exec.Options{BatchSize: 64}}); err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, stderr.String())
	}
	out := stdout.String()
	bySink := map[string][]string{}
	line := regexp.MustCompile(`^(\S+)> (.*)$`)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unexpected line %q", l)
		}
		bySink[m[1]] = append(bySink[m[1]], m[2])
	}
	gotRollup := sortedRows(applyChangelog(t, strings.Join(bySink["rollup"], "\n")))
	if len(gotRollup) != len(rollup) {
		t.Fatalf("rollup: got %d rows, want %d: %v", len(gotRollup), len(rollup), gotRollup)
	}
	for _, r := range gotRollup {
		f := strings.Split(strings.Trim(r, "[]"), ", ")
		a := rollup[row(f[0], f[1], f[2])]
		total, err := strconv.ParseFloat(f[4], 64)
		if a == nil || err != nil || f[3] != strconv.Itoa(a.n) || math.Abs(total-a.total) > 1e-9 {
			t.Errorf("rollup row %s: want %+v", r, a)
		}
	}
	for name, want := range map[string][]string{"hourly": wantHourly, "rows": rows} {
		for _, l := range bySink[name] {
			if !strings.HasPrefix(l, "+I") {
				t.Fatalf("%s: %s, want insert-only", name, l)
			}
		}
		got := sortedRows(applyChangelog(t, strings.Join(bySink[name], "\n")))
		if !slices.Equal(got, want) {
			t.Errorf("%s:\ngot  %v\nwant %v", name, got, want)
		}
	}
}
