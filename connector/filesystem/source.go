// Package filesystem implements the 'filesystem' source and sink: CSV,
// JSON lines and Debezium JSON files, as Flink's filesystem connector.
package filesystem

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/internal/options"
	"github.com/weir-sql/weir/types"
)

// readBufferSize is the read buffer of each source subtask.
const readBufferSize = 1 << 20

// Source is a filesystem table read as a bounded stream. Options: 'path'
// (a file, or a folder whose regular files are read in name order, except
// names starting with '.' or '_'), 'format' ('csv', 'json' or
// 'debezium-json') and the format's options; 'ignore-parse-errors' is a
// synonym of '<format>.ignore-parse-errors'.
//
// CSV: blank lines are skipped; an empty field is NULL except for VARCHAR
// (where it is the empty string); 'csv.null-literal' marks NULL for any
// type when unquoted. JSON: fields match columns by exact name; unknown
// fields are ignored, missing ones are NULL. TIMESTAMP(3) text is
// "yyyy-mm-dd hh:mm:ss[.fff]" ('T' instead of the space for ISO-8601);
// INTERVAL is a number of milliseconds. The VARCHAR values of one record
// share one string allocation.
//
// File j is read by subtask j % parallelism. A reader's position is the
// file and the byte offset of its next unread record; SeekAll restores the
// positions of a run at another parallelism (see position.go).
type Source struct {
	schema  types.Schema
	format  format
	files   []string
	notNull []int // indexes of NOT NULL columns
}

var _ connector.Source = (*Source)(nil)

// NewSource is the filesystem source factory.
func NewSource(t *connector.Table, _ connector.Env) (connector.Source, error) {
	f, keys, err := parseFormat(t.Options, true)
	if err != nil {
		return nil, err
	}
	if err := options.CheckKnown("filesystem", t.Options, append(keys, "path", "format")); err != nil {
		return nil, err
	}
	path, ok := t.Options["path"]
	if !ok || path == "" {
		return nil, fmt.Errorf("missing option 'path'")
	}
	s := &Source{schema: t.Schema, format: f}
	for i, c := range t.Schema.Columns {
		if c.Type.Kind == types.KindNull {
			return nil, fmt.Errorf("column %s: type %s cannot be read from a file", c.Name, c.Type)
		}
		if c.Type.NotNull {
			s.notNull = append(s.notNull, i)
		}
	}
	if s.files, err = listFiles(path); err != nil {
		return nil, err
	}
	return s, nil
}

// listFiles returns path if it is a file, or the visible regular files in
// it, sorted by name, if it is a folder.
func listFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("option 'path': %w", err)
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("option 'path': %w", err)
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		full := filepath.Join(path, name)
		if !e.Type().IsRegular() {
			st, err := os.Stat(full) // follow symbolic links
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
		}
		files = append(files, full)
	}
	sort.Strings(files)
	return files, nil
}

// Bounded is true: the files are read once.
func (s *Source) Bounded() bool { return true }

// Files returns the files the source reads, in order.
func (s *Source) Files() []string { return s.files }

// Open returns the reader of the files j with j % parallelism == subtask.
func (s *Source) Open(subtask, parallelism int) (connector.SourceReader, error) {
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("filesystem: invalid subtask %d of parallelism %d", subtask, parallelism)
	}
	r := &Reader{src: s, subtask: subtask, parallelism: parallelism, file: subtask, line: 1}
	switch s.format.name {
	case formatCSV:
		r.dec = newCSVDecoder(s.format, s.schema.Columns)
	default:
		r.dec = newJSONDecoder(s.format, s.schema.Columns)
	}
	r.pending = types.NewBatch(s.schema.Len(), 2)
	return r, nil
}
