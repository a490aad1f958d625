package session

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// TestGroupByDecimalAndDateWithRestore groups by a DECIMAL and a DATE key,
// with DECIMAL SUM, MAX and AVG, checkpoints every few milliseconds and an
// injected failure, so the job restores the keys and accumulators from a
// checkpoint; the final rows must equal the answer computed here in
// integers.
func TestGroupByDecimalAndDateWithRestore(t *testing.T) {
	const n = 30000
	script := fmt.Sprintf(`
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '150000');
CREATE TABLE sums (g STRING, s DECIMAL(38, 6), m DECIMAL(15, 6), a DECIMAL(38, 6), c BIGINT) WITH ('connector' = 'print');
INSERT INTO sums
SELECT CONCAT(CAST(k AS STRING), '/', CAST(d AS STRING)), s, m, a, c FROM (
  SELECT k, d, SUM(v) AS s, MAX(v) AS m, AVG(v) AS a, COUNT(*) AS c FROM (
    SELECT CAST(id %% 50 AS DECIMAL(6, 2)) * 0.25 AS k,
      CAST(CASE id %% 3 WHEN 0 THEN '2026-01-01' WHEN 1 THEN '2026-02-28' ELSE '1999-12-31' END AS DATE) AS d,
      CAST(id AS DECIMAL(12, 3)) * 0.125 AS v
    FROM ev) GROUP BY k, d);
`, t.TempDir(), n-1)
	hook, err := ParseFaults("K4@5=error", "")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	if err := s.RunScript(context.Background(), script, RunOptions{JobName: "types", Exec: exec.Options{BatchSize: 128, Fault: hook}}); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "weir: restoring checkpoint") {
		t.Fatalf("the job did not restore a checkpoint:\n%s", stderr.String())
	}
	// The answer, in millionths (scale 6).
	type agg struct{ sum, max, cnt int64 }
	groups := map[string]*agg{}
	dates := []string{"2026-01-01", "2026-02-28", "1999-12-31"}
	micro := func(u int64) string { return fmt.Sprintf("%d.%06d", u/1_000_000, u%1_000_000) }
	for id := int64(0); id < n; id++ {
		k := id % 50 * 25 // hundredths
		key := fmt.Sprintf("%d.%04d/%s", k/100, k%100*100, dates[id%3])
		g := groups[key]
		if g == nil {
			g = &agg{}
			groups[key] = g
		}
		v := id * 125_000 // id × 0.125 in millionths
		g.sum += v
		g.max = max(g.max, v)
		g.cnt++
	}
	var want []string
	for key, g := range groups {
		avg := (2*g.sum + g.cnt) / (2 * g.cnt) // HALF_UP, positive
		want = append(want, fmt.Sprintf("[%s, %s, %s, %s, %d]", key, micro(g.sum), micro(g.max), micro(avg), g.cnt))
	}
	sort.Strings(want)
	got := upsertByKey(t, stdout.String())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("final rows differ: %d rows, want %d\nfirst got %v\nfirst want %v", len(got), len(want), head(got), head(want))
	}
}
