package filesystem

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/weir-sql/weir/connector"
)

// Positions. Subtask s of parallelism p reads the files j with j % p == s
// in order: at a position, its files before the current one are done, the
// current one is read up to an offset, and later ones are untouched unless
// a restore at another parallelism (SeekAll) gave them a start of their
// own, which the position then lists.

// fileStart is how far an earlier run read a file.
type fileStart struct {
	done    bool
	offset  int64 // byte offset of the next unread record
	line    int64 // its line number
	emitted int   // rows of that record already returned
}

// filePosition is a decoded Position.
type filePosition struct {
	version              byte
	subtask, parallelism int // version 2 and 3
	file                 int // global index of the current file
	at                   fileStart
	name                 string // the current file's name (see positionV3)
	later                []laterFile
}

// laterFile is the start of a file after the current one.
type laterFile struct {
	file  int
	start fileStart
	name  string
}

const (
	positionV1 = 1 // file, offset, line, emitted, name
	positionV2 = 2 // subtask, parallelism, v1's fields, then the later files
	// positionV3 is v2 with each file named by its path relative to the
	// folder ('/'-separated), since files in subfolders are read too;
	// v1 and v2 named files by base name, read only in the folder itself,
	// whose relative path is the same.
	positionV3 = 3
)

// ErrBadPosition reports a position Seek cannot use.
var ErrBadPosition = errors.New("filesystem: invalid position")

func appendStart(b []byte, st fileStart) []byte {
	b = binary.AppendUvarint(b, uint64(st.offset))
	b = binary.AppendUvarint(b, uint64(st.line))
	return binary.AppendUvarint(b, uint64(st.emitted))
}

func appendName(b []byte, name string) []byte {
	b = binary.AppendUvarint(b, uint64(len(name)))
	return append(b, name...)
}

func (p *filePosition) encode() []byte {
	b := []byte{positionV3}
	b = binary.AppendUvarint(b, uint64(p.subtask))
	b = binary.AppendUvarint(b, uint64(p.parallelism))
	b = binary.AppendUvarint(b, uint64(p.file))
	b = appendStart(b, p.at)
	b = appendName(b, p.name)
	b = binary.AppendUvarint(b, uint64(len(p.later)))
	for _, l := range p.later {
		b = binary.AppendUvarint(b, uint64(l.file))
		done := uint64(0)
		if l.start.done {
			done = 1
		}
		b = binary.AppendUvarint(b, done)
		b = appendStart(b, l.start)
		b = appendName(b, l.name)
	}
	return b
}

// posDecoder reads a position's fields, remembering the first error.
type posDecoder struct {
	rest []byte
	err  error
}

func (d *posDecoder) uint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.rest)
	if n <= 0 || v > 1<<62 {
		d.err = fmt.Errorf("%w: truncated", ErrBadPosition)
		return 0
	}
	d.rest = d.rest[n:]
	return int64(v)
}

func (d *posDecoder) start() fileStart {
	return fileStart{offset: d.uint(), line: d.uint(), emitted: int(d.uint())}
}

func (d *posDecoder) name() string {
	n := d.uint()
	if d.err != nil {
		return ""
	}
	if n > int64(len(d.rest)) {
		d.err = fmt.Errorf("%w: truncated", ErrBadPosition)
		return ""
	}
	s := string(d.rest[:n])
	d.rest = d.rest[n:]
	return s
}

// decodeFilePosition parses a position of version 1, 2 or 3.
func decodeFilePosition(b []byte) (*filePosition, error) {
	if len(b) == 0 || b[0] < positionV1 || b[0] > positionV3 {
		return nil, fmt.Errorf("%w: unknown version", ErrBadPosition)
	}
	d := &posDecoder{rest: b[1:]}
	p := &filePosition{version: b[0]}
	if p.version >= positionV2 {
		p.subtask, p.parallelism = int(d.uint()), int(d.uint())
	}
	p.file = int(d.uint())
	p.at = d.start()
	p.name = d.name()
	if p.version >= positionV2 {
		n := d.uint()
		if n > int64(len(d.rest)) {
			return nil, fmt.Errorf("%w: truncated", ErrBadPosition)
		}
		for range n {
			l := laterFile{file: int(d.uint())}
			l.start.done = d.uint() == 1
			st := d.start()
			l.start.offset, l.start.line, l.start.emitted = st.offset, st.line, st.emitted
			l.name = d.name()
			p.later = append(p.later, l)
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.rest) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", ErrBadPosition)
	}
	if p.version >= positionV2 && (p.parallelism < 1 || p.subtask >= p.parallelism) {
		return nil, fmt.Errorf("%w: subtask %d of %d", ErrBadPosition, p.subtask, p.parallelism)
	}
	return p, nil
}

