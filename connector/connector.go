// Package connector defines the small interfaces behind which sources and
// sinks live, and the registry that maps a table's 'connector' option to an
// implementation. The built-in connectors are in subpackages; package
// connector/builtin registers them all.
package connector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/weir-sql/weir/types"
)

// Table describes a table declared with CREATE TABLE: what a factory needs to
// build a source or sink for it.
type Table struct {
	Name    string
	Schema  types.Schema
	Options map[string]string // WITH options, keys as written
	// PrimaryKey lists column indexes of PRIMARY KEY (...) NOT ENFORCED; nil if none.
	PrimaryKey []int
	// Metadata lists the metadata columns (col TYPE METADATA [FROM 'key']
	// [VIRTUAL]), which are in Schema: a source fills them from what it
	// reads beside the record (a Kafka record's timestamp, say) instead of
	// decoding them from its format; a sink takes the values of the
	// non-virtual ones for the record's metadata (its rows hold NULL in the
	// virtual ones). Nil if none.
	Metadata []MetadataColumn
	// PartitionBy lists the column indexes of PARTITIONED BY (...); nil if none.
	PartitionBy []int
}

// MetadataColumn is one metadata column of a table.
type MetadataColumn struct {
	Column  int    // index in Schema
	Key     string // the connector's metadata key
	Virtual bool   // read only: not written by a sink
}

// MetadataOf returns the metadata column at schema index i, or nil.
func (t *Table) MetadataOf(i int) *MetadataColumn {
	for j := range t.Metadata {
		if t.Metadata[j].Column == i {
			return &t.Metadata[j]
		}
	}
	return nil
}

// MetadataKey is a metadata key a connector offers: its name, its SQL
// type, and whether a sink writes it.
type MetadataKey struct {
	Key      string
	Type     types.Type
	TypeText string // the type for messages when Type.SQL() says too little ("MAP<STRING, BYTES>"); "" for Type.SQL()
	Writable bool
}

func (k MetadataKey) typeText() string {
	if k.TypeText != "" {
		return k.TypeText
	}
	return k.Type.SQL()
}

// Option returns the option value for key, or def if unset.
func (t *Table) Option(key, def string) string {
	if v, ok := t.Options[key]; ok {
		return v
	}
	return def
}

// Env is the process environment a connector may use: where print output
// goes, for example. Tests replace it.
type Env struct {
	Stdout io.Writer
	Stderr io.Writer
	// Location is the session's time zone (table.local-time-zone), in which
	// formats show and read TIMESTAMP_LTZ values; nil means UTC.
	Location *time.Location
}

// Source is a table read as a stream. It is created once per job and opens
// one SourceReader per parallel subtask.
type Source interface {
	// Bounded reports whether the input ends by itself.
	Bounded() bool
	// Open opens the reader of one subtask out of parallelism. Together the
	// readers of all subtasks read the whole table exactly once.
	Open(subtask, parallelism int) (SourceReader, error)
}

// SourceReader reads the part of a source that belongs to one subtask.
type SourceReader interface {
	// Next appends up to max rows to b (b.Width equals the table's column
	// count) and returns. It must return within a few milliseconds even when
	// no data is available (appending nothing), so that the caller can
	// handle control events; it honours ctx for cancellation. At the end of
	// a bounded input it returns io.EOF (possibly after appending rows in
	// the same call).
	Next(ctx context.Context, b *types.Batch, max int) error
	// Position returns the reader's current position, opaque bytes that
	// Seek accepts, covering exactly the rows returned so far.
	Position() ([]byte, error)
	// Seek moves the reader to a position returned by Position, before any
	// call to Next.
	Seek(pos []byte) error
	// Close releases the reader.
	Close() error
}

// Stats is reported by readers that count something for the user, such as
// records skipped by 'ignore-parse-errors'.
type Stats interface {
	// Skipped returns the number of malformed records skipped so far.
	Skipped() int64
}

