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
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/udf"
)

// udfSession returns a session with two Go functions registered:
// count_char and a function that panics on a negative argument.
func udfSession(stdout, stderr *bytes.Buffer) *Session {
	s := New(connector.Env{Stdout: stdout, Stderr: stderr})
	s.Functions = udf.NewRegistry()
	s.Functions.MustRegister("count_char", "counts a byte", udf.Func2(udf.CountChar))
	s.Functions.MustRegister("com.example.Fragile", "", udf.Func1(func(x int64) int64 {
		if x < 0 {
			panic("negative")
		}
		return x * 10
	}))
	return s
}

// TestUserFunctionMatchesGo binds count_char with CREATE FUNCTION and
// runs it over random strings at parallelism 1 and 4, in a projection, a
// filter and a GROUP BY; the rows are compared with the counts computed
// here, and SHOW FUNCTIONS lists the function.
func TestUserFunctionMatchesGo(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	var b strings.Builder
	want := map[int64]int64{} // count of 'c' -> rows with at least one 'a'
	for i := range 2000 {
		n := r.IntN(12)
		var s strings.Builder
		for range n {
			s.WriteByte("abcc"[r.IntN(4)])
		}
		text := s.String()
		fmt.Fprintf(&b, "%d,%s\n", i, text)
		if strings.Contains(text, "a") {
			want[int64(strings.Count(text, "c"))]++
		}
	}
	path := filepath.Join(t.TempDir(), "s.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	wantRows := map[string]int{}
	for c, n := range want {
		wantRows[fmt.Sprintf("[%d, %d]", c, n)]++
	}
	for _, par := range []int{1, 4} {
		t.Run(fmt.Sprintf("p%d", par), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			s := udfSession(&stdout, &stderr)
			src := fmt.Sprintf(`SET 'parallelism.default' = '%d';
CREATE TABLE t (id BIGINT, s STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TEMPORARY FUNCTION cc AS 'count_char' LANGUAGE GO;
CREATE TABLE o (c BIGINT, n BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT cc(s, 'c'), COUNT(*) FROM t WHERE cc(s, 'a') > 0 GROUP BY cc(s, 'c');
SHOW FUNCTIONS;
`, par, path)
			if err := s.RunScript(context.Background(), src, RunOptions{JobName: "udf", Quiet: true, Exec: exec.Options{BatchSize: 64}}); err != nil {
				t.Fatalf("run: %v\nstderr: %s", err, stderr.String())
			}
			out := stdout.String()
			if !strings.Contains(out, "cc\tuser\tcc(STRING, STRING) -> BIGINT = 'count_char': counts a byte\n") {
				t.Errorf("SHOW FUNCTIONS lacks the user function:\n%s", out)
			}
			var changes strings.Builder
			for _, line := range strings.SplitAfter(out, "\n") {
				if !strings.Contains(line, "\t") { // not a SHOW FUNCTIONS row
					changes.WriteString(line)
				}
			}
			got, wantSorted := sortedRows(applyChangelog(t, changes.String())), sortedRows(wantRows)
			if strings.Join(got, "\n") != strings.Join(wantSorted, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantSorted, "\n"))
			}
		})
	}
}

// TestUserFunctionErrors: an unregistered identifier, another LANGUAGE
// and a wrong argument type are errors at their line and column; a panic
// in the function fails the job with an error naming it.
func TestUserFunctionErrors(t *testing.T) {
	ddl := "CREATE TABLE t (k BIGINT, s STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '10', 'fields.k.kind' = 'sequence', 'fields.k.start' = '-5', 'fields.k.end' = '4');\n" +
		"CREATE TABLE o (v BIGINT) WITH ('connector' = 'blackhole');\n"
	cases := []struct{ name, src, want string }{
		{"unregistered", ddl + "CREATE FUNCTION f AS\n  'com.example.Nope';", "line 5:3: no function is registered as 'com.example.Nope' in this build (registered: com.example.Fragile, count_char)"},
		{"language", ddl + "CREATE FUNCTION f AS 'count_char' LANGUAGE JAVA;", "line 4:44: LANGUAGE JAVA is not supported"},
		{"argument type", ddl + "CREATE FUNCTION f AS 'count_char';\nINSERT INTO o SELECT f(s, k) FROM t;", "line 5:27: f: argument 2 has type BIGINT, want STRING"},
		{"panic", ddl + "CREATE FUNCTION fragile AS 'com.example.Fragile';\nINSERT INTO o SELECT fragile(k) FROM t;", "user function fragile (com.example.Fragile) panicked: negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			s := udfSession(&stdout, &stderr)
			err := s.RunScript(context.Background(), "SET 'parallelism.default' = '1';\n"+tc.src, RunOptions{JobName: "udf", Quiet: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
