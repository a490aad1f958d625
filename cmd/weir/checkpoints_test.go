package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
)

// writeChk writes checkpoint id of job "job" under dir, with a fake state
// folder for one operator subtask.
func writeChk(t *testing.T, st *checkpoint.Storage, id int64) string {
	t.Helper()
	p, err := st.Begin(id)
	if err != nil {
		t.Fatal(err)
	}
	sub := p.SubtaskDir("agg", 0)
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"MANIFEST-000001": "manifest", "OPTIONS-000002": "[Options]", "000004.sst": strings.Repeat("sstable ", 64)} {
		if err := os.WriteFile(filepath.Join(sub, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta := checkpoint.Metadata{Operators: []checkpoint.OperatorState{{ID: "agg", Parallelism: 1,
		Subtasks: []checkpoint.SubtaskState{{Subtask: 0, Dir: checkpoint.SubtaskDirName("agg", 0), Keys: 40000}}}}}
	c, err := p.Complete(meta)
	if err != nil {
		t.Fatal(err)
	}
	return c.Path
}

// TestCheckpointsListAndInspectDamage: `weir checkpoints list` reports a
// checkpoint whose sstable has a flipped byte as damaged, naming the file,
// lists the others around a folder it cannot read (marked with why), and
// `inspect` shows the damage in the status and key counts as "about".
func TestCheckpointsListAndInspectDamage(t *testing.T) {
	dir := t.TempDir()
	st, err := checkpoint.NewStorage(checkpoint.OSFS{}, dir, "job")
	if err != nil {
		t.Fatal(err)
	}
	writeChk(t, st, 1)
	chk2 := writeChk(t, st, 2)
	chk3 := writeChk(t, st, 3)
	writeChk(t, st, 4)
	// chk-2: one byte of its sstable flipped (same size).
	sst := filepath.Join(chk2, checkpoint.SubtaskDirName("agg", 0), "000004.sst")
	data, err := os.ReadFile(sst)
	if err != nil {
		t.Fatal(err)
	}
	data[100] ^= 1
	if err := os.WriteFile(sst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// chk-3: its _metadata cannot be read (a folder in its place).
	meta := filepath.Join(chk3, checkpoint.MetadataFile)
	if err := os.Remove(meta); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(meta, 0o755); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	if code := checkpoints([]string{"list", st.Dir()}, connector.Env{Stdout: &out, Stderr: &errOut}); code != 0 {
		t.Fatalf("checkpoints list: exit %d\n%s", code, errOut.String())
	}
	rows := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		f := strings.Fields(l)
		rows[f[0]] = strings.Join(f[3:], " ")
	}
	if len(rows) != 4 || rows["1"] != "valid" || rows["4"] != "valid" {
		t.Errorf("list:\n%s", out.String())
	}
	if r := rows["2"]; !strings.Contains(r, "000004.sst is damaged") {
		t.Errorf("list says of chk-2 %q, want the damaged file named\n%s", r, out.String())
	}
	if r := rows["3"]; !strings.HasPrefix(r, "unreadable: ") {
		t.Errorf("list says of chk-3 %q, want unreadable and why\n%s", r, out.String())
	}

	out.Reset()
	if code := checkpoints([]string{"inspect", chk2}, connector.Env{Stdout: &out, Stderr: &errOut}); code != 0 {
		t.Fatalf("checkpoints inspect: exit %d\n%s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "status:          corrupt checkpoint") || !strings.Contains(out.String(), "000004.sst is damaged") {
		t.Errorf("inspect of a damaged checkpoint:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "about 40000 keys") {
		t.Errorf("inspect does not say the key count is an estimate:\n%s", out.String())
	}
}

// TestCheckpointsCommandsOnRealRun runs two jobs with checkpointing into
// one state.checkpoints.dir and checks what `weir checkpoints` says of
// them: list on the root lists both jobs with their checkpoint count and
// latest valid checkpoint; inspect on the root asks to pick a job; inspect
// on a job's folder shows its latest valid checkpoint, with each source
// subtask's position as its connector reads it (files and rows, not hex)
// and each operator with its statement and sink; --help exits 0.
func TestCheckpointsCommandsOnRealRun(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "ckpts")
	write := func(name, text string) string { return writeFile(t, dir, name, text) }
	write("in/a.csv", "1,10\n2,20\n")
	write("in/sub/b.csv", "1,30\n3,40\n3,50\n")
	settings := `SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '50ms';
SET 'state.checkpoints.num-retained' = '100';
SET 'state.checkpoints.dir' = '` + root + `';
`
	files := write("files.sql", settings+`
CREATE TABLE f (k INT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '`+filepath.Join(dir, "in")+`', 'format' = 'csv');
CREATE TABLE o1 (k INT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO o1 SELECT k, SUM(v) FROM f GROUP BY k;`)
	stmtCount := "INSERT INTO o2 SELECT id % 7, COUNT(*) FROM g GROUP BY id % 7;"
	stmtSum := "INSERT INTO o3 SELECT id % 5, SUM(id) FROM g GROUP BY id % 5;"
	gen := write("gen.sql", settings+`
CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '999', 'rows-per-second' = '1000000');
CREATE TABLE o2 (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE o3 (k BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
`+stmtCount+"\n"+stmtSum)
	start := time.Now()
	for _, f := range []string{files, gen} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"run", "--quiet", f}, &stdout, &stderr); code != 0 {
			t.Fatalf("weir run %s: exit %d\n%s", f, code, stderr.String())
		}
	}
	end := time.Now()
	// What the folders hold, read independently of Weir.
	chks := func(job string) (n int, highest int) {
		entries, err := os.ReadDir(filepath.Join(root, job))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if id, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "chk-")); err == nil && e.IsDir() {
				n++
				highest = max(highest, id)
			}
		}
		if n == 0 {
			t.Fatalf("job %s wrote no checkpoint", job)
		}
		return n, highest
	}
	cmd := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != wantCode {
			t.Fatalf("weir %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, out.String(), errOut.String())
		}
		return out.String(), errOut.String()
	}
	// Rows of the jobs table: JOB CHECKPOINTS LATEST TIME.
	checkJobs := func(text string) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(text), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "JOB") {
			t.Fatalf("jobs table:\n%s", text)
		}
		for i, job := range []string{"files", "gen"} {
			n, highest := chks(job)
			f := strings.Fields(lines[i+1])
			if len(f) != 4 || f[0] != job || f[1] != strconv.Itoa(n) || f[2] != "chk-"+strconv.Itoa(highest) {
				t.Errorf("row of job %s: %q, want %d checkpoints, latest chk-%d", job, lines[i+1], n, highest)
				continue
			}
			if ts, err := time.Parse(time.RFC3339, f[3]); err != nil || ts.Before(start.Add(-time.Second)) || ts.After(end.Add(time.Second)) {
				t.Errorf("row of job %s: time %q not within the run (%v)", job, f[3], err)
			}
		}
	}
	out, _ := cmd(0, "checkpoints", "list", root)
	checkJobs(out)

	_, errOut := cmd(2, "checkpoints", "inspect", root)
	if !strings.Contains(errOut, "pick one: weir checkpoints inspect "+filepath.Join(root, "<job>")) {
		t.Errorf("inspect of the root does not ask to pick a job:\n%s", errOut)
	}
	checkJobs(errOut[strings.Index(errOut, "\n\n")+2:])

	// The datagen job: 1000 rows at parallelism 2, all emitted at the
	// final checkpoint; two statements, one aggregate each.
	_, highest := chks("gen")
	out, _ = cmd(0, "checkpoints", "inspect", filepath.Join(root, "gen"))
	lines := strings.Split(out, "\n")
	if want := fmt.Sprintf("inspecting its latest valid checkpoint, chk-%d", highest); !strings.Contains(lines[0], want) {
		t.Errorf("first line %q, want it to say %q", lines[0], want)
	}
	has := func(want string) {
		t.Helper()
		for _, l := range lines {
			if strings.TrimSpace(l) == want {
				return
			}
		}
		t.Errorf("inspect lacks the line %q:\n%s", want, out)
	}
	has("1: " + stmtCount)
	has("2: " + stmtSum)
	has("g ('connector' = 'datagen')  id " + sourceID(t, out, "g"))
	for sub := range 2 {
		prefix := fmt.Sprintf("[%d] subtask %d of 2: 500 rows emitted, next row %d; timestamp base ", sub, sub, 1000+sub)
		line := lineWith(out, prefix)
		if line == "" {
			t.Errorf("no line %q…:\n%s", prefix, out)
			continue
		}
		ts, err := time.Parse("2006-01-02T15:04:05.000Z", strings.Fields(strings.TrimPrefix(line, prefix))[0])
		if err != nil || ts.Before(start.Add(-time.Second)) || ts.After(end) {
			t.Errorf("timestamp base in %q not within the run (%v)", line, err)
		}
	}
	// Each aggregate is followed by its statement and sink.
	for _, c := range []struct{ agg, ctx string }{
		{"COUNT(*)", "statement 1 (feeds o2): " + stmtCount},
		{"SUM(id)", "statement 2 (feeds o3): " + stmtSum},
	} {
		found := false
		for i, l := range lines {
			if strings.Contains(l, "GroupAggregate(") && strings.Contains(l, c.agg) {
				found = true
				if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != c.ctx {
					t.Errorf("operator %q is followed by %q, want %q", l, lines[i+1], c.ctx)
				}
			}
		}
		if !found {
			t.Errorf("no GroupAggregate with %s:\n%s", c.agg, out)
		}
	}
	if strings.Contains(out, "position 0x") {
		t.Errorf("a position is shown as hex:\n%s", out)
	}

	// The filesystem job: files in order of relative path, a.csv read by
	// subtask 0 and sub/b.csv by subtask 1, both finished at the end.
	out, _ = cmd(0, "checkpoints", "inspect", filepath.Join(root, "files"))
	lines = strings.Split(out, "\n")
	has("f ('connector' = 'filesystem')  id " + sourceID(t, out, "f"))
	has("[0] subtask 0 of 2: finished: all its files read (1 file)")
	has("[1] subtask 1 of 2: finished: all its files read (1 file)")
	has("statement 1 (feeds o1): INSERT INTO o1 SELECT k, SUM(v) FROM f GROUP BY k;")

	// A job folder lists its checkpoints as before.
	out, _ = cmd(0, "checkpoints", "list", filepath.Join(root, "gen"))
	if n, _ := chks("gen"); len(strings.Split(strings.TrimSpace(out), "\n")) != n+1 {
		t.Errorf("list of job gen, want %d checkpoints:\n%s", n, out)
	}

	for _, args := range [][]string{{"checkpoints", "--help"}, {"checkpoints", "list", "--help"}, {"checkpoints", "inspect", "-h"}} {
		out, _ := cmd(0, args...)
		if !strings.HasPrefix(out, "usage: weir checkpoints") {
			t.Errorf("weir %s:\n%s", strings.Join(args, " "), out)
		}
	}
	if out, _ := cmd(0, "checkpoints", "list", "--help"); !strings.Contains(out, "--job NAME") {
		t.Errorf("list --help does not list --job:\n%s", out)
	}
}

// sourceID returns the id the inspect text gives the source of table.
func sourceID(t *testing.T, text, table string) string {
	t.Helper()
	l := lineWith(text, table+" ('connector' = ")
	i := strings.LastIndex(l, " id ")
	if i < 0 {
		t.Fatalf("no source line for table %s:\n%s", table, text)
	}
	return l[i+4:]
}

// lineWith returns the first line of text that starts with prefix after
// its indentation, without the indentation, or "".
func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
