package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestJoinRandomKills runs testdata/kill_join.sql (a regular join of two
// updating aggregates into the exactly-once filesystem sink) with the real
// binary, SIGKILLs it at random moments after checkpoints, restores the
// latest checkpoint at another parallelism each time (2, 1, 3, 4, 2), lets
// the last run finish, and checks that the committed output is the batch
// answer computed in Go, each row exactly once (the checks of
// kill_sink_test.go).
func TestJoinRandomKills(t *testing.T) {
	joinRandomKills(t, "kill_join.sql", "TestJoinRandomKills", sinkRows, sinkKeys)
}

// TestJoinSpillRandomKills is TestJoinRandomKills with a state budget of
// 64 KiB (testdata/kill_join_spill.sql): the join's sides spill, rows of
// keys not in memory are kept blind as deltas, and checkpoints, restores
// and rescales carry the deltas and their generations.
func TestJoinSpillRandomKills(t *testing.T) {
	joinRandomKills(t, "kill_join_spill.sql", "TestJoinSpillRandomKills", sinkRows, sinkKeys)
}

// TestJoinBoundedRandomKills is TestJoinRandomKills with a bounded
// input (testdata/kill_join_bounded.sql): the join drops the other side's
// rows when dim ends and keeps none after, kills come before and after
// that end, and a restored dim ends again (at each parallelism).
func TestJoinBoundedRandomKills(t *testing.T) {
	joinRandomKills(t, "kill_join_bounded.sql", "TestJoinBoundedRandomKills", sinkRows, sinkKeys)
}

// TestJoinBoundedSpillRandomKills is TestJoinBoundedRandomKills with a
// state budget of 64 KiB (testdata/kill_join_bounded_spill.sql): the rows
// dropped at dim's end were spilled, partly as deltas.
func TestJoinBoundedSpillRandomKills(t *testing.T) {
	joinRandomKills(t, "kill_join_bounded_spill.sql", "TestJoinBoundedSpillRandomKills", sinkRows, sinkKeys)
}

// TestJoinStopRestore stops a run of testdata/kill_join.sql (a join of
// two unbounded, rate-limited inputs) with SIGTERM after two checkpoints:
// the stop sends end of input down the job and a final checkpoint is
// taken, but the inputs did not end, so the join must keep both sides'
// rows (EndInput only for an input that ended, not for a stopped one).
// It then restores that final checkpoint at parallelism 3 and lets the
// job finish: the committed output must equal the batch answer, exactly
// once, and the restore must have been from the stopped run's final
// checkpoint.
func TestJoinStopRestore(t *testing.T) {
	needBinary(t)
	t.Parallel() // its own folder and processes; the runs mostly wait on rate-limited sources
	e := newSinkEnv(t)
	sql, err := os.ReadFile(filepath.Join("testdata", "kill_join.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, sinkJob+".sql"), sql, 0o644); err != nil {
		t.Fatal(err)
	}
	want := make(map[int64]sumRow, sinkKeys)
	for id := range int64(sinkRows) {
		r := want[id%sinkKeys]
		r.sum += id
		r.count++
		want[id%sinkKeys] = r
	}
	p := e.start("")
	from := 0
	for range 2 {
		i, _ := waitLine(t, p, from, completeLine, firstCheckpointDeadline)
		from = i + 1
	}
	signalProc(t, p, syscall.SIGTERM)
	if st := p.waitDeadline(t, runDeadline); !st.Success() {
		t.Fatalf("%s: %v after SIGTERM, want exit code 0\nstderr:\n%s", p.label, st, p.log.text())
	}
	if !p.log.has(stoppedLine) {
		t.Fatalf("%s: stderr does not say the job stopped:\n%s", p.label, p.log.text())
	}
	ids := p.completedIDs()
	last := slices.Max(ids)
	c := checkJoinOutput(t, e.outDir(), want, 2*sinkRows, false)
	t.Logf("stopped after checkpoints %v; %d records committed", ids, c.records)
	sql = bytes.Replace(sql, []byte(sinkParSet), []byte("SET 'parallelism.default' = '3';"), 1)
	if err := os.WriteFile(filepath.Join(e.dir, sinkJob+".sql"), sql, 0o644); err != nil {
		t.Fatal(err)
	}
	p = e.start("", "--restore", "latest")
	waitLine(t, p, 0, restoreLine, firstCheckpointDeadline)
	if got := p.restoredID(); got != last {
		t.Fatalf("restored checkpoint %d, want the stopped run's final checkpoint %d", got, last)
	}
	e.finish(p)
	checkJoinOutput(t, e.outDir(), want, 2*sinkRows, true)
}

// The constants of testdata/kill_interval.sql.
const (
	intervalRows = 20000
	intervalKeys = 5000
)

// TestIntervalJoinRandomKills is TestJoinRandomKills through an interval
// join (testdata/kill_interval.sql): its rows and timers are restored at
// each parallelism, and nothing is lost or joined twice.
func TestIntervalJoinRandomKills(t *testing.T) {
	joinRandomKills(t, "kill_interval.sql", "TestIntervalJoinRandomKills", intervalRows, intervalKeys)
}

// TestAlignedIntervalJoinRandomKills is TestIntervalJoinRandomKills with
// the two sources at different rates in one watermark alignment group
// (testdata/kill_interval_aligned.sql): the faster one pauses, checkpoints
// and kills come while it is paused, and the committed output is still
// the batch answer, each row once.
func TestAlignedIntervalJoinRandomKills(t *testing.T) {
	joinRandomKills(t, "kill_interval_aligned.sql", "TestAlignedIntervalJoinRandomKills", intervalRows, intervalKeys)
}

// TestWindowJoinRandomKills is TestJoinRandomKills through a window join
// (testdata/kill_window_join.sql): its windows' rows and timers are
// restored at each parallelism, and each window is joined once.
func TestWindowJoinRandomKills(t *testing.T) {
	joinRandomKills(t, "kill_window_join.sql", "TestWindowJoinRandomKills", intervalRows, intervalKeys)
}

// TestSemiJoinRandomKills is TestJoinRandomKills through a semi join
// (testdata/kill_semi_join.sql): the rows and match counts of both sides
// are restored at each parallelism.
func TestSemiJoinRandomKills(t *testing.T) {
	joinRandomKills(t, "kill_semi_join.sql", "TestSemiJoinRandomKills", intervalRows, intervalKeys)
}

// joinRandomKills runs the kill test on a query file whose result is the
// per-key (id % keys) sum and count of the sequence 0..rows-1.
func joinRandomKills(t *testing.T, file, name string, rows, keys int64) {
	needBinary(t)
	t.Parallel() // its own folder and processes; the runs mostly wait on rate-limited sources
	seed := seedFrom(t, "WEIR_JOIN_KILL_SEED")
	t.Logf("seed %d; repeat with: WEIR_JOIN_KILL_SEED=%d go test ./cmd/weir -run '^%s$' -v", seed, seed, name)
	rng := rand.New(rand.NewPCG(seed, 0x6a6f696e))
	e := newSinkEnv(t)
	sql, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	setPar := func(par int) {
		s := bytes.Replace(sql, []byte(sinkParSet), fmt.Appendf(nil, "SET 'parallelism.default' = '%d';", par), 1)
		if err := os.WriteFile(filepath.Join(e.dir, sinkJob+".sql"), s, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := make(map[int64]sumRow, keys)
	for id := range rows {
		r := want[id%keys]
		r.sum += id
		r.count++
		want[id%keys] = r
	}
	pars := []int{2, 1, 3, 4, 2}
	for run, par := range pars {
		setPar(par)
		var p *weirProc
		from := 0
		if run == 0 {
			p = e.start("")
		} else {
			p = e.start("", "--restore", "latest")
			from, _ = waitLine(t, p, 0, restoreLine, firstCheckpointDeadline)
		}
		if run == len(pars)-1 {
			e.finish(p)
			break
		}
		i, _ := waitLine(t, p, from, completeLine, firstCheckpointDeadline)
		_ = i
		jitter := time.Duration(rng.Int64N(int64(maxSinkKillJitter)))
		timer := time.NewTimer(jitter)
		select {
		case <-timer.C:
		case <-p.readerDone:
		}
		timer.Stop()
		p.kill(t)
		if st := p.waitDeadline(t, runDeadline); !killedBySIGKILL(st) {
			t.Fatalf("seed %d: %s ended (%v) before its kill\nstderr:\n%s", seed, p.label, st, p.log.text())
		}
		c := checkJoinOutput(t, e.outDir(), want, 2*rows, false)
		ids := p.completedIDs()
		t.Logf("run %d at parallelism %d: completed checkpoints up to %d, killed %s after one; %d records committed",
			run, par, slices.Max(ids), jitter.Round(time.Millisecond), c.records)
	}
	checkJoinOutput(t, e.outDir(), want, 2*rows, true)
}

// checkJoinOutput reads the committed output (readCommitted checks that
// no record is committed twice: counts of 0 or 1, chains per key), and
// checks that every key's row is within the answer, or, when final, equal
// to it with every key present and no in-progress file left. Each input
// row of either side makes at most one record with an after image.
func checkJoinOutput(t *testing.T, dir string, want map[int64]sumRow, maxAfters int64, final bool) committed {
	t.Helper()
	c, err := readCommitted(dir)
	if err != nil {
		t.Fatalf("committed output in %s: %v", dir, err)
	}
	if int64(c.afters) > maxAfters {
		t.Fatalf("%d committed records with an after image, more than the %d input rows: duplicates", c.afters, maxAfters)
	}
	for k, g := range c.rows {
		w, ok := want[k]
		if !ok || g.count > w.count || final && g != w {
			t.Fatalf("committed row of key %d is %v, want %v", k, g, w)
		}
	}
	if final {
		if _, inProgress, err := sinkFolder(dir); err != nil || len(inProgress) > 0 {
			t.Fatalf("in-progress files left after the job finished: %v (%v)", inProgress, err)
		}
		if len(c.rows) != len(want) {
			t.Fatalf("committed output has %d keys, want %d", len(c.rows), len(want))
		}
		t.Logf("committed output equals the batch answer: %d keys, %d records in %d part files", len(want), c.records, len(c.files))
	}
	return c
}
