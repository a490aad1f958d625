package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// Exactly-once design. Kafka lets a new process finish a transaction that
// a dead one prepared only by resuming the dead producer's id and epoch
// (Flink does it through the Java client's internals) or with KIP-939;
// franz-go exposes neither and kfake does not implement KIP-939. So a
// pre-commit does not leave an open Kafka transaction: it returns the
// encoded records themselves, which the checkpoint stores. When the
// checkpoint completes, Commit writes them in one Kafka transaction,
// together with a marker: a transactional offset commit of the checkpoint
// id for the consumer group '<prefix>-marker-<subtask>'. The marker
// commits atomically with the records, so after a crash Recover reads it
// and writes again exactly the restored transactions whose id is above it.
// A transaction cut short by the crash is aborted when the next producer
// with its transactional id ('<prefix>-<subtask>') starts.

// Sink is a kafka or upsert-kafka table written as a stream.
type Sink struct {
	cfg *config
}

// txnSink is a Sink with 'sink.delivery-guarantee' = 'exactly-once'.
type txnSink struct{ *Sink }

var (
	_ connector.ChangelogSink       = (*Sink)(nil)
	_ connector.TransactionalSink   = txnSink{}
	_ connector.DurableSink         = txnSink{}
	_ connector.TransactionalWriter = (*txnWriter)(nil)
)

// NewSink is the 'kafka' sink factory.
func NewSink(t *connector.Table, _ connector.Env) (connector.Sink, error) {
	return newSink(t, false)
}

// NewUpsertSink is the 'upsert-kafka' sink factory.
func NewUpsertSink(t *connector.Table, _ connector.Env) (connector.Sink, error) {
	return newSink(t, true)
}

func newSink(t *connector.Table, upsert bool) (connector.Sink, error) {
	cfg, err := parseConfig(t, upsert, false)
	if err != nil {
		return nil, err
	}
	s := &Sink{cfg: cfg}
	if cfg.guarantee == deliveryExactlyOnce {
		return txnSink{s}, nil
	}
	return s, nil
}

// AcceptsUpdates reports whether the sink takes a changelog: upsert-kafka
// and the debezium-json format do.
func (s *Sink) AcceptsUpdates() bool {
	return s.cfg.upsert || (s.cfg.value.name != "raw" && s.cfg.value.rec.IsChangelog())
}

// ChangelogMode returns the row kinds the sink takes.
func (s *Sink) ChangelogMode() connector.ChangelogMode {
	if s.AcceptsUpdates() {
		return connector.ModeRetract
	}
	return connector.ModeInsertOnly
}

// ChangelogHint says what limits a kafka sink to inserts and what to use.
func (s *Sink) ChangelogHint() (what, fix string) {
	return fmt.Sprintf("kafka, format '%s'", s.cfg.value.name),
		"use 'upsert-kafka' (a PRIMARY KEY, deletes as tombstones) or 'value.format' = 'debezium-json'"
}

// Parallelism returns 'sink.parallelism', or 0.
func (s *Sink) Parallelism() int { return s.cfg.parallelism }

// Open opens subtask's writer.
func (s *Sink) Open(subtask, parallelism int) (connector.SinkWriter, error) {
	return s.openPlain(subtask, parallelism)
}

func (s *Sink) open(subtask, parallelism int) (*writer, error) {
	c := s.cfg
	w := &writer{cfg: c, subtask: subtask, parallelism: parallelism, valRow: make([]types.Value, len(c.valCols)), keyRow: make([]types.Value, len(c.keyCols))}
	if c.value.name != "raw" {
		cols := make([]types.Column, len(c.valCols))
		for i, ci := range c.valCols {
			cols[i] = c.schema.Columns[ci]
		}
		w.valEnc = c.value.rec.NewEncoder(cols)
	}
	if c.key != nil && c.key.name != "raw" {
		cols := make([]types.Column, len(c.keyCols))
		for i, ci := range c.keyCols {
			cols[i] = c.schema.Columns[ci]
		}
		w.keyEnc = c.key.rec.NewEncoder(cols)
	}
	w.fixed = -1
	return w, nil
}

