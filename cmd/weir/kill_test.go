package main

// Fault-tolerance tests with the real binary: the weir command is built
// once, run on testdata/kill_sum.sql, killed with SIGKILL (at random
// moments, or by the fault points armed with WEIR_FAULTS), restarted with
// --restore latest, and the print sink's output of all runs, applied as an
// upsert stream, must equal the answer computed in Go.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weir-sql/weir/session"
)

// The constants of testdata/kill_sum.sql.
const (
	killRows   = 300000 // the sequence is 0..killRows-1
	killKeys   = 100000 // grouped by id % killKeys
	killJob    = "kill_sum"
	killCkpts  = "ckpts" // state.checkpoints.dir, relative to the run's folder
	killRetain = 2       // state.checkpoints.num-retained
)

// Deadlines of the waits on a child (generous: 2 shared cores).
const (
	firstCheckpointDeadline = 30 * time.Second
	runDeadline             = 90 * time.Second
)

// weirBin is the binary TestMain builds, or "" when the build was skipped.
var weirBin string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

// buildAndRun builds the weir binary into a temporary folder (unless the
// tests run with -short), runs the tests and removes the folder.
func buildAndRun(m *testing.M) int {
	if isShort() {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "weir-kill-test-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "kill_test: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "weir")
	build := exec.Command(goTool(), "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "kill_test: go build: %v\n", err)
		return 1
	}
	weirBin = bin
	return m.Run()
}

// isShort reports whether -short is among the arguments (testing.Short
// needs flag.Parse, which TestMain would otherwise have to call).
func isShort() bool {
	for _, a := range os.Args[1:] {
		if a == "-test.short" || a == "-test.short=true" || a == "-short" {
			return true
		}
	}
	return false
}

// goTool returns the go command: the one on PATH, else GOROOT's.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// needBinary skips the test when the binary was not built (-short).
func needBinary(t *testing.T) {
	t.Helper()
	if weirBin == "" {
		t.Skip("the kill tests build and run the weir binary; skipped with -short")
	}
}

// ---- one folder of runs ----

// killEnv is the working folder of a sequence of runs of one job: the
// query file, the checkpoints, the fault log and every run's stdout.
type killEnv struct {
	t        *testing.T
	dir      string
	faultLog string
	outs     []string // stdout files, in run order
	killed   []bool   // whether that run was killed
	lastProc *weirProc
}

func newKillEnv(t *testing.T) *killEnv {
	t.Helper()
	dir := t.TempDir()
	sql, err := os.ReadFile(filepath.Join("testdata", killJob+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, killJob+".sql"), sql, 0o644); err != nil {
		t.Fatal(err)
	}
	return &killEnv{t: t, dir: dir, faultLog: filepath.Join(dir, "faults.log")}
}

// jobDir is the job's checkpoint folder.
func (e *killEnv) jobDir() string { return filepath.Join(e.dir, killCkpts, killJob) }

// start runs `weir run [--restore latest] kill_sum.sql` with the given
// WEIR_FAULTS (may be empty); stdout goes to a file of its own.
func (e *killEnv) start(restore bool, faults string) *weirProc {
	e.t.Helper()
	args := []string{"run"}
	if restore {
		args = append(args, "--restore", "latest")
	}
	args = append(args, killJob+".sql")
	outPath := filepath.Join(e.dir, fmt.Sprintf("stdout-%02d.txt", len(e.outs)))
	p := startWeir(e.t, e.dir, outPath, e.faultLog, faults, len(e.outs), args)
	e.outs = append(e.outs, outPath)
	e.killed = append(e.killed, false)
	e.lastProc = p
	return p
}

// startWeir starts the weir binary in dir with args, stdout to outPath,
// stderr read line by line into the returned process's log, faults armed
// by WEIR_FAULTS (may be empty) and logged to faultLog. The test's cleanup
// kills it if it is still running.
func startWeir(t *testing.T, dir, outPath, faultLog, faults string, run int, args []string) *weirProc {
	t.Helper()
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(weirBin, args...)
	cmd.Dir = dir
	cmd.Stdout = out
	cmd.Env = append(withoutFaultEnv(os.Environ()), session.FaultLogEnv+"="+faultLog)
	if faults != "" {
		cmd.Env = append(cmd.Env, session.FaultsEnv+"="+faults)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		_ = out.Close()
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		t.Fatalf("start weir %s: %v", strings.Join(args, " "), err)
	}
	p := &weirProc{cmd: cmd, out: out, log: newLineLog(), readerDone: make(chan struct{}),
		label: fmt.Sprintf("run %d (weir %s, WEIR_FAULTS=%q)", run, strings.Join(args, " "), faults)}
	go func() {
		defer close(p.readerDone)
		p.log.readFrom(stderr)
	}()
	t.Cleanup(func() {
		if p.state == nil {
			_ = cmd.Process.Kill()
			p.wait()
		}
	})
	return p
}

