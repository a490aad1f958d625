package session

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// statementSetScript is the keyed sum of keyedSumScriptInto written twice,
// by a statement set of two INSERTs (keys1 and keys2 groups) into two
// exactly-once filesystem sinks.
func statementSetScript(ckDir, out1, out2 string, n, keys1, keys2 int) string {
	return fmt.Sprintf(`
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.checkpoints.num-retained' = '2';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '150000');
CREATE TABLE sums1 (k BIGINT, s BIGINT, c BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE sums2 (k BIGINT, s BIGINT, c BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO sums1 SELECT id %% %d, SUM(id), COUNT(*) FROM ev GROUP BY id %% %d;
INSERT INTO sums2 SELECT id %% %d, SUM(id), COUNT(*) FROM ev GROUP BY id %% %d;
END;
`, ckDir, n-1, out1, out2, keys1, keys1, keys2, keys2)
}

// TestStatementSetExactlyOnce runs a statement set of two INSERTs into two
// exactly-once file sinks as one job (one checkpoint folder, two sinks in
// one job graph) and fails it at fault points of the checkpoint algorithm
// and of the sinks' commit; after the restarts from the latest
// checkpoint, each sink's committed changelog equals its batch answer,
// every row once.
func TestStatementSetExactlyOnce(t *testing.T) {
	const n, keys1, keys2 = 30000, 300, 7
	want1, want2 := keyedSumAnswer(n, keys1), keyedSumAnswer(n, keys2)
	for _, tc := range []struct {
		spec  string
		fired []string
	}{
		{"", nil},
		{"K2@3=error", []string{"K2"}},
		{"K4@5=error", []string{"K4"}},
		{"K6@3=error", []string{"K6"}},
	} {
		t.Run("faults="+tc.spec, func(t *testing.T) {
			dir := t.TempDir()
			out1, out2, ck := filepath.Join(dir, "out1"), filepath.Join(dir, "out2"), filepath.Join(dir, "ck")
			script := statementSetScript(ck, out1, out2, n, keys1, keys2)
			var stdout, stderr bytes.Buffer
			plan, _, err := New(connector.Env{Stdout: &stdout, Stderr: &stderr}).PlanScript(script, RunOptions{JobName: "set"})
			if err != nil {
				t.Fatal(err)
			}
			sinks := 0
			for _, v := range plan.Graph.Vertices {
				if v.Sink != nil {
					sinks++
				}
			}
			if sinks != 2 || len(plan.Graph.Statements) != 2 {
				t.Fatalf("one job graph with 2 sinks and 2 statements, got %d sinks, %d statements", sinks, len(plan.Graph.Statements))
			}
			run := runWithFaults(t, script, tc.spec, RunOptions{JobName: "set", Exec: exec.Options{BatchSize: 128}})
			run.expectFired(t, tc.fired)
			if jobs, _ := os.ReadDir(ck); len(jobs) != 1 {
				t.Fatalf("checkpoint folders %v: want one job", jobs)
			}
			for i, c := range []struct {
				dir  string
				want []string
			}{{out1, want1}, {out2, want2}} {
				got := debeziumRows(t, c.dir, "k", "s", "c")
				if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
					t.Fatalf("sink %d: committed output differs from the batch answer: %d rows, want %d\n%s",
						i+1, len(got), len(c.want), run.Stderr)
				}
			}
		})
	}
}

