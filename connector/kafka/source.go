package kafka

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/filesystem"
	"github.com/weir-sql/weir/types"
)

// Source is a kafka or upsert-kafka table read as a stream.
type Source struct {
	cfg *config
}

var (
	_ connector.ChangelogSource    = (*Source)(nil)
	_ connector.RescalableReader   = (*Reader)(nil)
	_ connector.Stats              = (*Reader)(nil)
	_ connector.SplitReader        = (*Reader)(nil)
	_ connector.SplitLister        = (*Reader)(nil)
	_ connector.CheckpointListener = (*Reader)(nil)
)

// NewSource is the 'kafka' source factory.
func NewSource(t *connector.Table, _ connector.Env) (connector.Source, error) {
	cfg, err := parseConfig(t, false, true)
	if err != nil {
		return nil, err
	}
	return &Source{cfg: cfg}, nil
}

// NewUpsertSource is the 'upsert-kafka' source factory.
func NewUpsertSource(t *connector.Table, _ connector.Env) (connector.Source, error) {
	cfg, err := parseConfig(t, true, true)
	if err != nil {
		return nil, err
	}
	return &Source{cfg: cfg}, nil
}

// Bounded reports whether 'scan.bounded.mode' ends the read.
func (s *Source) Bounded() bool { return s.cfg.boundMode != modeUnbounded }

// ChangelogMode is insert-only but for debezium-json values, which yield
// every row kind, and upsert-kafka, an upsert changelog (+U, -D) that the
// planner normalizes (ChangelogNormalize).
func (s *Source) ChangelogMode() connector.ChangelogMode {
	if s.cfg.upsert {
		return connector.ModeUpsert
	}
	if s.cfg.value.name != "raw" && s.cfg.value.rec.IsChangelog() {
		return connector.ModeRetract
	}
	return connector.ModeInsertOnly
}

// Open returns subtask's reader; it connects on its first Next or Position.
func (s *Source) Open(subtask, parallelism int) (connector.SourceReader, error) {
	c := s.cfg
	r := &Reader{cfg: c, subtask: subtask, parallelism: parallelism, parts: map[tp]partState{}}
	r.row = make([]types.Value, c.schema.Len())
	r.valCols = make([]types.Column, len(c.valCols))
	for i, ci := range c.valCols {
		r.valCols[i] = c.schema.Columns[ci]
	}
	if c.value.name != "raw" {
		r.valDec = c.value.rec.NewDecoder(r.valCols)
	}
	if c.key != nil && c.key.name != "raw" {
		cols := make([]types.Column, len(c.keyCols))
		for i, ci := range c.keyCols {
			cols[i] = c.schema.Columns[ci]
		}
		r.keyDec = c.key.rec.NewDecoder(cols)
	}
	for i, col := range c.schema.Columns {
		if col.Type.NotNull {
			r.notNull = append(r.notNull, i)
		}
	}
	return r, nil
}

// owner returns the subtask that reads a partition: the topic's hash
// picks where its partition 0 goes, the others follow round-robin.
func owner(topic string, partition int32, parallelism int) int {
	h := fnv.New32a()
	h.Write([]byte(topic))
	return int((uint64(h.Sum32())%uint64(parallelism) + uint64(partition)) % uint64(parallelism))
}

// Reader reads the partitions that belong to one subtask.
type Reader struct {
	cfg         *config
	subtask     int
	parallelism int

	cl   *kgo.Client
	adm  *kadm.Client
	pool recordPool // the slices cl decodes fetched records into

	parts    map[tp]partState // owned partitions, known so far
	restored map[tp]partState // positions from Seek/SeekAll; nil if none
	inited   bool
	lastDisc time.Time

	buf  []*kgo.Record // fetched, not yet emitted
	done bool

	// What the last Next read (connector.SplitReader): a partition is a
	// split, named "topic-partition"; names are made once per partition.
	lastSplit string
	finishedP []string
	names     map[tp]string

	row     []types.Value
	valCols []types.Column
	valDec  *filesystem.RecordDecoder
	keyDec  *filesystem.RecordDecoder
	notNull []int
	skipped int64
	headers types.RowBuilder // builds the 'headers' metadata column
}

// LastSplit implements connector.SplitReader: each partition is a split,
// named "topic-partition"; a partition of a bounded read finishes at its
// end offset.
func (r *Reader) LastSplit() (string, []string) { return r.lastSplit, r.finishedP }

