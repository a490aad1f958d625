package filesystem

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
)

// openInProgress returns the in-progress files under dir that this
// process still holds open (Linux: /proc/self/fd).
func openInProgress(t *testing.T, dir string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	mustOK(t, err)
	var out []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil {
			continue // the ReadDir's own fd, closed by now
		}
		if strings.HasPrefix(target, dir) && strings.HasSuffix(target, ".inprogress") {
			out = append(out, target)
		}
	}
	return out
}

// TestCloseSyncFailureLeavesNothingRunning: a partitioned writer holds
// more open partition files than maxFinishing when its Close (the end of
// a job) fails on a sync. When Close returns, every background sync must
// have ended and every part file must be closed: the runtime calls
// neither Abort nor anything else after a failed Close (Close set
// closed), so nothing else would ever wait for those goroutines or close
// those files.
func TestCloseSyncFailureLeavesNothingRunning(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/fd")
	}
	dir := t.TempDir()
	tab := q10BidTable(dir)
	sk, err := NewSink(tab, connector.Env{})
	mustOK(t, err)
	s := sk.(*Sink)
	s.writeback = writeback{} // no background sync while writing
	var mu sync.Mutex
	inFlight, calls := 0, 0
	s.writeback.fsync = func(f *os.File) error {
		mu.Lock()
		inFlight++
		calls++
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight--
			mu.Unlock()
		}()
		return errSyncFailed // every finishing sync fails (a disk gone bad)
	}
	w := openWriter(t, s, 0, 1)
	// One row in each of 3*maxFinishing minutes: as many open partition
	// files.
	rows := rowPerMinute(3 * maxFinishing)
	mustOK(t, w.Write(q10Input(rows)))
	if n := len(openInProgress(t, dir)); n != len(rows) {
		t.Fatalf("%d part files open before Close, want %d", n, len(rows))
	}
	cerr := w.Close()
	if !errors.Is(cerr, errSyncFailed) {
		t.Fatalf("Close returned %v, want the sync failure", cerr)
	}
	mu.Lock()
	running := inFlight
	mu.Unlock()
	if running != 0 {
		t.Errorf("Close returned while %d background syncs still ran (no owner waits for them)", running)
	}
	if open := openInProgress(t, dir); len(open) > 0 {
		t.Errorf("after a failed Close, %d part files are still open (never closed): %v", len(open), open)
	}
	// The same through Abort after the failed Close (a caller that tries
	// to clean up): it returns at once as the writer is closed.
	mustOK(t, w.Abort())
	if open := openInProgress(t, dir); len(open) > 0 {
		t.Errorf("after Abort too, %d part files are still open", len(open))
	}
}

// TestPeriodicSyncsBounded: a partitioned writer with many open files
// starts at most maxSyncing periodic background syncs at once; the files
// that find no token free skip theirs (Close still syncs every file).
func TestPeriodicSyncsBounded(t *testing.T) {
	dir := t.TempDir()
	tab := q10BidTable(dir)
	sk, err := NewSink(tab, connector.Env{})
	mustOK(t, err)
	s := sk.(*Sink)
	s.spillAt = 1 // every file spills what it got in a Write
	s.writeback = writeback{sync: 1}
	var mu sync.Mutex
	inFlight, most, calls := 0, 0, 0
	entered, release := make(chan struct{}, 64), make(chan struct{})
	s.writeback.fsync = func(f *os.File) error {
		mu.Lock()
		inFlight++
		calls++
		most = max(most, inFlight)
		mu.Unlock()
		entered <- struct{}{}
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		return nil
	}
	w := openWriter(t, s, 0, 1)
	rows := rowPerMinute(3 * maxSyncing)
	mustOK(t, w.Write(q10Input(rows)))
	for range maxSyncing {
		<-entered // the syncs that got a token are running
	}
	mu.Lock()
	got, n := most, calls
	mu.Unlock()
	if got != maxSyncing || n != maxSyncing {
		t.Fatalf("%d periodic syncs started (%d at once) for %d files, want %d", n, got, len(rows), maxSyncing)
	}
	close(release)
	mustOK(t, w.Close())
	mu.Lock()
	defer mu.Unlock()
	if most > maxSyncing+maxFinishing {
		t.Errorf("%d syncs ran at once", most)
	}
	if calls < maxSyncing+len(rows) {
		t.Errorf("%d syncs in all, want at least one per file at Close (%d) after the %d periodic ones", calls, len(rows), maxSyncing)
	}
}

// TestPeriodicSyncTokensReturned (review r18-rev-lead of 94d6db0): a sync
// token goes back when its job ends, so one open file that spills in
// every Write syncs in every Write, past maxSyncing of them (a leaked
// token would stop the periodic syncs of the writer for good after
// maxSyncing). The file's next spill waits for its last job, which gives
// its token back before it ends, so the count is exact.
func TestPeriodicSyncTokensReturned(t *testing.T) {
	dir := t.TempDir()
	tab := q10BidTable(dir)
	sk, err := NewSink(tab, connector.Env{})
	mustOK(t, err)
	s := sk.(*Sink)
	s.spillAt = 1 // the file spills what it got in each Write
	s.writeback = writeback{sync: 1}
	var mu sync.Mutex
	calls := 0
	s.writeback.fsync = func(f *os.File) error {
		mu.Lock()
		calls++
		mu.Unlock()
		return nil
	}
	w := openWriter(t, s, 0, 1)
	ts := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	tm := time.UnixMilli(ts).UTC()
	folder := "dt=" + tm.Format("2006-01-02") + "/hm=" + strings.ReplaceAll(tm.Format("15:04"), ":", "%3A")
	writes := 3 * maxSyncing
	for k := range writes {
		mustOK(t, w.Write(q10Input([]q10Row{{auction: int64(k), bidder: 1, price: 2, ts: ts, extra: "x", folder: folder}})))
	}
	// The last Write's sync may still run: wait for it as the next spill
	// would.
	for _, sl := range w.slots {
		if sl.file != nil {
			mustOK(t, sl.file.wait())
		}
	}
	mu.Lock()
	n := calls
	mu.Unlock()
	if n != writes {
		t.Fatalf("%d periodic syncs for %d Writes that each spilled one file, want %d", n, writes, writes)
	}
	mustOK(t, w.Close())
}

// rowPerMinute returns n q10 rows, one in each minute from 2026-12-01
// 10:00 UTC: n partitions.
func rowPerMinute(n int) []q10Row {
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	rows := make([]q10Row, 0, n)
	for k := range n {
		ts := base + int64(k)*60_000
		tm := time.UnixMilli(ts).UTC()
		rows = append(rows, q10Row{auction: int64(k), bidder: 1, price: 2, ts: ts, extra: "x",
			folder: "dt=" + tm.Format("2006-01-02") + "/hm=" + strings.ReplaceAll(tm.Format("15:04"), ":", "%3A")})
	}
	return rows
}
