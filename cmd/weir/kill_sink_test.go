package main

// Exactly-once tests of the filesystem sink with the real binary: the
// weir command (built by TestMain in kill_test.go) runs
// testdata/kill_sink.sql, is killed with SIGKILL (at random moments, or by
// the fault points armed with WEIR_FAULTS) or stopped with a savepoint, and
// is restored; the committed part files, read as a Debezium changelog, must
// hold every result row exactly once and equal the answer computed in Go.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The constants of testdata/kill_sink.sql.
const (
	sinkRows   = 200000 // the sequence is 0..sinkRows-1
	sinkKeys   = 50000  // grouped by id % sinkKeys
	sinkJob    = "kill_sink"
	sinkOut    = "out" // the sink's path, relative to the run's folder
	sinkParSet = "SET 'parallelism.default' = '2';"
)

var (
	savepointLine = regexp.MustCompile(`^weir: savepoint written to (\S+)$`)
	restoreSPLine = regexp.MustCompile(`^weir: restoring savepoint (\d+) from`)
	finishedLine  = regexp.MustCompile(`^weir: job ` + sinkJob + ` finished`)
	stoppedLine   = regexp.MustCompile(`^weir: job ` + sinkJob + ` stopped in \S+: (\d+) rows read`)
)

// ---- one folder of runs ----

// sinkEnv is the working folder of a sequence of runs of kill_sink.sql:
// the query file, the checkpoints, the savepoints, the sink's folder and
// the fault log.
type sinkEnv struct {
	t        *testing.T
	dir      string
	faultLog string
	runs     int
}

// newSinkEnv copies testdata/kill_sink.sql (at parallelism 2) into a new folder.
func newSinkEnv(t *testing.T) *sinkEnv {
	t.Helper()
	e := &sinkEnv{t: t, dir: t.TempDir()}
	e.faultLog = filepath.Join(e.dir, "faults.log")
	e.setParallelism(2)
	return e
}