// expectFinished waits for a run that must end by itself with exit code 0
// and a stderr line matching finished.
func expectFinished(t *testing.T, p *weirProc, finished *regexp.Regexp) {
	t.Helper()
	st := p.waitDeadline(t, runDeadline)
	if !st.Success() {
		t.Fatalf("%s: %v, want exit code 0\nstderr:\n%s", p.label, st, p.log.text())
	}
	if !p.log.has(finished) {
		t.Fatalf("%s: stderr does not say the job finished:\n%s", p.label, p.log.text())
	}
}

// readFaultLog returns the lines of a fault log, spaces as underscores.
func readFaultLog(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(string(data), " ", "_"))
}

// withoutFaultEnv drops WEIR_FAULTS and WEIR_FAULT_LOG from env.
func withoutFaultEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if strings.HasPrefix(kv, session.FaultsEnv+"=") || strings.HasPrefix(kv, session.FaultLogEnv+"=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// finish waits for a run that must end by itself with exit code 0.
func (e *killEnv) finish(p *weirProc) {
	e.t.Helper()
	expectFinished(e.t, p, regexp.MustCompile(`^weir: job `+killJob+` finished`))
}

// killAfter SIGKILLs run p after d (unless it ended before) and waits for
// it; the run must die by SIGKILL or end successfully.
func (e *killEnv) killAfter(p *weirProc, d time.Duration) {
	t := e.t
	t.Helper()
	timer := time.NewTimer(d)
	select {
	case <-timer.C:
	case <-p.readerDone:
	}
	timer.Stop()
	p.kill(t)
	st := p.waitDeadline(t, runDeadline)
	switch {
	case killedBySIGKILL(st):
		e.killed[len(e.killed)-1] = true
	case !st.Success():
		t.Fatalf("%s: %v, want death by SIGKILL\nstderr:\n%s", p.label, st, p.log.text())
	}
}

// expectKilled waits for a run that must die by SIGKILL.
func (e *killEnv) expectKilled(p *weirProc) {
	t := e.t
	t.Helper()
	st := p.waitDeadline(t, runDeadline)
	if !killedBySIGKILL(st) {
		t.Fatalf("%s: %v, want death by SIGKILL\nstderr:\n%s", p.label, st, p.log.text())
	}
	e.killed[len(e.killed)-1] = true
}

func killedBySIGKILL(st *os.ProcessState) bool {
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// faultsFired returns the lines of the fault log.
func (e *killEnv) faultsFired() []string {
	e.t.Helper()
	return readFaultLog(e.t, e.faultLog)
}

// checkAnswer applies the output of all runs, in order, as an upsert
// stream keyed by the group key and compares it with the batch answer.
func (e *killEnv) checkAnswer() {
	t := e.t
	t.Helper()
	got := map[int64]sumRow{}
	lines := 0
	for i, path := range e.outs {
		n, err := applyUpserts(got, path, e.killed[i])
		if err != nil {
			t.Fatalf("stdout of run %d: %v", i, err)
		}
		lines += n
	}
	want := batchAnswer()
	var diffs []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("key %d: missing, want %v", k, w))
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("key %d: got %v, want %v", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("key %d: unexpected %v", k, g))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		t.Fatalf("final state of %d runs (%d lines) differs from the batch answer in %d keys, e.g.:\n%s",
			len(e.outs), lines, len(diffs), strings.Join(diffs[:min(len(diffs), 10)], "\n"))
	}
	t.Logf("final state of %d runs (%d print lines) equals the batch answer (%d keys)", len(e.outs), lines, len(want))
}

