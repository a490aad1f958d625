package repl

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/session"
)

func TestCompleter(t *testing.T) {
	sh := New(session.New(connector.Env{}), Options{Out: io.Discard, Err: io.Discard})
	err := sh.execText(context.Background(), "CREATE TABLE orders (order_id BIGINT, amount INT) WITH ('connector' = 'datagen')")
	if err != nil {
		t.Fatal(err)
	}
	c := completer{sh: sh}
	tests := []struct {
		line string
		want []string // full words offered
	}{
		{"SEL", []string{"SELECT"}},
		{"SELECT a FROM orders GROUP BY ROLL", []string{"ROLLUP"}},
		{"sel", []string{"select"}},
		{"SELECT * FROM ord", []string{"order", "order_id", "orders"}},
		{"CREATE TABLE k (ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIR", []string{"VIRTUAL"}},
		{"CREATE TABLE k (p INT META", []string{"METADATA"}},
		{"CREATE TABLE f (x INT, dt STRING) PARTITI", []string{"PARTITION", "PARTITIONED"}},
		{"SELECT * FROM TABLE(CUMU", []string{"CUMULATE"}},
		{"SELECT * FROM orders WHERE amo", []string{"amount"}},
		{"SELECT order_", []string{"order_id"}},
		{"SELECT o.amo", []string{"amount"}},
		{"SET 'parallelism", []string{"'parallelism.default'"}},
		{"SET 'sql-client.execution.result-mode' = 'chan", []string{"'changelog'"}},
		{"CREATE TABLE t (x INT) WITH ('connector' = 'data", []string{"'datagen'"}},
		{"SELECT zzz", nil},
		// In quotes, what the place takes and nothing else.
		{"SET '", quoteAll(session.SetKeys())},
		{"RESET 'pa", []string{"'parallelism.default'"}},
		{"SET 'table.exec.sink.not-null-enforcer' = '", []string{"'DROP'", "'ERROR'"}},
		{"set 'table.exec.mini-batch.enabled' = 't", []string{"'true'"}},
		{"CREATE TABLE t (x INT) WITH ('connector' = '", []string{"'blackhole'", "'datagen'", "'filesystem'", "'kafka'", "'nexmark'", "'print'", "'upsert-kafka'"}},
		{"CREATE TABLE t (x INT) WITH ('conn", []string{"'connector'"}},
		{"CREATE TABLE t (x INT) WITH ('connector' = 'print', 'con", []string{"'connector'"}},
		{"SET 'pipeline.name' = '", nil},
		{"SELECT * FROM orders WHERE name = 'da", nil},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			line := []rune(tc.line)
			ends, n := c.Do(line, len(line))
			word := string(line[len(line)-n:])
			var got []string
			for _, e := range ends {
				got = append(got, word+string(e))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("completions of %q: %q, want %q", tc.line, got, tc.want)
			}
		})
	}
}

func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = "'" + w + "'"
	}
	return out
}
