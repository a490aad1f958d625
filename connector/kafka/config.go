// Package kafka implements the 'kafka' and 'upsert-kafka' connectors on
// franz-go (github.com/twmb/franz-go), with Flink's option names.
//
// Source: partitions are assigned to subtasks by the job (a hash of topic
// and partition modulo the parallelism), not by a consumer group; each
// subtask's position is the next offset of every partition it owns, so a
// restore (also at another parallelism) reads every record exactly once.
// Sink: 'sink.delivery-guarantee' none, at-least-once (flush at every
// checkpoint) or exactly-once (see sink.go for the recovery design).
package kafka

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/confval"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/filesystem"
	"github.com/weir-sql/weir/connector/internal/options"
	"github.com/weir-sql/weir/types"
)

// Startup and bounded modes, delivery guarantees and partitioners.
const (
	modeEarliest  = "earliest-offset"
	modeLatest    = "latest-offset"
	modeGroup     = "group-offsets"
	modeTimestamp = "timestamp"
	modeSpecific  = "specific-offsets"
	modeUnbounded = "unbounded"

	deliveryNone        = "none"
	deliveryAtLeastOnce = "at-least-once"
	deliveryExactlyOnce = "exactly-once"

	partDefault    = "default"
	partFixed      = "fixed"
	partRoundRobin = "round-robin"
)

// properties are the 'properties.*' keys that map to client options.
var properties = []string{
	"bootstrap.servers", "group.id", "client.id", "isolation.level",
	"auto.offset.reset", "fetch.max.bytes", "fetch.max.wait.ms",
	"request.timeout.ms", "transaction.timeout.ms", "linger.ms",
}

// recFormat is the format of a record's key or value.
type recFormat struct {
	name string // "raw" or the filesystem format's name
	rec  filesystem.RecordFormat
}

// config is a kafka or upsert-kafka table's parsed options.
type config struct {
	table           string
	upsert          bool
	schema          types.Schema
	topics          []string
	pattern         *regexp.Regexp
	brokers         []string
	group           string
	clientOpts      []kgo.Opt
	readUncommitted bool
	autoReset       string // group-offsets without a committed offset

	key     *recFormat // nil: no key format
	value   recFormat
	keyCols []int     // table columns in the key, in key.fields order
	valCols []int     // table columns in the value
	meta    []metaCol // metadata columns (not in the key or value)

	startMode    string
	startTS      int64
	startOffsets map[int32]int64
	boundMode    string
	boundTS      int64
	boundOffsets map[int32]int64
	discovery    time.Duration

	guarantee   string
	txnPrefix   string
	partitioner string
	parallelism int
	pk          []int
}

