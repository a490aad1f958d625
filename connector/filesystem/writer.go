package filesystem

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// Writer writes one subtask's part files. Write, Flush, PreCommit, Close
// and Abort are called by the subtask's goroutine; Commit may be called
// from another one.
type Writer struct {
	sink    *Sink
	subtask int
	next    int // number of the next part file
	enc     encoder
	rowEnc  rowEncoder // enc by row (csv and json); nil for debezium-json
	data    []int      // the columns written into the files, by index
	// textCols are those of them of VARCHAR (touchText reads them);
	// touchSum is the sum of the bytes it read.
	textCols []int
	touchSum byte
	part     *partFile   // the open in-progress file; nil before a row comes
	free     [][]byte    // write buffers of finished files, for new ones
	rolled   []*partFile // finished files not yet pre-committed
	finished int         // rolled[:finished] are known to be finished
	last     int64       // the last checkpoint pre-committed or recovered
	closed   bool
	// ending: PrepareEnd prepared the end of a job without checkpoints.
	// endFiles are the files it finished, endFresh the partitions whose
	// success file its transaction writes, without one before: what
	// Revert takes back and Abort deletes.
	ending   bool
	endFiles []txnFile
	endFresh []string
	// syncing holds a token for each periodic background sync running
	// (at most maxSyncing: each holds a thread in fsync); a file that
	// finds none free skips its early sync.
	syncing chan struct{}

	mu      sync.Mutex
	pending []txnFile // pre-committed files not known to be committed
	// pendingOK are the partitions pre-committed as ready to commit, not
	// known to be committed (under mu).
	pendingOK []string

	// A partitioned sink's state: a slot per partition written since the
	// last PreCommit (its open file and this Write's rows), the partitions
	// written and not committed yet with the time each was first written,
	// and the watermark of the input.
	slots   map[string]*partSlot
	touched []*partSlot // the slots this Write wrote to
	waiting map[string]waitingPart
	wm      int64
	pathBuf []byte
	textBuf []byte
	proj    *types.Batch // the data columns of a batch (Sink.data)
}

// partSlot is one partition a partitioned sink writes.
type partSlot struct {
	dir     string    // the partition folder, relative, slash-separated
	file    *partFile // its open in-progress file; nil before a row comes
	touched bool      // in Writer.touched
}

var (
	_ connector.TransactionalWriter = (*Writer)(nil)
	_ connector.EndingWriter        = (*Writer)(nil)
	_ connector.WatermarkWriter     = (*Writer)(nil)
)

// Watermark takes the input's event-time watermark, for the
// partition-time commit trigger.
func (w *Writer) Watermark(wm int64) error {
	w.wm = max(w.wm, wm)
	return nil
}

// Write encodes the batch and appends it to the in-progress part file,
// rolling to a new file before it if the file is older than the rollover
// interval, and after it if the file reached the size limit.
func (w *Writer) Write(b *types.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	if w.closed || w.ending {
		return fmt.Errorf("filesystem sink: write after close")
	}
	if w.rowEnc != nil {
		// csv and json take inserts only; checked before a file is
		// created or a byte is written.
		for _, k := range b.Kinds {
			if k != types.Insert {
				return appendOnly(w.sink.format, k)
			}
		}
	}
	if w.sink.part != nil {
		return w.writePartitioned(b)
	}
	if w.rowEnc != nil {
		if err := w.open(&w.part, ""); err != nil {
			return err
		}
		p, spillAt := w.part, w.sink.spillAt
		for i := range b.Len() {
			if i%touchRows == 0 {
				w.touchText(b, i, min(i+touchRows, b.Len()))
			}
			n := len(p.buf)
			p.buf = w.rowEnc.appendRow(p.buf, b.Row(i), w.data)
			p.size += int64(len(p.buf) - n)
			if len(p.buf) >= spillAt {
				if err := p.spill(); err != nil {
					return err
				}
			}
		}
		return w.wrote(&w.part)
	}
	// debezium-json: by batch (an update's two rows make one event).
	if w.proj != nil {
		w.proj.Reset()
		for i := range b.Len() {
			row, dst := b.Row(i), w.proj.AppendEmpty(b.Kinds[i])
			for j, c := range w.sink.data {
				dst[j] = row[c]
			}
		}
		b = w.proj
	}
	if err := w.open(&w.part, ""); err != nil {
		return err
	}
	// Encoded straight into the file's buffer.
	p := w.part
	n := len(p.buf)
	var err error
	if p.buf, err = w.enc.encode(p.buf, b); err != nil {
		p.buf = p.buf[:n]
		return err
	}
	p.size += int64(len(p.buf) - n)
	return w.wrote(&w.part)
}

