package statestore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ingestMinKeys is how many ascending write-through keys go into the batch
// before the rest of the run is streamed into an sstable for ingestion: an
// ingestion has a fixed cost (a file, a sync, a MANIFEST edit) that a small
// batch does not.
const ingestMinKeys = 8192

// ingestDir is the folder, inside the working folder, where sstables for
// ingestion are written. Pebble ignores it, and so do snapshots.
const ingestDir = "ingest"

// throughWriter collects the writes of PutThrough until CommitThrough.
//
// While the keys arrive in strictly ascending order (the grouped aggregate
// sorts its changes before writing them), they go into a Pebble batch; once
// there are more than ingestMinKeys, the batch is moved into an sstable and
// the rest of the run is streamed straight into it, and CommitThrough
// ingests it: Pebble then neither copies the writes into a batch and sorts
// them nor flushes them from a memtable. Once a key arrives out of order, it
// and every later key of the run go into the batch. CommitThrough ingests
// the sstable before it commits the batch, so the batch's writes, all later
// than those of the sstable, win.
//
// In replace mode (beginReplace) the run is the complete content of a key
// span: the sstable is open from the first key, and CommitThrough ingests
// it and excises the span's older keys in one step (Pebble's
// IngestAndExcise), so the old data is dropped without a compaction and the
// new file lands in the bottom level.
type throughWriter struct {
	db    *pebble.DB
	opts  *pebble.Options // the database's options, with defaults filled in
	dir   string          // where sstables for ingestion are written
	batch *pebble.Batch

	sst     *sstable.Writer // nil when no sstable is open
	sstOut  *bufferedWritable
	sstPath string
	sstCRC  *crcFile // the open sstable's file, computing its checksum
	// written holds the checksums of the sstables ingested since the last
	// snapshot (Store.checksum).
	written []writtenSum
	files   int // sstables written so far, to name them

	minIngest int // ingestMinKeys, but tests may change it

	last    []byte // the last key of the ascending run
	n       int    // keys in the ascending run
	ordered bool   // every key of this run so far was ascending
	// filter: a key of the run so far asked for the Bloom filter (set's
	// filter), so the sstable, when it opens, gets one; filtered: the open
	// sstable has one.
	filter, filtered bool

	replace *pebble.KeyRange // in replace mode: the span the run replaces
}

func newThroughWriter(db *pebble.DB, opts *pebble.Options, workDir string) *throughWriter {
	return &throughWriter{
		db:        db,
		opts:      opts,
		dir:       filepath.Join(workDir, ingestDir),
		batch:     db.NewBatch(),
		minIngest: ingestMinKeys,
		ordered:   true,
	}
}

// empty reports whether there is nothing to commit.
func (w *throughWriter) empty() bool { return w.sst == nil && w.batch.Empty() }

// set writes key = value; filter says whether lookups of the key need a
// Bloom filter in the store (Space.PutThroughUnfiltered). A key that needs
// one while the run's sstable has none goes into the batch, whose flush
// writes one, but for a replace run (beginReplace), whose sstable has
// none.
func (w *throughWriter) set(key, value []byte, filter bool) error {
	if filter && w.sst != nil && !w.filtered && w.replace == nil {
		if err := w.batch.Set(key, value, nil); err != nil {
			return fmt.Errorf("statestore: put: %w", err)
		}
		// The batch commits after the sstable is ingested, so a later
		// write of this key must not go into the sstable: the run's
		// sstable keys go on from above it.
		if bytes.Compare(key, w.last) > 0 {
			w.last = append(w.last[:0], key...)
		}
		return nil
	}
	if w.ordered && (w.n == 0 || bytes.Compare(key, w.last) > 0) {
		w.last = append(w.last[:0], key...)
		w.n++
		w.filter = w.filter || filter
		if w.sst == nil && w.n > w.minIngest {
			if err := w.startSST(); err != nil {
				return err
			}
		}
		if w.sst != nil {
			if err := w.sst.Set(key, value); err != nil {
				return fmt.Errorf("statestore: write sstable %s: %w", w.sstPath, err)
			}
			return nil
		}
	} else {
		w.ordered = false
	}
	if err := w.batch.Set(key, value, nil); err != nil {
		return fmt.Errorf("statestore: put: %w", err)
	}
	return nil
}

