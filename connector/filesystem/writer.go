package filesystem

import (
	"fmt"
	"path/filepath"
	"sync"

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
	buf     []byte
	part    *partFile   // the open in-progress file; nil before a row comes
	rolled  []*partFile // finished files not yet pre-committed
	last    int64       // the last checkpoint pre-committed or recovered
	closed  bool

	mu      sync.Mutex
	pending []txnFile // pre-committed files not known to be committed
}

var _ connector.TransactionalWriter = (*Writer)(nil)

// Write encodes the batch and appends it to the in-progress part file,
// rolling to a new file before it if the file is older than the rollover
// interval, and after it if the file reached the size limit.
func (w *Writer) Write(b *types.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	if w.closed {
		return fmt.Errorf("filesystem sink: write after close")
	}
	var err error
	if w.buf, err = w.enc.encode(w.buf[:0], b); err != nil {
		return err
	}
	if w.part != nil && w.sink.now().Sub(w.part.opened) >= w.sink.rollover {
		if err := w.roll(); err != nil {
			return err
		}
	}
	if w.part == nil {
		path := filepath.Join(w.sink.dir, inProgressName(w.subtask, w.next))
		if w.part, err = createPart(path, w.next, w.sink.now()); err != nil {
			return err
		}
		w.next++
	}
	if err := w.part.write(w.buf); err != nil {
		return err
	}
	if w.part.size >= w.sink.fileSize {
		return w.roll()
	}
	return nil
}

// roll finishes the current file; the next PreCommit or Close takes it.
func (w *Writer) roll() error {
	p := w.part
	w.part = nil
	w.rolled = append(w.rolled, p)
	return p.finish()
}

// Flush writes buffered data to the in-progress file and syncs it.
func (w *Writer) Flush() error {
	if w.part == nil {
		return nil
	}
	return w.part.flush()
}

// finishAll finishes the current file and returns the transaction files of
// all finished ones, named for checkpoint.
func (w *Writer) finishAll(checkpoint int64) ([]txnFile, error) {
	if w.part != nil {
		if err := w.roll(); err != nil {
			return nil, err
		}
	}
	files := make([]txnFile, len(w.rolled))
	for k, p := range w.rolled {
		files[k] = txnFile{
			tmp:   filepath.Base(p.path),
			final: finalName(w.subtask, checkpoint, p.n, w.sink.ext()),
			size:  p.size,
		}
	}
	w.rolled = w.rolled[:0]
	return files, nil
}

// PreCommit finishes (flushes, syncs and closes) the current part file and
// returns a transaction listing the files finished since the last
// PreCommit, named for checkpointID, and also those that earlier
// transactions listed but no Commit has committed yet, so that committing
// the latest transaction is enough. Later rows go to a new file.
func (w *Writer) PreCommit(checkpointID int64) ([]byte, error) {
	if w.closed {
		return nil, fmt.Errorf("filesystem sink: pre-commit after close")
	}
	files, err := w.finishAll(checkpointID)
	if err != nil {
		return nil, err
	}
	w.last = checkpointID
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, files...)
	t := transaction{checkpoint: checkpointID, files: w.pending}
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
	if err := commitFiles(w.sink.dir, t.files); err != nil {
		return fmt.Errorf("commit checkpoint %d: %w", t.checkpoint, err)
	}
	w.forget(t.files)
	return nil
}

// forget drops committed files from the pending ones.
func (w *Writer) forget(files []txnFile) {
	w.mu.Lock()
	defer w.mu.Unlock()
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
	files, err := w.finishAll(w.last + 1)
	if err != nil {
		return err
	}
	w.mu.Lock()
	all := append(w.pending, files...)
	w.pending = nil
	w.mu.Unlock()
	if err := commitFiles(w.sink.dir, all); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// Abort releases a writer of a job that failed: it deletes the files not
// pre-committed and leaves the pre-committed ones for Recover.
func (w *Writer) Abort() error {
	if w.closed {
		return nil
	}
	w.closed = true
	var first error
	if w.part != nil {
		w.rolled = append(w.rolled, w.part)
		w.part = nil
	}
	for _, p := range w.rolled {
		if err := p.discard(); err != nil && first == nil {
			first = err
		}
	}
	w.rolled = nil
	return first
}