// open makes *pf an in-progress file of partition folder dir ("" for the
// sink's folder) to write to: a new one if there is none or the rollover
// interval has passed since it was opened.
func (w *Writer) open(pf **partFile, dir string) error {
	var err error
	if *pf != nil && w.sink.now().Sub((*pf).opened) >= w.sink.rollover {
		if err := w.roll(pf); err != nil {
			return err
		}
	}
	if *pf == nil {
		folder := filepath.Join(w.sink.dir, filepath.FromSlash(dir))
		if dir != "" {
			if err := makeFolder(w.sink.dir, dir); err != nil {
				return err
			}
		}
		var buf []byte
		if k := len(w.free); k > 0 {
			buf, w.free = w.free[k-1], w.free[:k-1]
		} else {
			buf = make([]byte, 0, writeBufferSize+writeBufferSize/4)
		}
		if *pf, err = createPart(filepath.Join(folder, inProgressName(w.subtask, w.next)), w.next, w.sink.now(), buf, w.writeback()); err != nil {
			w.free = append(w.free, buf)
			return err
		}
		(*pf).dir = dir
		w.next++
	}
	return nil
}

// wrote ends a Write's writing to *pf: the buffer goes to the file if it
// is full, and the file is finished if it reached the size limit.
func (w *Writer) wrote(pf **partFile) error {
	p := *pf
	if len(p.buf) >= w.sink.spillAt {
		if err := p.spill(); err != nil {
			return err
		}
	}
	if p.size >= w.sink.fileSize {
		return w.roll(pf)
	}
	return nil
}

// makeFolder creates partition folder dir under root, syncing each new
// folder's parent so that the folder outlives a crash.
func makeFolder(root, dir string) error {
	full := filepath.Join(root, filepath.FromSlash(dir))
	if st, err := os.Stat(full); err == nil && st.IsDir() {
		return nil
	}
	parent := root
	for _, step := range strings.Split(dir, "/") {
		next := filepath.Join(parent, step)
		if err := os.Mkdir(next, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("filesystem sink: %w", err)
		}
		if err := syncDir(parent); err != nil {
			return err
		}
		parent = next
	}
	return nil
}

// writePartitioned writes each row (without the partition columns) into
// its partition's file. Per partition, the rows go in input order to the
// file that was open for it when the Write began, or to a new one opened
// at its first row (rolling by time first); after the batch, each file
// that reached the size limit is finished, in the order of the
// partitions' first rows, as if each partition's rows were written in
// one piece.
func (w *Writer) writePartitioned(b *types.Batch) error {
	pt := w.sink.part
	err := func() error {
		// Rows come in runs of one partition (a minute, a day): a row
		// whose partition values equal the previous row's goes to the
		// same slot without building its path.
		var s *partSlot
		var p *partFile
		var prev []types.Value
		spillAt := w.sink.spillAt
		for i := range b.Len() {
			if i%touchRows == 0 {
				w.touchText(b, i, min(i+touchRows, b.Len()))
			}
			row := b.Row(i)
			if s == nil || !sameStrings(pt.cols, prev, row) && !samePartition(pt.cols, prev, row) {
				w.pathBuf, w.textBuf = pt.appendPath(w.pathBuf[:0], w.textBuf, row)
				s = w.slots[string(w.pathBuf)]
				if s == nil {
					s = &partSlot{dir: string(w.pathBuf)}
					w.slots[s.dir] = s
				}
				if !s.touched {
					s.touched = true
					w.touched = append(w.touched, s)
					if err := w.open(&s.file, s.dir); err != nil {
						return err
					}
					if _, ok := w.waiting[s.dir]; !ok {
						if err := w.wait(s.dir); err != nil {
							return err
						}
					}
				}
				p, prev = s.file, row
			}
			n := len(p.buf)
			p.buf = w.rowEnc.appendRow(p.buf, row, w.data)
			p.size += int64(len(p.buf) - n)
			if len(p.buf) >= spillAt {
				if err := p.spill(); err != nil {
					return err
				}
			}
		}
		for _, s := range w.touched {
			if err := w.wrote(&s.file); err != nil {
				return err
			}
		}
		return nil
	}()
	for _, s := range w.touched {
		s.touched = false
	}
	w.touched = w.touched[:0]
	return err
}

// touchRows is how many rows touchText reads ahead.
const touchRows = 128

