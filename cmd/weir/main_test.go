package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandLine runs the command in process: exit codes and what a user
// sees for a good file, a SQL error, a bad record, explain and bad usage.
func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeFile(t, dir, name, text) }
	data := write("in.csv", "1,10\n2,20\n1,5\nx,7\n")
	good := write("good.sql", `
SET 'parallelism.default' = '1';
CREATE TABLE t (k INT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '`+data+`', 'format' = 'csv',
  'csv.ignore-parse-errors' = 'true');
CREATE TABLE o (k INT, s BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT k, SUM(v) FROM t GROUP BY k;`)
	badSQL := write("bad.sql", "CREATE TABLE t (k INT) WITH ('connector' = 'datagen');\n"+
		"CREATE TABLE o (k INT) WITH ('connector' = 'print');\nINSERT INTO o\nSELECT kk\n  FROM t;")
	bareQuery := write("bare.sql", "CREATE TABLE t (k INT) WITH ('connector' = 'datagen');\nSELECT k FROM t;")
	// A syntax error in the fourth line, in a statement that starts on the third.
	badSyntax := write("syntax.sql", "CREATE TABLE t (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\n"+
		"-- the next statement starts on line 3\nCREATE TABLE o (k INT) WITH ('connector' = 'print');  INSERT INTO o\n  SELECT k k2 k3 FROM t;\n")
	badRecord := write("badrec.sql", strings.Replace(string(must(os.ReadFile(good))), "'csv.ignore-parse-errors' = 'true'", "'csv.allow-comments' = 'false'", 1))
	cases := []struct {
		args     []string
		code     int
		stdout   []string
		stderr   []string
		noStderr []string // must not be on stderr
	}{
		{[]string{"run", "--quiet", good}, 0, []string{"+I[1, 15]\n", "+I[2, 20]\n"}, []string{"skipped 1 malformed record"}, nil},
		{[]string{"run", "--quiet", bareQuery}, 1, nil, []string{"a query in a file needs a sink"}, nil},
		{[]string{"run", badSQL}, 1, nil, []string{"line 4:8: unknown column 'kk' (columns in scope: k)", "  SELECT kk\n         ^"}, nil},
		{[]string{"run", badRecord}, 1, nil, []string{"in.csv: offset 14 (line 4)", "column k"}, nil},
		{[]string{"explain", good}, 0, []string{"== Optimized Physical Plan ==", "GroupAggregate(groupBy=[k]", "Exchange(distribution=[hash[k]]", "== Job Graph =="}, nil, nil},
		{[]string{"run"}, 2, nil, []string{"usage: weir run"}, nil},
		{[]string{"frobnicate"}, 2, nil, []string{`unknown command "frobnicate"`}, nil},
		{[]string{"run", filepath.Join(dir, "missing.sql")}, 1, nil, []string{"no such file"}, nil},
		// Flags after the file work as before it.
		{[]string{"run", good, "--quiet"}, 0, []string{"+I[1, 15]\n"}, nil, []string{"finished in"}},
		{[]string{"run", good}, 0, []string{"+I[1, 15]\n"}, []string{"job good finished in"}, nil},
		{[]string{"run", good, "--no-such-flag"}, 2, nil, []string{"flag provided but not defined: -no-such-flag", "usage: weir run [flags] FILE.sql"}, nil},
		// Each subcommand's help exits 0 and lists every flag.
		{[]string{"run", "--help"}, 0, []string{"usage: weir run [flags] FILE.sql", "--quiet", "--restore latest|PATH", "--allow-non-restored-state",
			"--stop-with-savepoint", "--allow-duplicate-output", "\n  -i INIT.sql ", "\n  --init INIT.sql "}, nil, nil},
		{[]string{"bench", "-h"}, 0, []string{"usage: weir bench", "--duration", "--runs", "--workloads LIST", "--json", "--dir DIR", "--cpuprofile FILE", "--memprofile FILE", "--heapprofile FILE"}, nil, nil},
		{[]string{"explain", "--help"}, 0, []string{"usage: weir explain FILE.sql"}, nil, nil},
		{[]string{"kafka", "serve", "--help"}, 0, []string{"usage: weir kafka serve", "\n  --partitions N ", "\n  --port N "}, nil, nil},
		{[]string{"kafka", "serve", "--bogus"}, 2, nil, []string{"flag provided but not defined: -bogus", "usage: weir kafka serve"}, nil},
		{[]string{"-f"}, 2, nil, []string{"weir: flag needs an argument: -f\nusage: weir [-f FILE.sql]"}, []string{"Usage of"}},
		{[]string{"--version"}, 0, []string{"weir ", "\ngo go1.", "\npebble v2."}, nil, nil},
		{[]string{"run", badSyntax}, 1, nil, []string{"line 4:15: unexpected \"k3\"", "\n    SELECT k k2 k3 FROM t;\n" + strings.Repeat(" ", 2+14) + "^"}, nil},
		{[]string{"-f", badSyntax}, 1, nil, []string{"line 4:15: unexpected \"k3\"", "\n    SELECT k k2 k3 FROM t;\n" + strings.Repeat(" ", 2+14) + "^"}, nil},
		{[]string{"-f", badSQL}, 1, nil, []string{"line 4:8: unknown column 'kk' (columns in scope: k)", "  SELECT kk\n         ^"}, nil},
		{[]string{"--file", badSQL}, 1, nil, []string{"line 4:8: unknown column 'kk' (columns in scope: k)"}, []string{"flag provided but not defined"}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args[:1], " ")+" "+filepath.Base(tc.args[len(tc.args)-1]), func(t *testing.T) {
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
			for _, bad := range tc.noStderr {
				if strings.Contains(stderr.String(), bad) {
					t.Errorf("stderr has %q:\n%s", bad, stderr.String())
				}
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
