package filesystem

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// decoder turns one record (a line, or for CSV several lines when a quoted
// field spans them, without the final line terminator) into rows.
type decoder interface {
	// skip reports whether rec is not a record (a comment or blank line).
	skip(rec []byte) bool
	// complete reports whether rec is a whole record; if not, the next
	// line belongs to it.
	complete(rec []byte) bool
	// decode parses rec and returns how many rows it yields.
	decode(rec []byte) (int, error)
	// output returns decoded row i; valid until the next decode.
	output(i int) (types.RowKind, []types.Value)
}

// Reader reads the files of one subtask.
type Reader struct {
	src         *Source
	subtask     int
	parallelism int
	dec         decoder
	skipped     int64

	file   int // global index of the current file
	f      *os.File
	br     *bufio.Reader
	offset int64 // byte offset of the next unread record in the file
	line   int64 // line number of the next unread record
	long   []byte
	multi  []byte

	// Rows of a record that did not fit the last batch: the record starts
	// at pendOffset (line pendLine) and pendEmitted of its rows were returned.
	pending     *types.Batch
	pendOffset  int64
	pendLine    int64
	pendEmitted int
	// After Seek: how many rows of the first record were already returned.
	skipRows int
	// After SeekAll: where files after the current one start, by global
	// index; files not in it start at the beginning.
	starts map[int]fileStart

	// What the last Next read (connector.SplitReader): the file its rows
	// came from, and the files it finished.
	lastSplit string
	finished  []string
}

var (
	_ connector.RescalableReader = (*Reader)(nil)
	_ connector.Stats            = (*Reader)(nil)
	_ connector.SplitLister      = (*Reader)(nil)
)

// SplitCount implements connector.SplitLister: the subtask's files (file
// i belongs to subtask i mod parallelism), all known when it opens, so
// each holds the watermark back from the start, not from its first row.
func (r *Reader) SplitCount() int {
	if r.subtask >= len(r.src.files) {
		return 0
	}
	return (len(r.src.files)-r.subtask-1)/r.parallelism + 1
}

// AssignedSplits implements connector.SplitLister: the subtask's files not
// read to their end yet (in this run or, restored, in an earlier one).
func (r *Reader) AssignedSplits(dst []string) []string {
	for j := r.file; j < len(r.src.files); j += r.parallelism {
		if st, ok := r.starts[j]; ok && st.done {
			continue
		}
		dst = append(dst, r.src.names[j])
	}
	return dst
}

// LastSplit implements connector.SplitReader: each file is a split, named
// by its relative path. A call to Next returns rows of one file.
func (r *Reader) LastSplit() (string, []string) { return r.lastSplit, r.finished }

// Skipped returns the number of malformed records skipped.
func (r *Reader) Skipped() int64 { return r.skipped }

// Next appends up to max rows and returns io.EOF after the last file.
func (r *Reader) Next(ctx context.Context, b *types.Batch, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.Width != r.src.schema.Len() {
		return fmt.Errorf("filesystem: batch width %d, table has %d columns", b.Width, r.src.schema.Len())
	}
	r.lastSplit, r.finished = "", r.finished[:0]
	added := r.takePending(b, max)
	if added > 0 {
		r.lastSplit = r.src.names[r.file]
	}
	// Bound the records looked at per call so that a file of comments or
	// skipped records still returns control promptly.
	for budget := 4*max + 1024; added < max && budget > 0; budget-- {
		if r.file >= len(r.src.files) {
			return io.EOF
		}
		if r.f == nil {
			if err := r.openFile(); err != nil {
				return err
			}
		}
		start, line := r.offset, r.line
		rec, err := r.readRecord()
		if errors.Is(err, io.EOF) {
			r.finished = append(r.finished, r.src.names[r.file])
			r.nextFile()
			if added > 0 {
				break // the rows of one call come from one file
			}
			continue
		}
		if err != nil && !errors.Is(err, errUnterminated) {
			return err
		}
		if err == nil && r.dec.skip(rec) {
			continue
		}
		n := 0
		if err == nil {
			n, err = r.dec.decode(rec)
		}
		if err == nil {
			err = r.checkNotNull(n)
		}
		if err != nil {
			if r.src.format.ignoreErrors {
				r.skipped++
				continue
			}
			return fmt.Errorf("%s: offset %d (line %d): %w", r.src.files[r.file], start, line, err)
		}
		first := 0
		if r.skipRows > 0 {
			first, r.skipRows = min(r.skipRows, n), 0
		}
		if first < n && added == 0 {
			r.lastSplit = r.src.names[r.file]
		}
		for k := first; k < n; k++ {
			kind, row := r.dec.output(k)
			if added < max {
				b.Append(kind, row)
				added++
				continue
			}
			if r.pending.Len() == 0 {
				r.pendOffset, r.pendLine, r.pendEmitted = start, line, k
			}
			r.pending.Append(kind, row)
		}
	}
	if r.file >= len(r.src.files) && r.pending.Len() == 0 {
		return io.EOF
	}
	return nil
}