func (s *Sink) clientOpts(extra ...kgo.Opt) []kgo.Opt {
	// Topics are created on first write where the broker allows it.
	opts := append([]kgo.Opt{kgo.AllowAutoTopicCreation()}, s.cfg.clientOpts...)
	switch s.cfg.partitioner {
	case partFixed:
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	case partRoundRobin:
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	}
	return append(opts, extra...)
}

// writer encodes rows into records; the plain sink produces them at once.
type writer struct {
	cfg                  *config
	subtask, parallelism int
	valEnc, keyEnc       interface {
		Encode([]byte, types.RowKind, []types.Value) ([]byte, error)
	}
	valRow, keyRow []types.Value
	fixed          int32 // 'fixed' partitioner: the partition; -1 until known

	cl     *kgo.Client
	mu     sync.Mutex
	errs   error // the first failed produce
	closed bool
}

func (w *writer) fail(err error) error {
	return fmt.Errorf("kafka sink %s (topic %s): %w", w.cfg.table, w.cfg.topics[0], err)
}

func (w *writer) connect(s *Sink) error {
	if w.cl != nil {
		return nil
	}
	cl, err := kgo.NewClient(s.clientOpts()...)
	if err != nil {
		return w.fail(err)
	}
	w.cl = cl
	return nil
}

// partition resolves the 'fixed' partitioner's partition: subtask modulo
// the topic's partitions.
func (w *writer) partition(ctx context.Context, cl *kgo.Client) (int32, error) {
	if w.cfg.partitioner != partFixed {
		return 0, nil
	}
	if w.fixed >= 0 {
		return w.fixed, nil
	}
	td, err := kadm.NewClient(cl).ListTopics(ctx, w.cfg.topics[0])
	if err == nil {
		err = td.Error()
	}
	if err != nil {
		return 0, w.fail(fmt.Errorf("list partitions: %w", err))
	}
	n := len(td[w.cfg.topics[0]].Partitions)
	if n == 0 {
		return 0, w.fail(fmt.Errorf("topic has no partitions"))
	}
	w.fixed = int32(w.subtask % n)
	return w.fixed, nil
}

// span is a part of a buffer, [off, end); off < 0 for none (nil).
type span struct{ off, end int }

// bytesIn returns the span's bytes in buf, nil for none.
func (sp span) bytesIn(buf []byte) []byte {
	if sp.off < 0 {
		return nil
	}
	if sp.off == sp.end {
		return []byte{} // empty, not none
	}
	return buf[sp.off:sp.end:sp.end]
}

// bufRec is an encoded record whose key and value are spans of a buffer.
type bufRec struct {
	key, value span
	ts         int64 // milliseconds; with hasTS
	hasTS      bool
	headers    []kgo.RecordHeader
}

// appendRecord encodes a row's key and value at the end of buf and returns
// buf and the record; false for a row the sink drops (upsert-kafka's -U).
func (w *writer) appendRecord(buf []byte, kind types.RowKind, row []types.Value) ([]byte, bufRec, bool, error) {
	c := w.cfg
	r := bufRec{key: span{-1, -1}, value: span{-1, -1}}
	if c.upsert && kind == types.UpdateBefore {
		return buf, r, false, nil
	}
	if c.key != nil {
		for i, ci := range c.keyCols {
			w.keyRow[i] = row[ci]
		}
		var err error
		at := len(buf)
		if c.key.name == "raw" {
			var null bool
			buf, null, err = appendRaw(buf, w.keyRow[0])
			if !null {
				r.key = span{at, len(buf)}
			}
		} else {
			buf, err = w.keyEnc.Encode(buf, types.Insert, w.keyRow)
			r.key = span{at, len(buf)}
		}
		if err != nil {
			return buf, r, false, fmt.Errorf("key: %w", err)
		}
	}
	if len(c.meta) > 0 {
		var meta kgo.Record
		writeMetadata(&meta, row, c.meta)
		r.headers = meta.Headers
		if !meta.Timestamp.IsZero() {
			r.ts, r.hasTS = meta.Timestamp.UnixMilli(), true
		}
	}
	if c.upsert && kind == types.Delete {
		return buf, r, true, nil // a tombstone
	}
	for i, ci := range c.valCols {
		w.valRow[i] = row[ci]
	}
	var err error
	at := len(buf)
	if c.value.name == "raw" {
		if kind != types.Insert {
			return buf, r, false, fmt.Errorf("format 'raw' accepts only inserts, got a %s row", kind)
		}
		var null bool
		buf, null, err = appendRaw(buf, w.valRow[0])
		if !null {
			r.value = span{at, len(buf)}
		}
	} else {
		if c.upsert {
			kind = types.Insert
		}
		buf, err = w.valEnc.Encode(buf, kind, w.valRow)
		r.value = span{at, len(buf)}
	}
	return buf, r, err == nil, err
}

