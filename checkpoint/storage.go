package checkpoint

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// chkPrefix starts the name of every checkpoint folder.
const chkPrefix = "chk-"

// Storage is the checkpoint folder of one job: <dir>/<job>.
type Storage struct {
	fs  FS
	dir string // <dir>/<job>
	job string

	// metas caches the decoded _metadata of the job's checkpoint folders
	// by path, with the file's length and CRC-32C, so that retention after
	// every checkpoint does not decode the kept ones again.
	mu    sync.Mutex
	metas map[string]cachedMeta
}

// cachedMeta is a decoded _metadata and the file it came from.
type cachedMeta struct {
	size int
	sum  uint32
	meta *Metadata
}

// NewStorage returns the storage of job under dir. The job name must be a
// plain folder name.
func NewStorage(fsys FS, dir, job string) (*Storage, error) {
	if err := checkRelDir(job); err != nil {
		return nil, fmt.Errorf("checkpoint storage: job name: %w", err)
	}
	return &Storage{fs: fsys, dir: filepath.Join(dir, job), job: job}, nil
}

// Dir returns the job's checkpoint folder.
func (s *Storage) Dir() string { return s.dir }

// Job returns the name of the job the storage is for: a checkpoint whose
// metadata names another job does not complete.
func (s *Storage) Job() string { return s.job }

// Checkpoint is a complete, verified checkpoint or savepoint.
type Checkpoint struct {
	// Path is the checkpoint's folder.
	Path string
	Meta Metadata
}

// SubtaskDir returns the state folder of an operator's subtask, and false
// if the checkpoint holds no state for it.
func (c *Checkpoint) SubtaskDir(operatorID string, subtask int) (string, bool) {
	op := c.Meta.Operator(operatorID)
	if op == nil {
		return "", false
	}
	for _, st := range op.Subtasks {
		if st.Subtask == subtask && !st.Finished {
			return filepath.Join(c.Path, st.Dir), true
		}
	}
	return "", false
}