// SplitCount implements connector.SplitLister: the partitions owned so far
// (found at the first Next, then by partition discovery; never fewer).
func (r *Reader) SplitCount() int { return len(r.parts) }

// AssignedSplits implements connector.SplitLister: the owned partitions
// that have not reached the end of a bounded read.
func (r *Reader) AssignedSplits(dst []string) []string {
	for k, st := range r.parts {
		if st.end >= 0 && st.next >= st.end {
			continue
		}
		dst = append(dst, r.splitName(k))
	}
	return dst
}

func (r *Reader) splitName(k tp) string {
	if n, ok := r.names[k]; ok {
		return n
	}
	if r.names == nil {
		r.names = map[tp]string{}
	}
	n := fmt.Sprintf("%s-%d", k.topic, k.partition)
	r.names[k] = n
	return n
}

// Skipped returns the number of malformed records skipped.
func (r *Reader) Skipped() int64 { return r.skipped }

// recordPool lends the client the slices it decodes fetched records
// into; the reader recycles each record once decoded, so that a slice
// comes back when all its records have, and is reused instead of a new
// one being allocated (and zeroed) per fetched batch.
type recordPool struct {
	mu   sync.Mutex
	free [][]kgo.Record
}

var _ kgo.PoolRecords = (*recordPool)(nil)

// GetRecords implements kgo.PoolRecords.
func (p *recordPool) GetRecords(n int) []kgo.Record {
	p.mu.Lock()
	for i := len(p.free) - 1; i >= 0; i-- {
		if s := p.free[i]; cap(s) >= n {
			p.free[i] = p.free[len(p.free)-1]
			p.free = p.free[:len(p.free)-1]
			p.mu.Unlock()
			return s[:0]
		}
	}
	p.mu.Unlock()
	return make([]kgo.Record, 0, n)
}

// PutRecords implements kgo.PoolRecords; it keeps a few slices.
func (p *recordPool) PutRecords(s []kgo.Record) {
	p.mu.Lock()
	if len(p.free) < 16 {
		p.free = append(p.free, s)
	}
	p.mu.Unlock()
}

func (r *Reader) fail(topic string, partition int32, offset int64, err error) error {
	return fmt.Errorf("kafka source %s: topic %s partition %d offset %d: %w", r.cfg.table, topic, partition, offset, err)
}

// init connects and resolves the starting (and for a bounded read, the
// ending) offset of every owned partition.
func (r *Reader) init(ctx context.Context) error {
	if r.inited {
		return nil
	}
	opts := append([]kgo.Opt{kgo.KeepControlRecords(), kgo.WithPools(&r.pool)}, r.cfg.clientOpts...)
	if !r.cfg.readUncommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("kafka source %s: %w", r.cfg.table, err)
	}
	r.cl, r.adm = cl, kadm.NewClient(cl)
	r.inited = true
	if r.restored != nil {
		// Partitions of the restored positions continue where they were;
		// partitions created since start at their beginning.
		for k, st := range r.restored {
			if owner(k.topic, k.partition, r.parallelism) == r.subtask {
				r.parts[k] = st
			}
		}
		r.consume(r.parts)
		if r.cfg.boundMode != modeUnbounded {
			return nil
		}
		return r.discover(ctx, true)
	}
	owned, err := r.listOwned(ctx)
	if err != nil {
		return err
	}
	if len(owned) == 0 && r.cfg.boundMode != modeUnbounded && r.subtask == 0 && r.cfg.pattern == nil {
		if err := r.checkTopicsExist(ctx); err != nil {
			return err
		}
	}
	starts, err := r.startOffsets(ctx, owned)
	if err != nil {
		return err
	}
	ends, err := r.endOffsets(ctx, owned)
	if err != nil {
		return err
	}
	fresh := map[tp]partState{}
	for _, k := range owned {
		st := partState{next: starts[k], end: -1}
		if ends != nil {
			st.end = ends[k]
		}
		fresh[k] = st
		r.parts[k] = st
	}
	r.consume(fresh)
	r.lastDisc = time.Now()
	return nil
}

