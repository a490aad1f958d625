package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/types"
)

var idCols = []types.Column{{Name: "id", Type: types.Int}}

// newTxnSink builds a CSV sink of one INT column writing to dir.
func newTxnSink(t *testing.T, dir string, extra map[string]string) *Sink {
	t.Helper()
	opts := map[string]string{"format": "csv", "path": dir}
	for k, v := range extra {
		opts[k] = v
	}
	s, err := NewSink(connectortest.Table("out", idCols, opts), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return s.(*Sink)
}

func openWriter(t *testing.T, s *Sink, subtask, parallelism int) *Writer {
	t.Helper()
	w, err := s.Open(subtask, parallelism)
	if err != nil {
		t.Fatal(err)
	}
	return w.(*Writer)
}

// ids returns a batch of the ids from..to-1.
func ids(from, to int) *types.Batch {
	b := types.NewBatch(1, max(1, to-from))
	for i := from; i < to; i++ {
		b.Append(types.Insert, []types.Value{types.IntValue(int64(i))})
	}
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustTxn(t *testing.T) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		must(t, err)
		return b
	}
}

// listDir returns the names in dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// visibleIDs reads the final part files of dir with the filesystem source
// and returns the ids, sorted.
func visibleIDs(t *testing.T, dir string) []int {
	t.Helper()
	s, err := openSource(t, idCols, map[string]string{"format": "csv", "path": dir})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := s.Open(0, 1)
	defer r.Close()
	var out []int
	b := types.NewBatch(1, 64)
	for {
		b.Reset()
		err := r.Next(context.Background(), b, 64)
		for i := range b.Len() {
			out = append(out, int(b.Row(i)[0].Int()))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestPreCommitCommit(t *testing.T) {
	dir := t.TempDir()
	s := newTxnSink(t, dir, nil)
	must(t, s.Recover(nil))
	w := openWriter(t, s, 0, 1)
	must(t, w.Write(ids(0, 3)))
	txn1 := mustTxn(t)(w.PreCommit(1))
	if got, want := listDir(t, dir), []string{".part-0-0.inprogress"}; !slices.Equal(got, want) {
		t.Errorf("after PreCommit: %v, want %v", got, want)
	}
	must(t, w.Write(ids(3, 5)))
	txn2 := mustTxn(t)(w.PreCommit(2))
	empty := mustTxn(t)(w.PreCommit(3)) // nothing new; txn2 not committed yet
	must(t, w.Commit(txn1))
	must(t, w.Commit(txn1))
	if got, want := listDir(t, dir), []string{".part-0-1.inprogress", "part-0-1-0.csv"}; !slices.Equal(got, want) {
		t.Errorf("after Commit(1): %v, want %v", got, want)
	}
	must(t, w.Commit(empty)) // lists txn2's file too
	must(t, w.Commit(txn2))
	if got, want := visibleIDs(t, dir), seq(0, 5); !slices.Equal(got, want) {
		t.Errorf("visible %v, want %v", got, want)
	}
	must(t, w.Write(ids(5, 6)))
	must(t, w.Close())
	if got, want := listDir(t, dir), []string{"part-0-1-0.csv", "part-0-2-1.csv", "part-0-4-2.csv"}; !slices.Equal(got, want) {
		t.Errorf("after Close: %v, want %v", got, want)
	}
	if _, err := w.PreCommit(9); err == nil {
		t.Error("PreCommit after Close succeeded")
	}
}

// TestCrashRecover writes, pre-commits and "crashes" (the writer is dropped
// without Close) in several ways, then recovers in a new sink.
func TestCrashRecover(t *testing.T) {
	tests := []struct {
		name string
		// run writes with w and returns the transactions of the checkpoint
		// to restore; rows 0..9 are in it, rows 10.. are not.
		run func(t *testing.T, w *Writer) [][]byte
	}{
		{"not committed", func(t *testing.T, w *Writer) [][]byte {
			must(t, w.Write(ids(0, 10)))
			txn := mustTxn(t)(w.PreCommit(1))
			must(t, w.Write(ids(10, 12)))
			must(t, w.Flush())
			return [][]byte{txn}
		}},
		{"committed already", func(t *testing.T, w *Writer) [][]byte {
			must(t, w.Write(ids(0, 10)))
			txn := mustTxn(t)(w.PreCommit(1))
			must(t, w.Commit(txn))
			must(t, w.Write(ids(10, 12)))
			return [][]byte{txn}
		}},
		{"earlier checkpoint never committed", func(t *testing.T, w *Writer) [][]byte {
			must(t, w.Write(ids(0, 4)))
			mustTxn(t)(w.PreCommit(1))
			must(t, w.Write(ids(4, 10)))
			txn := mustTxn(t)(w.PreCommit(2))
			must(t, w.Write(ids(10, 11)))
			mustTxn(t)(w.PreCommit(3)) // not completed
			must(t, w.Write(ids(11, 12)))
			return [][]byte{txn}
		}},
		{"half committed", func(t *testing.T, w *Writer) [][]byte {
			must(t, w.Write(ids(0, 4)))
			txn1 := mustTxn(t)(w.PreCommit(1))
			must(t, w.Write(ids(4, 10)))
			txn2 := mustTxn(t)(w.PreCommit(2))
			must(t, w.Commit(txn1))
			must(t, w.Write(ids(10, 12)))
			return [][]byte{txn2}
		}},
		{"aborted", func(t *testing.T, w *Writer) [][]byte {
			must(t, w.Write(ids(0, 10)))
			txn := mustTxn(t)(w.PreCommit(1))
			must(t, w.Write(ids(10, 12)))
			must(t, w.Abort())
			return [][]byte{txn}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := newTxnSink(t, dir, map[string]string{"sink.rolling-policy.file-size": "8b"})
			must(t, s.Recover(nil))
			txns := tc.run(t, openWriter(t, s, 0, 1))
			for range 2 { // Recover twice is harmless
				s2 := newTxnSink(t, dir, nil)
				must(t, s2.Recover(txns))
				if got, want := visibleIDs(t, dir), seq(0, 10); !slices.Equal(got, want) {
					t.Fatalf("visible %v, want %v", got, want)
				}
				for _, name := range listDir(t, dir) {
					if strings.HasSuffix(name, ".inprogress") {
						t.Errorf("in-progress file %s left", name)
					}
				}
			}
			s3 := newTxnSink(t, dir, nil)
			must(t, s3.Recover(txns))
			w := openWriter(t, s3, 0, 1)
			must(t, w.Write(ids(10, 20)))
			must(t, w.Close())
			if got, want := visibleIDs(t, dir), seq(0, 20); !slices.Equal(got, want) {
				t.Errorf("after the restored run: %v, want %v", got, want)
			}
		})
	}
}

// TestRecoverFreshStart deletes in-progress files and keeps final ones.
func TestRecoverFreshStart(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "part-0-3-0.csv", "1\n")
	writeFile(t, dir, ".part-0-1.inprogress", "2\n")
	writeFile(t, dir, ".part-3-7.inprogress", "3\n")
	writeFile(t, dir, ".other.inprogress", "4\n")
	writeFile(t, dir, "notes.txt", "x\n")
	must(t, newTxnSink(t, dir, nil).Recover(nil))
	if got, want := listDir(t, dir), []string{".other.inprogress", "notes.txt", "part-0-3-0.csv"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// A missing folder is a fresh start too.
	must(t, newTxnSink(t, filepath.Join(dir, "none"), nil).Recover(nil))
}

// TestRecoverRescaled recovers the transactions of two subtasks in a job
// restored at parallelism 1.
func TestRecoverRescaled(t *testing.T) {
	dir := t.TempDir()
	s := newTxnSink(t, dir, nil)
	var txns [][]byte
	for k := range 2 {
		w := openWriter(t, s, k, 2)
		must(t, w.Write(ids(k*10, k*10+10)))
		txns = append(txns, mustTxn(t)(w.PreCommit(4)))
		must(t, w.Write(ids(100, 101)))
	}
	s2 := newTxnSink(t, dir, nil)
	must(t, s2.Recover(txns))
	w := openWriter(t, s2, 0, 1)
	must(t, w.Write(ids(20, 25)))
	must(t, w.Close())
	if got, want := visibleIDs(t, dir), seq(0, 25); !slices.Equal(got, want) {
		t.Errorf("visible %v, want %v", got, want)
	}
	if got, want := listDir(t, dir), []string{"part-0-4-0.csv", "part-0-5-1.csv", "part-1-4-0.csv"}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
}

// TestKillRestore simulates a job that is killed and restored many times,
// at random points, at random parallelisms, with small rolled files: the
// final part files hold every row once.
func TestKillRestore(t *testing.T) {
	const rows = 600
	total := 0
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 7))
		dir := t.TempDir()
		type checkpoint struct {
			id   int64
			pos  int
			txns [][]byte
		}
		restored := checkpoint{}
		restarts := 0
		for {
			s := newTxnSink(t, dir, map[string]string{"sink.rolling-policy.file-size": fmt.Sprintf("%db", 1+rng.IntN(1000))})
			must(t, s.Recover(restored.txns))
			p := 1 + rng.IntN(3)
			ws := make([]*Writer, p)
			for k := range ws {
				ws[k] = openWriter(t, s, k, p)
			}
			pos, id := restored.pos, restored.id
			killed := false
			for pos < rows && !killed {
				n := min(rows-pos, 1+rng.IntN(40))
				must(t, ws[pos%p].Write(ids(pos, pos+n)))
				pos += n
				switch rng.IntN(10) {
				case 0, 1, 2: // a checkpoint
					id++
					var txns [][]byte
					for _, w := range ws {
						txns = append(txns, mustTxn(t)(w.PreCommit(id)))
					}
					if rng.IntN(4) == 0 {
						killed = true // before the checkpoint completes
						break
					}
					restored = checkpoint{id: id, pos: pos, txns: txns}
					for _, txn := range txns {
						if rng.IntN(3) != 0 { // else its commit comes late or never
							must(t, ws[rng.IntN(p)].Commit(txn))
						}
					}
				case 3:
					killed = true
				}
			}
			if !killed {
				for _, w := range ws {
					must(t, w.Close())
				}
				break
			}
			restarts++
			if rng.IntN(2) == 0 {
				for _, w := range ws {
					must(t, w.Abort())
				}
			}
		}
		if got := visibleIDs(t, dir); !slices.Equal(got, seq(0, rows)) {
			t.Fatalf("seed %d (%d restarts): %d rows visible, want %d", seed, restarts, len(got), rows)
		}
		for _, name := range listDir(t, dir) {
			if strings.HasSuffix(name, ".inprogress") {
				t.Errorf("seed %d: in-progress file %s left", seed, name)
			}
		}
		total += restarts
	}
	if total < 20 {
		t.Errorf("only %d restarts in all: the test does not test much", total)
	}
}