// setParallelism (re)writes the query file with parallelism.default = par.
func (e *sinkEnv) setParallelism(par int) {
	t := e.t
	t.Helper()
	sql, err := os.ReadFile(filepath.Join("testdata", sinkJob+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(sql, []byte(sinkParSet)) {
		t.Fatalf("testdata/%s.sql has no line %q", sinkJob, sinkParSet)
	}
	sql = bytes.Replace(sql, []byte(sinkParSet), fmt.Appendf(nil, "SET 'parallelism.default' = '%d';", par), 1)
	if err := os.WriteFile(filepath.Join(e.dir, sinkJob+".sql"), sql, 0o644); err != nil {
		t.Fatal(err)
	}
}

// outDir is the sink's folder.
func (e *sinkEnv) outDir() string { return filepath.Join(e.dir, sinkOut) }

// start runs `weir run ARGS... kill_sink.sql` with the given WEIR_FAULTS
// (may be empty); stdout goes to a file of its own.
func (e *sinkEnv) start(faults string, args ...string) *weirProc {
	e.t.Helper()
	args = append(append([]string{"run"}, args...), sinkJob+".sql")
	p := startWeir(e.t, e.dir, filepath.Join(e.dir, fmt.Sprintf("stdout-%02d.txt", e.runs)), e.faultLog, faults, e.runs, args)
	e.runs++
	return p
}

// finish waits for a run that must end by itself with exit code 0 and
// report that the job finished.
func (e *sinkEnv) finish(p *weirProc) {
	e.t.Helper()
	expectFinished(e.t, p, finishedLine)
}

// waitLine waits for a line of p's stderr from index from on that matches
// re, failing the test (after killing p) when it does not come.
func waitLine(t *testing.T, p *weirProc, from int, re *regexp.Regexp, d time.Duration) (int, []string) {
	t.Helper()
	i, m, err := p.log.waitFor(from, re, d)
	if err != nil {
		p.kill(t)
		p.wait()
		t.Fatalf("%s: %v\nstderr:\n%s", p.label, err, p.log.text())
	}
	return i, m
}

// signalProc sends sig to p.
func signalProc(t *testing.T, p *weirProc, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%s: send %v: %v", p.label, sig, err)
	}
}

// faultsFired returns the lines of the fault log, spaces as underscores.
func (e *sinkEnv) faultsFired() []string {
	e.t.Helper()
	return readFaultLog(e.t, e.faultLog)
}

// ---- the committed output ----

// partFile is a committed part file: part-<subtask>-<checkpoint>-<n>.<ext>.
type partFile struct {
	name                string
	subtask, checkpoint int64
	n                   int64
}

var partFileName = regexp.MustCompile(`^part-(\d+)-(\d+)-(\d+)\.json$`)

// sinkFolder lists the sink's folder: the committed part files (ordered
// by checkpoint, subtask and number, the order in which their records were
// produced for any one key) and the in-progress files. Any other name is
// an error (but the lock file .weir.lock).
func sinkFolder(dir string) (parts []partFile, inProgress []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, en := range entries {
		name := en.Name()
		if name == ".weir.lock" { // the folder's lock file, hidden from readers
			continue
		}
		if strings.HasPrefix(name, ".part-") && strings.HasSuffix(name, ".inprogress") {
			inProgress = append(inProgress, name)
			continue
		}
		m := partFileName.FindStringSubmatch(name)
		if m == nil || !en.Type().IsRegular() {
			return nil, nil, fmt.Errorf("unexpected entry %q in the sink's folder %s", name, dir)
		}
		var v [3]int64
		for i := range v {
			v[i], _ = strconv.ParseInt(m[i+1], 10, 64)
		}
		parts = append(parts, partFile{name: name, subtask: v[0], checkpoint: v[1], n: v[2]})
	}
	slices.SortFunc(parts, func(a, b partFile) int {
		if c := cmp.Compare(a.checkpoint, b.checkpoint); c != 0 {
			return c
		}
		if c := cmp.Compare(a.subtask, b.subtask); c != 0 {
			return c
		}
		return cmp.Compare(a.n, b.n)
	})
	return parts, inProgress, nil
}

// dbzRow is the row of a Debezium record.
type dbzRow struct {
	K int64 `json:"k"`
	S int64 `json:"s"`
	C int64 `json:"c"`
}

// dbzRecord is one line of a Debezium JSON part file.
type dbzRecord struct {
	Before *dbzRow `json:"before"`
	After  *dbzRow `json:"after"`
	Op     string  `json:"op"`
}

// committed is the committed output of the sink's folder applied as a
// changelog.
type committed struct {
	rows    map[int64]sumRow // key -> its row, for the keys present
	records int              // records read
	afters  int              // records with an after image
	files   []partFile
}

// readCommitted reads the committed part files and applies them as a
// changelog, checking exactly-once on the way: every row's count (adds
// minus retractions) must end at 0 or 1, and per key the records must form
// a chain (a create for an absent key, an update or delete whose before
// image is the key's current row), which a record committed twice breaks
// even where the counts do not show it.
func readCommitted(dir string) (committed, error) {
	parts, _, err := sinkFolder(dir)
	if err != nil {
		return committed{}, err
	}
	return readCommittedParts(dir, parts)
}

// readCommittedParts is readCommitted over the given part files of dir
// only, applied in the order given.
func readCommittedParts(dir string, parts []partFile) (committed, error) {
	c := committed{rows: map[int64]sumRow{}, files: parts}
	counts := map[dbzRow]int{}
	var chainErr error
	for _, p := range parts {
		data, err := os.ReadFile(filepath.Join(dir, p.name))
		if err != nil {
			return c, err
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			return c, fmt.Errorf("%s: ends in a partial line", p.name)
		}
		for line := 1; len(data) > 0; line++ {
			nl := bytes.IndexByte(data, '\n')
			rec := data[:nl]
			data = data[nl+1:]
			r, err := parseDbz(rec)
			if err != nil {
				return c, fmt.Errorf("%s:%d: %w: %q", p.name, line, err, rec)
			}
			c.records++
			if err := c.apply(r, counts); err != nil && chainErr == nil {
				chainErr = fmt.Errorf("%s:%d: %q: %w (a record committed twice, or one lost)", p.name, line, rec, err)
			}
		}
	}
	var countErrs []string
	for row, n := range counts {
		if n != 0 && n != 1 {
			countErrs = append(countErrs, fmt.Sprintf("row [%d, %d, %d] has count %d", row.K, row.S, row.C, n))
		}
	}
	if len(countErrs) > 0 {
		slices.Sort(countErrs)
		return c, fmt.Errorf("after applying the committed changelog, %d rows were committed twice or retracted without being added, e.g. %s",
			len(countErrs), strings.Join(countErrs[:min(len(countErrs), 5)], "; "))
	}
	return c, chainErr
}

// parseDbz parses one Debezium record. The sink's own layout
// ({"before":…,"after":…,"op":"x"} with images {"k":…,"s":…,"c":…}) is
// parsed directly, being most of the test's parsing time; anything else
// goes through encoding/json.
func parseDbz(line []byte) (dbzRecord, error) {
	var r dbzRecord
	rest, ok := bytes.CutPrefix(line, []byte(`{"before":`))
	if ok {
		r.Before, rest, ok = cutImage(rest)
	}
	if ok {
		rest, ok = bytes.CutPrefix(rest, []byte(`,"after":`))
	}
	if ok {
		r.After, rest, ok = cutImage(rest)
	}
	if ok {
		rest, ok = bytes.CutPrefix(rest, []byte(`,"op":"`))
	}
	if ok && len(rest) == 3 && rest[1] == '"' && rest[2] == '}' {
		r.Op = string(rest[:1])
		return r, nil
	}
	r = dbzRecord{}
	err := json.Unmarshal(line, &r)
	return r, err
}

// upsertParts applies the records of the given part files of dir, in the
// order given, by key: an after image sets its key's row, a delete removes
// the key. Unlike readCommitted it checks no chain, so it reads a folder
// into which output was written again on purpose (--allow-duplicate-output).
func upsertParts(dir string, parts []partFile) (map[int64]sumRow, error) {
	rows := map[int64]sumRow{}
	for _, p := range parts {
		data, err := os.ReadFile(filepath.Join(dir, p.name))
		if err != nil {
			return nil, err
		}
		for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			var r dbzRecord
			if err := json.Unmarshal(line, &r); err != nil {
				return nil, fmt.Errorf("%s:%d: %w: %q", p.name, i+1, err, line)
			}
			switch {
			case r.Op == "d" && r.Before != nil && r.After == nil:
				delete(rows, r.Before.K)
			case (r.Op == "c" || r.Op == "u") && r.After != nil:
				rows[r.After.K] = sumRow{r.After.S, r.After.C}
			default:
				return nil, fmt.Errorf("%s:%d: malformed record %q", p.name, i+1, line)
			}
		}
	}
	return rows, nil
}