func (r *Reader) checkTopicsExist(ctx context.Context) error {
	td, err := r.adm.ListTopics(ctx, r.cfg.topics...)
	if err != nil {
		return fmt.Errorf("kafka source %s: list topics: %w", r.cfg.table, err)
	}
	for _, t := range r.cfg.topics {
		if d, ok := td[t]; !ok || d.Err != nil {
			return fmt.Errorf("kafka source %s: topic %s does not exist", r.cfg.table, t)
		}
	}
	return nil
}

// listOwned lists the partitions of the table's topics that this subtask
// reads.
func (r *Reader) listOwned(ctx context.Context) ([]tp, error) {
	td, err := r.adm.ListTopics(ctx, r.cfg.topics...)
	if r.cfg.pattern != nil {
		td, err = r.adm.ListTopics(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("kafka source %s: list topics: %w", r.cfg.table, err)
	}
	var out []tp
	for name, d := range td {
		if d.Err != nil || d.IsInternal || (r.cfg.pattern != nil && !r.cfg.pattern.MatchString(name)) {
			continue
		}
		for p := range d.Partitions {
			if owner(name, p, r.parallelism) == r.subtask {
				out = append(out, tp{name, p})
			}
		}
	}
	return out, nil
}

func topicsOf(parts []tp) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range parts {
		if !seen[k.topic] {
			seen[k.topic] = true
			out = append(out, k.topic)
		}
	}
	return out
}

// listed turns listed offsets into a map for parts, failing on errors.
func (r *Reader) listed(what string, lo kadm.ListedOffsets, err error, parts []tp) (map[tp]int64, error) {
	if err == nil {
		err = lo.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("kafka source %s: list %s offsets: %w", r.cfg.table, what, err)
	}
	out := make(map[tp]int64, len(parts))
	for _, k := range parts {
		o, ok := lo.Lookup(k.topic, k.partition)
		if !ok {
			return nil, fmt.Errorf("kafka source %s: no %s offset for topic %s partition %d", r.cfg.table, what, k.topic, k.partition)
		}
		out[k] = o.Offset
	}
	return out, nil
}

func (r *Reader) startOffsets(ctx context.Context, parts []tp) (map[tp]int64, error) {
	if len(parts) == 0 {
		return map[tp]int64{}, nil
	}
	topics := topicsOf(parts)
	earliest := func() (map[tp]int64, error) {
		lo, err := r.adm.ListStartOffsets(ctx, topics...)
		return r.listed("start", lo, err, parts)
	}
	latest := func() (map[tp]int64, error) {
		lo, err := r.adm.ListEndOffsets(ctx, topics...)
		return r.listed("end", lo, err, parts)
	}
	switch r.cfg.startMode {
	case modeEarliest:
		return earliest()
	case modeLatest:
		return latest()
	case modeTimestamp:
		lo, err := r.adm.ListOffsetsAfterMilli(ctx, r.cfg.startTS, topics...)
		return r.listed("timestamp", lo, err, parts)
	case modeSpecific:
		out, err := earliest()
		if err != nil {
			return nil, err
		}
		for _, k := range parts {
			if o, ok := r.cfg.startOffsets[k.partition]; ok {
				out[k] = o
			}
		}
		return out, nil
	}
	// group-offsets: the group's committed offsets, else auto.offset.reset.
	resp, err := r.adm.FetchOffsets(ctx, r.cfg.group)
	if err == nil {
		err = resp.Error()
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		resp, err = nil, nil // no commits yet
	}
	if err != nil {
		return nil, fmt.Errorf("kafka source %s: fetch offsets of group %s: %w", r.cfg.table, r.cfg.group, err)
	}
	var fallback map[tp]int64
	out := make(map[tp]int64, len(parts))
	for _, k := range parts {
		if o, ok := resp.Lookup(k.topic, k.partition); ok && o.At >= 0 {
			out[k] = o.At
			continue
		}
		if r.cfg.autoReset == "none" {
			return nil, fmt.Errorf("kafka source %s: group %s has no committed offset for topic %s partition %d and 'properties.auto.offset.reset' is 'none'", r.cfg.table, r.cfg.group, k.topic, k.partition)
		}
		if fallback == nil {
			if r.cfg.autoReset == "earliest" {
				fallback, err = earliest()
			} else {
				fallback, err = latest()
			}
			if err != nil {
				return nil, err
			}
		}
		out[k] = fallback[k]
	}
	return out, nil
}