// SubtaskDirName is the state folder name of an operator's subtask:
// op-<id>-<subtask>, with bytes of the id other than letters, digits, '_'
// and '.' written as %XX so the name is safe and distinct for every id.
func SubtaskDirName(operatorID string, subtask int) string {
	var b strings.Builder
	b.WriteString("op-")
	for i := 0; i < len(operatorID); i++ {
		c := operatorID[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	fmt.Fprintf(&b, "-%d", subtask)
	return b.String()
}

func chkDirName(id int64) string { return chkPrefix + strconv.FormatInt(id, 10) }

// parseChkDir returns the id of a folder named chk-<n>.
func parseChkDir(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, chkPrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || id < 0 || strconv.FormatInt(id, 10) != rest {
		return 0, false
	}
	return id, true
}

// Pending is a checkpoint being written: its folder exists, its _metadata
// does not yet.
type Pending struct {
	s    *Storage
	id   int64
	path string
}

// Begin creates the folder of checkpoint id. It fails if the folder
// exists (ids must not be reused).
func (s *Storage) Begin(id int64) (*Pending, error) {
	if id < 0 {
		return nil, fmt.Errorf("begin checkpoint %d: negative id", id)
	}
	if err := s.fs.MkdirAll(s.dir); err != nil {
		return nil, fmt.Errorf("begin checkpoint %d: %w", id, err)
	}
	p := filepath.Join(s.dir, chkDirName(id))
	if _, err := s.fs.Stat(p); err == nil {
		return nil, fmt.Errorf("begin checkpoint %d: %s already exists", id, p)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("begin checkpoint %d: %w", id, err)
	}
	if err := s.fs.MkdirAll(p); err != nil {
		return nil, fmt.Errorf("begin checkpoint %d: %w", id, err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return nil, fmt.Errorf("begin checkpoint %d: sync %s: %w", id, s.dir, err)
	}
	return &Pending{s: s, id: id, path: p}, nil
}

// ID returns the checkpoint id.
func (p *Pending) ID() int64 { return p.id }

// Path returns the checkpoint's folder.
func (p *Pending) Path() string { return p.path }

// SubtaskDir returns the folder where an operator's subtask writes its
// state snapshot. The folder is not created (Store.Snapshot requires that
// it not exist).
func (p *Pending) SubtaskDir(operatorID string, subtask int) string {
	return filepath.Join(p.path, SubtaskDirName(operatorID, subtask))
}

// Complete makes the checkpoint complete by writing meta as its _metadata,
// atomically (temporary file, fsync, rename, fsync of the folder).
//
// Complete fills in FormatVersion, CheckpointID, Job (if empty), Kind
// (checkpoint, if empty) and Timestamp (now, if zero); a subtask whose
// Files is nil gets the file list of its folder. It then verifies that
// every state folder holds its listed files before writing, so a completed
// checkpoint is always loadable.
func (p *Pending) Complete(meta Metadata) (*Checkpoint, error) {
	meta.FormatVersion = FormatVersion
	meta.CheckpointID = p.id
	if meta.Job == "" {
		meta.Job = p.s.job
	} else if meta.Job != p.s.job {
		return nil, fmt.Errorf("complete checkpoint %d: metadata names job %q, storage is for %q", p.id, meta.Job, p.s.job)
	}
	if meta.Kind == "" {
		meta.Kind = KindCheckpoint
	}
	if meta.Timestamp.IsZero() {
		meta.Timestamp = time.Now().UTC()
	}
	c, err := completeIn(p.s.fs, p.path, meta)
	if err != nil {
		return nil, fmt.Errorf("complete checkpoint %d: %w", p.id, err)
	}
	return c, nil
}

// ownSubtasks copies the operator list and each operator's subtask list,
// so that a caller can change subtask states without touching ops.
func ownSubtasks(ops []OperatorState) []OperatorState {
	out := append([]OperatorState(nil), ops...)
	for i := range out {
		out[i].Subtasks = append([]SubtaskState(nil), out[i].Subtasks...)
	}
	return out
}

// completeIn fills file lists, verifies and writes _metadata in dir.
func completeIn(fsys FS, dir string, meta Metadata) (*Checkpoint, error) {
	// Filling file lists must not write into the caller's metadata.
	meta.Operators = ownSubtasks(meta.Operators)
	for i := range meta.Operators {
		op := &meta.Operators[i]
		for j := range op.Subtasks {
			st := &op.Subtasks[j]
			if st.Files != nil || st.Finished {
				continue
			}
			files, total, err := listStateFiles(fsys, filepath.Join(dir, st.Dir), true)
			if err != nil {
				return nil, err
			}
			st.Files = files
			if st.StateBytes == 0 {
				st.StateBytes = total
			}
		}
	}
	// The sinks' transactions go to the side file, not into _metadata.
	meta.Sinks = append([]SinkTransaction(nil), meta.Sinks...)
	meta.SinkData = nil
	var sinkData []byte
	for i := range meta.Sinks {
		st := &meta.Sinks[i]
		st.Offset, st.Length = 0, 0
		if len(st.Transaction) > 0 {
			st.Offset, st.Length = int64(len(sinkData)), int64(len(st.Transaction))
			sinkData = append(sinkData, st.Transaction...)
		}
	}
	if len(sinkData) > 0 {
		meta.SinkData = &FileInfo{Name: SinkDataFile, Size: int64(len(sinkData)), CRC32C: FormatCRC32C(crc32.Checksum(sinkData, castagnoli))}
	}
	if err := meta.check(); err != nil {
		return nil, err
	}
	if len(sinkData) > 0 {
		// Synced here; the folder is synced when _metadata is renamed in.
		if err := writeFileSync(fsys, filepath.Join(dir, SinkDataFile), sinkData); err != nil {
			return nil, err
		}
	}
	// The files were just written and their checksums computed: check
	// that they are all there, without reading them again.
	if err := verifyState(fsys, dir, &meta, false); err != nil {
		return nil, err
	}
	onDisk := meta
	onDisk.Sinks = append([]SinkTransaction(nil), meta.Sinks...)
	if onDisk.SinkData != nil {
		for i := range onDisk.Sinks {
			onDisk.Sinks[i].Transaction = nil
		}
	}
	data, err := EncodeMetadata(&onDisk)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(fsys, filepath.Join(dir, MetadataFile), data); err != nil {
		return nil, err
	}
	return &Checkpoint{Path: dir, Meta: meta}, nil
}

// Abort removes the checkpoint's folder.
func (p *Pending) Abort() error {
	if err := p.s.fs.RemoveAll(p.path); err != nil {
		return fmt.Errorf("abort checkpoint %d: %w", p.id, err)
	}
	return nil
}

// listStateFiles lists the regular files of a state folder, with their
// checksums if sums is set.
func listStateFiles(fsys FS, dir string, sums bool) ([]FileInfo, int64, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, 0, fmt.Errorf("list state folder: %w", err)
	}
	files := []FileInfo{}
	var total int64
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, 0, fmt.Errorf("stat %s: %w", filepath.Join(dir, e.Name()), err)
		}
		fi := FileInfo{Name: e.Name(), Size: info.Size()}
		if sums {
			sum, _, err := fileCRC(fsys, filepath.Join(dir, e.Name()))
			if err != nil {
				return nil, 0, err
			}
			fi.CRC32C = FormatCRC32C(sum)
		}
		files = append(files, fi)
		total += info.Size()
	}
	return files, total, nil
}

