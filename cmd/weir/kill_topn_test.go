package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The constants of testdata/kill_topn.sql.
const (
	topnRows = 10000
	topnKeys = 100
	topnJob  = "kill_topn"
)

// topnRow is a row of the Top-N's result.
type topnRow struct {
	K  int64 `json:"k"`
	V  int64 `json:"v"`
	Rn int64 `json:"rn"`
}

// topnAnswer is the top 3 (k, v, rn) per key of kill_topn.sql, computed in Go.
func topnAnswer() map[topnRow]bool {
	per := map[int64][]int64{}
	for id := int64(0); id < topnRows; id++ {
		per[id%topnKeys] = append(per[id%topnKeys], id*7919%10007)
	}
	want := map[topnRow]bool{}
	for k, vs := range per {
		slices.SortFunc(vs, func(a, b int64) int { return cmp.Compare(b, a) })
		for i := range 3 {
			want[topnRow{k, vs[i], int64(i + 1)}] = true
		}
	}
	return want
}

// readTopN applies the committed Debezium files of dir as a changelog and
// returns each row's count (adds minus retractions).
func readTopN(t *testing.T, dir string) map[topnRow]int {
	t.Helper()
	parts, _, err := sinkFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[topnRow]int{}
	for _, p := range parts {
		data, err := os.ReadFile(filepath.Join(dir, p.name))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if line == "" {
				continue
			}
			var r struct {
				Before, After *topnRow
				Op            string
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s:%d: %v: %q", p.name, i+1, err, line)
			}
			if r.Before != nil {
				counts[*r.Before]--
			}
			if r.After != nil {
				counts[*r.After]++
			}
		}
	}
	return counts
}

// TestTopNRandomKills SIGKILLs the binary running a Top-N into the
// exactly-once file sink at random moments after a checkpoint, restores
// the latest checkpoint each time (the last restore at another
// parallelism), and checks that the committed changelog adds up to the
// answer computed in Go, every row exactly once.
func TestTopNRandomKills(t *testing.T) {
	needBinary(t)
	seed := seedFrom(t, "WEIR_TOPN_KILL_SEED")
	t.Logf("seed %d; repeat with: WEIR_TOPN_KILL_SEED=%d go test ./cmd/weir -run '^TestTopNRandomKills$' -v", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x746f706e))
	dir := t.TempDir()
	sql, err := os.ReadFile(filepath.Join("testdata", topnJob+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(par int) {
		s := strings.Replace(string(sql), "SET 'parallelism.default' = '2';", fmt.Sprintf("SET 'parallelism.default' = '%d';", par), 1)
		if err := os.WriteFile(filepath.Join(dir, topnJob+".sql"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(2)
	const kills = 3
	for run := 0; ; run++ {
		args := []string{"run", topnJob + ".sql"}
		if run > 0 {
			args = []string{"run", "--restore", "latest", topnJob + ".sql"}
		}
		p := startWeir(t, dir, filepath.Join(dir, fmt.Sprintf("stdout-%d.txt", run)), filepath.Join(dir, "faults.log"), "", run, args)
		from := 0
		if run > 0 {
			from, _ = waitLine(t, p, 0, restoreLine, firstCheckpointDeadline)
		}
		if run == kills {
			st := p.waitDeadline(t, runDeadline)
			if !st.Success() {
				t.Fatalf("%s: %v\nstderr:\n%s", p.label, st, p.log.text())
			}
			break
		}
		waitLine(t, p, from, completeLine, firstCheckpointDeadline)
		// Kill at a random moment within 150 ms of the checkpoint.
		timer := time.NewTimer(time.Duration(rng.Int64N(int64(150 * time.Millisecond))))
		select {
		case <-timer.C:
		case <-p.readerDone:
		}
		timer.Stop()
		p.kill(t)
		if st := p.waitDeadline(t, runDeadline); !killedBySIGKILL(st) {
			t.Fatalf("seed %d: %s ended (%v) before its kill; the job is too short\nstderr:\n%s", seed, p.label, st, p.log.text())
		}
		if run == kills-1 {
			write(3) // the last run restores at another parallelism
		}
	}
	counts := readTopN(t, filepath.Join(dir, "out"))
	want := topnAnswer()
	var diffs []string
	for r, n := range counts {
		if n != 0 && n != 1 {
			diffs = append(diffs, fmt.Sprintf("%+v has count %d (committed twice, or retracted without being added)", r, n))
		} else if (n == 1) != want[r] {
			diffs = append(diffs, fmt.Sprintf("%+v: count %d, in the answer: %v", r, n, want[r]))
		}
	}
	for r := range want {
		if counts[r] != 1 {
			diffs = append(diffs, fmt.Sprintf("%+v: missing", r))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		diffs = slices.Compact(diffs)
		t.Fatalf("seed %d: the committed changelog differs from the answer in %d rows, e.g.:\n%s", seed, len(diffs), strings.Join(diffs[:min(10, len(diffs))], "\n"))
	}
}
