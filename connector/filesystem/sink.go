package filesystem

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/weir-sql/weir/confval"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/internal/options"
	"github.com/weir-sql/weir/internal/filelock"
	"github.com/weir-sql/weir/types"
)

// writeBufferSize is the write buffer of each sink subtask.
const writeBufferSize = 256 << 10

// How often a part file starts syncing what it wrote (see partFile): a
// writeback hint every writebackHint bytes, a background sync every
// writebackSync bytes.
const (
	writebackHint = 4 << 20
	writebackSync = 32 << 20
)

// Rolling policy defaults, as in Flink.
const (
	defaultFileSize = 128 << 20
	defaultRollover = 30 * time.Minute
)

// Sink writes a table into part files in a folder, exactly once with
// checkpoints (two-phase commit, as Flink's FileSink). Options: 'path' (the
// folder, created if missing), 'format' ('csv' and 'json' for append-only
// input, 'debezium-json' for a changelog), 'sink.parallelism',
// 'sink.rolling-policy.file-size' (default 128MB) and
// 'sink.rolling-policy.rollover-interval' (default 30 min), and the
// format's options.
//
// Subtask s writes rows to the hidden in-progress file
// .part-<s>-<n>.inprogress and starts a new one when the file reaches the
// size or is older than the interval (checked per batch). PreCommit at
// checkpoint c finishes the current file and returns a transaction listing
// the finished files; Commit renames each to part-<s>-<c>-<n>.<ext>. n is
// one more than the highest of s's part files in the folder when the
// writer opened, so a run never overwrites an earlier one's files. Close
// (the end of a bounded job) finishes and commits everything, naming files
// with the checkpoint after the last one.
type Sink struct {
	dir         string
	format      format
	schema      types.Schema
	parallelism int
	fileSize    int64
	rollover    time.Duration
	writeback   writeback                           // when part files start syncing what they wrote
	spillAt     int                                 // a part file's buffer is written at this size (writeBufferSize; tests set less)
	now         func() time.Time                    // the clock of the rollover interval
	rename      func(oldpath, newpath string) error // commits a part file; nil: os.Rename (tests inject failures)
	recovered   int64                               // highest checkpoint Recover committed
	part        *partitioning                       // PARTITIONED BY; nil if not partitioned
	data        []int                               // the columns written into the files; nil: all
	// waiting are the partitions that the restored checkpoint's
	// transactions had written but not committed yet; subtask 0's writer
	// takes them over.
	waiting []string
}

var (
	_ connector.DurableSink   = (*Sink)(nil)
	_ connector.ChangelogSink = (*Sink)(nil)
)