// startSST opens an sstable and moves the batch into it: the batch holds
// only the keys of the ascending run so far, all smaller than the key that
// comes next.
func (w *throughWriter) startSST() error {
	if err := w.openSST(w.filter); err != nil {
		return err
	}
	r := w.batch.Reader()
	for {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			return fmt.Errorf("statestore: read write-through batch: %w", err)
		}
		if !ok {
			break
		}
		if kind != pebble.InternalKeyKindSet {
			return fmt.Errorf("statestore: write-through batch holds a %s", kind)
		}
		if err := w.sst.Set(k, v); err != nil {
			return fmt.Errorf("statestore: write sstable %s: %w", w.sstPath, err)
		}
	}
	w.batch.Reset()
	return nil
}

// openSST starts a new sstable for ingestion, in the table format and with
// the level-0 options the database itself would use for a flush; without a
// Bloom filter if !filter.
func (w *throughWriter) openSST(filter bool) error {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return fmt.Errorf("statestore: create %s: %w", w.dir, err)
	}
	w.files++
	path := filepath.Join(w.dir, strconv.Itoa(w.files)+".sst")
	f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("statestore: create sstable: %w", err)
	}
	// Like Pebble's own sstables, the file is synced as it is written
	// (BytesPerSync), so that the sync that finishes it is short.
	cf := &crcFile{File: f, valid: true}
	f = vfs.NewSyncingFile(cf, vfs.SyncingFileOptions{BytesPerSync: w.opts.BytesPerSync})
	wo := w.opts.MakeWriterOptions(0, w.db.TableFormat())
	if !filter {
		wo.FilterPolicy = nil // MakeWriterOptions' default: none
	}
	if w.sstOut == nil {
		w.sstOut = &bufferedWritable{bw: bufio.NewWriterSize(nil, ingestBufferBytes)}
	}
	w.sstOut.reset(f)
	w.sst = sstable.NewWriter(w.sstOut, wo)
	w.filtered = filter
	w.sstPath = path
	w.sstCRC = cf
	return nil
}

// maxWrittenSums bounds the checksums kept for ingested sstables between
// two snapshots.
const maxWrittenSums = 64

// noteWritten records the checksum of the finished sstable at path, about
// to be ingested, if it was computed over the whole file.
func (w *throughWriter) noteWritten(path string, cf *crcFile) {
	info, err := os.Stat(path)
	if err != nil || cf == nil || !cf.valid || cf.n != info.Size() {
		return // Store.checksum reads the file instead
	}
	if len(w.written) == maxWrittenSums {
		w.written = append(w.written[:0], w.written[1:]...)
	}
	w.written = append(w.written, writtenSum{info: info, crc: cf.crc})
}

// beginReplace starts a run, on an empty writer, that replaces every key
// in [start, end).
func (w *throughWriter) beginReplace(start, end []byte) error {
	if !w.empty() {
		return fmt.Errorf("statestore: replace begun with writes not committed")
	}
	// No Bloom filter: a replace run is the whole state of an operator
	// that holds every key in memory (state.Records, not backed by the
	// store), which never looks its keys up here, and that once it spills
	// answers "never written" from its own filter of stored keys
	// (state.keyFilter). Hashing every key into a filter cost W2 (a
	// million keys replaced each second) about 3% of its CPU.
	if err := w.openSST(false); err != nil {
		return err
	}
	w.replace = &pebble.KeyRange{Start: start, End: end}
	return nil
}

