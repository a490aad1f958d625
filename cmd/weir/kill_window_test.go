package main

// Exactly-once windows with the real binary: testdata/kill_window.sql (a
// TUMBLE window aggregate into the exactly-once filesystem sink) is
// SIGKILLed at random moments after checkpoints and restored with
// --restore latest, every other time at another parallelism; the
// committed rows equal the windows computed in Go, each exactly once.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

const (
	windowJob  = "kill_window"
	windowRows = 120000
	windowKeys = 97
)

// windowKillAnswer is the rows "k,c,s,mn" of kill_window.sql: event time
// id/10 ms puts ids [1000w, 1000w+1000) in 100 ms window w.
func windowKillAnswer() []string {
	type acc struct{ c, s, mn int64 }
	m := map[[2]int64]*acc{}
	for id := int64(0); id < windowRows; id++ {
		key := [2]int64{id % windowKeys, id / 1000}
		a := m[key]
		if a == nil {
			a = &acc{mn: id}
			m[key] = a
		}
		a.c++
		a.s += id
	}
	out := make([]string, 0, len(m))
	for key, a := range m {
		out = append(out, fmt.Sprintf("%d,%d,%d,%d", key[0], a.c, a.s, a.mn))
	}
	sort.Strings(out)
	return out
}

// writeWindowJob writes kill_window.sql at parallelism par into dir.
func writeWindowJob(t *testing.T, dir string, par int) {
	t.Helper()
	sql, err := os.ReadFile(filepath.Join("testdata", windowJob+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	sql = bytes.Replace(sql, []byte(sinkParSet), fmt.Appendf(nil, "SET 'parallelism.default' = '%d';", par), 1)
	if err := os.WriteFile(filepath.Join(dir, windowJob+".sql"), sql, 0o644); err != nil {
		t.Fatal(err)
	}
}

// committedWindowRows reads the committed part files' lines, sorted.
func committedWindowRows(t *testing.T, dir string) []string {
	t.Helper()
	parts, err := filepath.Glob(filepath.Join(dir, "part-*.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, p := range parts {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				rows = append(rows, l)
			}
		}
	}
	sort.Strings(rows)
	return rows
}

func TestWindowRandomKills(t *testing.T) {
	needBinary(t)
	t.Parallel() // its own folder and processes; the runs mostly wait on rate-limited sources
	seed := seedFrom(t, "WEIR_WINDOW_KILL_SEED")
	t.Logf("seed %d; repeat with: WEIR_WINDOW_KILL_SEED=%d go test ./cmd/weir -run '^TestWindowRandomKills$' -v", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x77696e))
	dir := t.TempDir()
	faultLog := filepath.Join(dir, "faults.log")
	want := windowKillAnswer()
	const kills = 4
	for run := 0; ; run++ {
		par := 2
		if run%2 == 1 {
			par = 3
		}
		writeWindowJob(t, dir, par)
		args := []string{"run", windowJob + ".sql"}
		if run > 0 {
			args = []string{"run", "--restore", "latest", windowJob + ".sql"}
		}
		p := startWeir(t, dir, filepath.Join(dir, fmt.Sprintf("stdout-%02d.txt", run)), faultLog, "", run, args)
		from := 0
		if run > 0 {
			from, _ = waitLine(t, p, 0, restoreLine, firstCheckpointDeadline)
		}
		if run == kills {
			st := p.waitDeadline(t, runDeadline)
			if !st.Success() {
				t.Fatalf("seed %d: last run: %v\n%s", seed, st, p.log.text())
			}
			break
		}
		waitLine(t, p, from, completeLine, firstCheckpointDeadline)
		jitter := time.Duration(rng.Int64N(int64(150 * time.Millisecond)))
		timer := time.NewTimer(jitter)
		select {
		case <-timer.C:
		case <-p.readerDone:
		}
		timer.Stop()
		p.kill(t)
		if st := p.waitDeadline(t, runDeadline); !killedBySIGKILL(st) {
			t.Fatalf("seed %d: run %d ended (%v) before its kill\n%s", seed, run, st, p.log.text())
		}
		// What is committed so far is part of the answer, each row once.
		got := committedWindowRows(t, filepath.Join(dir, "out"))
		for j, r := range got {
			if j > 0 && got[j-1] == r {
				t.Fatalf("seed %d: row %s committed twice after run %d", seed, r, run)
			}
			if _, ok := slices.BinarySearch(want, r); !ok {
				t.Fatalf("seed %d: committed row %s is not in the answer", seed, r)
			}
		}
		t.Logf("run %d (p=%d): killed %s after a checkpoint; %d rows committed", run, par, jitter.Round(time.Millisecond), len(got))
	}
	got := committedWindowRows(t, filepath.Join(dir, "out"))
	if !slices.Equal(got, want) {
		t.Fatalf("seed %d: committed %d rows, want %d\nfirst got %v\nfirst want %v", seed, len(got), len(want), got[:min(5, len(got))], want[:min(5, len(want))])
	}
}
