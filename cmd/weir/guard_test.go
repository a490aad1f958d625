package main

// Tests of the guards that keep one job's output from being lost or
// written twice (issue 10, items 1 to 3), through the real binary: one run
// per checkpoint folder and per sink folder, and no start that would write
// committed output again unless asked.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// expectRefused waits for p, which must fail with exit code 1 and a
// stderr that matches every one of want.
func expectRefused(t *testing.T, p *weirProc, want ...string) {
	t.Helper()
	st := p.waitDeadline(t, runDeadline)
	if st.ExitCode() != 1 {
		t.Fatalf("%s: %v, want exit code 1\nstderr:\n%s", p.label, st, p.log.text())
	}
	for _, w := range want {
		if !regexp.MustCompile(w).MatchString(p.log.text()) {
			t.Fatalf("%s: stderr does not match %q:\n%s", p.label, w, p.log.text())
		}
	}
}

// TestOneRunPerFolder starts the job twice: the second run fails at once,
// naming the process that holds the checkpoint folder; a job of another
// name writing the same sink folder fails naming the sink's folder; after
// the first run is killed with SIGKILL its locks are free, and a restore
// finishes the job with the batch answer, exactly once.
func TestOneRunPerFolder(t *testing.T) {
	needBinary(t)
	t.Parallel() // its own folder and processes; the runs mostly wait on rate-limited sources
	e := newSinkEnv(t)
	p1 := e.start("")
	waitLine(t, p1, 0, completeLine, firstCheckpointDeadline)
	pid := strconv.Itoa(p1.cmd.Process.Pid)

	p2 := e.start("")
	expectRefused(t, p2, `checkpoint folder \S*ckpts/`+sinkJob+` is in use: held by process `+pid+` \(job `+sinkJob+`, weir run `+sinkJob+`\.sql, since `,
		`one run of a job at a time`)

	sql, err := os.ReadFile(filepath.Join(e.dir, sinkJob+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	other := "SET 'pipeline.name' = 'other';\n" + string(sql)
	if err := os.WriteFile(filepath.Join(e.dir, "other.sql"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	p3 := startWeir(t, e.dir, filepath.Join(e.dir, "stdout-other.txt"), e.faultLog, "", 99, []string{"run", "other.sql"})
	expectRefused(t, p3, `sink sums: filesystem sink folder out is in use: held by process `+pid)
	if _, err := os.Stat(filepath.Join(e.dir, "ckpts", "other", "chk-1")); err == nil {
		t.Fatalf("the refused job wrote a checkpoint")
	}

	p1.kill(t)
	if st := p1.wait(); !killedBySIGKILL(st) {
		t.Fatalf("%s: %v, want killed by SIGKILL", p1.label, st)
	}
	p4 := e.start("", "--restore", "latest")
	e.finish(p4)
	checkFinal(t, e.outDir())
}

// damageMetadata makes a checkpoint's _metadata unreadable.
func damageMetadata(t *testing.T, chk string) {
	t.Helper()
	path := filepath.Join(chk, "_metadata")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFallbackPastCommittedOutput kills the job after its sink committed
// output of several checkpoints, damages every checkpoint from the last
// one with committed output on, and restores: the restore falls back to an
// older checkpoint, and running on from it would write the committed rows
// after it again, so the run is refused with a message that names both
// checkpoints and the choices. With --allow-duplicate-output it runs,
// says so, and names its new files after checkpoints above the committed
// ones.
func TestFallbackPastCommittedOutput(t *testing.T) {
	needBinary(t)
	t.Parallel() // its own folder and processes; the runs mostly wait on rate-limited sources
	e := newSinkEnv(t)
	retain := "SET 'state.checkpoints.num-retained' = '2';"
	sqlPath := filepath.Join(e.dir, sinkJob+".sql")
	sql, err := os.ReadFile(sqlPath)
	if err != nil || !strings.Contains(string(sql), retain) {
		t.Fatalf("%s has no line %q (%v)", sqlPath, retain, err)
	}
	sql = []byte(strings.Replace(string(sql), retain, "SET 'state.checkpoints.num-retained' = '4';", 1))
	if err := os.WriteFile(sqlPath, sql, 0o644); err != nil {
		t.Fatal(err)
	}
	p1 := e.start("")
	from := 0
	for range 3 {
		i, _ := waitLine(t, p1, from, completeLine, firstCheckpointDeadline)
		from = i + 1
	}
	p1.kill(t)
	p1.wait()

	parts, _, err := sinkFolder(e.outDir())
	if err != nil {
		t.Fatal(err)
	}
	var committed int64
	for _, p := range parts {
		committed = max(committed, p.checkpoint)
	}
	if committed < 2 {
		t.Fatalf("after 3 completed checkpoints the sink committed only up to checkpoint %d: %v", committed, parts)
	}
	checkPrefix(t, e.outDir(), sumAnswer())
	entries, err := os.ReadDir(filepath.Join(e.dir, "ckpts", sinkJob))
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if id, ok := strings.CutPrefix(en.Name(), "chk-"); ok {
			chk := filepath.Join(e.dir, "ckpts", sinkJob, en.Name())
			if _, err := os.Stat(filepath.Join(chk, "_metadata")); errors.Is(err, fs.ErrNotExist) {
				continue // a checkpoint the kill interrupted: no restore takes it anyway
			}
			if n, _ := strconv.ParseInt(id, 10, 64); n >= committed {
				damageMetadata(t, chk)
			}
		}
	}
	fallback := committed - 1

	p2 := e.start("", "--restore", "latest")
	expectRefused(t, p2,
		fmt.Sprintf(`weir: restoring checkpoint %d from`, fallback),
		fmt.Sprintf(`sink sums: out already holds output committed by checkpoint %d, later than checkpoint %d that the job restores`, committed, fallback),
		`--allow-duplicate-output`, `fresh folder`)
	after, _, err := sinkFolder(e.outDir())
	if err != nil || len(after) != len(parts) {
		t.Fatalf("the refused run changed the committed files: %d before, %d after (%v)", len(parts), len(after), err)
	}

	p3 := e.start("", "--restore", "latest", "--allow-duplicate-output")
	e.finish(p3)
	if !p3.log.has(regexp.MustCompile(fmt.Sprintf(`^weir: warning: sink sums: writing output again that out already holds up to checkpoint %d`, committed))) {
		t.Fatalf("%s: no warning about the rows written again:\n%s", p3.label, p3.log.text())
	}
	final, _, err := sinkFolder(e.outDir())
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]bool{}
	for _, p := range parts {
		old[p.name] = true
	}
	var chain []partFile // the output of checkpoints up to fallback, then the new files
	for _, p := range final {
		if !old[p.name] && p.checkpoint <= committed {
			t.Errorf("new part file %s is named after checkpoint %d, not above the committed %d", p.name, p.checkpoint, committed)
		}
		if !old[p.name] || p.checkpoint <= fallback {
			chain = append(chain, p)
		}
	}
	if !p3.log.has(regexp.MustCompile(fmt.Sprintf(`^weir: restoring checkpoint %d from`, fallback))) {
		t.Fatalf("%s: did not restore checkpoint %d:\n%s", p3.label, fallback, p3.log.text())
	}
	// The run went on from checkpoint fallback: what was committed up to
	// it and the run's new files form one exactly-once changelog, which
	// ends at the batch answer. The whole folder, read by key as upserts
	// (the rows of the checkpoints after fallback are in it twice), ends
	// there too.
	c, err := readCommittedParts(e.outDir(), chain)
	if err != nil {
		t.Fatalf("the output up to checkpoint %d and the new files: %v", fallback, err)
	}
	want := sumAnswer()
	checkRows(t, "the output up to the restored checkpoint and the new files", c.rows, want)
	all, err := upsertParts(e.outDir(), final)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, "the whole folder read as upserts", all, want)
}

// nockAnswer is the batch answer of noCheckpointSQL: SUM(id) and COUNT(*)
// per id % 100 over 0..9999.
func nockAnswer() map[int64]sumRow {
	want := map[int64]sumRow{}
	for id := int64(0); id < 10000; id++ {
		r := want[id%100]
		want[id%100] = sumRow{r.sum + id, r.count + 1}
	}
	return want
}

// noCheckpointSQL is a bounded grouped sum into a filesystem sink, without
// checkpointing.
const noCheckpointSQL = `SET 'parallelism.default' = '2';
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '9999');
CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH ('connector' = 'filesystem', 'path' = 'out', 'format' = 'debezium-json');
INSERT INTO sums SELECT id % 100, SUM(id), COUNT(*) FROM ev GROUP BY id % 100;
`

// TestRunAgainIntoCommittedOutput runs a job without checkpoints to its
// end, then again, from scratch and with --restore latest (there is no
// checkpoint): both are refused, since they would write every row again;
// --allow-duplicate-output runs it, naming the files after the earlier
// run's.
func TestRunAgainIntoCommittedOutput(t *testing.T) {
	needBinary(t)
	t.Parallel() // its own folder and processes; the runs mostly wait on rate-limited sources
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nock.sql"), []byte(noCheckpointSQL), 0o644); err != nil {
		t.Fatal(err)
	}
	faults := filepath.Join(dir, "faults.log")
	run := func(n int, args ...string) *weirProc {
		return startWeir(t, dir, filepath.Join(dir, fmt.Sprintf("stdout-%d.txt", n)), faults, "", n, append(append([]string{"run"}, args...), "nock.sql"))
	}
	finished := regexp.MustCompile(`^weir: job nock finished`)
	expectFinished(t, run(0), finished)
	parts, _, err := sinkFolder(filepath.Join(dir, "out"))
	if err != nil || len(parts) == 0 {
		t.Fatalf("first run committed %v (%v)", parts, err)
	}
	want := nockAnswer()
	c, err := readCommitted(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatalf("first run's output: %v", err)
	}
	checkRows(t, "the first run's output", c.rows, want)

	expectRefused(t, run(1), `sink sums: out already holds output committed by an earlier run of the job \(up to checkpoint 1\); starting from the beginning would write it all again`)
	p := run(2, "--restore", "latest")
	expectRefused(t, p, `starting from the beginning`, `already holds output committed by an earlier run`)
	if again, _, _ := sinkFolder(filepath.Join(dir, "out")); len(again) != len(parts) {
		t.Fatalf("refused runs changed the folder: %d part files, %d before", len(again), len(parts))
	}

	p = run(3, "--allow-duplicate-output")
	expectFinished(t, p, finished)
	if !p.log.has(regexp.MustCompile(`^weir: warning: sink sums: writing output again`)) {
		t.Fatalf("%s: no warning:\n%s", p.label, p.log.text())
	}
	all, _, err := sinkFolder(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all[len(parts):] {
		if f.checkpoint != 2 {
			t.Errorf("second run's file %s: checkpoint %d, want 2", f.name, f.checkpoint)
		}
	}
	// The second run wrote the whole answer again, as a changelog of its
	// own; the folder read by key as upserts still ends at the answer.
	again, err := readCommittedParts(filepath.Join(dir, "out"), all[len(parts):])
	if err != nil {
		t.Fatalf("second run's output: %v", err)
	}
	checkRows(t, "the second run's output", again.rows, want)
	up, err := upsertParts(filepath.Join(dir, "out"), all)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, "the folder read as upserts", up, want)
}
