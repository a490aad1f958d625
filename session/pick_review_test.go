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

// TestReviewPickingCalcsExactlyOnce runs, as planned from SQL, an
// updating OVER and a FULL JOIN over an updating input, each followed by
// a projection that only picks columns (reordered, one picked twice,
// NULL-padded ones): the task folds that Calc into the operator before it.
// The job fails at checkpoint and commit fault points; after the
// restarts, the committed changelogs equal the answers computed here.
func TestReviewPickingCalcsExactlyOnce(t *testing.T) {
	const n, ks, gs = 6000, 7, 61
	// The OVER: per k, the groups (k, g) with their counts c, ordered by
	// c then g, SUM(c) over ROWS 2 PRECEDING; picked as [s, k, s, g].
	type grp struct{ k, g, c int }
	cnt := map[[2]int]int{}
	for i := range n {
		cnt[[2]int{i % ks, i % gs}]++
	}
	per := map[int][]grp{}
	for kg, c := range cnt {
		per[kg[0]] = append(per[kg[0]], grp{kg[0], kg[1], c})
	}
	var wantOver []string
	for _, rs := range per {
		slices.SortFunc(rs, func(a, b grp) int { return cmp.Or(cmp.Compare(a.c, b.c), cmp.Compare(a.g, b.g)) })
		for i, r := range rs {
			s := 0
			for _, q := range rs[max(0, i-2) : i+1] {
				s += q.c
			}
			wantOver = append(wantOver, fmt.Sprintf("[%d, %d, %d, %d]", s, r.k, s, r.g))
		}
	}
	sort.Strings(wantOver)
	// The join: ev's ids with jk = id % 10 + 3, FULL JOIN the counts c of
	// k = id % 7 on jk = k, picked as [c, id, k, c].
	kc := map[int]int{}
	for i := range n {
		kc[i%ks]++
	}
	var wantJoin []string
	matched := map[int]bool{}
	for i := range n {
		jk := i%10 + 3
		if c, ok := kc[jk]; ok {
			matched[jk] = true
			wantJoin = append(wantJoin, fmt.Sprintf("[%d, %d, %d, %d]", c, i, jk, c))
		} else {
			wantJoin = append(wantJoin, fmt.Sprintf("[, %d, , ]", i))
		}
	}
	for k, c := range kc {
		if !matched[k] {
			wantJoin = append(wantJoin, fmt.Sprintf("[%d, , %d, %d]", c, k, c))
		}
	}
	sort.Strings(wantJoin)
	for _, spec := range []string{"", "K2@3=error", "K4@5=error,K7=error"} {
		t.Run("faults="+spec, func(t *testing.T) {
			dir := t.TempDir()
			outO, outJ := filepath.Join(dir, "over"), filepath.Join(dir, "join")
			script := fmt.Sprintf(`
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '100000');
CREATE TABLE over_out (a BIGINT, b BIGINT, c BIGINT, d BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE join_out (a BIGINT, b BIGINT, c BIGINT, d BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO over_out SELECT s, k, s, g FROM (SELECT k, g, c, SUM(c) OVER (PARTITION BY k ORDER BY c ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s
FROM (SELECT id %% %d AS k, id %% %d AS g, COUNT(*) AS c FROM ev GROUP BY id %% %d, id %% %d));
INSERT INTO join_out SELECT r.c, l.id, r.k, r.c FROM (SELECT id, id %% 10 + 3 AS jk FROM ev) l
FULL JOIN (SELECT id %% %d AS k, COUNT(*) AS c FROM ev GROUP BY id %% %d) r ON l.jk = r.k;
END;
`, filepath.Join(dir, "ck"), n-1, outO, outJ, ks, gs, ks, gs, ks, ks)
			run := runWithFaults(t, script, spec, RunOptions{JobName: "picks", Exec: exec.Options{BatchSize: 128}})
			if spec != "" && len(run.Fired) == 0 {
				t.Fatalf("no fault fired\n%s", run.Stderr)
			}
			if got := debeziumRows(t, outO, "a", "b", "c", "d"); !slices.Equal(got, wantOver) {
				t.Fatalf("faults %v: OVER output differs: %d rows, want %d\ngot  %v\nwant %v", run.Fired, len(got), len(wantOver), head(got), head(wantOver))
			}
			if got := debeziumRows(t, outJ, "a", "b", "c", "d"); !slices.Equal(got, wantJoin) {
				t.Fatalf("faults %v: join output differs: %d rows, want %d\ngot  %v\nwant %v", run.Fired, len(got), len(wantJoin), head(got), head(wantJoin))
			}
		})
	}
}