// record encodes a row as a record of its own; nil for a row the sink
// drops (upsert-kafka's -U).
func (w *writer) record(kind types.RowKind, row []types.Value) (*kgo.Record, error) {
	buf, br, ok, err := w.appendRecord(nil, kind, row)
	if !ok || err != nil {
		return nil, err
	}
	r := &kgo.Record{Topic: w.cfg.topics[0], Partition: w.fixed, Key: br.key.bytesIn(buf), Value: br.value.bytesIn(buf), Headers: br.headers}
	if br.hasTS {
		r.Timestamp = time.UnixMilli(br.ts)
	}
	return r, nil
}

// appendRaw appends a STRING for format 'raw'; true for NULL (nothing
// appended).
func appendRaw(buf []byte, v types.Value) ([]byte, bool, error) {
	if v.IsNull() {
		return buf, true, nil
	}
	if v.Kind() != types.KindVarchar {
		return buf, false, fmt.Errorf("format 'raw' needs a STRING, got %s", v.Kind())
	}
	return append(buf, v.Str()...), false, nil
}

// Write produces the batch's rows (asynchronously; Flush waits).
func (w *writer) Write(b *types.Batch) error {
	if err := w.err(); err != nil {
		return err
	}
	ctx := context.Background()
	p, err := w.partition(ctx, w.cl)
	if err != nil {
		return err
	}
	w.fixed = p
	for i := range b.Len() {
		r, err := w.record(b.Kinds[i], b.Row(i))
		if err != nil {
			return w.fail(err)
		}
		if r != nil {
			w.cl.Produce(ctx, r, w.done)
		}
	}
	return nil
}

func (w *writer) done(_ *kgo.Record, err error) {
	if err != nil {
		w.mu.Lock()
		if w.errs == nil {
			w.errs = err
		}
		w.mu.Unlock()
	}
}

func (w *writer) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.errs != nil {
		return w.fail(fmt.Errorf("produce: %w", w.errs))
	}
	return nil
}

// Flush waits until every record produced so far is acknowledged (at a
// checkpoint: at-least-once); with 'none' it does not wait.
func (w *writer) Flush() error {
	if w.cfg.guarantee == deliveryNone {
		return w.err()
	}
	return w.flush()
}

func (w *writer) flush() error {
	if err := w.cl.Flush(context.Background()); err != nil {
		return w.fail(err)
	}
	return w.err()
}

// Close flushes and closes the client.
func (w *writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.flush()
	w.cl.Close()
	return err
}

// txnRecords is the records of one transaction: version 2, the subtask,
// the checkpoint id, then per record the key and value (length+1, 0 for
// none), a flag byte (1: a timestamp follows, 2: headers follow), the
// timestamp in milliseconds (varint) and the headers (count, then key and
// value as the key and value). Version 1 has key and value only.
type txnRecords struct {
	subtask int
	id      int64
	recs    []txnRec
}

// txnRec is one record of a transaction.
type txnRec struct {
	key, value []byte
	ts         int64 // milliseconds; with hasTS
	hasTS      bool
	headers    []kgo.RecordHeader
}

func appendPart(b, part []byte) []byte {
	if part == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(part))+1)
	return append(b, part...)
}

