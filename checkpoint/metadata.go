package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"path"
	"strconv"
	"strings"
	"time"
)

// FormatVersion is the _metadata format this package writes. It reads
// versions 1..FormatVersion. Version 2 added the checksum of every state
// file (FileInfo.CRC32C); version 1 checkpoints restore without that check.
// Version 3 added what inspect shows people: the job's statements, each
// source's table and connector, and each operator's statement and sinks
// (older versions lack them and are shown with what they have). Version 4
// added KeyLayout (older checkpoints are of key layout 1). Version 5 keeps
// the sinks' pre-committed transactions in the side file SinkDataFile
// (Metadata.SinkData) instead of inline in _metadata; older checkpoints
// with them inline still load. Version 6 added SourcePosition.Ended (older
// checkpoints never say that a source ended: their finished sources read
// on from their positions after a restore). Version 7 added
// SubtaskState.Finished: a subtask whose inputs had all ended when the
// checkpoint was taken writes no state (older builds would find it missing).
const FormatVersion = 7

// MetadataFile is the name of the file that completes a checkpoint.
const MetadataFile = "_metadata"

// SinkDataFile is the side file of a checkpoint folder that holds the
// sinks' pre-committed transactions, one after another (format version 5).
const SinkDataFile = "_sinkdata"

// metadataMagic starts every _metadata file.
const metadataMagic = "WEIR-METADATA"

// Sentinel errors, checked with errors.Is.
var (
	// ErrIncompleteCheckpoint: the folder has no _metadata (the checkpoint
	// never completed).
	ErrIncompleteCheckpoint = errors.New("incomplete checkpoint")
	// ErrCorruptCheckpoint: _metadata is truncated, fails its checksum or
	// cannot be decoded, or state files it lists are missing, of the
	// wrong size or fail their checksum.
	ErrCorruptCheckpoint = errors.New("corrupt checkpoint")
	// ErrNewerCheckpoint: _metadata is intact (its length and checksum
	// hold) but of a format version newer than this build reads: a newer
	// Weir wrote it. A restore stops on it instead of falling back to an
	// older checkpoint, which would replay into the sinks what the newer
	// build had already committed.
	ErrNewerCheckpoint = errors.New("checkpoint written by a newer Weir")
	// ErrNoCheckpoint: there is no valid checkpoint to restore from.
	ErrNoCheckpoint = errors.New("no valid checkpoint")
)

// Kind tells a checkpoint from a savepoint.
type Kind string

// Kinds of snapshot.
const (
	KindCheckpoint Kind = "checkpoint"
	KindSavepoint  Kind = "savepoint"
)

// Metadata is the content of _metadata: everything needed to restore a job.
type Metadata struct {
	FormatVersion int    `json:"format_version"`
	Job           string `json:"job"`
	Query         string `json:"query,omitempty"`
	// Statements are the job's statements (its INSERTs), in order; an
	// operator's Statement indexes them from 1. Empty before version 3.
	Statements      []string  `json:"statements,omitempty"`
	PlanFingerprint string    `json:"plan_fingerprint,omitempty"`
	CheckpointID    int64     `json:"checkpoint_id"`
	Timestamp       time.Time `json:"timestamp"`
	Kind            Kind      `json:"kind"`
	MaxParallelism  int       `json:"max_parallelism"`
	// KeyLayout is the version of the key hashing and state layout of the
	// operators' state (state.KeyLayout when written); 0, in checkpoints
	// before format version 4, means layout 1. See KeyLayoutOf.
	KeyLayout int `json:"key_layout,omitempty"`
	// Operators lists the stateful operators and their subtasks' state.
	Operators []OperatorState `json:"operators,omitempty"`
	// Sources holds the position of every source subtask.
	Sources []SourcePosition `json:"sources,omitempty"`
	// Sinks holds the pre-committed transaction of every transactional
	// sink subtask.
	Sinks []SinkTransaction `json:"sinks,omitempty"`
	// SinkData describes the side file (SinkDataFile) holding the Sinks'
	// transactions, with its size and CRC-32C; nil when they are inline
	// (format versions before 5) or there are none.
	SinkData *FileInfo `json:"sink_data,omitempty"`
	// OperatorLists holds the operator list state of the source and sink
	// subtasks that have some (see OperatorList).
	OperatorLists []OperatorList `json:"operator_lists,omitempty"`
	// Extra is free-form information (e.g. the savepoint's origin).
	Extra map[string]string `json:"extra,omitempty"`
}

// KeyLayoutOf returns the key layout of m's state: m.KeyLayout, or 1 for
// a checkpoint that does not record it.
func (m *Metadata) KeyLayoutOf() int {
	if m.KeyLayout == 0 {
		return 1
	}
	return m.KeyLayout
}

// OperatorState is the state of one stateful operator.
type OperatorState struct {
	// ID is the operator's stable id (exec.OperatorSpec.ID).
	ID          string         `json:"id"`
	Name        string         `json:"name,omitempty"`
	Parallelism int            `json:"parallelism"`
	Subtasks    []SubtaskState `json:"subtasks"`
	// Statement is the number (from 1) of the statement in
	// Metadata.Statements the operator belongs to; 0 if not recorded.
	Statement int `json:"statement,omitempty"`
	// Sinks names the sink tables the operator's output feeds.
	Sinks []string `json:"sinks,omitempty"`
}