// checkCheckpointFolder asserts, after a clean final run, that `weir
// checkpoints list` shows only valid checkpoints (at most killRetain) whose
// latest has id wantLatest, and that no working folder or temporary file
// is left.
func (e *killEnv) checkCheckpointFolder(wantLatest int64) {
	t := e.t
	t.Helper()
	rows, text := e.listCheckpoints()
	var ids []int64
	for _, r := range rows {
		if !r.valid {
			t.Fatalf("weir checkpoints list shows a checkpoint that is not valid after a clean run:\n%s", text)
		}
		ids = append(ids, r.id)
	}
	if len(ids) == 0 || len(ids) > killRetain {
		t.Errorf("weir checkpoints list shows %d checkpoints, want 1 to %d (num-retained):\n%s", len(ids), killRetain, text)
	} else if latest := slices.Max(ids); latest != wantLatest {
		t.Errorf("latest checkpoint is %d, want %d (the last one reported complete):\n%s", latest, wantLatest, text)
	}
	inspect := exec.Command(weirBin, "checkpoints", "inspect", filepath.Join(e.jobDir(), fmt.Sprintf("chk-%d", wantLatest)))
	if out, err := inspect.CombinedOutput(); err != nil {
		t.Errorf("weir checkpoints inspect chk-%d: %v\n%s", wantLatest, err, out)
	}
	var leftovers []string
	if top, err := os.ReadDir(filepath.Join(e.dir, killCkpts)); err != nil || len(top) != 1 || top[0].Name() != killJob {
		t.Errorf("%s holds %v (%v), want only the job's folder %s", killCkpts, top, err, killJob)
	}
	err := filepath.WalkDir(e.jobDir(), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.jobDir(), path)
		name := d.Name()
		switch {
		case name == "_work", strings.HasSuffix(name, ".tmp"), strings.HasSuffix(name, ".inprogress"),
			strings.Contains(strings.ToLower(name), "temp"):
			leftovers = append(leftovers, rel)
		case rel == ".lock" && d.Type().IsRegular():
			// the job's lock file: one run at a time
		case filepath.Dir(rel) == "." && rel != "." && !(d.IsDir() && strings.HasPrefix(name, "chk-")):
			leftovers = append(leftovers, rel) // only chk-<n> folders and the lock belong in the job's folder
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(leftovers) > 0 {
		t.Errorf("leftovers in %s after a clean run: %v", e.jobDir(), leftovers)
	}
}

// ckptRow is one row of `weir checkpoints list`.
type ckptRow struct {
	id    int64
	valid bool
}

// listCheckpoints runs `weir checkpoints list` on the job's folder and
// returns its rows (lowest id first) and its text.
func (e *killEnv) listCheckpoints() ([]ckptRow, string) {
	t := e.t
	t.Helper()
	cmd := exec.Command(weirBin, "checkpoints", "list", e.jobDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("weir checkpoints list: %v\n%s", err, stderr.String())
	}
	text := stdout.String()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if strings.TrimSpace(text) == "no checkpoints" {
		return nil, text
	}
	if !strings.HasPrefix(lines[0], "ID ") {
		t.Fatalf("weir checkpoints list: no header:\n%s", text)
	}
	var rows []ckptRow
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		id, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || len(f) < 4 {
			t.Fatalf("weir checkpoints list: bad row %q", l)
		}
		rows = append(rows, ckptRow{id: id, valid: strings.Join(f[3:], " ") == "valid"})
	}
	return rows, text
}

// checkCrashedFolder checks the checkpoint folder right after the first
// run died at a fault point, reported checkpoints complete: the last
// killRetain of them are valid, plus, when the kill came before retention
// (K5, K7), the one before; when it came mid-checkpoint (K1 to K4), the
// newest folder is that checkpoint, incomplete.
func (e *killEnv) checkCrashedFolder(point string, completed []int64) {
	t := e.t
	t.Helper()
	rows, text := e.listCheckpoints()
	var valid []int64
	for _, r := range rows {
		if r.valid {
			valid = append(valid, r.id)
		}
	}
	keep := killRetain
	if point == "K5" || point == "K7" {
		keep++ // the newest completed, the older ones not yet deleted
	}
	want := completed[max(0, len(completed)-keep):]
	if !slices.Equal(valid, want) {
		t.Fatalf("after the kill at %s, valid checkpoints %v, want %v (completed: %v):\n%s", point, valid, want, completed, text)
	}
	newest := rows[len(rows)-1]
	switch point {
	case "K1", "K2", "K3", "K4":
		if newest.valid || newest.id <= slices.Max(completed) {
			t.Fatalf("after the kill at %s, the newest checkpoint folder is not an incomplete one newer than %d:\n%s",
				point, slices.Max(completed), text)
		}
	case "K5", "K7":
		if !newest.valid || newest.id != slices.Max(completed) {
			t.Fatalf("after the kill at %s, the newest checkpoint folder is not the last one completed (%d):\n%s",
				point, slices.Max(completed), text)
		}
	}
}