func (t *txnRecords) encode() []byte {
	size := 32
	for _, r := range t.recs {
		size += len(r.key) + len(r.value) + 24
	}
	b := make([]byte, 1, size)
	b[0] = 2
	b = binary.AppendUvarint(b, uint64(t.subtask))
	b = binary.AppendUvarint(b, uint64(t.id))
	b = binary.AppendUvarint(b, uint64(len(t.recs)))
	for _, r := range t.recs {
		b = appendPart(b, r.key)
		b = appendPart(b, r.value)
		var flags byte
		if r.hasTS {
			flags |= 1
		}
		if len(r.headers) > 0 {
			flags |= 2
		}
		b = append(b, flags)
		if r.hasTS {
			b = binary.AppendVarint(b, r.ts)
		}
		if len(r.headers) > 0 {
			b = binary.AppendUvarint(b, uint64(len(r.headers)))
			for _, h := range r.headers {
				b = appendPart(b, []byte(h.Key))
				b = appendPart(b, h.Value)
			}
		}
	}
	return b
}

func decodeTxn(b []byte) (*txnRecords, error) {
	bad := fmt.Errorf("kafka transaction: damaged (%d bytes)", len(b))
	if len(b) == 0 || (b[0] != 1 && b[0] != 2) {
		return nil, bad
	}
	version := b[0]
	i := 1
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return 0, false
		}
		i += n
		return v, true
	}
	s, ok1 := uv()
	id, ok2 := uv()
	n, ok3 := uv()
	if !ok1 || !ok2 || !ok3 || n > uint64(len(b)) {
		return nil, bad
	}
	part := func() ([]byte, bool) {
		l, ok := uv()
		if !ok || l > uint64(len(b)-i)+1 {
			return nil, false
		}
		if l == 0 {
			return nil, true
		}
		p := b[i : i+int(l)-1 : i+int(l)-1]
		i += int(l) - 1
		return p, true
	}
	t := &txnRecords{subtask: int(s), id: int64(id), recs: make([]txnRec, n)}
	for k := range n {
		r := &t.recs[k]
		var ok1, ok2 bool
		r.key, ok1 = part()
		r.value, ok2 = part()
		if !ok1 || !ok2 {
			return nil, bad
		}
		if version == 1 {
			continue
		}
		if i >= len(b) {
			return nil, bad
		}
		flags := b[i]
		i++
		if flags&1 != 0 {
			ts, w := binary.Varint(b[i:])
			if w <= 0 {
				return nil, bad
			}
			i += w
			r.ts, r.hasTS = ts, true
		}
		if flags&2 != 0 {
			nh, ok := uv()
			if !ok || nh > uint64(len(b)-i) {
				return nil, bad
			}
			for range nh {
				hk, ok1 := part()
				hv, ok2 := part()
				if !ok1 || !ok2 {
					return nil, bad
				}
				r.headers = append(r.headers, kgo.RecordHeader{Key: string(hk), Value: hv})
			}
		}
	}
	if i != len(b) {
		return nil, bad
	}
	return t, nil
}

func (s txnSink) txnID(subtask int) string { return fmt.Sprintf("%s-%d", s.cfg.txnPrefix, subtask) }
func (s txnSink) marker(subtask int) string {
	return fmt.Sprintf("%s-marker-%d", s.cfg.txnPrefix, subtask)
}

// Location names the output for messages: the topic and the
// transactional ids that write it.
func (s txnSink) Location() string {
	return fmt.Sprintf("kafka topic %s (transactional ids %s-*)", s.cfg.topics[0], s.cfg.txnPrefix)
}

// Claim does not lock anything: Kafka itself keeps one writer per
// transactional id, fencing an older producer when a newer one starts
// (the older run's next commit fails).
func (s txnSink) Claim(string) (func() error, error) {
	return func() error { return nil }, nil
}