// fileCRC returns the CRC-32C and the length of the file at path.
func fileCRC(fsys FS, path string) (uint32, int64, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("checksum: %w", err)
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, 0, fmt.Errorf("checksum %s: %w", path, err)
	}
	return h.Sum32(), n, nil
}

// verifyState checks that every state folder of meta exists in dir and
// holds the files Pebble needs (a MANIFEST and an OPTIONS file are listed)
// and every listed file with its size, and with sums, its checksum (files
// listed with one). Failures wrap ErrCorruptCheckpoint.
func verifyState(fsys FS, dir string, meta *Metadata, sums bool) error {
	for _, op := range meta.Operators {
		for _, st := range op.Subtasks {
			if st.Finished {
				continue // no state was written
			}
			if err := verifySubtask(fsys, filepath.Join(dir, st.Dir), st, sums); err != nil {
				return fmt.Errorf("%w: operator %q subtask %d: %v", ErrCorruptCheckpoint, op.ID, st.Subtask, err)
			}
		}
	}
	return nil
}

func verifySubtask(fsys FS, dir string, st SubtaskState, sums bool) error {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	sizes := make(map[string]int64, len(entries))
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("stat %s: %w", e.Name(), err)
		}
		sizes[e.Name()] = info.Size()
	}
	var manifest, options bool
	for _, f := range st.Files {
		manifest = manifest || strings.HasPrefix(f.Name, "MANIFEST-")
		options = options || strings.HasPrefix(f.Name, "OPTIONS-")
		size, ok := sizes[f.Name]
		switch {
		case !ok:
			return fmt.Errorf("missing file %s", f.Name)
		case size != f.Size:
			return fmt.Errorf("file %s is %d bytes, expected %d", f.Name, size, f.Size)
		}
	}
	if !manifest || !options {
		return fmt.Errorf("state folder %s lacks a MANIFEST or OPTIONS file", st.Dir)
	}
	if !sums {
		return nil
	}
	for _, f := range st.Files {
		if f.CRC32C == "" {
			continue // format version 1
		}
		sum, n, err := fileCRC(fsys, filepath.Join(dir, f.Name))
		switch {
		case err != nil:
			return fmt.Errorf("file %s: %w", f.Name, err)
		case n != f.Size:
			return fmt.Errorf("file %s is %d bytes, expected %d", f.Name, n, f.Size)
		case FormatCRC32C(sum) != f.CRC32C:
			return fmt.Errorf("file %s is damaged: its crc32c is %s, _metadata says %s", f.Name, FormatCRC32C(sum), f.CRC32C)
		}
	}
	return nil
}

