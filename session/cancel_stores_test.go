package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/internal/testseed"
)

// lockedLog is a log output that tests can read.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// storeGoroutines returns the stacks of the goroutines that run the
// job's tasks or a Pebble database.
func storeGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "cockroachdb/pebble") || strings.Contains(g, "weir-sql/weir/exec.") || strings.Contains(g, "weir-sql/weir/statestore") {
			out = append(out, g)
		}
	}
	return out
}

// TestCancelWithStoresAtWork cancels jobs whose stores are at work: a
// GROUP BY over many keys with a small state cache (the groups spill to
// Pebble) and a checkpoint every few milliseconds (each one writes the
// store: flushes, ingested sstables, compactions), cancelled at a random
// pass of the checkpoint fault points. Every store must be closed, its
// background work ended, before its folder (or the job's working state
// folder) is removed: the job reports nothing but the cancellation (or
// finishes if the Cancel came too late), Pebble logs no error (a
// compaction that finds its files gone would), and when the run returns no
// goroutine of the job or of a Pebble database is left.
func TestCancelWithStoresAtWork(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 22))
	var logged lockedLog
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	rounds := 4
	if testing.Short() || raceEnabled {
		rounds = 2 // CI runs the 4 rounds without -race too
	}
	cancelled, atWork := 0, 0 // cancelled runs, their stores' sstables then
	for round := range rounds {
		what := fmt.Sprintf("seed %d round %d", seed, round)
		dir := t.TempDir()
		par := 1 + r.IntN(3)
		cancelAt := int32(20 + r.IntN(180))
		script := fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'execution.checkpointing.interval' = '5ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.checkpoints.num-retained' = '2';
SET 'state.cache.size' = '1mb';
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '3000000', 'rows-per-second' = '2000000');
CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sums SELECT id %% 40000, SUM(id), COUNT(*) FROM ev GROUP BY id %% 40000;
`, par, filepath.Join(dir, "ck"))
		var job atomic.Pointer[exec.Job]
		var passes, ssts atomic.Int32
		fault := func(string) error {
			if passes.Add(1) == cancelAt {
				if j := job.Load(); j != nil {
					j.Cancel()
				}
				// What the stores hold as the Cancel comes (their files
				// may come and go meanwhile: errors are skipped).
				_ = filepath.WalkDir(filepath.Join(dir, "ck", "cancel", "_work"), func(p string, d fs.DirEntry, err error) error {
					if err == nil && strings.HasSuffix(p, ".sst") {
						ssts.Add(1)
					}
					return nil
				})
			}
			return nil
		}
		var stderr bytes.Buffer
		s := New(connector.Env{Stdout: &bytes.Buffer{}, Stderr: &stderr})
		err := s.RunScript(context.Background(), script, RunOptions{JobName: "cancel", Quiet: true,
			Exec: exec.Options{BatchSize: 256, Fault: fault, Built: func(j *exec.Job) { job.Store(j) }}})
		if err != nil && !errors.Is(err, exec.ErrCancelled) {
			t.Fatalf("%s: the job returned %v, want the cancellation\n%s", what, err, stderr.String())
		}
		if err != nil {
			cancelled++
			atWork += int(ssts.Load())
		}
		for _, l := range strings.Split(stderr.String(), "\n") {
			if l != "" && !strings.Contains(l, "checkpoint") {
				t.Errorf("%s: the run said %q", what, l)
			}
		}
		if l := logged.String(); strings.Contains(l, "statestore") || strings.Contains(l, "pebble") {
			t.Fatalf("%s: a store logged an error:\n%s", what, l)
		}
		if left := storeGoroutines(); len(left) > 0 {
			t.Fatalf("%s: %d goroutines of the job or of Pebble left after it ended:\n%s", what, len(left), strings.Join(left, "\n\n"))
		}
		if _, err := os.Stat(filepath.Join(dir, "ck", "cancel", "_work")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the working state folder is still there (%v)", what, err)
		}
	}
	t.Logf("seed %d: %d of %d runs cancelled, their stores holding %d sstables in all", seed, cancelled, rounds, atWork)
	if cancelled == 0 || atWork == 0 {
		t.Errorf("seed %d: %d runs cancelled with %d sstables in their stores: the test tests nothing", seed, cancelled, atWork)
	}
}