// Committed returns the highest checkpoint whose records a subtask of any
// earlier run committed: the largest marker over the marker groups of the
// transactional id prefix, whatever parallelism wrote them. Each marker is
// read settled: a producer with the subtask's transactional id starts
// first, which aborts what a dead run left open and waits for a commit
// that was under way.
func (s txnSink) Committed() (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(s.clientOpts()...)
	if err != nil {
		return 0, fmt.Errorf("kafka: %w", err)
	}
	defer cl.Close()
	groups, err := kadm.NewClient(cl).ListGroups(ctx)
	if err != nil {
		return 0, fmt.Errorf("kafka: list groups: %w", err)
	}
	prefix := s.cfg.txnPrefix + "-marker-"
	var highest int64
	for _, g := range groups.Groups() {
		n, ok := strings.CutPrefix(g, prefix)
		if !ok {
			continue
		}
		subtask, err := strconv.Atoi(n)
		if err != nil || subtask < 0 {
			continue
		}
		id, err := s.settledID(ctx, subtask)
		if err != nil {
			return 0, fmt.Errorf("kafka: subtask %d: %w", subtask, err)
		}
		highest = max(highest, id)
	}
	return highest, nil
}

// settledID returns subtask's marker once no transaction of its
// transactional id is open.
func (s txnSink) settledID(ctx context.Context, subtask int) (int64, error) {
	cl, err := s.txnClient(subtask)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	if _, _, err := cl.ProducerID(ctx); err != nil {
		return 0, fmt.Errorf("start transactional id %s: %w", s.txnID(subtask), err)
	}
	return s.committedID(ctx, cl, subtask)
}

// Open opens an exactly-once writer.
func (s txnSink) Open(subtask, parallelism int) (connector.SinkWriter, error) {
	w, err := s.open(subtask, parallelism)
	if err != nil {
		return nil, err
	}
	return &txnWriter{writer: w, sink: s, last: -1, committed: -1}, nil
}

// Open of the plain sink connects its client.
func (s *Sink) openPlain(subtask, parallelism int) (connector.SinkWriter, error) {
	w, err := s.open(subtask, parallelism)
	if err != nil {
		return nil, err
	}
	return w, w.connect(s)
}

// committedID returns the marker of subtask's transactions: the id of
// the last one committed, or -1.
func (s txnSink) committedID(ctx context.Context, cl *kgo.Client, subtask int) (int64, error) {
	resp, err := kadm.NewClient(cl).FetchOffsets(ctx, s.marker(subtask))
	if err == nil {
		err = resp.Error()
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		return -1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read marker group %s: %w", s.marker(subtask), err)
	}
	if o, ok := resp.Lookup(s.cfg.topics[0], 0); ok && o.Err == nil {
		return o.At, nil
	}
	return -1, nil
}

// commit writes t's records and its marker in one Kafka transaction.
func (s txnSink) commit(ctx context.Context, cl *kgo.Client, t *txnRecords, partition int32) error {
	if len(t.recs) == 0 {
		return nil
	}
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	var mu sync.Mutex
	var perr error
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if perr == nil {
				perr = err
			}
			mu.Unlock()
		}
	}
	// One allocation for the records; those without a timestamp of their
	// own get the time of the commit.
	now := time.Now()
	rs := make([]kgo.Record, len(t.recs))
	for i, tr := range t.recs {
		r := &rs[i]
		r.Topic, r.Key, r.Value, r.Partition, r.Headers, r.Timestamp = s.cfg.topics[0], tr.key, tr.value, partition, tr.headers, now
		if tr.hasTS {
			r.Timestamp = time.UnixMilli(tr.ts)
		}
		cl.Produce(ctx, r, done)
	}
	err := cl.Flush(ctx)
	if err == nil {
		err = perr
	}
	if err == nil {
		err = s.addMarker(ctx, cl, t)
	}
	if err != nil {
		if aerr := cl.EndTransaction(ctx, kgo.TryAbort); aerr != nil {
			return fmt.Errorf("%w (and abort: %v)", err, aerr)
		}
		return err
	}
	return cl.EndTransaction(ctx, kgo.TryCommit)
}