// takePending moves rows left over from the last call into b.
func (r *Reader) takePending(b *types.Batch, max int) int {
	p := r.pending
	n := min(p.Len(), max)
	if n == 0 {
		return 0
	}
	for i := range n {
		b.Append(p.Kinds[i], p.Row(i))
	}
	r.pendEmitted += n
	rest := p.Len() - n
	copy(p.Kinds, p.Kinds[n:])
	copy(p.Vals, p.Vals[n*p.Width:])
	p.Kinds = p.Kinds[:rest]
	clear(p.Vals[rest*p.Width:])
	p.Vals = p.Vals[:rest*p.Width]
	return n
}

func (r *Reader) checkNotNull(n int) error {
	for k := range n {
		_, row := r.dec.output(k)
		for _, c := range r.src.notNull {
			if row[c].IsNull() {
				return fmt.Errorf("column %s: NULL in a NOT NULL column", r.src.schema.Columns[c].Name)
			}
		}
	}
	return nil
}

func (r *Reader) openFile() error {
	path := r.src.files[r.file]
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("filesystem: %w", err)
	}
	if r.offset > 0 {
		if _, err := f.Seek(r.offset, io.SeekStart); err != nil {
			f.Close()
			return fmt.Errorf("filesystem: %s: seek to offset %d: %w", path, r.offset, err)
		}
	}
	r.f = f
	if r.br == nil {
		r.br = bufio.NewReaderSize(f, readBufferSize)
	} else {
		r.br.Reset(f)
	}
	return nil
}

// nextFile closes the current file and moves to this subtask's next one.
func (r *Reader) nextFile() {
	if r.f != nil {
		r.f.Close() // read-only: nothing to lose
		r.f = nil
	}
	r.file += r.parallelism
	r.offset, r.line = 0, 1
	r.enterFile()
}

// enterFile applies the start of the current file restored by SeekAll,
// moving past files the earlier run finished.
func (r *Reader) enterFile() {
	for r.file < len(r.src.files) {
		st, ok := r.starts[r.file]
		if !ok {
			return
		}
		if !st.done {
			r.offset, r.line, r.skipRows = st.offset, st.line, st.emitted
			return
		}
		r.file += r.parallelism
	}
}

// readRecord reads the next record, advancing offset and line past it.
// It returns io.EOF at the end of the file, and errUnterminated (having
// consumed the rest of the file) for a quoted field that never closes.
func (r *Reader) readRecord() ([]byte, error) {
	line, err := r.readLine()
	if err != nil {
		return nil, err
	}
	r.offset += int64(len(line))
	r.line++
	rec := trimEOL(line)
	if r.dec.skip(rec) || r.dec.complete(rec) {
		return rec, nil
	}
	r.multi = append(r.multi[:0], line...)
	for {
		more, err := r.readLine()
		if errors.Is(err, io.EOF) {
			return nil, errUnterminated
		}
		if err != nil {
			return nil, err
		}
		r.offset += int64(len(more))
		r.line++
		r.multi = append(r.multi, more...)
		if rec = trimEOL(r.multi); r.dec.complete(rec) {
			return rec, nil
		}
	}
}

// readLine returns the next line with its terminator, valid until the
// next read, or io.EOF when the file has no more bytes.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	switch {
	case err == nil:
		return line, nil
	case errors.Is(err, io.EOF):
		if len(line) == 0 {
			return nil, io.EOF
		}
		return line, nil
	}
	return nil, fmt.Errorf("filesystem: read %s: %w", r.src.files[r.file], err)
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// Close closes the open file.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
