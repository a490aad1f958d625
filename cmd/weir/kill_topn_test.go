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
	t.Parallel() // its own folder and processes; the runs mostly wait on rate-limited sources
	seed := seedFrom(t, "WEIR_TOPN_KILL_SEED")
	t.Logf("seed %d; repeat with: WEIR_TOPN_KILL_SEED=%d go test ./cmd/weir -run '^TestTopNRandomKills$' -v", seed, seed)
	sql, err := os.ReadFile(filepath.Join("testdata", topnJob+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[topnRow]int{}
	for r := range topnAnswer() {
		want[r] = 1
	}
	checkTopNKills(t, seed, string(sql), want)
}

// TestRankDenseRankRandomKills is TestTopNRandomKills with RANK and
// DENSE_RANK over values with ties (v mod 40: about 2.5 rows of a key per
// value), so tied rows share a rank, the top 3 ranks hold more than 3
// rows, and equal rows are counted as many times as they are in the
// answer.
func TestRankDenseRankRandomKills(t *testing.T) {
	needBinary(t)
	t.Parallel() // its own folder and processes; the runs mostly wait on rate-limited sources
	seed := seedFrom(t, "WEIR_RANK_KILL_SEED")
	t.Logf("seed %d; repeat with: WEIR_RANK_KILL_SEED=%d go test ./cmd/weir -run '^TestRankDenseRankRandomKills$' -v", seed, seed)
	data, err := os.ReadFile(filepath.Join("testdata", topnJob+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"RANK", "DENSE_RANK"} {
		t.Run(fn, func(t *testing.T) {
			sql := strings.Replace(string(data), "ROW_NUMBER()", fn+"()", 1)
			sql = strings.Replace(sql, "id * 7919 % 10007 AS v", "id * 7919 % 10007 % 40 AS v", 1)
			if sql == string(data) || !strings.Contains(sql, "% 40 AS v") {
				t.Fatal("testdata/kill_topn.sql changed: the test's replacements no longer apply")
			}
			checkTopNKills(t, seed, sql, rankAnswer(fn == "DENSE_RANK", 40))
		})
	}
}

// rankAnswer is the rows ranked 1 to 3 per key (with their rank and
// count) of kill_topn.sql with v mod m, by RANK, or DENSE_RANK if dense,
// computed in Go.
func rankAnswer(dense bool, m int64) map[topnRow]int {
	per := map[int64][]int64{}
	for id := int64(0); id < topnRows; id++ {
		per[id%topnKeys] = append(per[id%topnKeys], id*7919%10007%m)
	}
	want := map[topnRow]int{}
	for k, vs := range per {
		slices.SortFunc(vs, func(a, b int64) int { return cmp.Compare(b, a) })
		var rank, distinct int64
		for i, v := range vs {
			if i == 0 || v != vs[i-1] {
				rank, distinct = int64(i+1), distinct+1
			}
			r := rank
			if dense {
				r = distinct
			}
			if r <= 3 {
				want[topnRow{k, v, r}]++
			}
		}
	}
	return want
}

// checkTopNKills runs sql (kill_topn.sql or a variant) into the
// exactly-once file sink, SIGKILLs it at random moments after a
// checkpoint, restores the latest checkpoint each time (the last restore
// at another parallelism), and checks that the committed changelog adds
// up to want: each row as many times as want counts it.
func checkTopNKills(t *testing.T, seed uint64, sql string, want map[topnRow]int) {
	rng := rand.New(rand.NewPCG(seed, 0x746f706e))
	dir := t.TempDir()
	write := func(par int) {
		s := strings.Replace(sql, "SET 'parallelism.default' = '2';", fmt.Sprintf("SET 'parallelism.default' = '%d';", par), 1)
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
	var diffs []string
	for r, n := range counts {
		if n < 0 {
			diffs = append(diffs, fmt.Sprintf("%+v has count %d (retracted without being added)", r, n))
		} else if n != want[r] {
			diffs = append(diffs, fmt.Sprintf("%+v: count %d, in the answer %d times", r, n, want[r]))
		}
	}
	for r, n := range want {
		if counts[r] != n {
			diffs = append(diffs, fmt.Sprintf("%+v: count %d, in the answer %d times", r, counts[r], n))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		diffs = slices.Compact(diffs)
		t.Fatalf("seed %d: the committed changelog differs from the answer in %d rows, e.g.:\n%s", seed, len(diffs), strings.Join(diffs[:min(10, len(diffs))], "\n"))
	}
}