// addMarker commits offset t.id for the marker group inside the open
// transaction.
func (s txnSink) addMarker(ctx context.Context, cl *kgo.Client, t *txnRecords) error {
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return err
	}
	group := s.marker(t.subtask)
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = s.txnID(t.subtask), pid, epoch, group
	aresp, err := add.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("add marker to transaction: %w", err)
	}
	if err := kerr.ErrorForCode(aresp.ErrorCode); err != nil {
		return fmt.Errorf("add marker to transaction: %w", err)
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = s.txnID(t.subtask), group, pid, epoch, -1
	td, err := kadm.NewClient(cl).ListTopics(ctx, s.cfg.topics[0])
	if err == nil {
		err = td.Error()
	}
	if err != nil {
		return fmt.Errorf("commit marker: topic id: %w", err)
	}
	tp := kmsg.NewTxnOffsetCommitRequestTopic()
	tp.Topic, tp.TopicID = s.cfg.topics[0], td[s.cfg.topics[0]].ID
	p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	p.Partition, p.Offset, p.LeaderEpoch = 0, t.id, -1
	tp.Partitions = append(tp.Partitions, p)
	req.Topics = append(req.Topics, tp)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("commit marker: %w", err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return fmt.Errorf("commit marker: %w", err)
			}
		}
	}
	return nil
}

// txnClient returns a transactional producer for subtask's id; starting
// it aborts what an earlier producer with that id left open.
func (s txnSink) txnClient(subtask int) (*kgo.Client, error) {
	return kgo.NewClient(s.clientOpts(kgo.TransactionalID(s.txnID(subtask)), kgo.RequireStableFetchOffsets())...)
}

// Recover writes the restored checkpoint's transactions that did not
// commit before the failure, subtask by subtask in checkpoint order, and
// skips those the marker shows committed.
func (s txnSink) Recover(txns [][]byte) error {
	bySubtask := map[int][]*txnRecords{}
	for k, b := range txns {
		t, err := decodeTxn(b)
		if err != nil {
			return fmt.Errorf("kafka sink %s: recover transaction %d: %w", s.cfg.table, k, err)
		}
		bySubtask[t.subtask] = append(bySubtask[t.subtask], t)
	}
	subtasks := make([]int, 0, len(bySubtask))
	for st := range bySubtask {
		subtasks = append(subtasks, st)
	}
	sort.Ints(subtasks)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, st := range subtasks {
		ts := bySubtask[st]
		sort.Slice(ts, func(i, j int) bool { return ts[i].id < ts[j].id })
		if err := s.recoverSubtask(ctx, st, ts); err != nil {
			return fmt.Errorf("kafka sink %s: recover subtask %d: %w", s.cfg.table, st, err)
		}
	}
	return nil
}

func (s txnSink) recoverSubtask(ctx context.Context, subtask int, ts []*txnRecords) error {
	cl, err := s.txnClient(subtask)
	if err != nil {
		return err
	}
	defer cl.Close()
	done, err := s.committedID(ctx, cl, subtask)
	if err != nil {
		return err
	}
	w := &writer{cfg: s.cfg, subtask: subtask, fixed: -1}
	p, err := w.partition(ctx, cl)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.id <= done {
			continue
		}
		if err := s.commit(ctx, cl, t, p); err != nil {
			return fmt.Errorf("commit checkpoint %d: %w", t.id, err)
		}
	}
	return nil
}

// txnWriter keeps the records of a checkpoint until it completes. Their
// keys and values are encoded one after another into buf. For
// upsert-kafka a key's later record replaces its earlier one in the same
// checkpoint: the transaction carries each key's last record, which is
// what a read-committed consumer of the topic ends up with anyway.
type txnWriter struct {
	*writer
	sink      txnSink
	buf       []byte              // keys and values of pending
	pending   []bufRec            // encoded since the last PreCommit
	byKey     map[string]*keySlot // upsert-kafka: each key's record in pending
	gen       int64               // the current transaction's number, for byKey
	recs      []txnRec            // scratch of PreCommit
	last      int64               // the last PreCommit's checkpoint id
	committed int64               // the last checkpoint this writer committed
}