// Sink is a table written as a stream. It is created once per job and opens
// one SinkWriter per parallel subtask.
type Sink interface {
	// AcceptsUpdates reports whether the sink can consume a changelog with
	// -U, +U and -D rows. If not, the planner refuses updating queries.
	AcceptsUpdates() bool
	// Parallelism returns the parallelism the sink wants, or 0 to follow
	// its input (the 'sink.parallelism' option).
	Parallelism() int
	// Open opens the writer of one subtask out of parallelism.
	Open(subtask, parallelism int) (SinkWriter, error)
}

// SinkWriter writes the rows of one sink subtask.
type SinkWriter interface {
	// Write consumes a batch. The writer must not keep b after returning.
	Write(b *types.Batch) error
	// Flush makes everything written so far durable or visible.
	Flush() error
	// Close flushes and releases the writer.
	Close() error
}

// SourceFactory builds a source for a table; it validates the table's
// options and returns a clear error naming a bad or missing one.
type SourceFactory func(t *Table, env Env) (Source, error)

// SinkFactory builds a sink for a table, validating its options.
type SinkFactory func(t *Table, env Env) (Sink, error)

// PositionDescriber turns a source position (the bytes of
// SourceReader.Position) into text for people, in the connector's terms
// (files and byte offsets, rows emitted, ...), for `weir checkpoints
// inspect`. The text may span lines. A position it cannot decode is an
// error.
type PositionDescriber func(pos []byte) (string, error)

// Registry maps connector names to factories.
type Registry struct {
	sources   map[string]SourceFactory
	sinks     map[string]SinkFactory
	describes map[string]PositionDescriber
	metadata  map[string][]MetadataKey
	parts     map[string]bool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{sources: map[string]SourceFactory{}, sinks: map[string]SinkFactory{},
		describes: map[string]PositionDescriber{}, metadata: map[string][]MetadataKey{}, parts: map[string]bool{}}
}

// RegisterPartitioned declares that connector name's tables may be
// PARTITIONED BY columns; for other connectors Source and Sink refuse a
// partitioned table.
func (r *Registry) RegisterPartitioned(name string) { r.parts[name] = true }

// RegisterMetadata declares the metadata keys of connector name. A table
// of a connector without keys cannot have metadata columns; Source and
// Sink check a table's metadata columns against the keys before they call
// the factory.
func (r *Registry) RegisterMetadata(name string, keys []MetadataKey) { r.metadata[name] = keys }

// checkMetadata checks t's metadata columns against the keys of
// connector name (forSink: non-virtual columns must be writable).
func (r *Registry) checkMetadata(t *Table, name string, forSink bool) error {
	if len(t.PartitionBy) > 0 && !r.parts[name] {
		return fmt.Errorf("table %s: connector '%s' does not support PARTITIONED BY (the filesystem connector does)", t.Name, name)
	}
	if len(t.Metadata) == 0 {
		return nil
	}
	keys := r.metadata[name]
	var names, writable []string
	for _, k := range keys {
		names = append(names, "'"+k.Key+"' "+k.typeText())
		if k.Writable {
			writable = append(writable, "'"+k.Key+"'")
		}
	}
	for _, m := range t.Metadata {
		col := t.Schema.Columns[m.Column]
		if len(keys) == 0 {
			return fmt.Errorf("table %s: column %s: connector '%s' has no metadata columns (METADATA FROM '%s')", t.Name, col.Name, name, m.Key)
		}
		var key *MetadataKey
		for i := range keys {
			if keys[i].Key == m.Key {
				key = &keys[i]
			}
		}
		if key == nil {
			return fmt.Errorf("table %s: column %s: unknown metadata key '%s' of connector '%s' (keys: %s)", t.Name, col.Name, m.Key, name, strings.Join(names, ", "))
		}
		if col.Type.Kind != key.Type.Kind || (col.Type.Kind == types.KindDecimal && (col.Type.P != key.Type.P || col.Type.S != key.Type.S)) {
			return fmt.Errorf("table %s: column %s: metadata '%s' of connector '%s' is %s; declare the column as %s, not %s", t.Name, col.Name, m.Key, name, key.typeText(), key.typeText(), col.Type.Nullable().Plain().SQL())
		}
		if forSink && !m.Virtual && !key.Writable {
			w := "none is"
			if len(writable) > 0 {
				w = "writable: " + strings.Join(writable, ", ")
			}
			return fmt.Errorf("table %s: column %s: metadata '%s' of connector '%s' cannot be written (%s); declare the column VIRTUAL", t.Name, col.Name, m.Key, name, w)
		}
	}
	return nil
}