// endOffsets returns where a bounded read stops, or nil when unbounded.
func (r *Reader) endOffsets(ctx context.Context, parts []tp) (map[tp]int64, error) {
	if r.cfg.boundMode == modeUnbounded {
		return nil, nil
	}
	if len(parts) == 0 {
		return map[tp]int64{}, nil
	}
	topics := topicsOf(parts)
	latest := func() (map[tp]int64, error) {
		if r.cfg.readUncommitted {
			lo, err := r.adm.ListEndOffsets(ctx, topics...)
			return r.listed("end", lo, err, parts)
		}
		lo, err := r.adm.ListCommittedOffsets(ctx, topics...)
		return r.listed("last stable", lo, err, parts)
	}
	switch r.cfg.boundMode {
	case modeTimestamp:
		lo, err := r.adm.ListOffsetsAfterMilli(ctx, r.cfg.boundTS, topics...)
		return r.listed("timestamp", lo, err, parts)
	case modeSpecific:
		out, err := latest()
		if err != nil {
			return nil, err
		}
		for _, k := range parts {
			if o, ok := r.cfg.boundOffsets[k.partition]; ok {
				out[k] = o
			}
		}
		return out, nil
	}
	return latest()
}

// consume starts fetching parts from their next offsets.
func (r *Reader) consume(parts map[tp]partState) {
	add := map[string]map[int32]kgo.Offset{}
	for k, st := range parts {
		if st.end >= 0 && st.next >= st.end {
			continue
		}
		if add[k.topic] == nil {
			add[k.topic] = map[int32]kgo.Offset{}
		}
		add[k.topic][k.partition] = kgo.NewOffset().At(st.next)
	}
	if len(add) > 0 {
		r.cl.AddConsumePartitions(add)
		r.cl.ForceMetadataRefresh() // new partitions are fetched at once
	}
}

// discover adds partitions created since the last look; they are read from
// their beginning. force looks regardless of the interval.
func (r *Reader) discover(ctx context.Context, force bool) error {
	if r.cfg.boundMode != modeUnbounded || (!force && (r.cfg.discovery == 0 || time.Since(r.lastDisc) < r.cfg.discovery)) {
		return nil
	}
	r.lastDisc = time.Now()
	owned, err := r.listOwned(ctx)
	if err != nil {
		return err
	}
	var added []tp
	for _, k := range owned {
		if _, ok := r.parts[k]; !ok {
			added = append(added, k)
		}
	}
	if len(added) == 0 {
		return nil
	}
	lo, err := r.adm.ListStartOffsets(ctx, topicsOf(added)...)
	starts, err := r.listed("start", lo, err, added)
	if err != nil {
		return err
	}
	fresh := map[tp]partState{}
	for _, k := range added {
		fresh[k] = partState{next: starts[k], end: -1}
		r.parts[k] = fresh[k]
	}
	r.consume(fresh)
	return nil
}

// finished reports whether every owned partition of a bounded read is done.
func (r *Reader) finished() bool {
	if r.cfg.boundMode == modeUnbounded {
		return false
	}
	for _, st := range r.parts {
		if st.next < st.end {
			return false
		}
	}
	return true
}

// pollWait is how long Next waits for records when none are buffered.
const pollWait = 5 * time.Millisecond