// Load reads and verifies the checkpoint or savepoint in folder path (for
// --restore PATH): _metadata, and every state file's presence, size and
// checksum (which reads them all). A folder without _metadata yields an
// error wrapping ErrIncompleteCheckpoint; a damaged one,
// ErrCorruptCheckpoint.
func Load(fsys FS, path string) (*Checkpoint, error) {
	return load(fsys, path, true)
}

// load is Load; without sums it checks the files' presence and size only.
func load(fsys FS, path string, sums bool) (*Checkpoint, error) {
	m, err := readMetadata(fsys, path)
	if err != nil {
		return nil, err
	}
	return verifyLoaded(fsys, path, m, sums)
}

// verifyLoaded checks the state and sink data files of the decoded
// metadata m of folder path; with sums it reads the sink data file and
// fills in the transactions (in a copy of m's sink list).
func verifyLoaded(fsys FS, path string, m *Metadata, sums bool) (*Checkpoint, error) {
	if err := verifyState(fsys, path, m, sums); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	c := &Checkpoint{Path: path, Meta: *m}
	if err := readSinkData(fsys, path, &c.Meta, sums); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return c, nil
}

// readSinkData checks the sink data file of m, if it has one: its size,
// and with read its checksum, then it sets every transaction of m (given
// its own copy of m.Sinks) from it. Failures wrap ErrCorruptCheckpoint.
func readSinkData(fsys FS, path string, m *Metadata, read bool) error {
	sd := m.SinkData
	if sd == nil {
		return nil
	}
	file := filepath.Join(path, sd.Name)
	if !read {
		info, err := fsys.Stat(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%w: missing %s", ErrCorruptCheckpoint, sd.Name)
		case err != nil:
			return fmt.Errorf("stat %s: %w", file, err)
		case info.Size() != sd.Size:
			return fmt.Errorf("%w: %s is %d bytes, expected %d", ErrCorruptCheckpoint, sd.Name, info.Size(), sd.Size)
		}
		return nil
	}
	data, err := fsys.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: missing %s", ErrCorruptCheckpoint, sd.Name)
	case err != nil:
		return fmt.Errorf("read %s: %w", file, err)
	case int64(len(data)) != sd.Size:
		return fmt.Errorf("%w: %s is %d bytes, expected %d", ErrCorruptCheckpoint, sd.Name, len(data), sd.Size)
	case FormatCRC32C(crc32.Checksum(data, castagnoli)) != sd.CRC32C:
		return fmt.Errorf("%w: %s is damaged: its crc32c is %s, _metadata says %s", ErrCorruptCheckpoint, sd.Name, FormatCRC32C(crc32.Checksum(data, castagnoli)), sd.CRC32C)
	}
	m.Sinks = append([]SinkTransaction(nil), m.Sinks...)
	for i := range m.Sinks {
		st := &m.Sinks[i]
		if st.Length > 0 {
			st.Transaction = data[st.Offset : st.Offset+st.Length : st.Offset+st.Length]
		}
	}
	return nil
}

// metadataReadError words the error err of reading path/_metadata.
func metadataReadError(fsys FS, path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := fsys.Stat(path); serr != nil {
			return fmt.Errorf("load %s: %w", path, serr)
		}
		return fmt.Errorf("load %s: %w: no %s", path, ErrIncompleteCheckpoint, MetadataFile)
	}
	return fmt.Errorf("load %s: %w", path, err)
}