// ---- a running child ----

// weirProc is one running weir process. Its stderr is read line by line
// by a goroutine the proc owns (wait waits for it).
type weirProc struct {
	cmd        *exec.Cmd
	out        *os.File
	log        *lineLog
	readerDone chan struct{}
	label      string
	state      *os.ProcessState // set by wait
}

// wait waits for stderr's end and the process, and closes its stdout file.
func (p *weirProc) wait() *os.ProcessState {
	if p.state != nil {
		return p.state
	}
	<-p.readerDone
	_ = p.cmd.Wait()
	_ = p.out.Close()
	p.state = p.cmd.ProcessState
	return p.state
}

// waitDeadline waits for the process to end; past d it kills it and fails.
func (p *weirProc) waitDeadline(t *testing.T, d time.Duration) *os.ProcessState {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.readerDone:
	case <-timer.C:
		_ = p.cmd.Process.Kill()
		p.wait()
		t.Fatalf("%s did not end within %s\nstderr:\n%s", p.label, d, p.log.text())
	}
	return p.wait()
}

// kill sends SIGKILL.
func (p *weirProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("kill %s: %v", p.label, err)
	}
}

// lineLog collects the lines of a child's stderr and wakes waiters on
// every new line and at the end.
type lineLog struct {
	mu      sync.Mutex
	lines   []string
	eof     bool
	changed chan struct{} // closed and replaced on every change
}

func newLineLog() *lineLog { return &lineLog{changed: make(chan struct{})} }

func (l *lineLog) readFrom(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l.mu.Lock()
		l.lines = append(l.lines, sc.Text())
		close(l.changed)
		l.changed = make(chan struct{})
		l.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r) // a line too long: keep the child unblocked
	l.mu.Lock()
	l.eof = true
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// errEOF says the child closed stderr (it ended) before the line came.
var errEOF = errors.New("the process ended before the line came")

// waitFor waits until a line from index `from` on matches re, and returns
// its index and submatches.
func (l *lineLog) waitFor(from int, re *regexp.Regexp, d time.Duration) (int, []string, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		l.mu.Lock()
		for i := from; i < len(l.lines); i++ {
			if m := re.FindStringSubmatch(l.lines[i]); m != nil {
				l.mu.Unlock()
				return i, m, nil
			}
		}
		from = len(l.lines)
		eof, changed := l.eof, l.changed
		l.mu.Unlock()
		if eof {
			return 0, nil, errEOF
		}
		select {
		case <-changed:
		case <-timer.C:
			return 0, nil, fmt.Errorf("no line matching %q within %s", re, d)
		}
	}
}

func (l *lineLog) has(re *regexp.Regexp) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.lines, re.MatchString)
}

// allMatches returns the submatches of every line matching re.
func (l *lineLog) allMatches(re *regexp.Regexp) [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out [][]string
	for _, line := range l.lines {
		if m := re.FindStringSubmatch(line); m != nil {
			out = append(out, m)
		}
	}
	return out
}

