package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunInitFile runs `weir run -i INIT.sql FILE.sql` in process: the
// init file's SET and DDL are in force for the query file (its table, view
// and parallelism), errors in the init file name that file with line:column
// and a caret, and an INSERT in the init file is refused.
func TestRunInitFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeFile(t, dir, name, text) }
	data := write("in.csv", "1,10\n2,20\n1,5\n")
	ddl := write("ddl.sql", `SET 'parallelism.default' = '1';
CREATE TABLE t (k INT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '`+data+`', 'format' = 'csv');
CREATE VIEW big AS SELECT k, v FROM t WHERE v >= 10;
`)
	query := write("q.sql", `CREATE TABLE o (k INT, s BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT k, SUM(v) FROM big GROUP BY k;
`)
	// The same tables in two init files, run in order.
	tables := write("tables.sql", "SET 'parallelism.default' = '1';\nCREATE TABLE t (k INT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '"+data+"', 'format' = 'csv');\n")
	views := write("views.sql", "CREATE VIEW big AS SELECT k, v FROM t WHERE v >= 10;\n")
	badInit := write("bad_init.sql", "SET 'parallelism.default' = '1';\nCREATE TABLE t (k NOSUCHTYPE) WITH ('connector' = 'datagen');\n")
	insertInit := write("insert_init.sql", "CREATE TABLE t (k INT) WITH ('connector' = 'datagen');\nCREATE TABLE o (k INT) WITH ('connector' = 'print');\n  INSERT INTO o SELECT k FROM t;\n")
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"init then query", []string{"run", "--quiet", "-i", ddl, query}, 0, []string{"+I[1, 10]\n", "+I[2, 20]\n"}, nil},
		{"long form after the file", []string{"run", query, "--quiet", "--init", ddl}, 0, []string{"+I[2, 20]\n"}, nil},
		{"two init files in order", []string{"run", "--quiet", "-i", tables, "--init", views, query}, 0, []string{"+I[1, 10]\n", "+I[2, 20]\n"}, nil},
		{"init files in the wrong order", []string{"run", "--quiet", "-i", views, "-i", tables, query}, 1, nil, []string{"views.sql: line 1:", "unknown table 't'"}},
		{"explain with init", []string{"explain", "-i", ddl, query}, 0, []string{"GroupAggregate(groupBy=[k]"}, nil},
		{"no init: the table is unknown", []string{"run", "--quiet", query}, 1, nil, []string{"q.sql: line 2:", "big"}},
		{"bad init", []string{"run", "-i", badInit, query}, 1, nil, []string{"bad_init.sql: line 2:", "NOSUCHTYPE"}},
		{"insert in init", []string{"run", "-i", insertInit, query}, 1, nil, []string{"insert_init.sql: line 3:3: an init file holds SET and DDL statements only; INSERT belongs in the query file",
			"\n    INSERT INTO o SELECT k FROM t;\n" + strings.Repeat(" ", 2+2) + "^"}},
		{"missing init", []string{"run", "-i", dir + "/none.sql", query}, 1, nil, []string{"weir: init file:", "none.sql"}},
		{"help", []string{"run", "--help"}, 0, []string{"\n  -i INIT.sql ", "\n  --init INIT.sql "}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout.String(), stderr.String())
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			if tc.code == 0 && strings.Contains(stdout.String(), "+I[1, 15]") {
				t.Errorf("the view's filter was not applied:\n%s", stdout.String())
			}
		})
	}
}

// TestBenchNexmarkCommand runs `weir bench nexmark` on two queries of the
// example folder with a small event count: the table has their rows, and
// --help lists the flags.
func TestBenchNexmarkCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"bench", "nexmark", "--examples", "../../examples/nexmark", "--queries", "q2,14", "--events", "20000", "--dir", t.TempDir()}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"events/s/core", "\nq2 ", "\nq14 ", "published per core"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	// The reference's ROW table and views.
	stdout.Reset()
	code = run([]string{"bench", "nexmark", "--examples", "../../examples/nexmark", "--queries", "q1", "--events", "20000", "--tables", "row", "--dir", t.TempDir()}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "\nq1 ") || strings.Contains(stdout.String(), "fails") {
		t.Fatalf("--tables row: exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if code := run([]string{"bench", "nexmark", "--tables", "nested"}, &stdout, &stderr); code != 2 {
		t.Errorf("--tables nested: exit code %d, want 2", code)
	}
	stdout.Reset()
	if code := run([]string{"bench", "nexmark", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--help: exit code %d", code)
	}
	for _, want := range []string{"usage: weir bench nexmark", "--queries LIST", "--events", "--runs", "--json", "--tables FORM", "--examples DIR"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, stdout.String())
		}
	}
}