// checkRows fails the test unless got equals want, naming what was read.
func checkRows(t *testing.T, what string, got, want map[int64]sumRow) {
	t.Helper()
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
			diffs = append(diffs, fmt.Sprintf("key %d: got %v, want none", k, g))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		t.Fatalf("%s differs from the answer in %d keys, e.g.:\n%s", what, len(diffs), strings.Join(diffs[:min(len(diffs), 10)], "\n"))
	}
}

// cutImage parses null or {"k":K,"s":S,"c":C} at the start of b.
func cutImage(b []byte) (*dbzRow, []byte, bool) {
	if rest, ok := bytes.CutPrefix(b, []byte("null")); ok {
		return nil, rest, true
	}
	var row dbzRow
	ok := true
	for _, f := range []struct {
		prefix string
		dst    *int64
	}{{`{"k":`, &row.K}, {`,"s":`, &row.S}, {`,"c":`, &row.C}} {
		if b, ok = bytes.CutPrefix(b, []byte(f.prefix)); !ok {
			return nil, nil, false
		}
		end := 0
		for end < len(b) && (b[end] == '-' || b[end] >= '0' && b[end] <= '9') {
			end++
		}
		v, err := strconv.ParseInt(string(b[:end]), 10, 64)
		if err != nil {
			return nil, nil, false
		}
		*f.dst, b = v, b[end:]
	}
	if b, ok = bytes.CutPrefix(b, []byte("}")); !ok {
		return nil, nil, false
	}
	return &row, b, true
}

// apply applies one record to the rows and the counts.
func (c *committed) apply(r dbzRecord, counts map[dbzRow]int) error {
	want := map[string][2]bool{"c": {false, true}, "u": {true, true}, "d": {true, false}}[r.Op]
	if (r.Before != nil) != want[0] || (r.After != nil) != want[1] || (!want[0] && !want[1]) {
		return fmt.Errorf("malformed %q record", r.Op)
	}
	if r.Before != nil {
		counts[*r.Before]--
		cur, ok := c.rows[r.Before.K]
		if !ok || cur != (sumRow{r.Before.S, r.Before.C}) {
			return fmt.Errorf("before image %+v, but the key's committed row is %v (present: %v)", *r.Before, cur, ok)
		}
		delete(c.rows, r.Before.K)
	}
	if r.After != nil {
		counts[*r.After]++
		c.afters++
		if cur, ok := c.rows[r.After.K]; ok {
			return fmt.Errorf("creates key %d, which has the committed row %v", r.After.K, cur)
		}
		c.rows[r.After.K] = sumRow{r.After.S, r.After.C}
	}
	return nil
}