func (l *lineLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

var (
	completeLine = regexp.MustCompile(`^weir: checkpoint (\d+) complete`)
	restoreLine  = regexp.MustCompile(`^weir: restoring checkpoint (\d+) from`)
)

// completedIDs returns the ids of the checkpoints the run reported complete.
func (p *weirProc) completedIDs() []int64 {
	var ids []int64
	for _, m := range p.log.allMatches(completeLine) {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		ids = append(ids, id)
	}
	return ids
}

// restoredID returns the checkpoint the run restored, or -1.
func (p *weirProc) restoredID() int64 {
	ms := p.log.allMatches(restoreLine)
	if len(ms) == 0 {
		return -1
	}
	id, _ := strconv.ParseInt(ms[0][1], 10, 64)
	return id
}

// checkRestored asserts that run p restored a checkpoint at least as new
// as the last one reported complete before (every reported checkpoint is
// durable) and as the one the run before restored; when that run completed
// no checkpoint (it was killed while restoring, K8), exactly the one it
// restored (a restore changes nothing).
func checkRestored(t *testing.T, p *weirProc, lastReported, lastRestored int64, prevCompleted bool) {
	t.Helper()
	got := p.restoredID()
	switch {
	case got < 0:
		t.Fatalf("%s: did not restore a checkpoint\nstderr:\n%s", p.label, p.log.text())
	case got < lastReported:
		t.Fatalf("%s restored checkpoint %d, but checkpoint %d was reported complete before\nstderr:\n%s",
			p.label, got, lastReported, p.log.text())
	case got < lastRestored, !prevCompleted && lastRestored >= 0 && got != lastRestored:
		t.Fatalf("%s restored checkpoint %d, but the run before restored %d and completed none\nstderr:\n%s",
			p.label, got, lastRestored, p.log.text())
	}
}

// ---- the answer ----

// sumRow is the row of one key: SUM(id), COUNT(*).
type sumRow struct{ sum, count int64 }

func batchAnswer() map[int64]sumRow {
	want := make(map[int64]sumRow, killKeys)
	for id := int64(0); id < killRows; id++ {
		r := want[id%killKeys]
		r.sum += id
		r.count++
		want[id%killKeys] = r
	}
	return want
}

// applyUpserts applies a print sink's output ("2> +U[k, s, c]") to rows:
// +I and +U set the key's row, -D deletes it, -U is ignored. A killed
// run's output may end in a torn line, which is ignored.
func applyUpserts(rows map[int64]sumRow, path string, killed bool) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	if n := len(data); n > 0 && data[n-1] != '\n' {
		if !killed {
			return 0, fmt.Errorf("output of a clean run ends in a partial line")
		}
		data = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	n := 0
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		line := string(data[:nl])
		data = data[nl+1:]
		n++
		kind, k, r, err := parsePrintLine(line)
		if err != nil {
			return n, fmt.Errorf("line %d: %w", n, err)
		}
		switch kind {
		case "+I", "+U":
			rows[k] = r
		case "-D":
			delete(rows, k)
		}
	}
	return n, nil
}

// parsePrintLine parses "[N> ]KIND[k, s, c]".
func parsePrintLine(line string) (kind string, k int64, r sumRow, err error) {
	s := line
	if i := strings.Index(s, "> "); i >= 0 {
		s = s[i+2:]
	}
	if len(s) < 4 || s[2] != '[' || s[len(s)-1] != ']' {
		return "", 0, r, fmt.Errorf("unexpected print line %q", line)
	}
	kind = s[:2]
	f := strings.Split(s[3:len(s)-1], ", ")
	if len(f) != 3 {
		return "", 0, r, fmt.Errorf("unexpected print line %q", line)
	}
	var v [3]int64
	for i := range f {
		if v[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return "", 0, r, fmt.Errorf("unexpected print line %q: %w", line, err)
		}
	}
	switch kind {
	case "+I", "+U", "-U", "-D":
	default:
		return "", 0, r, fmt.Errorf("unexpected row kind in %q", line)
	}
	return kind, v[0], sumRow{v[1], v[2]}, nil
}

// ---- the tests ----

// minKills is the number of SIGKILLs of TestRandomKills.
const minKills = 10

// maxKillJitter bounds the random delay between a run's first completed
// checkpoint and its SIGKILL (longer would let the job finish first).
const maxKillJitter = 150 * time.Millisecond

// maxEarlyKills bounds the extra kills of TestRandomKills that come
// before a restored run completes a checkpoint, within maxEarlyJitter of
// its start of restore.
const (
	maxEarlyKills  = 4
	maxEarlyJitter = 60 * time.Millisecond
)

