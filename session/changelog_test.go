package session

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// cdcRow is a row of the table a change stream describes.
type cdcRow struct {
	k string
	v int64
}

// writeCDC writes n random Debezium change events (inserts, updates that
// may move a row to another key, deletes) to a file and returns the path
// and the table they leave, by id.
func writeCDC(t *testing.T, n int, seed uint64) (string, map[int64]cdcRow) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 12))
	keys := []string{"a", "b", "c", "d", "e", "f"}
	table := map[int64]cdcRow{}
	var ids []int64
	next := int64(1)
	obj := func(id int64, x cdcRow) string {
		return fmt.Sprintf(`{"id":%d,"k":%q,"v":%d}`, id, x.k, x.v)
	}
	var b strings.Builder
	for range n {
		switch op := r.IntN(10); {
		case op < 4 || len(ids) == 0:
			x := cdcRow{k: keys[r.IntN(len(keys))], v: int64(r.IntN(201) - 100)}
			id := next
			next++
			table[id] = x
			ids = append(ids, id)
			fmt.Fprintf(&b, `{"before":null,"after":%s,"op":"c"}`+"\n", obj(id, x))
		case op < 8:
			id := ids[r.IntN(len(ids))]
			old := table[id]
			x := cdcRow{k: old.k, v: int64(r.IntN(201) - 100)}
			if r.IntN(3) == 0 {
				x.k = keys[r.IntN(len(keys))]
			}
			table[id] = x
			fmt.Fprintf(&b, `{"before":%s,"after":%s,"op":"u"}`+"\n", obj(id, old), obj(id, x))
		default:
			i := r.IntN(len(ids))
			id := ids[i]
			fmt.Fprintf(&b, `{"before":%s,"after":null,"op":"d"}`+"\n", obj(id, table[id]))
			delete(table, id)
			ids = append(ids[:i], ids[i+1:]...)
		}
	}
	path := filepath.Join(t.TempDir(), "cdc.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, table
}

// TestDebeziumSourceAggregated runs an aggregate (with a filter) over a
// Debezium change stream into a print sink and checks the changelog's
// final state against the answer computed here from the table the stream
// leaves: groups emptied by deletes and by updates moving rows away must be
// gone, and every retraction must retract a row that was emitted.
func TestDebeziumSourceAggregated(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	path, table := writeCDC(t, 3000, seed)

	type group struct{ n, sum, min, max int64 }
	groups := map[string]*group{}
	for _, x := range table {
		if x.v == 0 {
			continue // WHERE v <> 0
		}
		g := groups[x.k]
		if g == nil {
			g = &group{min: x.v, max: x.v}
			groups[x.k] = g
		}
		g.n++
		g.sum += x.v
		g.min, g.max = min(g.min, x.v), max(g.max, x.v)
	}
	want := map[string]int{}
	for k, g := range groups {
		want[fmt.Sprintf("[%s, %d, %d, %d, %d]", k, g.n, g.sum, g.min, g.max)]++
	}

	for _, par := range []int{1, 3} {
		t.Run(fmt.Sprintf("parallelism %d", par), func(t *testing.T) {
			src := fmt.Sprintf(`
SET 'parallelism.default' = '%d';
CREATE TABLE cdc (id BIGINT, k STRING, v BIGINT, PRIMARY KEY (id) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE out (k STRING, n BIGINT, s BIGINT, mn BIGINT, mx BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, COUNT(*), SUM(v), MIN(v), MAX(v) FROM cdc WHERE v <> 0 GROUP BY k;
`, par, path)
			got := applyChangelog(t, runScript(t, src))
			if fmt.Sprint(sortedRows(got)) != fmt.Sprint(sortedRows(want)) {
				t.Errorf("final result (seed %d):\n got %v\nwant %v", seed, sortedRows(got), sortedRows(want))
			}
		})
	}
}

// TestUpdatingIntoInsertOnlySinkFailsAtPlanning checks that a changelog
// source into a sink that takes only inserts is refused when the script is
// planned, at the INSERT's line and column, saying why and what to change,
// and that nothing runs (the sink's folder is not created).
func TestUpdatingIntoInsertOnlySinkFailsAtPlanning(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "cdc.json")
	if err := os.WriteFile(in, []byte(`{"before":null,"after":{"id":1,"v":5},"op":"c"}
{"before":{"id":1,"v":5},"after":{"id":1,"v":6},"op":"u"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	src := fmt.Sprintf(`CREATE TABLE cdc (id BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE out (id BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');

  INSERT INTO out SELECT id, v FROM cdc WHERE v > 0;
`, in, out)
	var stdout, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	err := s.RunScript(context.Background(), src, RunOptions{JobName: t.Name(), Quiet: true, Exec: exec.Options{BatchSize: 64}})
	if err == nil {
		t.Fatal("the job ran; want a planning error")
	}
	msg := err.Error()
	for _, w := range []string{"line 4:3:", "sink 'out' (filesystem, format 'json') accepts only inserts",
		"updates (-U/+U/-D)", "the source 'cdc' (filesystem, format 'debezium-json')", "use 'format' = 'debezium-json'"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("sink folder %s exists (stat: %v): the job started", out, err)
	}
}
