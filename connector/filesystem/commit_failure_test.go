package filesystem

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
)

// errRenameFailed is the rename failure the commit tests inject.
var errRenameFailed = errors.New("injected rename failure")

// renameFault makes s's commits count their renames and fail the one
// numbered *failAt (counted in *renames over every sink of a test).
func renameFault(s *Sink, renames, failAt *int) {
	s.rename = func(oldpath, newpath string) error {
		if *renames++; *renames == *failAt {
			return errRenameFailed
		}
		return os.Rename(oldpath, newpath)
	}
}

// checkStartAllowed fails if dir holds output of a checkpoint later than
// restored: the runtime (exec.checkCommittedOutput) would refuse the start,
// and with --allow-duplicate-output the rows after restored come twice.
func checkStartAllowed(t *testing.T, s *Sink, restored int64, what string) {
	t.Helper()
	c, err := s.Committed()
	must(t, err)
	if c > restored {
		t.Fatalf("%s: the folder holds output of checkpoint %d, the start is from %d: refused, or its rows written twice", what, c, restored)
	}
}

// TestRenameFailureKillRestore runs jobs as the runtime does with
// checkpoints (pre-commit at each checkpoint, commit when it completes, a
// final checkpoint at the end of the input, then Close), with one rename
// at a time failing part way through a Commit or a Recover. A failed
// Commit fails the job (Abort every writer), a failed Recover fails the
// start; each start restores the last completed checkpoint. Every start
// must be allowed (no output of a later checkpoint in the folder) and in
// the end the folder holds every id exactly once.
func TestRenameFailureKillRestore(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 19))
	type ckpt struct {
		id   int64
		pos  int
		txns [][]byte
	}
	injected := 0
	for round := range 20 {
		dir := t.TempDir()
		total := 200 + r.IntN(400)
		restored := ckpt{}
		renames, failAt := 0, 0
		for start := 0; ; start++ {
			if start > 200 {
				t.Fatalf("seed %d round %d: no end after %d starts", seed, round, start)
			}
			what := fmt.Sprintf("seed %d round %d start %d", seed, round, start)
			s := newTxnSink(t, dir, map[string]string{"sink.rolling-policy.file-size": fmt.Sprintf("%db", 10+r.IntN(100))})
			if failAt <= renames && r.IntN(2) == 0 {
				failAt = renames + 1 + r.IntN(6) // a fault, soon
			}
			renameFault(s, &renames, &failAt)
			checkStartAllowed(t, s, restored.id, what)
			if err := s.Recover(restored.txns); err != nil {
				if !errors.Is(err, errRenameFailed) {
					t.Fatalf("%s: recover: %v", what, err)
				}
				injected++
				continue
			}
			p := 1 + r.IntN(3)
			ws := make([]*Writer, p)
			for k := range ws {
				ws[k] = openWriter(t, s, k, p)
			}
			pos, id := restored.pos, restored.id
			failed, ended := false, false
			// commit commits the transactions of a completed checkpoint,
			// some of them late or never (a later one lists their files).
			commit := func(txns [][]byte, all bool) {
				for _, txn := range txns {
					if !all && r.IntN(3) == 0 {
						continue
					}
					if err := ws[r.IntN(p)].Commit(txn); err != nil {
						if !errors.Is(err, errRenameFailed) {
							t.Fatalf("%s: commit: %v", what, err)
						}
						injected++
						failed = true
						return
					}
				}
			}
			for !failed && !ended {
				if pos == total {
					// The final checkpoint, committed, then Close.
					id++
					var txns [][]byte
					for _, w := range ws {
						txns = append(txns, mustTxn(t)(w.PreCommit(id)))
					}
					restored = ckpt{id: id, pos: pos, txns: txns}
					if commit(txns, true); !failed {
						for _, w := range ws {
							must(t, w.Close())
						}
						ended = true
					}
					break
				}
				n := min(total-pos, 1+r.IntN(40))
				must(t, ws[r.IntN(p)].Write(ids(pos, pos+n)))
				pos += n
				switch r.IntN(8) {
				case 0, 1, 2:
					id++
					var txns [][]byte
					for _, w := range ws {
						txns = append(txns, mustTxn(t)(w.PreCommit(id)))
					}
					if r.IntN(4) == 0 {
						failed = true // killed before the checkpoint completed
						break
					}
					restored = ckpt{id: id, pos: pos, txns: txns}
					commit(txns, false)
				case 3:
					failed = true // killed
				}
			}
			if ended {
				break
			}
			for _, w := range ws {
				must(t, w.Abort())
			}
		}
		if got, want := visibleIDs(t, dir), seq(0, total); !slices.Equal(got, want) {
			t.Fatalf("seed %d round %d: %d ids visible, want each of 0..%d once", seed, round, len(got), total-1)
		}
	}
	if injected < 10 {
		t.Errorf("seed %d: only %d renames failed: the test does not test much", seed, injected)
	}
}