// TestStatementSetInFileErrors: a statement set without END, an END
// without a set, and a statement other than INSERT in a set are errors at
// their line.
func TestStatementSetInFileErrors(t *testing.T) {
	const tables = "CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\nCREATE TABLE o (a INT) WITH ('connector' = 'blackhole');\n"
	for _, c := range []struct{ script, want string }{
		{tables + "BEGIN STATEMENT SET;\nINSERT INTO o SELECT a FROM t;\n", "line 3:1: this statement set has no END"},
		{tables + "END;\n", "line 3:1: END without BEGIN STATEMENT SET"},
		{tables + "EXECUTE STATEMENT SET BEGIN\nINSERT INTO o SELECT a FROM t;\nSHOW TABLES;\nEND;\n", "line 5:1: only INSERT statements can be in a statement set, not SHOW"},
	} {
		var out bytes.Buffer
		err := New(connector.Env{Stdout: &out, Stderr: &out}).RunScript(context.Background(), c.script, RunOptions{JobName: "x"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("script %q: err = %v, want %q", c.script, err, c.want)
		}
	}
}

// TestSQLBasicsExample runs examples/sql_basics.sql and checks every
// sink's rows: the VALUES as written, INTERSECT and EXCEPT of its literal
// sets, the top 3 of the sequence 1..20 (ALTER TABLE shortened it from
// 100) by v = n * 7 % 10, and the ticks in time order, all computed here.
func TestSQLBasicsExample(t *testing.T) {
	src, err := os.ReadFile("../examples/sql_basics.sql")
	if err != nil {
		t.Fatal(err)
	}
	prefix := regexp.MustCompile(`^(\w+)(?::\d+)?> `)
	got := map[string][]string{}
	// Five print sinks write concurrently.
	var stdout lockedBuffer
	var stderr bytes.Buffer
	if err := New(connector.Env{Stdout: &stdout, Stderr: &stderr}).RunScript(context.Background(), string(src),
		RunOptions{JobName: t.Name(), Quiet: true}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		m := prefix.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unexpected line %q", l)
		}
		got[m[1]] = append(got[m[1]], l[len(m[0]):])
	}
	type nv struct{ n, v int64 }
	var all []nv
	for n := int64(1); n <= 20; n++ {
		all = append(all, nv{n, n * 7 % 10})
	}
	slices.SortFunc(all, func(a, b nv) int { return cmp.Or(cmp.Compare(b.v, a.v), cmp.Compare(a.n, b.n)) })
	var top3, next3 []string
	for _, r := range all[:3] {
		top3 = append(top3, fmt.Sprintf("+I[%d, %d]", r.n, r.v))
	}
	for _, r := range all[3:6] {
		next3 = append(next3, fmt.Sprintf("+I[%d, %d]", r.n, r.v))
	}
	var sorted []string
	for n := 1; n <= 5; n++ {
		sorted = append(sorted, fmt.Sprintf("+I[%d, 1970-01-01 00:00:%02d.000]", n, n))
	}
	// INTERSECT and EXCEPT are updating (a filtered GROUP BY on all
	// columns, the key): their changes applied by key leave the result.
	for _, name := range []string{"intersect", "except"} {
		present := map[string]bool{}
		for _, l := range got[name] {
			present[l[2:]] = l[:2] == "+I" || l[:2] == "+U"
		}
		got[name] = nil
		for row, ok := range present {
			if ok {
				got[name] = append(got[name], "+I"+row)
			}
		}
	}
	// INTERSECT ALL is a retracting changelog of duplicates: applied, its
	// multiset.
	var allLines strings.Builder
	for _, l := range got["intersect_all"] {
		allLines.WriteString(l + "\n")
	}
	got["intersect_all"] = nil
	for _, r := range sortedRows(applyChangelog(t, allLines.String())) {
		got["intersect_all"] = append(got["intersect_all"], "+I"+r)
	}
	want := map[string][]string{
		"intersect_all": {"+I[2, b]", "+I[2, b]", "+I[3, c]"},
		"values":        {"+I[1, one]", "+I[2, two]", "+I[3, THREE]"},
		"intersect":     {"+I[2, b]", "+I[3, c]"},
		"except":        {"+I[1, a]", "+I[3, c]"},
		"top3":          top3,
		"next3":         next3,
		"sorted":        sorted,
	}
	for name, w := range want {
		g := got[name]
		if name != "top3" && name != "next3" && name != "sorted" {
			slices.Sort(g)
		}
		if !slices.Equal(g, w) {
			t.Errorf("%s: got %v, want %v", name, g, w)
		}
	}
}
