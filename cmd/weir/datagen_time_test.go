package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDatagenTimestampsMove runs `weir run` over a datagen table with two
// TIMESTAMP columns and reads the print sink's rows: without max-past, row
// n's time is the job's start plus (n-1)/rows-per-second seconds, so time
// moves with the rows (1 ms apart at 1000 rows a second); with
// fields.<f>.max-past, the value lies up to that long before the row's
// time, and not all rows get the same one.
func TestDatagenTimestampsMove(t *testing.T) {
	const rows, maxPast = 500, 5000 // maxPast in ms
	file := writeFile(t, t.TempDir(), "ts.sql", `SET 'parallelism.default' = '1';
CREATE TABLE g (n BIGINT, ts TIMESTAMP(3), past TIMESTAMP(3)) WITH ('connector' = 'datagen',
  'number-of-rows' = '`+strconv.Itoa(rows)+`', 'rows-per-second' = '1000',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '`+strconv.Itoa(rows)+`',
  'fields.past.max-past' = '`+strconv.Itoa(maxPast)+`');
CREATE TABLE o (n BIGINT, ts TIMESTAMP(3), past TIMESTAMP(3)) WITH ('connector' = 'print');
INSERT INTO o SELECT n, ts, past FROM g;`)
	start := time.Now().Truncate(time.Millisecond)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"run", "--quiet", file}, &stdout, &stderr); code != 0 {
		t.Fatalf("weir run: exit %d\n%s", code, stderr.String())
	}
	end := time.Now()
	rowRe := regexp.MustCompile(`^\+I\[(\d+), (\S+ \S+), (\S+ \S+)\]$`)
	const layout = "2006-01-02 15:04:05.000"
	ts := map[int]time.Time{}
	past := map[int]time.Time{}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		m := rowRe.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unexpected line %q", l)
		}
		n, _ := strconv.Atoi(m[1])
		a, err1 := time.ParseInLocation(layout, m[2], time.UTC)
		b, err2 := time.ParseInLocation(layout, m[3], time.UTC)
		if err1 != nil || err2 != nil {
			t.Fatalf("line %q: %v, %v", l, err1, err2)
		}
		ts[n], past[n] = a, b
	}
	if len(ts) != rows {
		t.Fatalf("%d rows printed, want %d", len(ts), rows)
	}
	first := ts[1]
	if first.Before(start.Add(-time.Second)) || first.After(end) {
		t.Fatalf("row 1's time %v is not the job's start (the run took %v to %v)", first, start, end)
	}
	distinct := map[time.Time]bool{}
	for n := 1; n <= rows; n++ {
		if want := first.Add(time.Duration(n-1) * time.Millisecond); !ts[n].Equal(want) {
			t.Fatalf("row %d: ts %v, want %v (row 1's time + %d ms)", n, ts[n], want, n-1)
		}
		if p := past[n]; p.After(ts[n]) || p.Before(ts[n].Add(-maxPast*time.Millisecond)) {
			t.Fatalf("row %d: past %v not within %d ms before its time %v", n, p, maxPast, ts[n])
		}
		distinct[past[n]] = true
	}
	if len(distinct) < rows/2 {
		t.Fatalf("the random timestamps take %d values over %d rows", len(distinct), rows)
	}
}
