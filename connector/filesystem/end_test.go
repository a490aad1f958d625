package filesystem

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// endJob ends the writers of one job without checkpoints as the runtime
// does (exec.Job.closeDeferred): PrepareEnd on all, then Commit and Close
// on each; on a failure Revert on each whose Commit began, Abort on all.
// It returns the first error.
func endJob(t *testing.T, ws []*Writer) error {
	t.Helper()
	txns := make([][]byte, len(ws))
	for k, w := range ws {
		var err error
		if txns[k], err = w.PrepareEnd(); err != nil {
			for _, w := range ws {
				must(t, w.Abort())
			}
			return err
		}
	}
	began := 0
	var err error
	for k, w := range ws {
		began++
		if err = w.Commit(txns[k]); err != nil {
			break
		}
	}
	if err == nil {
		for _, w := range ws {
			must(t, w.Close())
		}
		return nil
	}
	for k := range began {
		must(t, ws[k].Revert(txns[k]))
	}
	for _, w := range ws {
		must(t, w.Abort())
	}
	return err
}

// TestEndAllOrNothing: a job without checkpoints writes ids 0..total-1
// with 2 to 4 sink subtasks (subtask s the ids equal to s modulo p, in
// batches, rolling small files), and its end commits every subtask's
// files in turn; one rename fails, anywhere among them. No id may then be
// visible (the job failed: a rerun writes them all) and no file left
// behind; the rerun from scratch (Recover(nil)) makes each id visible
// exactly once.
func TestEndAllOrNothing(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 21))
	for round := range 30 {
		what := fmt.Sprintf("seed %d round %d", seed, round)
		dir := t.TempDir()
		total := 50 + r.IntN(300)
		p := 2 + r.IntN(3)
		size := map[string]string{"sink.rolling-policy.file-size": fmt.Sprintf("%db", 10+r.IntN(60))}
		run := func(fault bool) error {
			s := newTxnSink(t, dir, size)
			renames, failAt := 0, 0
			renameFault(s, &renames, &failAt)
			must(t, s.Recover(nil))
			ws := make([]*Writer, p)
			for k := range ws {
				ws[k] = openWriter(t, s, k, p)
			}
			for pos := 0; pos < total; {
				n := min(total-pos, 1+r.IntN(20))
				for k, w := range ws {
					b := types.NewBatch(1, n)
					for id := pos; id < pos+n; id++ {
						if id%p == k {
							b.Append(types.Insert, []types.Value{types.IntValue(int64(id))})
						}
					}
					must(t, w.Write(b))
				}
				pos += n
			}
			if fault {
				k := 0
				for _, name := range listDir(t, dir) {
					if pn, ok := parsePartName(name); ok && pn.inProgress {
						k++
					}
				}
				// The rolled files and each writer's open one.
				failAt = 1 + r.IntN(k)
			}
			return endJob(t, ws)
		}
		if err := run(true); !errors.Is(err, errRenameFailed) {
			t.Fatalf("%s: the end returned %v, want the rename failure", what, err)
		}
		if got := visibleIDs(t, dir); len(got) > 0 {
			t.Fatalf("%s: the failed job (p=%d) left %d of %d ids visible", what, p, len(got), total)
		}
		for _, name := range listDir(t, dir) {
			if name != lockName {
				t.Fatalf("%s: the failed job left %s in the folder", what, name)
			}
		}
		s := newTxnSink(t, dir, size)
		checkStartAllowed(t, s, 0, what)
		if err := run(false); err != nil {
			t.Fatalf("%s: rerun: %v", what, err)
		}
		if got, want := visibleIDs(t, dir), seq(0, total); !slices.Equal(got, want) {
			t.Fatalf("%s: after the rerun %d ids visible, want each of 0..%d once", what, len(got), total-1)
		}
	}
}