// RegisterPositionDescriber registers how the positions of connector
// name's sources read.
func (r *Registry) RegisterPositionDescriber(name string, d PositionDescriber) { r.describes[name] = d }

// PositionDescriber returns the describer of connector name's positions,
// or nil if it has none.
func (r *Registry) PositionDescriber(name string) PositionDescriber { return r.describes[name] }

// RegisterSource registers a source factory under name.
func (r *Registry) RegisterSource(name string, f SourceFactory) { r.sources[name] = f }

// RegisterSink registers a sink factory under name.
func (r *Registry) RegisterSink(name string, f SinkFactory) { r.sinks[name] = f }

// ErrUnknownConnector reports a 'connector' option no factory is registered for.
var ErrUnknownConnector = errors.New("unknown connector")

// Names returns the names of all registered connectors, sorted.
func (r *Registry) Names() []string {
	seen := map[string]bool{}
	for n := range r.sources {
		seen[n] = true
	}
	for n := range r.sinks {
		seen[n] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Source builds the source of table t from its 'connector' option.
func (r *Registry) Source(t *Table, env Env) (Source, error) {
	name, err := connectorName(t)
	if err != nil {
		return nil, err
	}
	f, ok := r.sources[name]
	if !ok {
		if _, isSink := r.sinks[name]; isSink {
			return nil, fmt.Errorf("table %s: connector '%s' can only be written to, not read", t.Name, name)
		}
		return nil, fmt.Errorf("table %s: %w '%s' (available: %s)", t.Name, ErrUnknownConnector, name, strings.Join(r.Names(), ", "))
	}
	if err := r.checkMetadata(t, name, false); err != nil {
		return nil, err
	}
	s, err := f(withoutAlignment(t), env)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return s, nil
}

// Sink builds the sink of table t from its 'connector' option.
func (r *Registry) Sink(t *Table, env Env) (Sink, error) {
	name, err := connectorName(t)
	if err != nil {
		return nil, err
	}
	f, ok := r.sinks[name]
	if !ok {
		if _, isSource := r.sources[name]; isSource {
			return nil, fmt.Errorf("table %s: connector '%s' can only be read, not written to", t.Name, name)
		}
		return nil, fmt.Errorf("table %s: %w '%s' (available: %s)", t.Name, ErrUnknownConnector, name, strings.Join(r.Names(), ", "))
	}
	if err := r.checkMetadata(t, name, true); err != nil {
		return nil, err
	}
	s, err := f(withoutAlignment(t), env)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return s, nil
}

func connectorName(t *Table) (string, error) {
	name, ok := t.Options["connector"]
	if !ok || name == "" {
		return "", fmt.Errorf("table %s: missing option 'connector'", t.Name)
	}
	return name, nil
}

// RescalableReader is a SourceReader whose position can be restored at
// another parallelism than the one it was taken at.
type RescalableReader interface {
	SourceReader
	// SeekAll moves the reader, before any call to Next, to where the
	// readers of an earlier run left off, given the positions (from
	// Position) of all of that run's subtasks, at whatever parallelism it
	// ran. Together the readers of this run then read exactly the rows the
	// earlier readers had not returned.
	SeekAll(positions [][]byte) error
}

// TransactionalWriter is a SinkWriter with two-phase commit: what it writes
// becomes visible only when the checkpoint that covers it completes.
type TransactionalWriter interface {
	SinkWriter
	// PreCommit is called at checkpoint barrier checkpointID: it makes
	// everything written since the previous PreCommit durable but not yet
	// visible, and returns the transaction that commits it (opaque bytes
	// recorded in the checkpoint).
	PreCommit(checkpointID int64) ([]byte, error)
	// Commit makes a pre-committed transaction visible. It is idempotent:
	// committing a transaction again, or one already committed, is not an
	// error.
	Commit(txn []byte) error
	// Abort releases the writer after a failure, instead of Close: what was
	// written but not pre-committed is discarded, what was pre-committed
	// is left for TransactionalSink.Recover. Nothing becomes visible.
	Abort() error
}

// EndingWriter is a TransactionalWriter whose end, in a job without
// checkpoints, takes two phases, so that the output of all the job's sink
// subtasks becomes visible together or not at all. When every task of the
// job has ended well, the runtime calls PrepareEnd on every such writer of
// the job; only if all of them succeed does it call Commit on each with
// the transaction its PrepareEnd returned, and then Close. If a
// PrepareEnd, a Commit or a Close fails, or the job fails or is cancelled
// before the commits begin, it calls Revert on each writer whose Commit
// it called (even one that failed part way), then Abort on every writer
// not closed: nothing of the job's output stays visible.
type EndingWriter interface {
	TransactionalWriter
	// PrepareEnd finishes everything written (durable, not visible yet)
	// and returns the transaction that makes it visible, as PreCommit does
	// at a checkpoint after the last one. No Write follows it; Close after
	// Commit only releases the writer.
	PrepareEnd() ([]byte, error)
	// Revert undoes what a Commit, whole or partial, of the transaction of
	// PrepareEnd made visible, so that none of it stays so. Abort then
	// discards it.
	Revert(txn []byte) error
}

// WatermarkWriter is a SinkWriter told the event-time watermark of its
// input (milliseconds) each time it advances, between batches: a
// partitioned filesystem sink commits partitions by it.
type WatermarkWriter interface {
	SinkWriter
	// Watermark says that no more rows with an event time up to wm come.
	Watermark(wm int64) error
}

// TransactionalSink is a Sink whose writers are TransactionalWriters.
type TransactionalSink interface {
	Sink
	// Recover is called once per job start, before any writer opens, with
	// the transactions that the checkpoint being restored pre-committed (of
	// all subtasks; nil when starting from scratch). It commits them (they
	// may not have been committed before the failure) and discards whatever
	// earlier runs wrote but did not pre-commit in that checkpoint.
	Recover(txns [][]byte) error
}

// DurableSink is a TransactionalSink whose committed output outlives the
// job, in a location that later runs write to again (a folder). The
// runtime uses it so that two runs never write one location at once and a
// run never writes again, unasked, output that is already committed.
type DurableSink interface {
	TransactionalSink
	// Location names where the output goes, for messages.
	Location() string
	// Claim takes the location for one run of a job until release is
	// called (or the process ends). While it is held, another Claim (in
	// this process or another) fails at once with an error that names the
	// holder; owner describes this run for that message.
	Claim(owner string) (release func() error, err error)
	// Committed returns the highest checkpoint id of the output the
	// location holds committed by earlier runs; 0 when it holds none.
	Committed() (int64, error)
}

// ErrPermanent marks an error that restarting the job cannot cure: the
// input changed under a checkpoint (a file truncated below its restored
// offset), say. A job failing with it is not restarted.
var ErrPermanent = errors.New("permanent failure")

// ChangelogMode is the set of row kinds a changelog may hold, as Flink's
// ChangelogMode: insert-only (+I), retract (+I, -U, +U, -D: every update
// comes as the old row retracted and the new one added) or upsert (+I, +U,
// -D without -U: an update replaces the row with the same key).
type ChangelogMode uint8

// Changelog modes.
const (
	// ModeInsertOnly is a changelog of inserts only (+I).
	ModeInsertOnly = ChangelogMode(1 << types.Insert)
	// ModeRetract is a changelog with every row kind (+I, -U, +U, -D).
	ModeRetract = ChangelogMode(1<<types.Insert | 1<<types.UpdateBefore | 1<<types.UpdateAfter | 1<<types.Delete)
	// ModeUpsert is an upsert changelog by key (+I, +U, -D).
	ModeUpsert = ChangelogMode(1<<types.Insert | 1<<types.UpdateAfter | 1<<types.Delete)
)

// ModeOf returns the mode that holds exactly the given kinds.
func ModeOf(kinds ...types.RowKind) ChangelogMode {
	var m ChangelogMode
	for _, k := range kinds {
		m |= 1 << k
	}
	return m
}

// Contains reports whether rows of kind k may occur.
func (m ChangelogMode) Contains(k types.RowKind) bool { return m&(1<<k) != 0 }

// ContainsAll reports whether every kind of o is in m.
func (m ChangelogMode) ContainsAll(o ChangelogMode) bool { return o&^m == 0 }

// Union returns the kinds of m and of o.
func (m ChangelogMode) Union(o ChangelogMode) ChangelogMode { return m | o }

// IsInsertOnly reports whether m holds inserts only (or nothing).
func (m ChangelogMode) IsInsertOnly() bool { return m&^ModeInsertOnly == 0 }

// changelogShort are Flink's names of the kinds in EXPLAIN.
var changelogShort = [...]string{"I", "UB", "UA", "D"}

// String renders the kinds as Flink's EXPLAIN does: "I", "I,UB,UA",
// "I,UB,UA,D", "I,UA,D"; "NONE" for no kind.
func (m ChangelogMode) String() string {
	var parts []string
	for k, s := range changelogShort {
		if m.Contains(types.RowKind(k)) {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "NONE"
	}
	return strings.Join(parts, ",")
}

// Kinds renders the kinds as the rows print them: "+I/-U/+U/-D".
func (m ChangelogMode) Kinds() string {
	var parts []string
	for k := range changelogShort {
		if m.Contains(types.RowKind(k)) {
			parts = append(parts, types.RowKind(k).String())
		}
	}
	return strings.Join(parts, "/")
}

// ChangelogSource is a Source that says which row kinds it emits. A
// Source that does not implement it is insert-only.
type ChangelogSource interface {
	Source
	// ChangelogMode returns the row kinds the source's rows may have.
	ChangelogMode() ChangelogMode
}

// SourceChangelogMode returns s's changelog mode: its ChangelogMode, or
// insert-only.
func SourceChangelogMode(s Source) ChangelogMode {
	if c, ok := s.(ChangelogSource); ok {
		return c.ChangelogMode()
	}
	return ModeInsertOnly
}

// ChangelogSink is a Sink that says exactly which row kinds it accepts
// and, for the planner's error when a query produces others, what limits
// it and what to change.
type ChangelogSink interface {
	Sink
	// ChangelogMode returns the row kinds the sink accepts.
	ChangelogMode() ChangelogMode
	// ChangelogHint returns what limits the sink to its mode, for messages
	// ("format 'json'"), and what to change so that it accepts a
	// changelog ("use 'format' = 'debezium-json'"); either may be "".
	ChangelogHint() (what, fix string)
}

// SinkChangelogMode returns the row kinds s accepts: its ChangelogMode,
// else every kind if AcceptsUpdates, else inserts only.
func SinkChangelogMode(s Sink) ChangelogMode {
	if c, ok := s.(ChangelogSink); ok {
		return c.ChangelogMode()
	}
	if s.AcceptsUpdates() {
		return ModeRetract
	}
	return ModeInsertOnly
}

// CheckpointListener is a SourceReader told when a checkpoint that holds
// its position is complete (its metadata durable), for example to commit
// its offsets to an external system for monitoring. It is called in the
// reader's goroutine, between calls to Next, with the position the reader
// gave for that checkpoint; a completion may cover several checkpoints
// (the latest is given). An error is reported, and the job goes on.
type CheckpointListener interface {
	SourceReader
	// CheckpointComplete says that checkpoint id, which recorded
	// position, is complete.
	CheckpointComplete(id int64, position []byte) error
}