// touchText reads the text columns of rows from..to-1 of b, a byte per 64
// (a cache line) and the last, and keeps their sum, so that the reads
// happen. Text values point anywhere in memory (Nexmark's extra are cuts
// of a megabyte of text): read in this short loop, many of their cache
// misses are in flight at once, where the encoder, reading them one row
// at a time among its other work, waits for each in turn.
func (w *Writer) touchText(b *types.Batch, from, to int) {
	if len(w.textCols) == 0 {
		return
	}
	var sum byte
	for i := from; i < to; i++ {
		row := b.Row(i)
		for _, c := range w.textCols {
			s := row[c].Str()
			for k := 0; k < len(s); k += 64 {
				sum += s[k]
			}
			if len(s) > 0 {
				sum += s[len(s)-1]
			}
		}
	}
	w.touchSum += sum
}

// sameStrings reports whether rows a and b hold, in every partition
// column of cols, VARCHAR values of the same bytes at the same address
// (then equal: the same folder); false says nothing. It is samePartition's
// common case without a call (a run of rows of one partition mostly holds
// one string per column: the Calc's DATE_FORMAT gives the same for a
// minute).
func sameStrings(cols []int, a, b []types.Value) bool {
	for _, c := range cols {
		x, y := &a[c], &b[c]
		if x.Kind() != types.KindVarchar || y.Kind() != types.KindVarchar {
			return false
		}
		xs, ys := x.Str(), y.Str()
		if len(xs) != len(ys) || unsafe.StringData(xs) != unsafe.StringData(ys) {
			return false
		}
	}
	return true
}

// samePartition reports whether rows a and b have the same values, so
// the same folder, in the partition columns cols (a DECIMAL never: equal
// values of different scales have different texts).
func samePartition(cols []int, a, b []types.Value) bool {
	for _, c := range cols {
		x, y := &a[c], &b[c]
		switch k := x.Kind(); {
		case k != y.Kind() || k == types.KindDecimal:
			return false
		case k == types.KindVarchar:
			// The folder is the text's: compare it alone. A run of
			// rows of one partition mostly holds one string (the
			// Calc's DATE_FORMAT gives the same for a minute): the
			// same bytes are equal without reading them.
			xs, ys := x.Str(), y.Str()
			if len(xs) != len(ys) || unsafe.StringData(xs) != unsafe.StringData(ys) && xs != ys {
				return false
			}
		case !types.Equal(*x, *y):
			return false
		}
	}
	return true
}

// roll finishes the file *pf in the background; the next PreCommit or
// Close waits for it and takes it. At most maxFinishing files finish at
// once.
func (w *Writer) roll(pf **partFile) error {
	p := *pf
	*pf = nil
	w.rolled = append(w.rolled, p)
	err := p.startFinish()
	if err == nil && len(w.free) < maxFreeBuffers {
		w.free = append(w.free, p.buf[:0])
	}
	p.buf = nil
	for ; len(w.rolled)-w.finished > maxFinishing; w.finished++ {
		if ferr := w.rolled[w.finished].wait(); err == nil {
			err = ferr
		}
	}
	return err
}

// writeback is the sink's writeback with this writer's sync tokens.
func (w *Writer) writeback() writeback {
	wb := w.sink.writeback
	if w.syncing == nil {
		w.syncing = make(chan struct{}, maxSyncing)
	}
	wb.tokens = w.syncing
	return wb
}

// maxSyncing bounds the periodic background syncs of a Writer's open
// files (a partitioned sink may have many open at once).
const maxSyncing = 4

// maxFinishing bounds the files a Writer finishes (syncs and closes) in
// the background at once: each holds a thread in fsync.
const maxFinishing = 4

// maxFreeBuffers bounds the write buffers a Writer keeps for new files.
const maxFreeBuffers = 4