// NewSink is the filesystem sink factory.
func NewSink(t *connector.Table, env connector.Env) (connector.Sink, error) {
	f, keys, err := parseFormat(t.Options, false)
	f.loc = env.Location
	if err != nil {
		return nil, err
	}
	known := append(keys, "path", "format", "sink.parallelism", "sink.rolling-policy.file-size", "sink.rolling-policy.rollover-interval")
	part, pkeys, err := parsePartitioning(t, env, true)
	if err != nil {
		return nil, err
	}
	if part != nil {
		known = append(known, pkeys...)
		if f.name == formatDebezium {
			return nil, fmt.Errorf("a partitioned table cannot be written as 'debezium-json' (a changelog); use 'csv' or 'json'")
		}
	}
	if err := options.CheckKnown("filesystem", t.Options, known); err != nil {
		return nil, err
	}
	if err := checkComposite(f, t.Schema, "written"); err != nil {
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
	s := &Sink{dir: dir, format: f, schema: t.Schema, parallelism: p, fileSize: defaultFileSize, rollover: defaultRollover, writeback: writeback{hint: writebackHint, sync: writebackSync}, spillAt: writeBufferSize, now: time.Now, part: part, data: dataColumns(t)}
	if s.data != nil && len(s.data) == 0 {
		return nil, fmt.Errorf("every column is a partition or metadata column; the files need at least one other")
	}
	if v, ok := t.Options["sink.rolling-policy.file-size"]; ok {
		if s.fileSize, err = confval.MemorySize(v); err == nil && s.fileSize <= 0 {
			err = errors.New("must be positive")
		}
		if err != nil {
			return nil, fmt.Errorf("option 'sink.rolling-policy.file-size': %w", err)
		}
	}
	if v, ok := t.Options["sink.rolling-policy.rollover-interval"]; ok {
		if s.rollover, err = confval.Duration(v); err == nil && s.rollover <= 0 {
			err = errors.New("must be positive")
		}
		if err != nil {
			return nil, fmt.Errorf("option 'sink.rolling-policy.rollover-interval': %w", err)
		}
	}
	return s, nil
}

// AcceptsUpdates is true for 'debezium-json' only.
func (s *Sink) AcceptsUpdates() bool { return s.format.name == formatDebezium }

// ChangelogMode is every row kind for 'debezium-json', else inserts only.
func (s *Sink) ChangelogMode() connector.ChangelogMode {
	if s.format.name == formatDebezium {
		return connector.ModeRetract
	}
	return connector.ModeInsertOnly
}

// ChangelogHint names the format, which decides what the sink accepts.
func (s *Sink) ChangelogHint() (what, fix string) {
	if s.format.name == formatDebezium {
		return "format '" + formatDebezium + "'", ""
	}
	return "format '" + s.format.name + "'", "use 'format' = '" + formatDebezium + "' to write the changelog"
}

// Parallelism returns 'sink.parallelism', or 0.
func (s *Sink) Parallelism() int { return s.parallelism }

// ext returns the final part files' extension.
func (s *Sink) ext() string {
	if s.format.name == formatCSV {
		return "csv"
	}
	return "json"
}

// Open creates the folder if needed and returns subtask's writer. A part
// file is created with the first row. Recover, if called, must come first.
func (s *Sink) Open(subtask, parallelism int) (connector.SinkWriter, error) {
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("filesystem sink: invalid subtask %d of parallelism %d", subtask, parallelism)
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("filesystem sink: %w", err)
	}
	next, committed, err := nextPartNumber(s.dir, subtask, s.part != nil)
	if err != nil {
		return nil, err
	}
	// Files that Close commits without a checkpoint are named after the
	// highest checkpoint in the folder, so names keep increasing per run.
	last := max(s.recovered, committed)
	cols := s.schema.Columns
	w := &Writer{sink: s, subtask: subtask, next: next, last: last, wm: math.MinInt64}
	if s.data != nil {
		cols = nil
		for _, c := range s.data {
			cols = append(cols, s.schema.Columns[c])
		}
		w.proj = types.NewBatch(len(s.data), 64)
		w.data = s.data
	} else {
		for c := range s.schema.Columns {
			w.data = append(w.data, c)
		}
	}
	if s.part != nil {
		w.slots = map[string]*partSlot{}
		w.waiting = map[string]waitingPart{}
		if subtask == 0 {
			for _, d := range s.waiting {
				if err := w.wait(d); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, c := range w.data {
		if s.schema.Columns[c].Type.Kind == types.KindVarchar {
			w.textCols = append(w.textCols, c)
		}
	}
	w.enc = newEncoder(s.format, cols)
	w.rowEnc, _ = w.enc.(rowEncoder)
	if s.part != nil && w.rowEnc == nil {
		return nil, fmt.Errorf("filesystem sink: format '%s' cannot write a partitioned table", s.format.name)
	}
	return w, nil
}

// lockName is the lock file in the sink's folder; hidden, so readers of
// the folder skip it.
const lockName = ".weir.lock"

// Location returns the sink's folder.
func (s *Sink) Location() string { return s.dir }

// Claim takes the sink's folder for one run (an OS file lock on
// .weir.lock in it, released by the kernel if the process dies). Another
// run claiming the folder meanwhile fails at once, naming this one.
func (s *Sink) Claim(owner string) (release func() error, err error) {
	l, err := filelock.Acquire(filepath.Join(s.dir, lockName), owner)
	if err != nil {
		return nil, fmt.Errorf("filesystem sink folder %s is in use: %w", s.dir, err)
	}
	return l.Release, nil
}

// Committed returns the highest checkpoint whose output the folder holds
// as final part files (0 if none).
func (s *Sink) Committed() (int64, error) {
	c, _, err := committedIn(s.dir, s.part != nil)
	return c, err
}

// Recover commits the transactions of the checkpoint being restored (of
// all subtasks, at any parallelism; again if they were committed before),
// then deletes every in-progress part file left in the folder: written
// after that checkpoint, or never pre-committed. It never deletes a final
// part file. Recover(nil) only deletes in-progress files. It must run
// before any Open of this job.
func (s *Sink) Recover(txns [][]byte) error {
	decoded := make([]*transaction, 0, len(txns))
	for k, b := range txns {
		t, err := decodeTransaction(b)
		if err != nil {
			return fmt.Errorf("recover transaction %d: %w", k, err)
		}
		decoded = append(decoded, t)
	}
	waiting := map[string]bool{}
	for _, t := range decoded {
		if _, err := s.commitFiles(t.files); err != nil {
			return fmt.Errorf("recover checkpoint %d: %w", t.checkpoint, err)
		}
		if err := s.commitPartitions(t.success); err != nil {
			return fmt.Errorf("recover checkpoint %d: %w", t.checkpoint, err)
		}
		for _, d := range t.waiting {
			waiting[d] = true
		}
		s.recovered = max(s.recovered, t.checkpoint)
	}
	s.waiting = s.waiting[:0]
	for d := range waiting {
		s.waiting = append(s.waiting, d)
	}
	sort.Strings(s.waiting)
	removed := map[string]bool{}
	err := eachPart(s.dir, s.part != nil, func(rel, name string, p partName) error {
		if !p.inProgress {
			return nil
		}
		dir := filepath.Join(s.dir, filepath.FromSlash(rel))
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		removed[dir] = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("filesystem sink: recover: %w", err)
	}
	for d := range removed {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// withoutSuccess returns the partition folders of dirs without a success
// file (none if the sink writes none).
func (s *Sink) withoutSuccess(dirs []string) []string {
	if s.part == nil || s.part.successName == "" {
		return nil
	}
	var out []string
	for _, d := range dirs {
		if _, err := os.Lstat(filepath.Join(s.dir, filepath.FromSlash(d), s.part.successName)); err != nil {
			out = append(out, d)
		}
	}
	return out
}

// removeSuccess deletes the success file of each partition folder of dirs
// (none there is fine) and syncs the folders: it undoes the
// commitPartitions of a Close that failed, for the partitions that had
// none before it.
func (s *Sink) removeSuccess(dirs []string) error {
	var first error
	for _, d := range dirs {
		full := filepath.Join(s.dir, filepath.FromSlash(d))
		err := os.Remove(filepath.Join(full, s.part.successName))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			err = syncDir(full)
		}
		if err != nil && first == nil {
			first = fmt.Errorf("filesystem sink: undo partition commit of %s: %w", d, err)
		}
	}
	return first
}

// commitPartitions writes the success file of each partition folder (if
// the sink's policy has one).
func (s *Sink) commitPartitions(dirs []string) error {
	if s.part == nil || s.part.successName == "" {
		return nil
	}
	for _, d := range dirs {
		if err := writeSuccess(s.dir, d, s.part.successName); err != nil {
			return err
		}
	}
	return nil
}
