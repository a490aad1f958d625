package session

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/weir-sql/weir/exec"
)

// TestOverUpdatingExactlyOnce runs an OVER aggregate over a grouped
// aggregate (its counts update; ordered by the count, with ties) into the
// exactly-once file sink, failing the job at fault points of the
// checkpoint algorithm and the sink's commit; after the restarts, the
// committed changelog equals the batch OVER over the final counts,
// computed here.
func TestOverUpdatingExactlyOnce(t *testing.T) {
	const n, ks, gs = 20000, 7, 61
	type grp struct{ k, g, c int }
	cnt := map[[2]int]int{}
	for i := range n {
		cnt[[2]int{i % ks, i % gs}]++
	}
	per := map[int][]grp{}
	for kg, c := range cnt {
		per[kg[0]] = append(per[kg[0]], grp{kg[0], kg[1], c})
	}
	var want []string
	for _, rs := range per {
		// Ties on the count are ordered by the row (k, g, c): by g.
		slices.SortFunc(rs, func(a, b grp) int { return cmp.Or(cmp.Compare(a.c, b.c), cmp.Compare(a.g, b.g)) })
		for i, r := range rs {
			s := 0
			for _, q := range rs[max(0, i-2) : i+1] {
				s += q.c
			}
			want = append(want, fmt.Sprintf("[%d, %d, %d, %d]", r.k, r.g, r.c, s))
		}
	}
	sort.Strings(want)
	for _, spec := range []string{"", "K2@3=error", "K4@5=error", "K6@3=error,K8=error"} {
		t.Run("faults="+spec, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			script := fmt.Sprintf(`
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '100000');
CREATE TABLE out (k BIGINT, g BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
INSERT INTO out SELECT k, g, c, SUM(c) OVER (PARTITION BY k ORDER BY c ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
FROM (SELECT id %% %d AS k, id %% %d AS g, COUNT(*) AS c FROM ev GROUP BY id %% %d, id %% %d);
`, filepath.Join(dir, "ck"), n-1, out, ks, gs, ks, gs)
			run := runWithFaults(t, script, spec, RunOptions{JobName: "over", Exec: exec.Options{BatchSize: 128}})
			if spec != "" && len(run.Fired) == 0 {
				t.Fatalf("no fault fired\n%s", run.Stderr)
			}
			if got := debeziumRows(t, out, "k", "g", "c", "s"); !slices.Equal(got, want) {
				t.Fatalf("faults %v: committed output differs from the batch answer: %d rows, want %d\ngot  %v\nwant %v", run.Fired, len(got), len(want), head(got), head(want))
			}
		})
	}
}