// Flush writes buffered data to the in-progress files and syncs them.
func (w *Writer) Flush() error {
	if w.part != nil {
		if err := w.part.flush(); err != nil {
			return err
		}
	}
	for _, s := range w.slots {
		if s.file != nil {
			if err := s.file.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// finishAll finishes the current file and returns the transaction files of
// all finished ones, named for checkpoint.
func (w *Writer) finishAll(checkpoint int64) ([]txnFile, error) {
	if w.part != nil {
		if err := w.roll(&w.part); err != nil {
			return nil, err
		}
	}
	// Partition files are all finished at a checkpoint; the slots go
	// with them (a partition written again gets a new one).
	for d, s := range w.slots {
		if s.file != nil {
			if err := w.roll(&s.file); err != nil {
				return nil, err
			}
		}
		delete(w.slots, d)
	}
	files := make([]txnFile, len(w.rolled))
	for k, p := range w.rolled {
		if err := p.wait(); err != nil {
			return nil, err
		}
		files[k] = txnFile{
			tmp:   path.Join(p.dir, filepath.Base(p.path)),
			final: path.Join(p.dir, finalName(w.subtask, checkpoint, p.n, w.sink.ext())),
			size:  p.size,
		}
	}
	w.rolled, w.finished = w.rolled[:0], 0
	return files, nil
}

// readyPartitions removes from the waiting partitions those the commit
// trigger lets commit now, and returns them: with 'partition-time', those
// whose time plus the delay is below the watermark; with
// 'process-time', those first written at least the delay ago; at the
// end of the input (all), every one.
func (w *Writer) readyPartitions(all bool) ([]string, error) {
	pt := w.sink.part
	if pt == nil || pt.successName == "" {
		clear(w.waiting)
		return nil, nil
	}
	var ready []string
	now := w.sink.now()
	for d, wp := range w.waiting {
		ok := all
		switch {
		case ok:
		case pt.trigger == triggerPartitionTime:
			ok = w.wm != math.MinInt64 && w.wm > wp.time+pt.delay.Milliseconds()
		default:
			ok = now.Sub(wp.first) >= pt.delay
		}
		if ok {
			ready = append(ready, d)
			delete(w.waiting, d)
		}
	}
	sort.Strings(ready)
	return ready, nil
}

// waitingPart is a partition written and not committed yet: when it was
// first written, and its time (the partition-time trigger's).
type waitingPart struct {
	first time.Time
	time  int64
}

// wait adds partition folder dir to the waiting partitions; its time must
// parse for the partition-time trigger.
func (w *Writer) wait(dir string) error {
	wp := waitingPart{first: w.sink.now()}
	if pt := w.sink.part; pt.successName != "" && pt.trigger == triggerPartitionTime {
		var err error
		if wp.time, err = pt.partitionTime(dir); err != nil {
			return fmt.Errorf("filesystem sink: %w", err)
		}
	}
	w.waiting[dir] = wp
	return nil
}

// waitingList returns the waiting partitions, sorted.
func (w *Writer) waitingList() []string {
	out := make([]string, 0, len(w.waiting))
	for d := range w.waiting {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// PreCommit finishes (flushes, syncs and closes) the current part file and
// returns a transaction listing the files finished since the last
// PreCommit, named for checkpointID, and also those that earlier
// transactions listed but no Commit has committed yet, so that committing
// the latest transaction is enough. Later rows go to a new file.
func (w *Writer) PreCommit(checkpointID int64) ([]byte, error) {
	if w.closed || w.ending {
		return nil, fmt.Errorf("filesystem sink: pre-commit after close")
	}
	files, err := w.finishAll(checkpointID)
	if err != nil {
		return nil, err
	}
	ready, err := w.readyPartitions(false)
	if err != nil {
		return nil, err
	}
	w.last = checkpointID
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, files...)
	w.pendingOK = append(w.pendingOK, ready...)
	t := transaction{checkpoint: checkpointID, files: w.pending, success: w.pendingOK}
	if len(w.waiting) > 0 {
		t.waiting = w.waitingList()
	}
	return t.encode(), nil
}

// Commit renames the files of a transaction from PreCommit (of any
// subtask of this sink) to their final names and syncs the folder. It is
// idempotent: a file already renamed is skipped.
func (w *Writer) Commit(txn []byte) error {
	t, err := decodeTransaction(txn)
	if err != nil {
		return err
	}
	if _, err := w.sink.commitFiles(t.files); err != nil {
		return fmt.Errorf("commit checkpoint %d: %w", t.checkpoint, err)
	}
	if err := w.sink.commitPartitions(t.success); err != nil {
		return fmt.Errorf("commit checkpoint %d: %w", t.checkpoint, err)
	}
	w.forget(t.files, t.success)
	return nil
}

// forget drops committed files and partitions from the pending ones.
func (w *Writer) forget(files []txnFile, parts []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(parts) > 0 {
		done := make(map[string]bool, len(parts))
		for _, p := range parts {
			done[p] = true
		}
		kept := w.pendingOK[:0]
		for _, p := range w.pendingOK {
			if !done[p] {
				kept = append(kept, p)
			}
		}
		w.pendingOK = kept
	}
	done := make(map[string]bool, len(files))
	for _, f := range files {
		done[f.tmp] = true
	}
	kept := w.pending[:0]
	for _, f := range w.pending {
		if !done[f.tmp] {
			kept = append(kept, f)
		}
	}
	clear(w.pending[len(kept):])
	w.pending = kept
}

// Close ends a job that finished: it finishes the current file and
// commits it with every file not committed yet, the ones after the last
// checkpoint named for the checkpoint after it. A failed job must call
// Abort instead, or rows after its last completed checkpoint become
// visible and are written again after a restore.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.ending {
		// The job committed the transaction of PrepareEnd: nothing is
		// left to finish.
		return nil
	}
	files, err := w.finishAll(w.last + 1)
	if err != nil {
		// Nothing is called after a failed Close: release every file
		// and background job here, as Abort would.
		w.discardAll()
		return err
	}
	ready, err := w.readyPartitions(true)
	if err != nil {
		return err
	}
	w.mu.Lock()
	all := append(w.pending, files...)
	parts := append(w.pendingOK, ready...)
	w.pending, w.pendingOK = nil, nil
	w.mu.Unlock()
	// The partitions of this Close (after the pre-committed ones) whose
	// success file it would write, not there yet.
	fresh := w.sink.withoutSuccess(parts[len(parts)-len(ready):])
	done, err := w.sink.commitFiles(all)
	if err == nil {
		err = w.sink.commitPartitions(parts)
	}
	if err != nil {
		// The job fails. The files of this Close hold rows after the last
		// checkpoint, which a restore (or a run from scratch) writes
		// again: none may stay final, and no partition may say it is
		// complete without them. The pre-committed ones (first in all
		// and parts) are a checkpoint's, which Recover commits anyway.
		own := len(all) - len(files)
		if done > own {
			if uerr := w.sink.revertFiles(all[own:done]); uerr != nil {
				err = errors.Join(err, uerr)
			}
		}
		if uerr := w.sink.removeSuccess(fresh); uerr != nil {
			err = errors.Join(err, uerr)
		}
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// Abort releases a writer of a job that failed: it deletes the files not
// pre-committed (and those PrepareEnd finished, which no checkpoint holds)
// and leaves the pre-committed ones for Recover.
func (w *Writer) Abort() error {
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.discardAll()
	if w.ending {
		if derr := w.sink.removeInProgress(w.endFiles); derr != nil && err == nil {
			err = derr
		}
	}
	return err
}

// PrepareEnd is the first phase of the end of a job without checkpoints
// (connector.EndingWriter): it finishes (flushes, syncs and closes) every
// part file and returns the transaction that commits them, with every
// file not committed yet, the ones after the last checkpoint named for the
// checkpoint after it (as Close would), and the success files of every
// partition written. Nothing becomes visible until Commit.
func (w *Writer) PrepareEnd() ([]byte, error) {
	if w.closed || w.ending {
		return nil, fmt.Errorf("filesystem sink: prepare the end after close")
	}
	files, err := w.finishAll(w.last + 1)
	if err != nil {
		return nil, err // Abort releases what is left
	}
	ready, err := w.readyPartitions(true)
	if err != nil {
		return nil, err
	}
	w.ending, w.endFiles = true, files
	w.endFresh = w.sink.withoutSuccess(ready)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, files...)
	w.pendingOK = append(w.pendingOK, ready...)
	t := transaction{checkpoint: w.last + 1, files: w.pending, success: w.pendingOK}
	return t.encode(), nil
}

// Revert undoes a Commit, whole or partial, of the transaction of
// PrepareEnd: each file PrepareEnd finished that is final gets its
// in-progress name back, and the success files that were not there before
// are deleted. Files an earlier checkpoint pre-committed stay committed:
// they are that checkpoint's, which Recover commits anyway.
func (w *Writer) Revert(txn []byte) error {
	if !w.ending {
		return fmt.Errorf("filesystem sink: revert without PrepareEnd")
	}
	if _, err := decodeTransaction(txn); err != nil {
		return err
	}
	return errors.Join(w.sink.revertFiles(w.endFiles), w.sink.removeSuccess(w.endFresh))
}

// discardAll waits for the background jobs of the open and rolled files,
// closes and deletes them, and returns the first error.
func (w *Writer) discardAll() error {
	var first error
	if w.part != nil {
		w.rolled = append(w.rolled, w.part)
		w.part = nil
	}
	for d, s := range w.slots {
		if s.file != nil {
			w.rolled = append(w.rolled, s.file)
		}
		delete(w.slots, d)
	}
	for _, p := range w.rolled {
		if err := p.discard(); err != nil && first == nil {
			first = err
		}
	}
	w.rolled, w.finished = nil, 0
	return first
}
