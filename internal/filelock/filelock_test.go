package filelock

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestAcquireInProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", ".lock")
	l, err := Acquire(path, "job a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(path, "job b")
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrHeld) {
		t.Fatalf("second Acquire: %v, want a HeldError", err)
	}
	if held.PID != os.Getpid() || held.Owner != "job a" || held.Since.IsZero() {
		t.Fatalf("holder %+v, want pid %d, owner job a and a time", held, os.Getpid())
	}
	if !strings.Contains(err.Error(), "another job of this process") {
		t.Fatalf("message %q does not say the holder is this process", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	l2, err := Acquire(path, "job b")
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

// TestHelperProcess is not a test: run by TestKilledHolderReleases as a
// separate process that takes the lock and waits to be killed.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv("FILELOCK_HELPER_PATH")
	if path == "" {
		t.Skip("helper process only")
	}
	if _, err := Acquire(path, "helper"); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	select {} // hold until killed
}

func TestKilledHolderReleases(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	path := filepath.Join(t.TempDir(), ".lock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "FILELOCK_HELPER_PATH="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	_, err = Acquire(path, "me")
	var held *HeldError
	if !errors.As(err, &held) || held.PID != cmd.Process.Pid || held.Owner != "helper" {
		t.Fatalf("Acquire while the helper holds it: %v, want held by pid %d", err, cmd.Process.Pid)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("process %d (helper", cmd.Process.Pid)) {
		t.Fatalf("message %q does not name the holder", err)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
		t.Fatal(err)
	}
	cmd.Wait()
	l, err := Acquire(path, "me")
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	l.Release()
}