// check verifies that the position belongs to subtask of parallelism and
// that the files it names are still where they were (names are the
// source's relative file names).
func (p *filePosition) check(names []string, subtask, parallelism int) error {
	if p.version >= positionV2 && (p.subtask != subtask || p.parallelism != parallelism) {
		return fmt.Errorf("%w: taken by subtask %d of %d, not %d of %d", ErrBadPosition, p.subtask, p.parallelism, subtask, parallelism)
	}
	if p.file%parallelism != subtask {
		return fmt.Errorf("%w: file %d is not read by subtask %d of %d", ErrBadPosition, p.file, subtask, parallelism)
	}
	if err := p.checkName(names, p.file, p.name, true); err != nil {
		return err
	}
	for _, l := range p.later {
		if l.file <= p.file || l.file%parallelism != subtask {
			return fmt.Errorf("%w: file %d is not a later file of subtask %d of %d", ErrBadPosition, l.file, subtask, parallelism)
		}
		if err := p.checkName(names, l.file, l.name, false); err != nil {
			return err
		}
	}
	return nil
}

// checkName verifies that file j is still called name; j may be past the
// last file only for the current file of a subtask at its end (which has
// no name).
func (p *filePosition) checkName(names []string, j int, name string, current bool) error {
	if j >= len(names) && current && name == "" {
		return nil
	}
	var what string
	switch {
	case j < len(names) && names[j] == name:
		return nil
	case j < len(names) && current && name == "":
		// The subtask had read all its files, and the folder has grown
		// past them.
		what = fmt.Sprintf("the subtask had read all its files, and the folder has more now (file %d is %q): files were added, and a source that finished reads no more", j, names[j])
	case j < len(names):
		what = fmt.Sprintf("file %d was %q, now %q", j, name, names[j])
	default:
		what = fmt.Sprintf("file %d (%q) is gone", j, name)
	}
	if k := slices.Index(names, name); k >= 0 {
		what += fmt.Sprintf("; %q is file %d: files before it were added or removed", name, k)
	}
	if p.version < positionV3 && slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "/") }) {
		return fmt.Errorf("%w: %s: the position was taken by a Weir that did not read subfolders, and the files in them change the order; start the job from the beginning (%w)", ErrBadPosition, what, connector.ErrPermanent)
	}
	return fmt.Errorf("%w: %s (%w)", ErrBadPosition, what, errFolderChanged)
}

// errFolderChanged: the files of a restored position are not where they
// were; a restart finds the same folder, so it cannot help.
var errFolderChanged = fmt.Errorf("the folder changed since the checkpoint: %w", connector.ErrPermanent)

// ErrFileChanged reports a file that a restored position reads from an
// offset, but which is now shorter than that offset or gone.
// It wraps connector.ErrPermanent: a restart cannot help.
var ErrFileChanged = fmt.Errorf("filesystem: a file changed since the checkpoint (%w)", connector.ErrPermanent)

// checkSize verifies that file j still has a record at st (the file was
// not truncated below the offset the checkpoint had read it to).
func (r *Reader) checkSize(j int, st fileStart) error {
	if st.done || j >= len(r.src.files) {
		return nil
	}
	need := st.offset
	if st.emitted > 0 {
		need++ // the record some of whose rows were returned
	}
	if need == 0 {
		return nil
	}
	path := r.src.files[j]
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s, read up to byte offset %d, is gone: %w", ErrFileChanged, path, st.offset, err)
	}
	if err != nil { // EACCES, EIO: perhaps passing, so not ErrFileChanged
		return fmt.Errorf("filesystem: check %s, read up to byte offset %d: %w", path, st.offset, err)
	}
	if fi.Size() < need {
		return fmt.Errorf("%w: %s was read up to byte offset %d, but its size is now %d bytes (truncated or replaced)", ErrFileChanged, path, st.offset, fi.Size())
	}
	return nil
}