// parseConfig validates and parses t's options; forSource selects the
// source's options (scan.*) or the sink's (sink.*).
func parseConfig(t *connector.Table, upsert, forSource bool) (*config, error) {
	name := "kafka"
	if upsert {
		name = "upsert-kafka"
	}
	opts := t.Options
	c := &config{table: t.Name, upsert: upsert, schema: t.Schema, pk: t.PrimaryKey}
	for _, m := range t.Metadata {
		c.meta = append(c.meta, metaCol{col: m.Column, key: m.Key, virtual: m.Virtual})
	}
	valid := []string{"topic", "properties.bootstrap.servers", "format", "value.format", "key.format", "key.fields", "value.fields-include"}
	for _, p := range properties {
		valid = append(valid, "properties."+p)
	}
	if forSource && upsert {
		valid = append(valid, "topic-pattern", "scan.topic-partition-discovery.interval",
			"scan.bounded.mode", "scan.bounded.timestamp-millis", "scan.bounded.specific-offsets")
	} else if forSource {
		valid = append(valid, "topic-pattern", "scan.startup.mode", "scan.startup.timestamp-millis", "scan.startup.specific-offsets",
			"scan.bounded.mode", "scan.bounded.timestamp-millis", "scan.bounded.specific-offsets", "scan.topic-partition-discovery.interval")
	} else {
		valid = append(valid, "sink.delivery-guarantee", "sink.transactional-id-prefix", "sink.partitioner", "sink.parallelism")
	}
	if err := c.parseTopics(opts, forSource); err != nil {
		return nil, err
	}
	servers := strings.TrimSpace(opts["properties.bootstrap.servers"])
	if servers == "" {
		return nil, fmt.Errorf("%s: missing option 'properties.bootstrap.servers' (host:port of the brokers, comma-separated)", name)
	}
	for _, s := range strings.Split(servers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.brokers = append(c.brokers, s)
		}
	}
	c.clientOpts = append(c.clientOpts, kgo.SeedBrokers(c.brokers...))
	if err := c.parseProperties(opts); err != nil {
		return nil, err
	}
	fkeys, err := c.parseFormats(opts, name, forSource)
	if err != nil {
		return nil, err
	}
	valid = append(valid, fkeys...)
	if err := options.CheckKnown(name, opts, valid); err != nil {
		return nil, err
	}
	if forSource {
		if err := c.parseScan(opts, name); err != nil {
			return nil, err
		}
	} else if err := c.parseSink(opts, name); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *config) parseTopics(opts map[string]string, forSource bool) error {
	for _, tp := range strings.Split(opts["topic"], ";") {
		if tp = strings.TrimSpace(tp); tp != "" {
			c.topics = append(c.topics, tp)
		}
	}
	if p, ok := opts["topic-pattern"]; ok && forSource {
		if len(c.topics) > 0 {
			return fmt.Errorf("options 'topic' and 'topic-pattern' exclude each other")
		}
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			return fmt.Errorf("option 'topic-pattern': %w", err)
		}
		c.pattern = re
		return nil
	}
	switch {
	case len(c.topics) == 0 && forSource:
		return fmt.Errorf("missing option 'topic' (a topic or a ';'-separated list) or 'topic-pattern'")
	case len(c.topics) == 0:
		return fmt.Errorf("missing option 'topic'")
	case len(c.topics) > 1 && !forSource:
		return fmt.Errorf("option 'topic': a sink writes one topic, got %d", len(c.topics))
	}
	return nil
}

func (c *config) parseProperties(opts map[string]string) error {
	c.group = opts["properties.group.id"]
	if v, ok := opts["properties.client.id"]; ok {
		c.clientOpts = append(c.clientOpts, kgo.ClientID(v))
	}
	lvl, err := options.OneOf(opts, "properties.isolation.level", "read_committed", "read_committed", "read_uncommitted")
	if err != nil {
		return err
	}
	c.readUncommitted = lvl == "read_uncommitted"
	if c.autoReset, err = options.OneOf(opts, "properties.auto.offset.reset", "latest", "earliest", "latest", "none"); err != nil {
		return err
	}
	ints := []struct {
		key string
		opt func(n int64) kgo.Opt
	}{
		{"fetch.max.bytes", func(n int64) kgo.Opt { return kgo.FetchMaxBytes(int32(n)) }},
		{"fetch.max.wait.ms", func(n int64) kgo.Opt { return kgo.FetchMaxWait(time.Duration(n) * time.Millisecond) }},
		{"request.timeout.ms", func(n int64) kgo.Opt { return kgo.RequestTimeoutOverhead(time.Duration(n) * time.Millisecond) }},
		{"transaction.timeout.ms", func(n int64) kgo.Opt { return kgo.TransactionTimeout(time.Duration(n) * time.Millisecond) }},
		{"linger.ms", func(n int64) kgo.Opt { return kgo.ProducerLinger(time.Duration(n) * time.Millisecond) }},
	}
	for _, o := range ints {
		key := "properties." + o.key
		if _, ok := opts[key]; !ok {
			continue
		}
		n, err := options.Int(opts, key, 0)
		if err != nil {
			return err
		}
		if n < 0 || n > 1<<31-1 {
			return fmt.Errorf("option '%s': %d is out of range", key, n)
		}
		c.clientOpts = append(c.clientOpts, o.opt(n))
	}
	return nil
}