// Write encodes the rows and keeps them for the next PreCommit.
func (w *txnWriter) Write(b *types.Batch) error {
	for i := range b.Len() {
		var r bufRec
		var ok bool
		var err error
		w.buf, r, ok, err = w.appendRecord(w.buf, b.Kinds[i], b.Row(i))
		if err != nil {
			return w.fail(err)
		}
		if !ok {
			continue
		}
		if w.cfg.upsert && r.key.off >= 0 {
			key := w.buf[r.key.off:r.key.end]
			switch slot := w.byKey[string(key)]; {
			case slot != nil && slot.gen == w.gen:
				w.pending[slot.index] = r
				continue
			case slot != nil:
				slot.gen, slot.index = w.gen, len(w.pending)
			default:
				if w.byKey == nil {
					w.byKey = map[string]*keySlot{}
				}
				w.byKey[string(key)] = &keySlot{gen: w.gen, index: len(w.pending)}
			}
		}
		w.pending = append(w.pending, r)
	}
	return nil
}

// take returns the pending records as a transaction of checkpoint id and
// starts a new one. The transaction's records point into buf until the
// next Write.
func (w *txnWriter) take(id int64) *txnRecords {
	w.recs = w.recs[:0]
	for _, r := range w.pending {
		w.recs = append(w.recs, txnRec{key: r.key.bytesIn(w.buf), value: r.value.bytesIn(w.buf), ts: r.ts, hasTS: r.hasTS, headers: r.headers})
	}
	t := &txnRecords{subtask: w.subtask, id: id, recs: w.recs}
	// The keys stay in byKey (so a key seen again is not allocated
	// again), unless they are many more than this transaction's.
	if len(w.byKey) > 2*len(w.pending)+1024 {
		clear(w.byKey)
	}
	w.buf, w.pending = w.buf[:0], w.pending[:0]
	w.gen++
	return t
}

// keySlot is where a key's record is in pending, if gen is the current
// transaction's.
type keySlot struct {
	gen   int64
	index int
}

// Flush does nothing: the records become visible when their checkpoint
// completes.
func (w *txnWriter) Flush() error { return nil }

// PreCommit returns the records written since the last PreCommit, for
// checkpointID; the checkpoint stores them.
func (w *txnWriter) PreCommit(checkpointID int64) ([]byte, error) {
	w.last = checkpointID
	return w.take(checkpointID).encode(), nil
}

// Commit writes a pre-committed transaction and its marker in one Kafka
// transaction; one the marker shows committed is skipped.
func (w *txnWriter) Commit(txn []byte) error {
	t, err := decodeTxn(txn)
	if err != nil {
		return w.fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := w.connectTxn(ctx); err != nil {
		return err
	}
	if t.id <= w.committed {
		return nil
	}
	p, err := w.partition(ctx, w.cl)
	if err != nil {
		return err
	}
	if err := w.sink.commit(ctx, w.cl, t, p); err != nil {
		return w.fail(fmt.Errorf("commit checkpoint %d: %w", t.id, err))
	}
	if len(t.recs) > 0 {
		w.committed = t.id
	}
	return nil
}

func (w *txnWriter) connectTxn(context.Context) error {
	if w.cl != nil {
		return nil
	}
	cl, err := w.sink.txnClient(w.subtask)
	if err != nil {
		return w.fail(err)
	}
	w.cl = cl
	return nil
}

// Close ends a job that finished: the records after the last checkpoint
// are committed as the transaction of the checkpoint after it.
func (w *txnWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	if len(w.pending) > 0 {
		t := w.take(max(w.last+1, 1))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		err = w.connectTxn(ctx)
		if err == nil && w.last < 0 {
			// A run without checkpoints: its id goes above the marker,
			// which never moves back (recovery compares with it).
			var done int64
			done, err = w.sink.committedID(ctx, w.cl, w.subtask)
			t.id = max(t.id, done+1)
		}
		var p int32
		if err == nil {
			p, err = w.partition(ctx, w.cl)
		}
		if err == nil {
			err = w.sink.commit(ctx, w.cl, t, p)
		}
		if err != nil {
			err = w.fail(fmt.Errorf("commit at close: %w", err))
		}
	}
	if w.cl != nil {
		w.cl.Close()
	}
	return err
}

// Abort drops what was not pre-committed.
func (w *txnWriter) Abort() error {
	w.closed = true
	w.take(0)
	if w.cl != nil {
		w.cl.Close()
	}
	return nil
}