// sumAnswer is the batch answer of kill_sink.sql.
func sumAnswer() map[int64]sumRow {
	want := make(map[int64]sumRow, sinkKeys)
	for id := int64(0); id < sinkRows; id++ {
		r := want[id%sinkKeys]
		r.sum += id
		r.count++
		want[id%sinkKeys] = r
	}
	return want
}

// checkPrefix checks that the output committed so far is a consistent
// prefix of the answer: exactly-once so far, every key's count no more
// than its final one, and no more after images than input rows.
func checkPrefix(t *testing.T, dir string, want map[int64]sumRow) committed {
	t.Helper()
	c, err := readCommitted(dir)
	if err != nil {
		t.Fatalf("committed output in %s: %v", dir, err)
	}
	for k, g := range c.rows {
		if w, ok := want[k]; !ok || g.count > w.count {
			t.Fatalf("committed row of key %d is %v, beyond the answer %v", k, g, w)
		}
	}
	if c.afters > sinkRows {
		t.Fatalf("%d committed records with an after image, more than the %d input rows: duplicates", c.afters, sinkRows)
	}
	return c
}

// checkFinal checks the sink's folder after the last run: no in-progress
// file, and the committed output equals the batch answer, exactly once.
func checkFinal(t *testing.T, dir string) committed {
	t.Helper()
	want := sumAnswer()
	parts, inProgress, err := sinkFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(inProgress) > 0 {
		t.Fatalf("in-progress files left after the job finished: %v", inProgress)
	}
	c := checkPrefix(t, dir, want)
	var diffs []string
	for k, w := range want {
		if g, ok := c.rows[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("key %d: missing, want %v", k, w))
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("key %d: got %v, want %v", k, g, w))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		t.Fatalf("committed output (%d files, %d records) differs from the batch answer in %d keys, e.g.:\n%s",
			len(parts), c.records, len(diffs), strings.Join(diffs[:min(len(diffs), 10)], "\n"))
	}
	if len(c.rows) != len(want) {
		t.Fatalf("committed output has %d keys, want %d", len(c.rows), len(want))
	}
	if c.records < sinkKeys || c.records > 2*sinkRows {
		t.Fatalf("%d committed records: implausible for %d rows over %d keys", c.records, sinkRows, sinkKeys)
	}
	t.Logf("committed output equals the batch answer: %d keys, %d records in %d part files", len(want), c.records, len(parts))
	return c
}

// ---- the tests ----

// Random kills: sinkMinKills SIGKILLs, each within maxSinkKillJitter after
// the first (or, now and then, the second) checkpoint the run completed.
const (
	sinkMinKills      = 10
	maxSinkKillJitter = 120 * time.Millisecond
)

// TestSinkRandomKills SIGKILLs the binary at random moments, each after at
// least one new checkpoint completed, restarts it with --restore latest,
// lets the last run finish, and checks that the committed output equals
// the batch answer exactly once (and, after every kill, that what was
// committed so far is a consistent prefix).
func TestSinkRandomKills(t *testing.T) {
	needBinary(t)
	t.Parallel() // its own folder and processes; the runs mostly wait on rate-limited sources
	seed := seedFrom(t, "WEIR_SINK_KILL_SEED")
	t.Logf("seed %d; repeat with: WEIR_SINK_KILL_SEED=%d go test ./cmd/weir -run '^TestSinkRandomKills$' -v", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x73696e6b))
	start := time.Now()
	e := newSinkEnv(t)
	want := sumAnswer()
	lastReported, lastRestored := int64(-1), int64(-1)
	for run := 0; ; run++ {
		var p *weirProc
		from := 0
		if run == 0 {
			p = e.start("")
		} else {
			p = e.start("", "--restore", "latest")
			from, _ = waitLine(t, p, 0, restoreLine, firstCheckpointDeadline)
			checkRestored(t, p, lastReported, lastRestored, true)
			if p.restoredID() <= lastRestored {
				t.Fatalf("seed %d: %s restored checkpoint %d, no newer than the run before", seed, p.label, p.restoredID())
			}
			lastRestored = p.restoredID()
		}
		if run == sinkMinKills {
			e.finish(p)
			break
		}
		waitCkpts := 1
		if rng.IntN(4) == 0 {
			waitCkpts = 2
		}
		for range waitCkpts {
			i, _ := waitLine(t, p, from, completeLine, firstCheckpointDeadline)
			from = i + 1
		}
		jitter := time.Duration(rng.Int64N(int64(maxSinkKillJitter)))
		timer := time.NewTimer(jitter)
		select {
		case <-timer.C:
		case <-p.readerDone:
		}
		timer.Stop()
		p.kill(t)
		if st := p.waitDeadline(t, runDeadline); !killedBySIGKILL(st) {
			t.Fatalf("seed %d: %s ended (%v) before kill %d; the kills come too late to make %d of them\nstderr:\n%s",
				seed, p.label, st, run+1, sinkMinKills, p.log.text())
		}
		ids := p.completedIDs()
		lastReported = slices.Max(ids)
		c := checkPrefix(t, e.outDir(), want)
		t.Logf("run %d: restored %d, completed checkpoints %d..%d, killed %s after checkpoint %d of the run; %d records committed",
			run, p.restoredID(), ids[0], lastReported, jitter.Round(time.Millisecond), waitCkpts, c.records)
	}
	if fired := e.faultsFired(); len(fired) != 0 {
		t.Fatalf("faults fired without being armed: %v", fired)
	}
	checkFinal(t, e.outDir())
	t.Logf("%d kills and a clean run in %s", sinkMinKills, time.Since(start).Round(time.Millisecond))
}