// Next appends up to max rows; at the end of a bounded read it returns
// io.EOF.
func (r *Reader) Next(ctx context.Context, b *types.Batch, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := r.init(ctx); err != nil {
		return err
	}
	if r.finished() {
		return io.EOF
	}
	if err := r.discover(ctx, false); err != nil {
		return err
	}
	r.lastSplit, r.finishedP = "", r.finishedP[:0]
	if len(r.buf) == 0 {
		pctx, cancel := context.WithTimeout(ctx, pollWait)
		fs := r.cl.PollRecords(pctx, max)
		cancel()
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if ferr == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				ferr = fmt.Errorf("kafka source %s: fetch topic %s partition %d: %w", r.cfg.table, t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		fs.EachRecord(func(rec *kgo.Record) { r.buf = append(r.buf, rec) })
	}
	added := 0
	i := 0
	// The rows of one call come from one partition (connector.SplitReader):
	// the loop stops where the buffer moves on to another. The partition's
	// state is looked up when the partition changes and stored back once.
	var split tp
	var st partState
	inSplit := false
	for ; i < len(r.buf) && (added+2 <= max || added == 0); i++ {
		rec := r.buf[i]
		if !inSplit || rec.Partition != split.partition || rec.Topic != split.topic {
			k := tp{rec.Topic, rec.Partition}
			kst, ok := r.parts[k]
			if !ok || rec.Offset < kst.next || (kst.end >= 0 && rec.Offset >= kst.end) {
				continue // not ours, already read, or past the end
			}
			if inSplit {
				break
			}
			split, st, inSplit = k, kst, true
		} else if rec.Offset < st.next || (st.end >= 0 && rec.Offset >= st.end) {
			continue // already read, or past the end
		}
		st.next = rec.Offset + 1
		if st.end >= 0 && st.next >= st.end {
			r.cl.RemoveConsumePartitions(map[string][]int32{split.topic: {split.partition}})
			r.finishedP = append(r.finishedP, r.splitName(split))
		}
		if rec.Attrs.IsControl() {
			continue
		}
		n, err := r.decode(b, rec)
		if err != nil {
			if r.ignoreErrors() {
				r.skipped++
				continue
			}
			r.parts[split] = st
			r.buf = r.buf[i+1:]
			return r.fail(rec.Topic, rec.Partition, rec.Offset, err)
		}
		added += n
	}
	if inSplit {
		r.parts[split] = st
	}
	// Every record taken is done with (decoded values own their bytes):
	// its slot goes back to the pool the client decodes fetches into.
	for _, rec := range r.buf[:i] {
		rec.Recycle()
	}
	clear(r.buf[:i])
	r.buf = r.buf[i:]
	if added > 0 {
		r.lastSplit = r.splitName(split)
	}
	if len(r.buf) == 0 && r.finished() {
		return io.EOF
	}
	return nil
}

func (r *Reader) ignoreErrors() bool {
	if r.cfg.value.name != "raw" && r.cfg.value.rec.IgnoreParseErrors() {
		return true
	}
	return r.cfg.key != nil && r.cfg.key.name != "raw" && r.cfg.key.rec.IgnoreParseErrors()
}

// rawValue turns the bytes of a 'raw' record into a STRING (NULL for none).
func rawValue(b []byte) (types.Value, error) {
	if b == nil {
		return types.NullValue(), nil
	}
	if !utf8.Valid(b) {
		return types.Value{}, fmt.Errorf("raw value is not valid UTF-8")
	}
	return types.StringValue(string(b)), nil
}

// decode appends the rows of rec to b and returns how many.
func (r *Reader) decode(b *types.Batch, rec *kgo.Record) (int, error) {
	c := r.cfg
	// The key first: its columns are the same for every row of the record.
	var keyRow []types.Value
	if c.key != nil {
		switch {
		case rec.Key == nil:
			if c.upsert {
				return 0, fmt.Errorf("upsert-kafka record without a key")
			}
		case c.key.name == "raw":
			v, err := rawValue(rec.Key)
			if err != nil {
				return 0, fmt.Errorf("key: %w", err)
			}
			keyRow = []types.Value{v}
		default:
			n, err := r.keyDec.Decode(rec.Key)
			if err != nil {
				return 0, fmt.Errorf("key: %w", err)
			}
			if n == 0 {
				return 0, fmt.Errorf("key: empty record")
			}
			_, keyRow = r.keyDec.Row(0)
		}
	}
	if c.upsert {
		return r.decodeUpsert(b, rec, keyRow)
	}
	if rec.Value == nil {
		return 0, nil // a tombstone carries no row
	}
	if c.value.name == "raw" {
		v, err := rawValue(rec.Value)
		if err != nil {
			return 0, err
		}
		r.fill(rec, keyRow, []types.Value{v})
		if err := r.checkNotNull(); err != nil {
			return 0, err
		}
		b.Append(types.Insert, r.row)
		return 1, nil
	}
	n, err := r.valDec.Decode(rec.Value)
	if err != nil {
		return 0, err
	}
	for i := range n {
		kind, vals := r.valDec.Row(i)
		r.fill(rec, keyRow, vals)
		if err := r.checkNotNull(); err != nil {
			return 0, err
		}
		b.Append(kind, r.row)
	}
	return n, nil
}

// fill sets r.row from the key's and the value's columns and rec's
// metadata.
func (r *Reader) fill(rec *kgo.Record, keyRow, vals []types.Value) {
	clear(r.row)
	for i, ci := range r.cfg.valCols {
		r.row[ci] = vals[i]
	}
	for i, ci := range r.cfg.keyCols {
		if keyRow != nil {
			r.row[ci] = keyRow[i]
		}
	}
	if len(r.cfg.meta) > 0 {
		fillMetadata(r.row, r.cfg.meta, rec, &r.headers)
	}
}

func (r *Reader) checkNotNull() error {
	for _, c := range r.notNull {
		if r.row[c].IsNull() {
			return fmt.Errorf("column %s: NULL in a NOT NULL column", r.cfg.schema.Columns[c].Name)
		}
	}
	return nil
}

// decodeUpsert turns an upsert-kafka record into an upsert changelog
// row: a value is +U of its key's row, a tombstone -D of its key (the
// other columns NULL). The planner puts a ChangelogNormalize behind the
// source, which keeps every key's last row (in checkpointed state) and
// makes the retractions.
func (r *Reader) decodeUpsert(b *types.Batch, rec *kgo.Record, keyRow []types.Value) (int, error) {
	if rec.Value == nil {
		clear(r.row)
		for i, ci := range r.cfg.keyCols {
			r.row[ci] = keyRow[i]
		}
		b.Append(types.Delete, r.row)
		return 1, nil
	}
	var vals []types.Value
	if r.cfg.value.name == "raw" {
		v, err := rawValue(rec.Value)
		if err != nil {
			return 0, err
		}
		vals = []types.Value{v}
	} else {
		n, err := r.valDec.Decode(rec.Value)
		if err != nil {
			return 0, err
		}
		if n != 1 {
			return 0, fmt.Errorf("value: expected one row, got %d", n)
		}
		_, vals = r.valDec.Row(0)
	}
	r.fill(rec, keyRow, vals)
	if err := r.checkNotNull(); err != nil {
		return 0, err
	}
	b.Append(types.UpdateAfter, r.row)
	return 1, nil
}

// Position returns the next offset of every owned partition.
func (r *Reader) Position() ([]byte, error) {
	if !r.inited && r.restored == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := r.init(ctx); err != nil {
			return nil, err
		}
	}
	if !r.inited {
		own := map[tp]partState{}
		for k, st := range r.restored {
			if owner(k.topic, k.partition, r.parallelism) == r.subtask {
				own[k] = st
			}
		}
		return encodePosition(own), nil
	}
	return encodePosition(r.parts), nil
}