// seedFrom returns the seed of a randomized test: the environment variable
// env if set (to repeat a run), else the clock.
func seedFrom(t *testing.T, env string) uint64 {
	if s := os.Getenv(env); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", env, s, err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// TestRandomKills SIGKILLs the binary at random moments, each time after at
// least one new checkpoint completed, restarts it with --restore latest,
// and checks the final state, the checkpoint folder and the leftovers.
// minKills kills come early in their run (so that the job cannot finish
// before); one more comes after a random number of checkpoints, possibly
// after the input is exhausted, or never if the job finishes first.
func TestRandomKills(t *testing.T) {
	needBinary(t)
	t.Parallel() // its own folder and processes; the runs mostly wait on rate-limited sources
	seed := seedFrom(t, "WEIR_KILL_SEED")
	t.Logf("seed %d; repeat with: WEIR_KILL_SEED=%d go test ./cmd/weir -run '^TestRandomKills$' -v", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x6b696c6c))
	start := time.Now()
	e := newKillEnv(t)
	lastRestored, lastReported := int64(-1), int64(-1)
	prevCompleted := true
	kills, early := 0, 0
	for run := 0; ; run++ {
		late := kills == minKills // the extra kill, late in its run
		final := kills > minKills
		p := e.start(run > 0, "")
		if run > 0 {
			if _, _, err := p.log.waitFor(0, restoreLine, firstCheckpointDeadline); err != nil {
				p.kill(t)
				p.wait()
				t.Fatalf("seed %d: %s: no restore: %v\nstderr:\n%s", seed, p.label, err, p.log.text())
			}
			checkRestored(t, p, lastReported, lastRestored, prevCompleted)
			if prevCompleted && p.restoredID() <= lastRestored {
				t.Fatalf("seed %d: %s restored checkpoint %d, no newer than the run before", seed, p.label, p.restoredID())
			}
			lastRestored = p.restoredID()
		}
		if final {
			e.finish(p)
			break
		}
		// Now and then a restored run is killed before it completes a
		// checkpoint (an extra kill): the next run restores the same one.
		if run > 0 && !late && early < maxEarlyKills && rng.IntN(4) == 0 {
			early++
			jitter := time.Duration(rng.Int64N(int64(maxEarlyJitter)))
			e.killAfter(p, jitter)
			if ids := p.completedIDs(); len(ids) > 0 {
				lastReported = slices.Max(ids)
			}
			prevCompleted = len(p.completedIDs()) > 0
			t.Logf("run %d: restored %d, killed %s after the restore began (extra kill, %d checkpoints completed)",
				run, p.restoredID(), jitter.Round(time.Millisecond), len(p.completedIDs()))
			continue
		}
		waitCkpts := 1
		if late {
			waitCkpts = 1 + rng.IntN(20)
		}
		jitter := time.Duration(rng.Int64N(int64(maxKillJitter)))
		from := 0
		var err error
		for range waitCkpts {
			if from, _, err = p.log.waitFor(from, completeLine, firstCheckpointDeadline); err != nil {
				break
			}
			from++
		}
		if late && errors.Is(err, errEOF) {
			e.finish(p) // the job finished before the late kill
			t.Logf("run %d: restored %d, finished before checkpoint %d of the run", run, p.restoredID(), waitCkpts)
			break
		}
		if err != nil {
			p.kill(t)
			p.wait()
			t.Fatalf("seed %d: %s: waiting for checkpoint %d of the run before kill %d: %v\nstderr:\n%s",
				seed, p.label, waitCkpts, kills+1, err, p.log.text())
		}
		timer := time.NewTimer(jitter)
		select {
		case <-timer.C:
		case <-p.readerDone:
		}
		timer.Stop()
		p.kill(t)
		st := p.waitDeadline(t, runDeadline)
		if !killedBySIGKILL(st) {
			if late && st.Success() {
				e.finish(p)
				t.Logf("run %d: restored %d, finished before the late kill", run, p.restoredID())
				break
			}
			t.Fatalf("seed %d: %s ended (%v) before kill %d; the kills come too late to make %d of them\nstderr:\n%s",
				seed, p.label, st, kills+1, minKills, p.log.text())
		}
		e.killed[len(e.killed)-1] = true
		kills++
		ids := p.completedIDs()
		lastReported = slices.Max(ids)
		prevCompleted = true
		t.Logf("run %d: restored %d, completed checkpoints %d..%d, killed %s after checkpoint %d of the run",
			run, p.restoredID(), ids[0], lastReported, jitter.Round(time.Millisecond), waitCkpts)
	}
	last := e.lastProc
	latest := last.restoredID()
	if ids := last.completedIDs(); len(ids) > 0 {
		latest = slices.Max(ids)
	}
	if fired := e.faultsFired(); len(fired) != 0 {
		t.Fatalf("faults fired without being armed: %v", fired)
	}
	e.checkAnswer()
	e.checkCheckpointFolder(latest)
	t.Logf("%d kills (and %d extra ones before a checkpoint) and a clean run in %s", kills, early, time.Since(start).Round(time.Millisecond))
}

