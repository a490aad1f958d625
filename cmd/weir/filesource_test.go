package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestFilesystemSourceInput runs the command in process on a folder with
// subfolders and on a JSON file with invalid UTF-8: every visible file at
// any depth is read, hidden and '_' names are not, and a value that is not
// UTF-8 fails the job naming file, offset and line, or is skipped and
// counted with json.ignore-parse-errors.
func TestFilesystemSourceInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeFile(t, dir, name, text) }
	write("in/a.csv", "1,10\n")
	write("in/sub/b.csv", "2,20\n")
	write("in/sub/deep/c.csv", "3,30\n")
	write("in/sub/_tmp.csv", "9,91\n")
	write("in/.x/d.csv", "9,92\n")
	write("in/_y/e.csv", "9,93\n")
	write("in/sub/.part-0-1.inprogress", "9,94\n")
	folder := write("folder.sql", `
SET 'parallelism.default' = '1';
CREATE TABLE t (k INT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '`+filepath.Join(dir, "in")+`', 'format' = 'csv');
CREATE TABLE o (k INT, v BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT k, v FROM t;`)
	data := write("bad.json", "{\"k\":1,\"s\":\"ok\"}\n{\"k\":2,\"s\":\"b\xffd\"}\n{\"k\":3,\"s\":\"é\"}\n")
	utf := func(name, extra string) string {
		return write(name, `
SET 'parallelism.default' = '1';
CREATE TABLE t (k INT, s STRING) WITH ('connector' = 'filesystem', 'path' = '`+data+`', 'format' = 'json'`+extra+`);
CREATE TABLE o (k INT, s STRING) WITH ('connector' = 'print');
INSERT INTO o SELECT k, s FROM t;`)
	}
	cases := []struct {
		file   string
		code   int
		stdout string // exactly
		stderr []string
	}{
		{folder, 0, "+I[1, 10]\n+I[2, 20]\n+I[3, 30]\n", nil},
		{utf("utf8.sql", ""), 1, "?", []string{"bad.json: offset 17 (line 2): column s: invalid UTF-8 (byte 0xff at byte 2 of the value)"}},
		{utf("utf8skip.sql", ", 'json.ignore-parse-errors' = 'true'"), 0, "+I[1, ok]\n+I[3, é]\n", []string{"skipped 1 malformed record"}},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"run", "--quiet", tc.file}, &stdout, &stderr)
			if code != tc.code || (tc.stdout != "?" && stdout.String() != tc.stdout) {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, tc.code, stdout.String(), tc.stdout, stderr.String())
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
		})
	}
}