// Seek restores this subtask's position from the same parallelism.
func (r *Reader) Seek(pos []byte) error { return r.SeekAll([][]byte{pos}) }

// SeekAll restores the positions of all subtasks of an earlier run at any
// parallelism: each partition is owned by one subtask of this run, which
// continues at its recorded offset.
func (r *Reader) SeekAll(positions [][]byte) error {
	all := map[tp]partState{}
	for i, p := range positions {
		parts, err := decodePosition(p)
		if err != nil {
			return fmt.Errorf("position of subtask %d: %w", i, err)
		}
		for k, st := range parts {
			all[k] = st
		}
	}
	r.restored = all
	return nil
}

// CheckpointComplete commits the offsets of a complete checkpoint's
// position to 'properties.group.id', if set, for monitoring tools (lag).
// Recovery never reads them while a checkpoint exists: the checkpoint
// holds the offsets.
func (r *Reader) CheckpointComplete(id int64, pos []byte) error {
	if r.cfg.group == "" || r.adm == nil {
		return nil
	}
	parts, err := decodePosition(pos)
	if err != nil {
		return err
	}
	offs := kadm.Offsets{}
	for k, st := range parts {
		offs.Add(kadm.Offset{Topic: k.topic, Partition: k.partition, At: st.next, LeaderEpoch: -1})
	}
	if len(offs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := r.adm.CommitOffsets(ctx, r.cfg.group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("kafka source %s: commit the offsets of checkpoint %d to group %s: %w", r.cfg.table, id, r.cfg.group, err)
	}
	return nil
}

// Close releases the client.
func (r *Reader) Close() error {
	if r.cl != nil {
		r.cl.Close()
		r.cl = nil
	}
	return nil
}
