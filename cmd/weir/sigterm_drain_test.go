package main

import (
	"bufio"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// stopDeadline is how long a stop may take after SIGTERM (generous: 2
// shared cores); the query of testdata/slow_after_input runs for minutes.
const stopDeadline = 30 * time.Second

// TestSIGTERMStopsBenchAfterSourcesFinished SIGTERMs `weir bench nexmark`
// once the progress line says that the input is read and the operators
// still work (testdata/slow_after_input: a quadratic self-join of a day's
// window, fired at the end of the input), and expects a prompt exit with
// code 0 and the stopped line. Stop alone ended nothing then: the sources
// had finished, and the run went on for minutes.
func TestSIGTERMStopsBenchAfterSourcesFinished(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	examples, err := filepath.Abs(filepath.Join("testdata", "slow_after_input"))
	if err != nil {
		t.Fatal(err)
	}
	p := startWeir(t, dir, filepath.Join(dir, "stdout.txt"), filepath.Join(dir, "faults.log"), "", 0,
		[]string{"bench", "nexmark", "--examples", examples, "--queries", "q1", "--events", "1000000", "--dir", dir})
	// The progress line after the input: what the operators do.
	waitLine(t, p, 0, regexp.MustCompile(`q1 +\d+s +input done \(\d+ rows read\); operators [0-9.]+[kM]? rows/s in, [0-9.]+[kM]? rows/s out; sinks [0-9.]+[kM]? rows/s; \d+ batches queued`), 2*time.Minute)
	signalProc(t, p, syscall.SIGTERM)
	sent := time.Now()
	st := p.waitDeadline(t, stopDeadline)
	if !st.Success() {
		t.Fatalf("%s: %v after SIGTERM, want exit code 0\nstderr:\n%s", p.label, st, p.log.text())
	}
	if !p.log.has(regexp.MustCompile(`bench nexmark: stopped \(0 of the queries finished\)`)) {
		t.Fatalf("%s: no 'stopped' line after SIGTERM\nstderr:\n%s", p.label, p.log.text())
	}
	t.Logf("stopped %s after SIGTERM", time.Since(sent).Round(time.Millisecond))
}

// TestSIGTERMStopsRunAfterSourcesFinished SIGTERMs `weir run` on the same
// query once its first output row is printed (the window fires at the end
// of the input, so the source has finished) and expects it to cancel the
// operators still at work: a prompt exit with code 1 and lines saying why.
func TestSIGTERMStopsRunAfterSourcesFinished(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	data, err := filepath.Abs(filepath.Join("testdata", "slow_after_input"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(weirBin, "run", "-i", filepath.Join(data, "ddl.sql"), filepath.Join(data, "q1.sql"))
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := newLineLog()
	firstRow, outDone, errDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(outDone)
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			close(firstRow)
		}
		_, _ = io.Copy(io.Discard, stdout) // keep the print sink writing
	}()
	go func() {
		defer close(errDone)
		log.readFrom(stderr)
	}()
	ended := false
	t.Cleanup(func() {
		if !ended {
			_ = cmd.Process.Kill()
			<-outDone
			<-errDone
			_ = cmd.Wait()
		}
	})
	select {
	case <-firstRow:
	case <-errDone:
		t.Fatalf("weir run ended before its first row\nstderr:\n%s", log.text())
	case <-time.After(2 * time.Minute):
		t.Fatalf("no output row within 2 minutes\nstderr:\n%s", log.text())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	select {
	case <-errDone:
	case <-time.After(stopDeadline):
		t.Fatalf("weir run did not end within %s of SIGTERM\nstderr:\n%s", stopDeadline, log.text())
	}
	<-outDone
	err = cmd.Wait()
	ended = true
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit code %d (%v) after SIGTERM, want 1\nstderr:\n%s", code, err, log.text())
	}
	for _, want := range []string{
		`weir: stopping job q1: its sources have read all their input and its operators are still at work: cancelling them`,
		`weir: .*q1\.sql: job q1: job cancelled before it finished \(output not committed yet was discarded\)`,
	} {
		if !log.has(regexp.MustCompile(want)) {
			t.Errorf("stderr has no line matching %q:\n%s", want, log.text())
		}
	}
	t.Logf("stopped %s after SIGTERM", time.Since(sent).Round(time.Millisecond))
}