// readMetadataCached is readMetadata for a folder of s, decoding the file
// only if it differs from the one last decoded there.
func (s *Storage) readMetadataCached(path string) (*Metadata, error) {
	data, err := s.fs.ReadFile(filepath.Join(path, MetadataFile))
	if err != nil {
		return nil, metadataReadError(s.fs, path, err)
	}
	sum := crc32.Checksum(data, castagnoli)
	s.mu.Lock()
	e, ok := s.metas[path]
	s.mu.Unlock()
	if ok && e.size == len(data) && e.sum == sum {
		return e.meta, nil
	}
	m, err := DecodeMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	s.mu.Lock()
	if s.metas == nil {
		s.metas = map[string]cachedMeta{}
	}
	s.metas[path] = cachedMeta{size: len(data), sum: sum, meta: m}
	s.mu.Unlock()
	return m, nil
}

// readMetadata reads and decodes path/_metadata.
func readMetadata(fsys FS, path string) (*Metadata, error) {
	data, err := fsys.ReadFile(filepath.Join(path, MetadataFile))
	if err != nil {
		return nil, metadataReadError(fsys, path, err)
	}
	m, err := DecodeMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return m, nil
}

// Skipped is a checkpoint folder that Latest passed over, and why.
type Skipped struct {
	ID     int64
	Path   string
	Reason error
}

// checkpointDirs returns the ids of the chk-<n> folders, highest first.
func (s *Storage) checkpointDirs() ([]int64, error) {
	entries, err := s.fs.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list checkpoints of %s: %w", s.job, err)
	}
	var ids []int64
	for _, e := range entries {
		if id, ok := parseChkDir(e.Name()); ok && e.IsDir() {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] > ids[j] })
	return ids, nil
}

// Latest returns the complete and valid checkpoint with the highest id,
// and the newer folders it skipped with the reason (their Reason wraps
// ErrIncompleteCheckpoint or ErrCorruptCheckpoint). With no valid
// checkpoint it returns an error wrapping ErrNoCheckpoint.
func (s *Storage) Latest() (*Checkpoint, []Skipped, error) {
	return s.LatestExcept(nil)
}

// LatestExcept is Latest that also skips the checkpoints in bad, reporting
// each with its reason there (a restore that failed, say).
func (s *Storage) LatestExcept(bad map[int64]error) (*Checkpoint, []Skipped, error) {
	ids, err := s.checkpointDirs()
	if err != nil {
		return nil, nil, err
	}
	var skipped []Skipped
	for _, id := range ids {
		p := filepath.Join(s.dir, chkDirName(id))
		if reason, ok := bad[id]; ok {
			skipped = append(skipped, Skipped{ID: id, Path: p, Reason: reason})
			continue
		}
		c, err := Load(s.fs, p)
		if err == nil {
			return c, skipped, nil
		}
		if !errors.Is(err, ErrIncompleteCheckpoint) && !errors.Is(err, ErrCorruptCheckpoint) {
			// An I/O error says nothing about the checkpoint, and one a
			// newer Weir wrote is intact: stop rather than fall back to an
			// older one silently.
			return nil, skipped, err
		}
		skipped = append(skipped, Skipped{ID: id, Path: p, Reason: err})
	}
	return nil, skipped, fmt.Errorf("job %s in %s: %w", s.job, s.dir, ErrNoCheckpoint)
}

// Info describes one checkpoint folder, for `weir checkpoints list`.
type Info struct {
	ID   int64
	Path string
	// Time and Kind come from _metadata when it is readable.
	Time time.Time
	Kind Kind
	// Reason is nil for a complete, valid checkpoint. It wraps
	// ErrIncompleteCheckpoint or ErrCorruptCheckpoint for a damaged one,
	// ErrNewerCheckpoint for one a newer Weir wrote; any other error means
	// the folder could not be read. Both of the last are Unreadable: not
	// known to be damaged.
	Reason error
}

// Valid reports whether the checkpoint is complete and valid.
func (i Info) Valid() bool { return i.Reason == nil }

// Unreadable reports whether the folder could not be read to tell whether
// it is valid (an I/O or permission error): it is neither valid nor known
// to be damaged, and retention leaves it alone.
func (i Info) Unreadable() bool {
	return i.Reason != nil && !errors.Is(i.Reason, ErrIncompleteCheckpoint) && !errors.Is(i.Reason, ErrCorruptCheckpoint)
}