// subOptions returns the options of a key or value format under prefix
// ("key." or "value.") as the filesystem format parser reads them.
func subOptions(opts map[string]string, prefix, format string) (map[string]string, map[string]string) {
	sub := map[string]string{"format": format}
	orig := map[string]string{}
	for k, v := range opts {
		if rest, ok := strings.CutPrefix(k, prefix); ok && strings.HasPrefix(rest, format+".") {
			sub[rest] = v
			orig[rest] = k
		}
	}
	return sub, orig
}

// parseFormat parses format name with its options (written under prefix)
// and returns the option keys, as written, it recognises.
func parseFormat(opts map[string]string, prefix, format string, forSource bool) (recFormat, []string, error) {
	if format == "raw" {
		return recFormat{name: "raw"}, nil, nil
	}
	sub, orig := subOptions(opts, prefix, format)
	if prefix == "" {
		sub, orig = opts, nil
	}
	rf, keys, err := filesystem.ParseRecordFormat(sub, forSource)
	if err != nil {
		return recFormat{}, nil, err
	}
	var out []string
	for _, k := range keys {
		if orig == nil {
			out = append(out, k)
		} else if strings.HasPrefix(k, format+".") {
			out = append(out, prefix+k)
		}
	}
	return recFormat{name: rf.Name(), rec: rf}, out, nil
}

func (c *config) parseFormats(opts map[string]string, name string, forSource bool) ([]string, error) {
	var keys []string
	vf, hasValue := opts["value.format"]
	f, hasFormat := opts["format"]
	switch {
	case hasValue && hasFormat:
		return nil, fmt.Errorf("options 'format' and 'value.format' exclude each other")
	case c.upsert && !hasValue:
		return nil, fmt.Errorf("missing option 'value.format' ('json', 'csv' or 'raw')")
	case !hasValue && !hasFormat:
		return nil, fmt.Errorf("missing option 'format' or 'value.format' ('json', 'csv', 'raw' or 'debezium-json')")
	}
	prefix := ""
	if hasValue {
		prefix, f = "value.", vf
	}
	if err := checkFormatName(prefix+"format", f, !c.upsert); err != nil {
		return nil, err
	}
	var err error
	var k []string
	if c.value, k, err = parseFormat(opts, prefix, f, forSource); err != nil {
		return nil, err
	}
	keys = append(keys, k...)
	if kf, ok := opts["key.format"]; ok {
		if err := checkFormatName("key.format", kf, false); err != nil {
			return nil, err
		}
		kfmt, k, err := parseFormat(opts, "key.", kf, forSource)
		if err != nil {
			return nil, err
		}
		c.key = &kfmt
		keys = append(keys, k...)
	} else if c.upsert {
		return nil, fmt.Errorf("missing option 'key.format' ('json', 'csv' or 'raw')")
	}
	// Key columns: upsert-kafka's primary key, else 'key.fields'.
	if c.upsert {
		if len(c.pk) == 0 {
			return nil, fmt.Errorf("upsert-kafka needs a PRIMARY KEY (the record key); add PRIMARY KEY (col, ...) NOT ENFORCED")
		}
		if _, ok := opts["key.fields"]; ok {
			return nil, fmt.Errorf("upsert-kafka takes its key from the PRIMARY KEY, not 'key.fields'")
		}
		for _, i := range c.pk {
			if c.isMeta(i) {
				return nil, fmt.Errorf("upsert-kafka: PRIMARY KEY column '%s' is a metadata column; the key must be in the record key", c.schema.Columns[i].Name)
			}
		}
		c.keyCols = append(c.keyCols, c.pk...)
	} else if kf, ok := opts["key.fields"]; ok {
		if c.key == nil {
			return nil, fmt.Errorf("option 'key.fields' needs 'key.format'")
		}
		for _, n := range strings.Split(kf, ";") {
			n = strings.TrimSpace(n)
			i := c.schema.Index(n)
			if i < 0 {
				return nil, fmt.Errorf("option 'key.fields': unknown column '%s' (columns: %s)", n, columnNames(c.schema))
			}
			if c.isMeta(i) {
				return nil, fmt.Errorf("option 'key.fields': column '%s' is a metadata column, not part of the record key", n)
			}
			c.keyCols = append(c.keyCols, i)
		}
	} else if c.key != nil {
		return nil, fmt.Errorf("option 'key.format' needs 'key.fields' (the columns in the record key, ';'-separated)")
	}
	include, err := options.OneOf(opts, "value.fields-include", "ALL", "ALL", "EXCEPT_KEY")
	if err != nil {
		return nil, err
	}
	inKey := map[int]bool{}
	for _, i := range c.keyCols {
		inKey[i] = true
	}
	for i := range c.schema.Columns {
		if (include == "EXCEPT_KEY" && inKey[i]) || c.isMeta(i) {
			continue
		}
		c.valCols = append(c.valCols, i)
	}
	if c.value.name == "raw" && len(c.valCols) != 1 {
		return nil, fmt.Errorf("format 'raw' holds one column, but the value has %d (%s)", len(c.valCols), columnNames(c.schema))
	}
	if c.key != nil && c.key.name == "raw" && len(c.keyCols) != 1 {
		return nil, fmt.Errorf("key format 'raw' holds one column, but the key has %d", len(c.keyCols))
	}
	check := func(cols []int, f recFormat) error {
		if f.name != "raw" {
			sub := make([]types.Column, len(cols))
			for k, i := range cols {
				sub[k] = c.schema.Columns[i]
			}
			return f.rec.CheckColumns(sub)
		}
		for _, i := range cols {
			if c.schema.Columns[i].Type.Kind != types.KindVarchar {
				return fmt.Errorf("format 'raw' needs a STRING column, but %s is %s", c.schema.Columns[i].Name, c.schema.Columns[i].Type.Kind)
			}
		}
		return nil
	}
	if err := check(c.valCols, c.value); err != nil {
		return nil, err
	}
	if c.key != nil {
		if err := check(c.keyCols, *c.key); err != nil {
			return nil, err
		}
	}
	if c.key != nil && c.key.name == "debezium-json" {
		return nil, fmt.Errorf("'key.format' = 'debezium-json' is not supported (use 'json', 'csv' or 'raw')")
	}
	return keys, nil
}