// TestSinkKillPoints arms fault points of the checkpoint algorithm and of
// the sink's commit with kill, checks that the process died by SIGKILL and
// that exactly the armed faults fired, then restores the latest checkpoint
// and runs to the end: the committed output equals the batch answer,
// exactly once.
func TestSinkKillPoints(t *testing.T) {
	needBinary(t)
	// The pass numbers let checkpoints complete first: per checkpoint, K4
	// is passed by each of the 4 tasks (2 source, 2 aggregation and sink
	// subtasks), K5 once, K6 by each of the 2 sink subtasks as it commits.
	// A rescaled restore (restorePar) must commit the transactions the
	// restored checkpoint holds for every old subtask.
	cases := []struct {
		name       string
		faults     []string // WEIR_FAULTS of the killed runs, in order
		restorePar int      // parallelism of the restored runs (0: unchanged)
	}{
		{"K4 before ack", []string{"K4@9=kill"}, 0},
		{"K5 before commit", []string{"K5@3=kill"}, 0},
		{"K6 mid-commit", []string{"K6@3=kill"}, 0},
		{"K6 then K8 while restoring", []string{"K6@3=kill", "K8=kill"}, 0},
		{"K5 then restore at parallelism 1", []string{"K5@3=kill"}, 1},
		{"K6 then restore at parallelism 4", []string{"K6@3=kill"}, 4},
	}
	want := sumAnswer()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // the runs are rate limited: they mostly wait
			start := time.Now()
			e := newSinkEnv(t)
			var fired []string
			lastReported, lastRestored := int64(-1), int64(-1)
			prevCompleted := true
			for i, spec := range tc.faults {
				var p *weirProc
				if i == 0 {
					p = e.start(spec)
				} else {
					p = e.start(spec, "--restore", "latest")
				}
				if st := p.waitDeadline(t, runDeadline); !killedBySIGKILL(st) {
					t.Fatalf("%s: %v, want death by SIGKILL\nstderr:\n%s", p.label, st, p.log.text())
				}
				point, _, _ := strings.Cut(spec, "@")
				point, _, _ = strings.Cut(point, "=")
				fired = append(fired, point+"_kill")
				if got := e.faultsFired(); !slices.Equal(got, fired) {
					t.Fatalf("%s: faults fired %v, want %v\nstderr:\n%s", p.label, got, fired, p.log.text())
				}
				ids := p.completedIDs()
				if i == 0 && len(ids) == 0 {
					t.Fatalf("%s: killed before any checkpoint completed\nstderr:\n%s", p.label, p.log.text())
				}
				if i > 0 {
					checkRestored(t, p, lastReported, lastRestored, prevCompleted)
					lastRestored = p.restoredID()
				}
				if prevCompleted = len(ids) > 0; prevCompleted {
					lastReported = slices.Max(ids)
				}
				c := checkPrefix(t, e.outDir(), want)
				t.Logf("%s: completed checkpoints %v, then killed; %d records committed", p.label, ids, c.records)
				switch subs := committedBy(c.files, lastReported); {
				case i == 0 && point == "K5" && len(subs) != 0:
					t.Fatalf("%s: killed at K5 of checkpoint %d, before the sinks were told, but subtasks %v committed its files",
						p.label, lastReported, subs)
				case i == 0 && point == "K6" && len(subs) == 0:
					t.Fatalf("%s: killed at K6 (a sink subtask committed) of checkpoint %d, but no subtask committed its files",
						p.label, lastReported)
				}
				if i == 0 && tc.restorePar != 0 {
					e.setParallelism(tc.restorePar)
				}
			}
			p := e.start("", "--restore", "latest")
			e.finish(p)
			checkRestored(t, p, lastReported, lastRestored, prevCompleted)
			if got := e.faultsFired(); !slices.Equal(got, fired) {
				t.Fatalf("faults fired %v, want %v", got, fired)
			}
			c := checkFinal(t, e.outDir())
			// The restored checkpoint's transactions, of both old subtasks,
			// were committed (by the restore, or before the kill).
			if subs := committedBy(c.files, p.restoredID()); !slices.Equal(subs, []int64{0, 1}) {
				t.Fatalf("part files of the restored checkpoint %d come from subtasks %v, want [0 1]", p.restoredID(), subs)
			}
			if tc.restorePar != 0 {
				checkSubtasks(t, c.files, p.restoredID(), tc.restorePar)
			}
			t.Logf("%s, restored %d, in %s", strings.Join(tc.faults, " then "), p.restoredID(), time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestStopWithSavepointResume stops the job with --stop-with-savepoint and
// SIGTERM after a couple of checkpoints, resumes the savepoint at
// parallelism 1 and, from a copy of the folder, at 4; and takes a savepoint
// with SIGUSR1 while a job runs on to the end, which resumes at 3 in a
// folder holding what was committed up to it. Every committed output
// equals the batch answer, exactly once.
func TestStopWithSavepointResume(t *testing.T) {
	needBinary(t)
	t.Run("stop and resume", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		e := newSinkEnv(t)
		p := e.start("", "--stop-with-savepoint")
		from := 0
		for range 2 {
			i, _ := waitLine(t, p, from, completeLine, firstCheckpointDeadline)
			from = i + 1
		}
		signalProc(t, p, syscall.SIGTERM)
		spLine, m := waitLine(t, p, from, savepointLine, firstCheckpointDeadline)
		sp := m[1]
		if st := p.waitDeadline(t, runDeadline); !st.Success() {
			t.Fatalf("%s: %v after SIGTERM with --stop-with-savepoint, want exit code 0\nstderr:\n%s", p.label, st, p.log.text())
		}
		// After the savepoint only the final checkpoint of the end state
		// completes, and the log says it is that one.
		for _, l := range p.log.lines[spLine+1:] {
			if completeLine.MatchString(l) && !strings.Contains(l, "(final, the job's state at its end;") {
				t.Fatalf("%s: a checkpoint after the savepoint that is not the final one: %q\nstderr:\n%s", p.label, l, p.log.text())
			}
		}
		if !p.log.has(stoppedLine) {
			t.Fatalf("%s: stderr does not say the job stopped:\n%s", p.label, p.log.text())
		}
		spID := savepointID(t, sp)
		// Stopping commits everything the job read: no in-progress file is
		// left and the committed counts add up to the rows read.
		c := checkPrefix(t, e.outDir(), sumAnswer())
		if _, inProgress, err := sinkFolder(e.outDir()); err != nil || len(inProgress) > 0 {
			t.Fatalf("after the stop with a savepoint, in-progress files %v (%v)", inProgress, err)
		}
		read, _ := strconv.ParseInt(p.log.allMatches(stoppedLine)[0][1], 10, 64)
		var counted int64
		for _, r := range c.rows {
			counted += r.count
		}
		if counted != read {
			t.Fatalf("after the stop with a savepoint, the committed counts add up to %d rows, but the job read %d", counted, read)
		}
		t.Logf("stopped with savepoint %s (checkpoints %v) after %d rows; %d records committed", sp, p.completedIDs(), read, c.records)

		// The copy for parallelism 4, taken before the resume at 1 changes the folder.
		copyDir := filepath.Join(t.TempDir(), "copy")
		if err := os.CopyFS(copyDir, os.DirFS(e.dir)); err != nil {
			t.Fatal(err)
		}
		e4 := &sinkEnv{t: t, dir: copyDir, faultLog: filepath.Join(copyDir, "faults.log"), runs: e.runs}
		resumes := []struct {
			env *sinkEnv
			par int
			p   *weirProc
		}{{env: e, par: 1}, {env: e4, par: 4}}
		// Both resumes run at once (they are rate limited: they mostly wait).
		for i := range resumes {
			r := &resumes[i]
			r.env.setParallelism(r.par)
			path := sp
			if filepath.IsAbs(sp) {
				rel, err := filepath.Rel(e.dir, sp)
				if err != nil || strings.HasPrefix(rel, "..") {
					t.Fatalf("savepoint %s is outside the run's folder %s", sp, e.dir)
				}
				path = filepath.Join(r.env.dir, rel)
			}
			r.p = r.env.start("", "--restore", path)
		}
		for _, r := range resumes {
			q := r.p
			r.env.finish(q)
			if ms := q.log.allMatches(restoreSPLine); len(ms) != 1 || ms[0][1] != strconv.FormatInt(spID, 10) {
				t.Fatalf("%s: did not restore savepoint %d\nstderr:\n%s", q.label, spID, q.log.text())
			}
			c := checkFinal(t, r.env.outDir())
			checkSubtasks(t, c.files, spID, r.par)
			if fired := r.env.faultsFired(); len(fired) != 0 {
				t.Fatalf("faults fired without being armed: %v", fired)
			}
			t.Logf("resumed savepoint %d at parallelism %d", spID, r.par)
		}
		t.Logf("stop with savepoint and two resumes in %s", time.Since(start).Round(time.Millisecond))
	})
	t.Run("SIGUSR1", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		e := newSinkEnv(t)
		p := e.start("")
		i, _ := waitLine(t, p, 0, completeLine, firstCheckpointDeadline)
		signalProc(t, p, syscall.SIGUSR1)
		i, m := waitLine(t, p, i+1, savepointLine, firstCheckpointDeadline)
		sp := m[1]
		// The job goes on: a checkpoint completes after the savepoint.
		waitLine(t, p, i+1, completeLine, firstCheckpointDeadline)
		e.finish(p)
		if p.log.has(stoppedLine) {
			t.Fatalf("%s: the job stopped after the savepoint:\n%s", p.label, p.log.text())
		}
		if !filepath.IsAbs(sp) {
			sp = filepath.Join(e.dir, sp)
		}
		inspect := exec.Command(weirBin, "checkpoints", "inspect", sp)
		if out, err := inspect.CombinedOutput(); err != nil {
			t.Fatalf("weir checkpoints inspect %s: %v\n%s", sp, err, out)
		}
		c := checkFinal(t, e.outDir())

		// Restore the savepoint at parallelism 3 into a folder as it was
		// when the savepoint completed: the query, the savepoint, and the
		// part files committed up to the savepoint's checkpoint (committed
		// files do not change). The resumed job must finish with the
		// batch answer, exactly once.
		spID := savepointID(t, sp)
		rel, err := filepath.Rel(e.dir, sp)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("savepoint %s is outside the run's folder %s (%v)", sp, e.dir, err)
		}
		r := &sinkEnv{t: t, dir: t.TempDir(), runs: e.runs}
		r.faultLog = filepath.Join(r.dir, "faults.log")
		r.setParallelism(3)
		if err := os.CopyFS(filepath.Join(r.dir, rel), os.DirFS(sp)); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(r.outDir(), 0o755); err != nil {
			t.Fatal(err)
		}
		var kept int
		for _, f := range c.files {
			if f.checkpoint > spID {
				continue
			}
			b, err := os.ReadFile(filepath.Join(e.outDir(), f.name))
			if err == nil {
				err = os.WriteFile(filepath.Join(r.outDir(), f.name), b, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			kept++
		}
		if kept == 0 {
			t.Fatalf("no part file committed up to savepoint %d: %v", spID, c.files)
		}
		checkPrefix(t, r.outDir(), sumAnswer())
		q := r.start("", "--restore", rel)
		r.finish(q)
		if ms := q.log.allMatches(restoreSPLine); len(ms) != 1 || ms[0][1] != strconv.FormatInt(spID, 10) {
			t.Fatalf("%s: did not restore savepoint %d\nstderr:\n%s", q.label, spID, q.log.text())
		}
		rc := checkFinal(t, r.outDir())
		checkSubtasks(t, rc.files, spID, 3)
		t.Logf("savepoint %s while running, job finished, savepoint resumed at parallelism 3, in %s", m[1], time.Since(start).Round(time.Millisecond))
	})
}

// savepointID returns the checkpoint id of a savepoint folder
// (savepoint-<id>-<time>).
func savepointID(t *testing.T, path string) int64 {
	t.Helper()
	m := regexp.MustCompile(`^savepoint-(\d+)-`).FindStringSubmatch(filepath.Base(path))
	if m == nil {
		t.Fatalf("savepoint folder %q is not named savepoint-<id>-<time>", path)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}

// checkSubtasks checks that the part files committed by checkpoints after
// the restored one (spID) come from subtasks 0..par-1, every one of them.
func checkSubtasks(t *testing.T, files []partFile, spID int64, par int) {
	t.Helper()
	seen := map[int64]bool{}
	for _, f := range files {
		if f.checkpoint <= spID {
			continue
		}
		if f.subtask >= int64(par) {
			t.Fatalf("part file %s after savepoint %d comes from subtask %d, beyond parallelism %d", f.name, spID, f.subtask, par)
		}
		seen[f.subtask] = true
	}
	if len(seen) != par {
		t.Fatalf("part files after savepoint %d come from subtasks %v, want all of 0..%d", spID, seen, par-1)
	}
}

// committedBy returns the subtasks (ascending) with a committed part file
// of checkpoint id.
func committedBy(files []partFile, id int64) []int64 {
	var subs []int64
	for _, f := range files {
		if f.checkpoint == id && !slices.Contains(subs, f.subtask) {
			subs = append(subs, f.subtask)
		}
	}
	slices.Sort(subs)
	return subs
}

// dbzLine renders a Debezium record of rows [k, s, c] (nil: null).
func dbzLine(op string, before, after []int64) string {
	img := func(r []int64) string {
		if r == nil {
			return "null"
		}
		return fmt.Sprintf(`{"k":%d,"s":%d,"c":%d}`, r[0], r[1], r[2])
	}
	return fmt.Sprintf(`{"before":%s,"after":%s,"op":"%s"}`+"\n", img(before), img(after), op)
}

// TestCommittedChangelog checks the checker of the committed output on
// hand-made sink folders: it must accept a consistent changelog and catch
// a file committed twice, a duplicate the counts alone do not show, a
// retraction of a row never added, a broken chain and foreign files.
func TestCommittedChangelog(t *testing.T) {
	r1, r2, r3 := []int64{1, 10, 1}, []int64{1, 30, 2}, []int64{2, 20, 1}
	cases := []struct {
		name    string
		files   map[string]string
		wantErr string // substring of the error; "" for none
		want    map[int64]sumRow
	}{
		{"consistent", map[string]string{
			"part-0-1-0.json":      dbzLine("c", nil, r1),
			"part-0-2-1.json":      dbzLine("u", r1, r2),
			"part-1-2-0.json":      dbzLine("c", nil, r3) + dbzLine("d", r3, nil),
			"part-1-3-1.json":      dbzLine("c", nil, r3),
			".part-1-2.inprogress": dbzLine("c", nil, r3),
		}, "", map[int64]sumRow{1: {30, 2}, 2: {20, 1}}},
		{"another JSON layout", map[string]string{
			"part-0-1-0.json": `{"op": "c", "after": {"c": 1, "k": 1, "s": 10}, "before": null}` + "\n",
			"part-0-2-1.json": `{"before":{"k":1,"s":10,"c":1},"after":{"k":1,"s":30,"c":2},"op":"u","ts_ms":5}` + "\n",
		}, "", map[int64]sumRow{1: {30, 2}}},
		{"file committed twice", map[string]string{
			"part-0-1-0.json": dbzLine("c", nil, r1),
			"part-0-1-1.json": dbzLine("c", nil, r1),
		}, "row [1, 10, 1] has count 2", nil},
		{"duplicate the counts do not show", map[string]string{
			"part-0-1-0.json": dbzLine("c", nil, r1),
			"part-0-1-1.json": dbzLine("c", nil, r1),
			"part-0-2-2.json": dbzLine("u", r1, r2),
		}, "creates key 1, which has the committed row", nil},
		{"retraction of a row never added", map[string]string{
			"part-0-1-0.json": dbzLine("u", r1, r2),
		}, "row [1, 10, 1] has count -1", nil},
		{"updates committed out of order", map[string]string{
			"part-0-1-0.json": dbzLine("c", nil, r1),
			"part-0-2-1.json": dbzLine("u", r2, []int64{1, 60, 3}),
			"part-0-3-2.json": dbzLine("u", r1, r2),
		}, "before image", nil},
		{"torn record", map[string]string{
			"part-0-1-0.json": strings.TrimSuffix(dbzLine("c", nil, r1), "\n"),
		}, "partial line", nil},
		{"foreign file", map[string]string{
			"part-0-1.json": dbzLine("c", nil, r1),
		}, "unexpected entry", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c, err := readCommitted(dir)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			case tc.wantErr == "" && !maps.Equal(c.rows, tc.want):
				t.Fatalf("rows %v, want %v", c.rows, tc.want)
			}
		})
	}
}