// List describes every checkpoint folder of the job, lowest id first,
// verifying each completely (state file checksums included). A folder that
// cannot be read is listed with the error as its Reason; the others are
// still listed.
func (s *Storage) List() ([]Info, error) {
	return s.list(true)
}

// list is List; without sums the state files' checksums are not verified
// (for retention, which runs after every checkpoint).
func (s *Storage) list(sums bool) ([]Info, error) {
	ids, err := s.checkpointDirs()
	if err != nil {
		return nil, err
	}
	infos := make([]Info, 0, len(ids))
	present := make(map[string]bool, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		p := filepath.Join(s.dir, chkDirName(id))
		present[p] = true
		info := Info{ID: id, Path: p}
		var c *Checkpoint
		var err error
		if sums {
			c, err = load(s.fs, p, true)
		} else {
			// Retention: the metadata decoded last time, if unchanged,
			// and the files' presence and sizes.
			var m *Metadata
			if m, err = s.readMetadataCached(p); err == nil {
				c, err = verifyLoaded(s.fs, p, m, false)
			}
		}
		if err == nil {
			info.Time, info.Kind = c.Meta.Timestamp, c.Meta.Kind
		} else {
			info.Reason = err
			if m, merr := readMetadata(s.fs, p); merr == nil {
				info.Time, info.Kind = m.Timestamp, m.Kind
			}
		}
		infos = append(infos, info)
	}
	s.mu.Lock()
	for p := range s.metas {
		if !present[p] {
			delete(s.metas, p)
		}
	}
	s.mu.Unlock()
	return infos, nil
}

// Retain keeps the newest n valid checkpoints and deletes the older valid
// ones, and every incomplete or corrupt folder older than the newest valid
// checkpoint (newer ones may still be in progress). Each folder loses its
// _metadata first, so a crash mid-deletion leaves an incomplete folder,
// never a damaged complete one.
func (s *Storage) Retain(n int) error {
	if n < 1 {
		return fmt.Errorf("retain %d checkpoints: must keep at least one", n)
	}
	infos, err := s.list(false)
	if err != nil {
		return err
	}
	var newestValid int64 = -1
	kept := 0
	var doomed []Info
	for i := len(infos) - 1; i >= 0; i-- {
		info := infos[i]
		switch {
		case info.Unreadable():
			// Not known to be damaged: leave it to the user.
		case info.Valid() && kept < n:
			kept++
			if newestValid < 0 {
				newestValid = info.ID
			}
		case info.Valid():
			doomed = append(doomed, info)
		case newestValid >= 0:
			doomed = append(doomed, info)
		}
	}
	for _, info := range doomed {
		if err := s.remove(info.Path); err != nil {
			return fmt.Errorf("retain %d checkpoints: %w", n, err)
		}
	}
	return nil
}

// remove deletes a checkpoint folder, _metadata first.
func (s *Storage) remove(path string) error {
	s.mu.Lock()
	delete(s.metas, path)
	s.mu.Unlock()
	meta := filepath.Join(path, MetadataFile)
	if err := s.fs.Remove(meta); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", meta, err)
	}
	if err := s.fs.SyncDir(path); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := s.fs.RemoveAll(path); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// DiscardIncompleteAfter removes the incomplete or corrupt checkpoint
// folders with an id above id (what a crashed run left behind) and returns
// the highest checkpoint id present before (0 if none), so that new ids
// never repeat one a log may already have named.
func (s *Storage) DiscardIncompleteAfter(id int64) (int64, error) {
	infos, err := s.list(false)
	if err != nil {
		return 0, err
	}
	var highest int64
	for _, info := range infos {
		highest = max(highest, info.ID)
		if !info.Valid() && !info.Unreadable() && info.ID > id {
			if err := s.remove(info.Path); err != nil {
				return 0, fmt.Errorf("discard incomplete checkpoint %d: %w", info.ID, err)
			}
		}
	}
	return highest, nil
}