// TestFailedCloseCommitsNothingOfItsOwn: Close (the end of a job without a
// final checkpoint: one without checkpointing, or the writer tests) fails
// on a rename part way through its files. The job failed: the next start
// (from scratch, or from the checkpoint pre-committed before Close) must
// be allowed and must end with every id exactly once, so the failed Close
// may leave none of its own files (rows after the last checkpoint)
// committed. Files a checkpoint pre-committed may stay committed: they are
// that checkpoint's.
func TestFailedCloseCommitsNothingOfItsOwn(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 20))
	for round := range 20 {
		what := fmt.Sprintf("seed %d round %d", seed, round)
		dir := t.TempDir()
		total := 100 + r.IntN(200)
		size := map[string]string{"sink.rolling-policy.file-size": fmt.Sprintf("%db", 10+r.IntN(40))}
		s := newTxnSink(t, dir, size)
		renames, failAt := 0, 0
		renameFault(s, &renames, &failAt)
		must(t, s.Recover(nil))
		w := openWriter(t, s, 0, 1)
		var restoredTxns [][]byte
		restoredID, restoredPos := int64(0), 0
		cut := -1
		if round%2 == 1 {
			cut = r.IntN(total) // a checkpoint there, committed or not
		}
		for pos := 0; pos < total; {
			n := min(total-pos, 1+r.IntN(30))
			if cut >= pos && cut < pos+n {
				n = cut - pos
			}
			if n > 0 {
				must(t, w.Write(ids(pos, pos+n)))
				pos += n
			}
			if pos == cut {
				txn := mustTxn(t)(w.PreCommit(1))
				restoredTxns, restoredID, restoredPos = [][]byte{txn}, 1, pos
				if r.IntN(2) == 0 {
					must(t, w.Commit(txn))
				}
				cut = -1
			}
		}
		// Close renames the in-progress files: one of them fails.
		k := 0
		for _, name := range listDir(t, dir) {
			if p, ok := parsePartName(name); ok && p.inProgress {
				k++
			}
		}
		failAt = renames + 1 + r.IntN(k)
		if err := w.Close(); !errors.Is(err, errRenameFailed) {
			t.Fatalf("%s: Close returned %v, want the rename failure", what, err)
		}
		// The next start, from the checkpoint (or from scratch).
		s2 := newTxnSink(t, dir, size)
		checkStartAllowed(t, s2, restoredID, what)
		must(t, s2.Recover(restoredTxns))
		w2 := openWriter(t, s2, 0, 1)
		must(t, w2.Write(ids(restoredPos, total)))
		must(t, w2.Close())
		if got, want := visibleIDs(t, dir), seq(0, total); !slices.Equal(got, want) {
			t.Fatalf("%s: %d ids visible, want each of 0..%d once", what, len(got), total-1)
		}
	}
}