// TestEndRevertsSuccessFiles: an earlier run committed partition hm=0
// with a success file. Two sink subtasks of a job without checkpoints
// then write hm=0, a and b (both write a); subtask 0 commits (its part
// files and the success files of its partitions), subtask 1's commit
// fails on a rename. The job failed: the folder must be as the earlier
// run left it (hm=0's success file stays, a's and b's go), and the rerun
// commits every row once and every partition.
func TestEndRevertsSuccessFiles(t *testing.T) {
	dir := t.TempDir()
	tbl := q10Table(dir, "csv", "sink.partition-commit.delay", "0 s", "sink.partition-commit.policy.kind", "success-file")
	folder := func() []string {
		var out []string
		for _, f := range tree(t, dir) {
			path, rows, _ := strings.Cut(f, ":")
			switch base := filepath.Base(path); {
			case strings.HasPrefix(base, "."):
				continue
			case strings.HasPrefix(base, "part-"):
				path = filepath.Dir(path) + "/part"
			}
			out = append(out, path+":"+rows)
		}
		slices.Sort(out)
		return out
	}
	run := func(failAt int, rows ...[][4]string) error {
		t.Helper()
		sk, err := NewSink(tbl, connector.Env{})
		mustOK(t, err)
		s := sk.(*Sink)
		renames := 0
		renameFault(s, &renames, &failAt)
		mustOK(t, s.Recover(nil))
		ws := make([]*Writer, len(rows))
		for k := range rows {
			ws[k] = openWriter(t, s, k, len(rows))
			mustOK(t, ws[k].Write(q10Batch(rows[k]...)))
		}
		return endJob(t, ws)
	}
	mustOK(t, run(0, [][4]string{{"0", "0", "d", "0"}}))
	before := folder()
	rows := [][][4]string{
		{{"4", "4", "d", "0"}, {"1", "1", "d", "a"}},
		{{"2", "2", "d", "b"}, {"3", "3", "d", "a"}},
	}
	// Subtask 0 renames 2 files; the second of subtask 1 fails.
	if err := run(4, rows...); !errors.Is(err, errRenameFailed) {
		t.Fatalf("the end returned %v, want the rename failure", err)
	}
	if got := folder(); !slices.Equal(got, before) {
		t.Fatalf("after the failed end the folder holds\n  %s\nwant what the earlier run left\n  %s", strings.Join(got, "\n  "), strings.Join(before, "\n  "))
	}
	mustOK(t, run(0, rows...))
	want := []string{
		"dt=d/hm=0/_SUCCESS: ", "dt=d/hm=0/part: 0,0", "dt=d/hm=0/part: 4,4",
		"dt=d/hm=a/_SUCCESS: ", "dt=d/hm=a/part: 1,1", "dt=d/hm=a/part: 3,3",
		"dt=d/hm=b/_SUCCESS: ", "dt=d/hm=b/part: 2,2",
	}
	if got := folder(); !slices.Equal(got, want) {
		t.Fatalf("after the rerun the folder holds\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if _, err := os.Stat(filepath.Join(dir, "dt=d", "hm=a")); err != nil {
		t.Fatal(err)
	}
}

// TestEndRevertFailureNamesFile: subtask 1's commit fails, and so does
// the rename that would hide one of subtask 0's committed files again:
// Revert must say which file stays visible, hide the others, and the
// Abort that follows must leave no in-progress file behind.
func TestEndRevertFailureNamesFile(t *testing.T) {
	dir := t.TempDir()
	s := newTxnSink(t, dir, map[string]string{"sink.rolling-policy.file-size": "5b"})
	must(t, s.Recover(nil))
	ws := []*Writer{openWriter(t, s, 0, 2), openWriter(t, s, 1, 2)}
	for k := 0; k < 20; k += 5 { // a file per Write (5 ids take 10 bytes)
		must(t, ws[0].Write(ids(k, k+5)))
		must(t, ws[1].Write(ids(20+k, 25+k)))
	}
	txns := [][]byte{mustTxn(t)(ws[0].PrepareEnd()), mustTxn(t)(ws[1].PrepareEnd())}
	must(t, ws[0].Commit(txns[0]))
	committed := visibleIDs(t, dir)
	if !slices.Equal(committed, seq(0, 20)) {
		t.Fatalf("subtask 0 committed %v", committed)
	}
	calls := 0
	s.rename = func(oldpath, newpath string) error {
		if calls++; calls == 1 || calls == 3 {
			return errRenameFailed // subtask 1's first commit rename, then subtask 0's second revert rename
		}
		return os.Rename(oldpath, newpath)
	}
	if err := ws[1].Commit(txns[1]); !errors.Is(err, errRenameFailed) {
		t.Fatalf("subtask 1's Commit returned %v", err)
	}
	must(t, ws[1].Revert(txns[1]))
	err := ws[0].Revert(txns[0])
	if !errors.Is(err, errRenameFailed) || !strings.Contains(err.Error(), "stays visible") {
		t.Fatalf("Revert returned %v, want the rename failure saying a file stays visible", err)
	}
	var visible []string
	for _, name := range listDir(t, dir) {
		if p, ok := parsePartName(name); ok && !p.inProgress {
			visible = append(visible, name)
		}
	}
	if len(visible) != 1 || !strings.Contains(err.Error(), visible[0]) {
		t.Fatalf("%v visible after the failed Revert, which said %v: want the one file it names", visible, err)
	}
	for _, w := range ws {
		must(t, w.Abort())
	}
	for _, name := range listDir(t, dir) {
		if p, ok := parsePartName(name); ok && p.inProgress {
			t.Fatalf("Abort left %s", name)
		}
	}
}