// commitReplace ends a replace run: the sstable is ingested and the span
// excised at once (if the run wrote no key in order, the span is deleted
// with a range deletion instead). The batch is committed after it.
func (w *throughWriter) commitReplace() error {
	span := *w.replace
	w.replace = nil
	sst, path, n, cf := w.sst, w.sstPath, w.n, w.sstCRC
	w.sst, w.sstPath, w.sstCRC = nil, "", nil
	if err := sst.Close(); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("statestore: finish sstable %s: %w", path, err)
	}
	if n == 0 {
		_ = os.Remove(path)
		if err := w.db.DeleteRange(span.Start, span.End, pebble.NoSync); err != nil {
			return fmt.Errorf("statestore: replace: delete old state: %w", err)
		}
		return nil
	}
	w.noteWritten(path, cf)
	// On success IngestAndExcise moves the file into the database.
	if _, err := w.db.IngestAndExcise(context.Background(), []string{path}, nil, nil, span); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("statestore: replace state with %d writes: %w", n, err)
	}
	return nil
}

// commit ingests the sstable, if any, then commits the batch.
func (w *throughWriter) commit() error {
	if w.replace != nil {
		if err := w.commitReplace(); err != nil {
			return err
		}
	} else if w.sst != nil {
		sst, path, cf := w.sst, w.sstPath, w.sstCRC
		w.sst, w.sstPath, w.sstCRC = nil, "", nil
		if err := sst.Close(); err != nil {
			_ = os.Remove(path)
			return fmt.Errorf("statestore: finish sstable %s: %w", path, err)
		}
		w.noteWritten(path, cf)
		// On success Ingest moves the file into the database.
		if err := w.db.Ingest(context.Background(), []string{path}); err != nil {
			_ = os.Remove(path)
			return fmt.Errorf("statestore: ingest %d writes: %w", w.n, err)
		}
	}
	w.n = 0
	w.ordered, w.filter = true, false
	if w.batch.Empty() {
		return nil
	}
	if err := w.batch.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("statestore: commit %d writes: %w", w.batch.Count(), err)
	}
	w.batch.Reset()
	return nil
}

// close drops whatever was not committed.
func (w *throughWriter) close() error {
	w.replace = nil
	if w.sst != nil {
		_ = w.sst.Close()
		_ = os.Remove(w.sstPath)
		w.sst, w.sstCRC = nil, nil
	}
	return w.batch.Close()
}

// ingestBufferBytes is the write buffer of an sstable written for
// ingestion. Pebble's own file writable buffers 4 KiB, about one data
// block, so that a checkpoint's sstable took a write system call per
// block: with millions of small records (Nexmark q16's DISTINCT entries)
// the calls cost a sixth of the time spent writing the file. Each store
// keeps one buffer once it wrote an sstable, so it stays modest.
const ingestBufferBytes = 256 << 10

// bufferedWritable is an objstorage.Writable over a file, like Pebble's
// own for local files but with a buffer of ingestBufferBytes, kept by the
// throughWriter from one sstable to the next.
type bufferedWritable struct {
	file vfs.File
	bw   *bufio.Writer
}

var _ objstorage.Writable = (*bufferedWritable)(nil)

// reset starts writing to f.
func (w *bufferedWritable) reset(f vfs.File) {
	w.file = f
	w.bw.Reset(f)
}

// Write implements objstorage.Writable.
func (w *bufferedWritable) Write(p []byte) error {
	_, err := w.bw.Write(p)
	return err
}

// Finish implements objstorage.Writable: it writes what is buffered,
// syncs and closes the file.
func (w *bufferedWritable) Finish() error {
	err := w.bw.Flush()
	if err == nil {
		err = w.file.Sync()
	}
	if cerr := w.file.Close(); err == nil {
		err = cerr
	}
	w.bw.Reset(nil)
	w.file = nil
	return err
}

// Abort implements objstorage.Writable: it closes the file, dropping what
// is buffered.
func (w *bufferedWritable) Abort() {
	_ = w.file.Close()
	w.bw.Reset(nil)
	w.file = nil
}
