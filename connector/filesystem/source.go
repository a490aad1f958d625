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
// (a file, or a folder whose regular files, in it and in its subfolders,
// are read in order of their relative paths, except names starting with
// '.' or '_' at any level), 'format' ('csv', 'json' or
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
	files   []string // paths of the files, in reading order
	names   []string // their paths relative to 'path' ('/'-separated), recorded in positions
	notNull []int    // indexes of NOT NULL columns
	// The columns the files hold (nil: all), and those that come from
	// each file (partition values from its folders, then metadata) with
	// their values per file.
	part     *partitioning
	data     []int
	fileCols []int
	fileVals [][]types.Value
}

var _ connector.ChangelogSource = (*Source)(nil)

// ChangelogMode is every row kind for 'debezium-json' (its events are
// inserts, updates and deletes: +I, -U and +U, -D), else insert-only.
func (s *Source) ChangelogMode() connector.ChangelogMode {
	if s.format.name == formatDebezium {
		return connector.ModeRetract
	}
	return connector.ModeInsertOnly
}

// NewSource is the filesystem source factory.
func NewSource(t *connector.Table, env connector.Env) (connector.Source, error) {
	part, pkeys, err := parsePartitioning(t, env, false)
	if err != nil {
		return nil, err
	}
	if part == nil {
		pkeys = nil // the partition options are for partitioned tables
	}
	f, keys, err := parseFormat(t.Options, true)
	keys = append(keys, pkeys...)
	f.loc = env.Location
	if err != nil {
		return nil, err
	}
	if err := options.CheckKnown("filesystem", t.Options, append(append(keys, "path", "format"), connector.LookupOptionKeys...)); err != nil {
		return nil, err
	}
	if _, err := connector.LookupReload(t); err != nil {
		return nil, err
	}
	path, ok := t.Options["path"]
	if !ok || path == "" {
		return nil, fmt.Errorf("missing option 'path'")
	}
	if err := checkComposite(f, t.Schema, "read"); err != nil {
		return nil, err
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
	if s.files, s.names, err = listFiles(path); err != nil {
		return nil, err
	}
	s.part, s.data = part, dataColumns(t)
	if part != nil {
		s.fileCols = append(s.fileCols, part.cols...)
	}
	for _, m := range t.Metadata {
		s.fileCols = append(s.fileCols, m.Column)
	}
	if s.data != nil {
		if len(s.data) == 0 {
			return nil, fmt.Errorf("every column is a partition or metadata column; the files need at least one other")
		}
		for i, name := range s.names {
			var vals []types.Value
			if part != nil {
				if vals, err = part.fileValues(t.Schema, name); err != nil {
					return nil, fmt.Errorf("%s: %w", s.files[i], err)
				}
			}
			for _, m := range t.Metadata {
				switch m.Key {
				case metaFilePath:
					vals = append(vals, types.StringValue(s.files[i]))
				case metaFileName:
					vals = append(vals, types.StringValue(filepath.Base(s.files[i])))
				}
			}
			s.fileVals = append(s.fileVals, vals)
		}
	}
	return s, nil
}

// listFiles returns path and its base name if it is a file; if it is a
// folder, the visible regular files in it and in its subfolders at any
// depth (following symbolic links), with their paths relative to it,
// sorted by relative path. Names starting with '.' or '_' are skipped at
// every level, as Flink does (in-progress and temporary files).
func listFiles(path string) (files, names []string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("option 'path': %w", err)
	}
	if !st.IsDir() {
		return []string{path}, []string{filepath.Base(path)}, nil
	}
	if err := walkFolder(path, "", []os.FileInfo{st}, &names); err != nil {
		return nil, nil, fmt.Errorf("option 'path': %w", err)
	}
	sort.Strings(names)
	files = make([]string, len(names))
	for i, n := range names {
		files[i] = filepath.Join(path, filepath.FromSlash(n))
	}
	return files, names, nil
}

// walkFolder appends to names the visible regular files under root/rel
// (rel is "" or ends with '/'); parents are the folders on the way down,
// to detect a symbolic link that leads back into one of them.
func walkFolder(root, rel string, parents []os.FileInfo, names *[]string) error {
	dir := filepath.Join(root, filepath.FromSlash(rel))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		typ := e.Type()
		var st os.FileInfo
		if typ&os.ModeSymlink != 0 || typ.IsDir() {
			if st, err = os.Stat(filepath.Join(dir, name)); err != nil {
				if typ&os.ModeSymlink != 0 {
					continue // a dangling link
				}
				return err
			}
			typ = st.Mode().Type()
		}
		switch {
		case typ.IsRegular():
			*names = append(*names, rel+name)
		case typ.IsDir():
			for _, p := range parents {
				if os.SameFile(p, st) {
					return fmt.Errorf("%s: a symbolic link cycle (it leads back to a folder above it)", filepath.Join(dir, name))
				}
			}
			if err := walkFolder(root, rel+name+"/", append(parents, st), names); err != nil {
				return err
			}
		}
	}
	return nil
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
	cols := s.schema.Columns
	if s.data != nil {
		cols = nil
		for _, c := range s.data {
			cols = append(cols, s.schema.Columns[c])
		}
	}
	switch s.format.name {
	case formatCSV:
		r.dec = newCSVDecoder(s.format, cols)
	default:
		r.dec = newJSONDecoder(s.format, cols)
	}
	if s.data != nil {
		r.dec = &fileDecoder{decoder: r.dec, r: r, row: make([]types.Value, s.schema.Len())}
	}
	r.pending = types.NewBatch(s.schema.Len(), 2)
	return r, nil
}