func TestRollBySize(t *testing.T) {
	dir := t.TempDir()
	s := newTxnSink(t, dir, map[string]string{"sink.rolling-policy.file-size": "10 b"})
	w := openWriter(t, s, 0, 1)
	must(t, w.Write(ids(0, 3)))   // "0\n1\n2\n": 6 bytes
	must(t, w.Write(ids(10, 12))) // 6 more: 12 ≥ 10, rolls
	must(t, w.Write(ids(3, 4)))
	if got, want := listDir(t, dir), []string{".part-0-0.inprogress", ".part-0-1.inprogress"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	txn, err := decodeTransaction(mustTxn(t)(w.PreCommit(1)))
	must(t, err)
	want := []txnFile{{".part-0-0.inprogress", "part-0-1-0.csv", 12}, {".part-0-1.inprogress", "part-0-1-1.csv", 2}}
	if !slices.Equal(txn.files, want) {
		t.Errorf("transaction %+v, want %+v", txn.files, want)
	}
}

func TestRollByTime(t *testing.T) {
	dir := t.TempDir()
	s := newTxnSink(t, dir, map[string]string{"sink.rolling-policy.rollover-interval": "10 min"})
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	w := openWriter(t, s, 0, 1)
	must(t, w.Write(ids(0, 1)))
	now = now.Add(9 * time.Minute)
	must(t, w.Write(ids(1, 2))) // same file
	now = now.Add(time.Minute)
	must(t, w.Write(ids(2, 3))) // the file is 10 minutes old: a new one
	now = now.Add(30 * time.Minute)
	txn, err := decodeTransaction(mustTxn(t)(w.PreCommit(1)))
	must(t, err)
	if len(txn.files) != 2 || txn.files[0].size != 4 || txn.files[1].size != 2 {
		t.Errorf("transaction %+v, want files of 4 and 2 bytes", txn.files)
	}
	must(t, w.Commit(mustTxn(t)(w.PreCommit(2))))
	if got := visibleIDs(t, dir); !slices.Equal(got, seq(0, 3)) {
		t.Errorf("visible %v", got)
	}
}

func TestCommitErrors(t *testing.T) {
	dir := t.TempDir()
	s := newTxnSink(t, dir, nil)
	w := openWriter(t, s, 0, 1)
	must(t, w.Write(ids(0, 1)))
	txn := mustTxn(t)(w.PreCommit(1))
	lost := func() error {
		must(t, os.Remove(filepath.Join(dir, ".part-0-0.inprogress")))
		return w.Commit(txn)
	}
	bad := (&transaction{checkpoint: 1, files: []txnFile{{"../x.inprogress", "part-0-1-0.csv", 0}}}).encode()
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"garbage", func() error { return w.Commit([]byte{5}) }, "unknown version"},
		{"truncated", func() error { return w.Commit(txn[:len(txn)-1]) }, "truncated"},
		{"not a part file", func() error { return w.Commit(bad) }, "are not part file names"},
		{"recover garbage", func() error { return s.Recover([][]byte{{1, 2}}) }, "recover transaction 0"},
		{"lost", lost, "neither it nor part-0-1-0.csv exists"},
	}
	for _, tc := range tests {
		if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestCommitConcurrently commits transactions from another goroutine while
// the writer goes on writing and pre-committing (run with -race).
func TestCommitConcurrently(t *testing.T) {
	dir := t.TempDir()
	s := newTxnSink(t, dir, map[string]string{"sink.rolling-policy.file-size": "16b"})
	w := openWriter(t, s, 0, 1)
	txns := make(chan []byte, 4)
	errc := make(chan error, 1)
	go func() {
		var first error
		for txn := range txns {
			if err := w.Commit(txn); err != nil && first == nil {
				first = err
			}
		}
		errc <- first
	}()
	for k := range 50 {
		must(t, w.Write(ids(k*10, k*10+10)))
		txns <- mustTxn(t)(w.PreCommit(int64(k + 1)))
	}
	close(txns)
	must(t, <-errc)
	must(t, w.Close())
	if got := visibleIDs(t, dir); !slices.Equal(got, seq(0, 500)) {
		t.Errorf("%d rows visible, want 500", len(got))
	}
}