// isMeta reports whether column i is a metadata column.
func (c *config) isMeta(i int) bool {
	for _, m := range c.meta {
		if m.col == i {
			return true
		}
	}
	return false
}

func checkFormatName(key, f string, changelog bool) error {
	choices := []string{"json", "csv", "raw"}
	if changelog {
		choices = append(choices, "debezium-json")
	}
	for _, ch := range choices {
		if f == ch {
			return nil
		}
	}
	return fmt.Errorf("option '%s': unknown format '%s' (one of '%s')", key, f, strings.Join(choices, "', '"))
}

func columnNames(s types.Schema) string {
	names := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

func (c *config) parseScan(opts map[string]string, name string) error {
	var err error
	def := modeGroup
	if c.upsert {
		def = modeEarliest // upsert-kafka reads every record, and never ends
	}
	if c.startMode, err = options.OneOf(opts, "scan.startup.mode", def, modeEarliest, modeLatest, modeGroup, modeTimestamp, modeSpecific); err != nil {
		return err
	}
	if c.startMode == modeGroup && c.group == "" {
		return fmt.Errorf("%s: 'scan.startup.mode' = '%s' (the default) needs 'properties.group.id'; or set 'scan.startup.mode' = '%s'", name, modeGroup, modeEarliest)
	}
	if c.startTS, err = millisOption(opts, "scan.startup.timestamp-millis", c.startMode == modeTimestamp); err != nil {
		return err
	}
	if c.startOffsets, err = offsetsOption(opts, "scan.startup.specific-offsets", c.startMode == modeSpecific); err != nil {
		return err
	}
	if c.boundMode, err = options.OneOf(opts, "scan.bounded.mode", modeUnbounded, modeUnbounded, modeLatest, modeTimestamp, modeSpecific); err != nil {
		return err
	}
	if c.boundTS, err = millisOption(opts, "scan.bounded.timestamp-millis", c.boundMode == modeTimestamp); err != nil {
		return err
	}
	if c.boundOffsets, err = offsetsOption(opts, "scan.bounded.specific-offsets", c.boundMode == modeSpecific); err != nil {
		return err
	}
	if (c.startMode == modeSpecific || c.boundMode == modeSpecific) && len(c.topics) != 1 {
		return fmt.Errorf("specific offsets need exactly one 'topic'")
	}
	c.discovery = 5 * time.Minute
	if v, ok := opts["scan.topic-partition-discovery.interval"]; ok {
		if c.discovery, err = confval.Duration(v); err != nil || c.discovery < 0 {
			return fmt.Errorf("option 'scan.topic-partition-discovery.interval': %q is not a duration (e.g. '10 s'; '0' turns discovery off)", v)
		}
	}
	return nil
}

func millisOption(opts map[string]string, key string, required bool) (int64, error) {
	if _, ok := opts[key]; !ok {
		if required {
			return 0, fmt.Errorf("missing option '%s' (milliseconds since the epoch)", key)
		}
		return 0, nil
	}
	return options.Int(opts, key, 0)
}

// offsetsOption parses Flink's 'partition:0,offset:42;partition:1,offset:300'.
func offsetsOption(opts map[string]string, key string, required bool) (map[int32]int64, error) {
	v, ok := opts[key]
	if !ok {
		if required {
			return nil, fmt.Errorf("missing option '%s' (e.g. 'partition:0,offset:42;partition:1,offset:300')", key)
		}
		return nil, nil
	}
	out := map[int32]int64{}
	for _, part := range strings.Split(v, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		var p, o string
		for _, kv := range strings.Split(part, ",") {
			k, val, _ := strings.Cut(strings.TrimSpace(kv), ":")
			switch strings.TrimSpace(k) {
			case "partition":
				p = strings.TrimSpace(val)
			case "offset":
				o = strings.TrimSpace(val)
			}
		}
		pn, err1 := strconv.ParseInt(p, 10, 32)
		on, err2 := strconv.ParseInt(o, 10, 64)
		if err1 != nil || err2 != nil || pn < 0 || on < 0 {
			return nil, fmt.Errorf("option '%s': %q is not 'partition:<n>,offset:<n>'", key, part)
		}
		out[int32(pn)] = on
	}
	return out, nil
}

func (c *config) parseSink(opts map[string]string, name string) error {
	var err error
	if c.guarantee, err = options.OneOf(opts, "sink.delivery-guarantee", deliveryAtLeastOnce, deliveryNone, deliveryAtLeastOnce, deliveryExactlyOnce); err != nil {
		return err
	}
	c.txnPrefix = opts["sink.transactional-id-prefix"]
	if c.guarantee == deliveryExactlyOnce && c.txnPrefix == "" {
		return fmt.Errorf("%s: 'sink.delivery-guarantee' = 'exactly-once' needs 'sink.transactional-id-prefix' (unique to this job and sink)", name)
	}
	if !utf8.ValidString(c.txnPrefix) {
		return fmt.Errorf("option 'sink.transactional-id-prefix' is not valid UTF-8")
	}
	if c.partitioner, err = options.OneOf(opts, "sink.partitioner", partDefault, partDefault, partFixed, partRoundRobin); err != nil {
		return err
	}
	if c.parallelism, err = options.Parallelism(opts); err != nil {
		return err
	}
	return nil
}

// sortedPartitions returns the keys of m sorted.
func sortedPartitions(m map[int32]int64) []int32 {
	out := make([]int32, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