// Finished reports whether the operator had finished when the checkpoint
// was taken (SubtaskState.Finished): it wrote no state. A checkpoint marks
// all of an operator's subtasks or none; one mark is enough, since a
// subtask is marked only once every subtask's input had ended.
func (o *OperatorState) Finished() bool {
	for _, st := range o.Subtasks {
		if st.Finished {
			return true
		}
	}
	return false
}

// SubtaskState is the state snapshot of one subtask of an operator.
type SubtaskState struct {
	Subtask int `json:"subtask"`
	// Finished says that the subtask had finished when the checkpoint was
	// taken: every input of its operators had ended for good (not stopped),
	// so no row can reach it again and its state was not written (Dir and
	// Files are empty). A restore gives it empty state, and only when every
	// source above the operator is restored ended (as Flink restores a
	// finished operator as finished, FLIP-147). Format version 7.
	Finished bool `json:"finished,omitempty"`
	// Dir is the state folder, relative to the checkpoint folder.
	Dir        string `json:"dir"`
	StateBytes int64  `json:"state_bytes"`
	Keys       int64  `json:"keys"`
	// Files lists the folder's files and sizes; it is verified on load.
	Files []FileInfo `json:"files"`
}

// FileInfo is one file of a state folder.
type FileInfo struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
	// CRC32C is the file's CRC-32C (Castagnoli) as 8 hex digits; empty in
	// format version 1, whose files are checked by size only.
	CRC32C string `json:"crc32c,omitempty"`
}

// FormatCRC32C renders a CRC-32C as FileInfo.CRC32C does.
func FormatCRC32C(sum uint32) string { return fmt.Sprintf("%08x", sum) }

// SourcePosition is the opaque position of one source subtask (offsets per
// partition, file and byte offset, ...), as the connector encoded it.
type SourcePosition struct {
	// Source identifies the source vertex (its name in the job graph).
	Source string `json:"source"`
	// Table and Connector name the source's table and its 'connector'
	// (which knows what Position means); empty before version 3.
	Table     string `json:"table,omitempty"`
	Connector string `json:"connector,omitempty"`
	Subtask   int    `json:"subtask"`
	Position  []byte `json:"position"`
	// Ended says that the subtask had read its input to the end (a
	// bounded source that finished, not one that was stopped): when every
	// subtask of a source ended, a restore keeps the source ended, reading
	// nothing, even if its input has grown since (an operator downstream
	// may have let go of what only more of that input would need, as a
	// join drops the other side's rows at the end of an input). Format
	// version 6.
	Ended bool `json:"ended,omitempty"`
}

// SinkTransaction is the opaque transaction of one sink subtask,
// pre-committed for this checkpoint.
type SinkTransaction struct {
	Sink    string `json:"sink"`
	Subtask int    `json:"subtask"`
	// Transaction is the sink's payload. When Metadata.SinkData is set it
	// is not in _metadata but at Offset (Length bytes) of the side file;
	// Load and Latest fill it in after checking the file.
	Transaction []byte `json:"transaction,omitempty"`
	Offset      int64  `json:"offset,omitempty"`
	Length      int64  `json:"length,omitempty"`
}

// Operator returns the state of the operator with the given id, or nil.
func (m *Metadata) Operator(id string) *OperatorState {
	for i := range m.Operators {
		if m.Operators[i].ID == id {
			return &m.Operators[i]
		}
	}
	return nil
}