// TestKillPoints arms each fault point of the checkpoint algorithm with
// kill, checks that the process died by SIGKILL and that exactly the armed
// faults fired, then restores the latest checkpoint and runs to the end.
func TestKillPoints(t *testing.T) {
	needBinary(t)
	// The pass numbers let some checkpoints complete first: per checkpoint,
	// K1 is passed by each of the 2 source subtasks, K2 and K3 by each of
	// the 2 aggregation subtasks, K4 by every task, K5 and K7 once.
	//
	// "K1 first" kills the run at the very first trigger, before any
	// checkpoint completed: --restore latest skips the incomplete folder
	// and starts from the beginning. "K8 second" kills the second of the
	// two restoring subtasks, after the first restored its state.
	cases := []struct {
		name   string
		faults []string // WEIR_FAULTS of the killed runs, in order
		fresh  bool     // no checkpoint completes before the kill
	}{
		{"K1", []string{"K1@7=kill"}, false},
		{"K2", []string{"K2@5=kill"}, false},
		{"K3", []string{"K3@5=kill"}, false},
		{"K4", []string{"K4@9=kill"}, false},
		{"K5", []string{"K5@3=kill"}, false},
		{"K7", []string{"K7@3=kill"}, false},
		{"K8", []string{"K4@9=kill", "K8=kill"}, false},
		{"K8 second", []string{"K4@9=kill", "K8@2=kill"}, false},
		{"K1 first", []string{"K1=kill"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own folder and processes; the runs mostly wait on the rate-limited source
			start := time.Now()
			e := newKillEnv(t)
			var want []string
			lastReported, lastRestored := int64(-1), int64(-1)
			prevCompleted := true
			for i, spec := range tc.faults {
				p := e.start(i > 0, spec)
				e.expectKilled(p)
				point, _, _ := strings.Cut(spec, "@")
				point, _, _ = strings.Cut(point, "=")
				want = append(want, point+"_kill")
				if got := e.faultsFired(); !slices.Equal(got, want) {
					t.Fatalf("%s: faults fired %v, want %v\nstderr:\n%s", p.label, got, want, p.log.text())
				}
				switch {
				case i == 0 && tc.fresh:
					if ids := p.completedIDs(); len(ids) > 0 {
						t.Fatalf("%s: checkpoints %v completed before the kill\nstderr:\n%s", p.label, ids, p.log.text())
					}
				case i == 0:
					if len(p.completedIDs()) == 0 {
						t.Fatalf("%s: killed before any checkpoint completed\nstderr:\n%s", p.label, p.log.text())
					}
					e.checkCrashedFolder(point, p.completedIDs())
				default:
					checkRestored(t, p, lastReported, lastRestored, prevCompleted)
					lastRestored = p.restoredID()
				}
				ids := p.completedIDs()
				if prevCompleted = len(ids) > 0; prevCompleted {
					lastReported = slices.Max(ids)
				}
			}
			p := e.start(true, "")
			e.finish(p)
			if tc.fresh {
				if p.restoredID() >= 0 || !p.log.has(regexp.MustCompile(`^weir: no complete checkpoint in .*: starting from the beginning$`)) {
					t.Fatalf("%s: want a start from the beginning\nstderr:\n%s", p.label, p.log.text())
				}
			} else {
				checkRestored(t, p, lastReported, lastRestored, prevCompleted)
			}
			if got := e.faultsFired(); !slices.Equal(got, want) {
				t.Fatalf("faults fired %v, want %v", got, want)
			}
			latest := p.restoredID()
			if ids := p.completedIDs(); len(ids) > 0 {
				latest = slices.Max(ids)
			}
			e.checkAnswer()
			e.checkCheckpointFolder(latest)
			t.Logf("%s in %s", strings.Join(tc.faults, " then "), time.Since(start).Round(time.Millisecond))
		})
	}
}
