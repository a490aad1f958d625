package planner

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/datagen"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// collectSink gathers every row written to it, from all subtasks.
type collectSink struct {
	mu   sync.Mutex
	rows []string
}

func (s *collectSink) AcceptsUpdates() bool { return true }
func (s *collectSink) Parallelism() int     { return 0 }
func (s *collectSink) Open(int, int) (connector.SinkWriter, error) {
	return collectWriter{s}, nil
}

type collectWriter struct{ s *collectSink }

func (w collectWriter) Write(b *types.Batch) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	for i := range b.Len() {
		w.s.rows = append(w.s.rows, types.FormatRow(b.Kinds[i], b.Row(i)))
	}
	return nil
}
func (collectWriter) Flush() error { return nil }
func (collectWriter) Close() error { return nil }

// finalRows applies a changelog and returns the rows that remain, sorted.
func finalRows(log []string) []string {
	count := map[string]int{}
	for _, r := range log {
		body := r[2:]
		if strings.HasPrefix(r, "+I") || strings.HasPrefix(r, "+U") {
			count[body]++
		} else {
			count[body]--
		}
	}
	var out []string
	for body, n := range count {
		for range n {
			out = append(out, body)
		}
	}
	sort.Strings(out)
	return out
}

// TestRunsOnExec plans the design's worked example (parity sums over a
// union of two sequences) and runs it on the real runtime.
func TestRunsOnExec(t *testing.T) {
	script := `
CREATE TABLE s1 (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '100');
CREATE TABLE s2 (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '50');
SELECT n % 2 AS parity, SUM(n) AS total, COUNT(*) AS c FROM (SELECT n FROM s1 UNION ALL SELECT n FROM s2 WHERE n > 10) AS u GROUP BY n % 2`
	stmts, err := parser.Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	reg := connector.NewRegistry()
	reg.RegisterSource("datagen", datagen.NewSource)
	p := &Planner{Catalog: NewCatalog(), Connectors: reg, Config: map[string]string{"parallelism.default": "2"}}
	for _, st := range stmts[:2] {
		if err := p.Catalog.CreateTable(st.(*parser.CreateTable)); err != nil {
			t.Fatal(err)
		}
	}
	sink := &collectSink{}
	plan, err := p.PlanQuery(stmts[2].(*parser.QueryStmt), func(types.Schema, bool) (connector.Sink, error) { return sink, nil }, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	job, err := exec.Start(context.Background(), plan.Graph, exec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	// s1: 1..100 (odd sum 2500, even 2550); s2: 11..50 (odd sum 600, even 620).
	want := []string{"[0, 3170, 70]", "[1, 3100, 70]"}
	if got := finalRows(sink.rows); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("final rows %v, want %v\nchangelog: %v", got, want, sink.rows)
	}
}