// EncodeMetadata encodes m as a _metadata file: a header line
// "WEIR-METADATA <version> <crc32c> <length>" followed by the JSON body.
// The CRC-32C (Castagnoli) and length cover the body, so truncation and bit
// flips are detected.
func EncodeMetadata(m *Metadata) ([]byte, error) {
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	body = append(body, '\n')
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s %d %08x %d\n", metadataMagic, m.FormatVersion, crc32.Checksum(body, castagnoli), len(body))
	buf.Write(body)
	return buf.Bytes(), nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// DecodeMetadata decodes and checks a _metadata file. Every failure wraps
// ErrCorruptCheckpoint, except an intact one of a newer format version,
// ErrNewerCheckpoint.
func DecodeMetadata(data []byte) (*Metadata, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, fmt.Errorf("%w: _metadata has no header line (truncated?)", ErrCorruptCheckpoint)
	}
	fields := strings.Fields(string(data[:nl]))
	if len(fields) != 4 || fields[0] != metadataMagic {
		return nil, fmt.Errorf("%w: _metadata has a malformed header %q", ErrCorruptCheckpoint, data[:nl])
	}
	version, err1 := strconv.Atoi(fields[1])
	sum, err2 := strconv.ParseUint(fields[2], 16, 32)
	length, err3 := strconv.Atoi(fields[3])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("%w: _metadata header %q: %v", ErrCorruptCheckpoint, data[:nl], err)
	}
	if version < 1 {
		return nil, fmt.Errorf("%w: _metadata format version %d", ErrCorruptCheckpoint, version)
	}
	body := data[nl+1:]
	if len(body) != length {
		return nil, fmt.Errorf("%w: _metadata body is %d bytes, header says %d (truncated?)", ErrCorruptCheckpoint, len(body), length)
	}
	if got := crc32.Checksum(body, castagnoli); got != uint32(sum) {
		return nil, fmt.Errorf("%w: _metadata checksum %08x, header says %08x", ErrCorruptCheckpoint, got, sum)
	}
	if version > FormatVersion {
		// Checked after the checksum, which covers the body only: a
		// damaged version digit over an intact body of this build's
		// format must not pass as newer, so the body's own
		// format_version, where it can be read, must agree.
		var v struct {
			FormatVersion *int `json:"format_version"`
		}
		if json.Unmarshal(body, &v) == nil && v.FormatVersion != nil && *v.FormatVersion != version {
			return nil, fmt.Errorf("%w: _metadata body says format version %d, header %d", ErrCorruptCheckpoint, *v.FormatVersion, version)
		}
		return nil, fmt.Errorf("%w: _metadata format version %d, this build reads 1..%d: restore it with the Weir that wrote it, or name an older checkpoint",
			ErrNewerCheckpoint, version, FormatVersion)
	}
	var m Metadata
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: decode _metadata: %v", ErrCorruptCheckpoint, err)
	}
	if m.FormatVersion != version {
		return nil, fmt.Errorf("%w: _metadata body says format version %d, header %d", ErrCorruptCheckpoint, m.FormatVersion, version)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptCheckpoint, err)
	}
	if m.SinkData != nil {
		for _, st := range m.Sinks {
			if len(st.Transaction) > 0 {
				return nil, fmt.Errorf("%w: sink %s subtask %d: transaction both inline and in %s", ErrCorruptCheckpoint, st.Sink, st.Subtask, SinkDataFile)
			}
		}
	}
	return &m, nil
}

// check validates what the metadata says about itself.
func (m *Metadata) check() error {
	if m.Kind != KindCheckpoint && m.Kind != KindSavepoint {
		return fmt.Errorf("unknown kind %q", m.Kind)
	}
	if err := m.checkLists(); err != nil {
		return err
	}
	if err := m.checkSinkData(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, op := range m.Operators {
		if seen[op.ID] {
			return fmt.Errorf("operator %q listed twice", op.ID)
		}
		seen[op.ID] = true
		for _, st := range op.Subtasks {
			if st.Finished {
				if st.Dir != "" || len(st.Files) > 0 {
					return fmt.Errorf("operator %q subtask %d: finished, yet has a state folder", op.ID, st.Subtask)
				}
				continue
			}
			if err := checkRelDir(st.Dir); err != nil {
				return fmt.Errorf("operator %q subtask %d: %v", op.ID, st.Subtask, err)
			}
			for _, f := range st.Files {
				if f.CRC32C == "" {
					continue
				}
				if _, err := strconv.ParseUint(f.CRC32C, 16, 32); err != nil || len(f.CRC32C) != 8 {
					return fmt.Errorf("operator %q subtask %d: file %s: malformed crc32c %q", op.ID, st.Subtask, f.Name, f.CRC32C)
				}
			}
		}
	}
	return nil
}

// checkRelDir accepts a single clean folder name inside the checkpoint
// folder, so that metadata never points outside it.
func checkRelDir(dir string) error {
	if dir == "" || dir == "." || dir == ".." || strings.ContainsAny(dir, `/\`) || path.Clean(dir) != dir {
		return fmt.Errorf("state folder %q is not a plain folder name", dir)
	}
	return nil
}

// checkSinkData checks that the side file is named as expected and that
// every transaction lies inside it.
func (m *Metadata) checkSinkData() error {
	if m.SinkData == nil {
		for _, st := range m.Sinks {
			if st.Offset != 0 || st.Length != 0 {
				return fmt.Errorf("sink %s subtask %d: transaction at offset %d, length %d but no %s", st.Sink, st.Subtask, st.Offset, st.Length, SinkDataFile)
			}
		}
		return nil
	}
	if m.SinkData.Name != SinkDataFile {
		return fmt.Errorf("sink data file %q, expected %q", m.SinkData.Name, SinkDataFile)
	}
	if _, err := strconv.ParseUint(m.SinkData.CRC32C, 16, 32); err != nil || len(m.SinkData.CRC32C) != 8 {
		return fmt.Errorf("%s: malformed crc32c %q", SinkDataFile, m.SinkData.CRC32C)
	}
	for _, st := range m.Sinks {
		if st.Offset < 0 || st.Length < 0 || st.Offset > m.SinkData.Size || st.Length > m.SinkData.Size-st.Offset {
			return fmt.Errorf("sink %s subtask %d: transaction at offset %d, length %d outside %s (%d bytes)", st.Sink, st.Subtask, st.Offset, st.Length, SinkDataFile, m.SinkData.Size)
		}
	}
	return nil
}