// Position encodes the subtask layout, the current file's index, the byte
// offset and line number of its next record, how many of that record's
// rows were already returned and the file's name (checked on restore),
// then the starts of later files restored by SeekAll (version 2).
func (r *Reader) Position() ([]byte, error) {
	p := filePosition{subtask: r.subtask, parallelism: r.parallelism, file: r.file}
	p.at = fileStart{offset: r.offset, line: r.line}
	if r.pending.Len() > 0 {
		p.at = fileStart{offset: r.pendOffset, line: r.pendLine, emitted: r.pendEmitted}
	} else if r.skipRows > 0 {
		p.at.emitted = r.skipRows // restored, and the record not read yet
	}
	if r.file < len(r.src.files) {
		p.name = r.src.names[r.file]
	}
	for j, st := range r.starts {
		if j > r.file {
			p.later = append(p.later, laterFile{file: j, start: st, name: r.src.names[j]})
		}
	}
	slices.SortFunc(p.later, func(a, b laterFile) int { return a.file - b.file })
	return p.encode(), nil
}

// Seek moves to a position from Position of the same subtask at the same
// parallelism, before any Next.
func (r *Reader) Seek(pos []byte) error {
	p, err := decodeFilePosition(pos)
	if err != nil {
		return err
	}
	if err := p.check(r.src.names, r.subtask, r.parallelism); err != nil {
		return err
	}
	if err := r.checkSize(p.file, p.at); err != nil {
		return err
	}
	var starts map[int]fileStart
	if len(p.later) > 0 {
		starts = make(map[int]fileStart, len(p.later))
		for _, l := range p.later {
			if err := r.checkSize(l.file, l.start); err != nil {
				return err
			}
			starts[l.file] = l.start
		}
	}
	r.moveTo(p.file, p.at, starts)
	return nil
}

// SeekAll restores the positions of all subtasks of an earlier run
// (positions[k] from subtask k, at parallelism len(positions)), before any
// Next: every file of this reader continues where the earlier run left it.
func (r *Reader) SeekAll(positions [][]byte) error {
	if len(positions) == 0 {
		return fmt.Errorf("%w: no positions", ErrBadPosition)
	}
	old := make([]*filePosition, len(positions))
	for k, b := range positions {
		p, err := decodeFilePosition(b)
		if err == nil {
			err = p.check(r.src.names, k, len(positions))
		}
		if err != nil {
			return fmt.Errorf("position of subtask %d of %d: %w", k, len(positions), err)
		}
		old[k] = p
	}
	starts := map[int]fileStart{}
	for j := r.subtask; j < len(r.src.files); j += r.parallelism {
		if st, ok := startOf(old, j); ok {
			if err := r.checkSize(j, st); err != nil {
				return err
			}
			starts[j] = st
		}
	}
	r.moveTo(r.subtask, fileStart{line: 1}, starts)
	r.enterFile()
	return nil
}

// startOf returns how far the earlier run whose positions are old read
// file j; false if it did not start it.
func startOf(old []*filePosition, j int) (fileStart, bool) {
	p := old[j%len(old)]
	switch {
	case j < p.file:
		return fileStart{done: true}, true
	case j == p.file:
		return p.at, true
	}
	for _, l := range p.later {
		if l.file == j {
			return l.start, true
		}
	}
	return fileStart{}, false
}

// moveTo makes file the current one, read up to at, with starts for later files.
func (r *Reader) moveTo(file int, at fileStart, starts map[int]fileStart) {
	if r.f != nil {
		r.f.Close() // read-only: nothing to lose
		r.f = nil
	}
	r.file, r.offset, r.line, r.skipRows = file, at.offset, at.line, at.emitted
	r.starts = starts
	r.pending.Reset()
}
