package filesystem

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/internal/options"
	"github.com/weir-sql/weir/types"
)

// writeBufferSize is the write buffer of each sink subtask.
const writeBufferSize = 256 << 10

// Sink writes a table into part files in a folder. Options: 'path' (the
// folder, created if missing), 'format' ('csv' and 'json' for append-only
// input, 'debezium-json' for a changelog), 'sink.parallelism', and the
// format's options.
//
// Subtask s writes <path>/.part-<s>-<n>.inprogress and renames it to
// <path>/part-<s>-<n>.<ext> when it is closed; n is the first number not
// used by an existing part file of s, so a run never overwrites the output
// of an earlier one.
type Sink struct {
	dir         string
	format      format
	schema      types.Schema
	parallelism int
}

var _ connector.Sink = (*Sink)(nil)

// NewSink is the filesystem sink factory.
func NewSink(t *connector.Table, _ connector.Env) (connector.Sink, error) {
	f, keys, err := parseFormat(t.Options, false)
	if err != nil {
		return nil, err
	}
	if err := options.CheckKnown("filesystem", t.Options, append(keys, "path", "format", "sink.parallelism")); err != nil {
		return nil, err
	}
	dir, ok := t.Options["path"]
	if !ok || dir == "" {
		return nil, fmt.Errorf("missing option 'path'")
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("option 'path': %s is not a folder", dir)
	}
	p, err := options.Parallelism(t.Options)
	if err != nil {
		return nil, err
	}
	return &Sink{dir: dir, format: f, schema: t.Schema, parallelism: p}, nil
}

// AcceptsUpdates is true for 'debezium-json' only.
func (s *Sink) AcceptsUpdates() bool { return s.format.name == formatDebezium }

// Parallelism returns 'sink.parallelism', or 0.
func (s *Sink) Parallelism() int { return s.parallelism }

// Open creates the folder if needed and returns subtask's writer. The
// part file is created with the first row.
func (s *Sink) Open(subtask, parallelism int) (connector.SinkWriter, error) {
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("filesystem sink: invalid subtask %d of parallelism %d", subtask, parallelism)
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("filesystem sink: %w", err)
	}
	next, err := nextPartNumber(s.dir, subtask)
	if err != nil {
		return nil, err
	}
	return &Writer{sink: s, subtask: subtask, next: next, enc: newEncoder(s.format, s.schema.Columns)}, nil
}

// nextPartNumber returns one more than the highest n of the folder's
// part-<subtask>-<n>.* and .part-<subtask>-<n>.inprogress files.
func nextPartNumber(dir string, subtask int) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("filesystem sink: %w", err)
	}
	prefix := "part-" + strconv.Itoa(subtask) + "-"
	next := 0
	for _, e := range entries {
		name := strings.TrimPrefix(e.Name(), ".")
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, ".")
		if n, err := strconv.Atoi(num); err == nil && n >= next {
			next = n + 1
		}
	}
	return next, nil
}

// Writer writes one subtask's part files.
type Writer struct {
	sink    *Sink
	subtask int
	next    int // number of the next part file
	enc     encoder
	buf     []byte
	part    *partFile
}

var _ connector.SinkWriter = (*Writer)(nil)

// Write encodes the batch and appends it to the in-progress part file.
func (w *Writer) Write(b *types.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	var err error
	if w.buf, err = w.enc.encode(w.buf[:0], b); err != nil {
		return err
	}
	if w.part == nil {
		if w.part, err = w.newPart(); err != nil {
			return err
		}
	}
	return w.part.write(w.buf)
}

func (w *Writer) newPart() (*partFile, error) {
	ext := "csv"
	if w.sink.format.name != formatCSV {
		ext = "json"
	}
	name := fmt.Sprintf("part-%d-%d", w.subtask, w.next)
	w.next++
	return createPart(filepath.Join(w.sink.dir, "."+name+".inprogress"), filepath.Join(w.sink.dir, name+"."+ext))
}

// Flush writes buffered data to the in-progress file and syncs it.
func (w *Writer) Flush() error {
	if w.part == nil {
		return nil
	}
	return w.part.flush()
}

// Close finishes the in-progress file: flush, sync, and rename to its
// final name.
func (w *Writer) Close() error {
	if w.part == nil {
		return nil
	}
	p := w.part
	w.part = nil
	if err := p.finish(); err != nil {
		return err
	}
	return p.commit()
}

// partFile is one in-progress part file. Its life: create, write and
// flush, finish (synced and closed: what a pre-commit will keep), commit
// (renamed to its final name).
type partFile struct {
	tmp, final string
	f          *os.File
	w          *bufio.Writer
}

func createPart(tmp, final string) (*partFile, error) {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("filesystem sink: %w", err)
	}
	return &partFile{tmp: tmp, final: final, f: f, w: bufio.NewWriterSize(f, writeBufferSize)}, nil
}

func (p *partFile) write(b []byte) error {
	if _, err := p.w.Write(b); err != nil {
		return fmt.Errorf("filesystem sink: write %s: %w", p.tmp, err)
	}
	return nil
}

func (p *partFile) flush() error {
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("filesystem sink: write %s: %w", p.tmp, err)
	}
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("filesystem sink: sync %s: %w", p.tmp, err)
	}
	return nil
}

// finish flushes, syncs and closes the file.
func (p *partFile) finish() error {
	err := p.flush()
	if cerr := p.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("filesystem sink: close %s: %w", p.tmp, cerr)
	}
	return err
}

// commit renames the finished file to its final name and syncs the folder.
func (p *partFile) commit() error {
	if err := os.Rename(p.tmp, p.final); err != nil {
		return fmt.Errorf("filesystem sink: %w", err)
	}
	return syncDir(filepath.Dir(p.final))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("filesystem sink: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("filesystem sink: sync folder %s: %w", dir, err)
	}
	return nil
}
