package statestore

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSnapshotChecksums checks the checksums Snapshot reports against the
// files' content, over snapshots that share sstables, ingest written-through
// runs and replace an operator's state; and that unchanged and ingested
// sstables are not read again to checksum them.
func TestSnapshotChecksums(t *testing.T) {
	s := openTest(t, Options{MaxParallelism: 16})
	tb := table(t, s, "op", "v")
	root := t.TempDir()
	snap := func(n int) SnapshotInfo {
		t.Helper()
		dir := filepath.Join(root, fmt.Sprintf("snap-%d", n))
		info, err := s.Snapshot(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Files) == 0 {
			t.Fatal("snapshot has no files")
		}
		for _, f := range info.Files {
			data, err := os.ReadFile(filepath.Join(dir, f.Name))
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(data)) != f.Size {
				t.Errorf("snapshot %d: %s is %d bytes, reported %d", n, f.Name, len(data), f.Size)
			}
			if want := crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)); f.CRC32C != want {
				t.Errorf("snapshot %d: %s has CRC-32C %08x, reported %08x", n, f.Name, want, f.CRC32C)
			}
		}
		return info
	}
	// 1: cached writes, flushed by Pebble into an sstable.
	fill(t, tb, 2000, 16, 0)
	snap(1)
	// 2: nothing changed: only the small mutable files are read again.
	reads := s.sumReads
	info := snap(2)
	for _, f := range info.Files {
		if isImmutable(f.Name) {
			continue
		}
		reads++
	}
	if s.sumReads != reads {
		t.Errorf("unchanged snapshot read %d files for checksums, want %d (sstables are reused)", s.sumReads-reads+countMutable(info), countMutable(info))
	}
	// 3: an ascending written-through run large enough to be ingested.
	for i := 0; i < 3*ingestMinKeys; i++ {
		if err := tb.PutThrough(0, []byte(fmt.Sprintf("w%08d", i)), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	reads = s.sumReads
	info = snap(3)
	if got := s.sumReads - reads; got != countMutable(info) {
		t.Errorf("snapshot after an ingestion read %d files for checksums, want only the %d mutable ones", got, countMutable(info))
	}
	// 4: the operator's whole state replaced (ingest and excise).
	if err := s.ReplaceOperator("op"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2*ingestMinKeys; i++ {
		if err := tb.PutThrough(0, []byte(fmt.Sprintf("r%08d", i)), []byte("y")); err != nil {
			t.Fatal(err)
		}
	}
	reads = s.sumReads
	info = snap(4)
	if got := s.sumReads - reads; got != countMutable(info) {
		t.Errorf("snapshot after a replacement read %d files for checksums, want only the %d mutable ones", got, countMutable(info))
	}
}

func countMutable(info SnapshotInfo) int {
	n := 0
	for _, f := range info.Files {
		if !isImmutable(f.Name) {
			n++
		}
	}
	return n
}

// TestCorruptSnapshotRestoreFails flips a byte inside an sstable of a
// snapshot: restoring it and reading the state must return an error (Pebble
// detects the block checksum), never panic.
func TestCorruptSnapshotRestoreFails(t *testing.T) {
	s := openTest(t, Options{MaxParallelism: 16})
	tb := table(t, s, "op", "v")
	fill(t, tb, 20000, 16, 0)
	snapDir := filepath.Join(t.TempDir(), "snap")
	if _, err := s.Snapshot(snapDir); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(snapDir, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no sstable in the snapshot")
	}
	data, err := os.ReadFile(ssts[0])
	if err != nil {
		t.Fatal(err)
	}
	// The sstable is a hard link shared with the closed working folder:
	// write a damaged copy in its place.
	data[len(data)/3] ^= 0x40
	if err := os.Remove(ssts[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ssts[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)

	r, err := Restore(snapDir, filepath.Join(t.TempDir(), "work"), Options{MaxParallelism: 16})
	if err != nil {
		t.Logf("restore failed at open: %v", err)
		return
	}
	defer r.Close()
	rt := table(t, r, "op", "v")
	n := 0
	err = rt.Scan(0, 15, func(int, []byte, []byte) error { n++; return nil })
	if err == nil {
		t.Fatalf("scan of a damaged sstable read %d entries without an error", n)
	}
	if !strings.Contains(err.Error(), "checksum") && !errors.Is(err, ErrPebbleFatal) {
		t.Errorf("scan error does not say what is wrong: %v", err)
	}
	// The store is unusable from now on.
	if _, err := r.Snapshot(filepath.Join(t.TempDir(), "again")); err == nil {
		t.Error("a store that found corruption took a snapshot")
	}
}

// TestFatalNeverPanics: Pebble's Fatalf inside a guarded call becomes the
// call's error; outside one (a Pebble background goroutine) it returns;
// either way the store's next operation fails.
func TestFatalNeverPanics(t *testing.T) {
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	l := newStoreLogger("db")
	err := guard(func() error {
		l.Fatalf("MANIFEST sync failed: %v", "disk full")
		t.Error("Fatalf returned inside a guarded call")
		return nil
	})
	if !errors.Is(err, ErrPebbleFatal) || !strings.Contains(err.Error(), "MANIFEST sync failed: disk full") {
		t.Errorf("guarded Fatalf: %v", err)
	}
	l2 := newStoreLogger("db2")
	done := make(chan struct{})
	go func() { // like a Pebble background goroutine
		defer close(done)
		l2.Fatalf("background: %s", "boom")
	}()
	<-done
	if err := l2.err(); !errors.Is(err, ErrPebbleFatal) {
		t.Errorf("unguarded Fatalf recorded %v", err)
	}

	s := openTest(t, Options{})
	s.log.Fatalf("invariant %d", 1)
	if err := s.Flush(); !errors.Is(err, ErrPebbleFatal) {
		t.Errorf("Flush after a fatal error: %v", err)
	}
}

// TestBackgroundErrorsLoggedOnce: a full disk makes Pebble report the same
// background error again and again; a store logs it once.
func TestBackgroundErrorsLoggedOnce(t *testing.T) {
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	l := newStoreLogger("db")
	for i := range 138 {
		l.backgroundError(fmt.Errorf("write 0000%d.sst: no space left on device", i))
	}
	lines := strings.Count(logged.String(), "\n")
	if lines != 1 || !strings.Contains(logged.String(), "background error") {
		t.Errorf("138 background errors logged as %d lines:\n%s", lines, logged.String())
	}
}
