package filesystem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weir-sql/weir/confval"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/internal/options"
	"github.com/weir-sql/weir/types"
)

// Partitioned tables (PARTITIONED BY (a, b)), as Flink's filesystem
// connector: a row goes to the folder a=<value>/b=<value> under the path,
// the partition columns are not written into the files, and the source
// reads them back from the folder names. A partition is committed (a
// success file written into its folder) when the commit trigger says so.

// Partition commit triggers.
const (
	triggerProcessTime   = "process-time"
	triggerPartitionTime = "partition-time"
)

// defaultPartitionName is the folder value of a NULL partition value.
const defaultPartitionName = "__DEFAULT_PARTITION__"

// partitioning is how a partitioned table lays its rows out.
type partitioning struct {
	cols    []int    // the partition columns' indexes in the schema
	names   []string // their names
	defName string   // the folder value of NULL
	loc     *time.Location

	// Sink: the commit trigger, its delay, the success file (its name; ""
	// for no success-file policy), the partition time extractor and the
	// time zone the watermark is compared in.
	trigger     string
	delay       time.Duration
	successName string
	pattern     string // $col references; "" for the first partition value
	layout      string // Go layout of the extracted timestamp
	wmLoc       *time.Location
}

// sinkPartitionKeys are the options of a partitioned sink.
var sinkPartitionKeys = []string{
	"partition.default-name", "partition.time-extractor.kind", "partition.time-extractor.timestamp-pattern",
	"partition.time-extractor.timestamp-formatter", "sink.partition-commit.trigger", "sink.partition-commit.delay",
	"sink.partition-commit.policy.kind", "sink.partition-commit.success-file.name",
	"sink.partition-commit.watermark-time-zone", "sink.rolling-policy.check-interval",
}

// parsePartitioning reads t's PARTITIONED BY columns and, for a sink, the
// partition commit options; nil for a table that is not partitioned. It
// returns the option keys it knows.
func parsePartitioning(t *connector.Table, env connector.Env, forSink bool) (*partitioning, []string, error) {
	// A source takes the sink's options too (and ignores them), so that
	// one table can be written and read back.
	keys := sinkPartitionKeys
	if !forSink {
		keys = append(keys[:len(keys):len(keys)], "sink.rolling-policy.file-size", "sink.rolling-policy.rollover-interval", "sink.parallelism")
	}
	if len(t.PartitionBy) == 0 {
		return nil, keys, nil
	}
	p := &partitioning{cols: t.PartitionBy, defName: t.Option("partition.default-name", defaultPartitionName), loc: env.Location}
	if p.loc == nil {
		p.loc = time.UTC
	}
	for _, c := range p.cols {
		p.names = append(p.names, t.Schema.Columns[c].Name)
	}
	if !forSink {
		return p, keys, nil
	}
	var err error
	if p.trigger, err = options.OneOf(t.Options, "sink.partition-commit.trigger", triggerProcessTime, triggerProcessTime, triggerPartitionTime); err != nil {
		return nil, nil, err
	}
	if v, ok := t.Options["sink.partition-commit.delay"]; ok {
		if p.delay, err = confval.Duration(v); err == nil && p.delay < 0 {
			err = errors.New("must not be negative")
		}
		if err != nil {
			return nil, nil, fmt.Errorf("option 'sink.partition-commit.delay': %w", err)
		}
	}
	if v, ok := t.Options["sink.rolling-policy.check-interval"]; ok {
		if d, err := confval.Duration(v); err != nil || d <= 0 {
			return nil, nil, fmt.Errorf("option 'sink.rolling-policy.check-interval': %q is not a positive duration", v)
		}
	}
	if kinds, ok := t.Options["sink.partition-commit.policy.kind"]; ok {
		for _, k := range strings.Split(kinds, ",") {
			switch k = strings.TrimSpace(k); k {
			case "success-file":
				p.successName = t.Option("sink.partition-commit.success-file.name", "_SUCCESS")
			case "metastore", "custom":
				return nil, nil, fmt.Errorf("option 'sink.partition-commit.policy.kind': '%s' is not supported (only 'success-file')", k)
			default:
				return nil, nil, fmt.Errorf("option 'sink.partition-commit.policy.kind': unknown policy '%s' (only 'success-file')", k)
			}
		}
	}
	if n := p.successName; n != "" && (strings.ContainsAny(n, `/\`) || n == "." || n == "..") {
		return nil, nil, fmt.Errorf("option 'sink.partition-commit.success-file.name': %q is not a file name", n)
	}
	if k := t.Option("partition.time-extractor.kind", "default"); k != "default" {
		return nil, nil, fmt.Errorf("option 'partition.time-extractor.kind': '%s' is not supported (only 'default')", k)
	}
	p.pattern = t.Options["partition.time-extractor.timestamp-pattern"]
	for _, ref := range patternRefs(p.pattern) {
		found := false
		for _, n := range p.names {
			found = found || n == ref
		}
		if !found {
			return nil, nil, fmt.Errorf("option 'partition.time-extractor.timestamp-pattern': $%s is not a partition column (%s)", ref, strings.Join(p.names, ", "))
		}
	}
	if p.layout, err = javaLayout(t.Option("partition.time-extractor.timestamp-formatter", "yyyy-MM-dd HH:mm:ss")); err != nil {
		return nil, nil, fmt.Errorf("option 'partition.time-extractor.timestamp-formatter': %w", err)
	}
	tz := t.Option("sink.partition-commit.watermark-time-zone", "UTC")
	if p.wmLoc, err = time.LoadLocation(tz); err != nil {
		return nil, nil, fmt.Errorf("option 'sink.partition-commit.watermark-time-zone': %w", err)
	}
	if p.trigger == triggerPartitionTime && p.successName == "" {
		return nil, nil, fmt.Errorf("option 'sink.partition-commit.trigger' = 'partition-time' needs 'sink.partition-commit.policy.kind' = 'success-file'")
	}
	return p, keys, nil
}

// patternRefs returns the column names a timestamp pattern refers to
// ($name, a name of letters, digits and '_').
func patternRefs(pattern string) []string {
	var refs []string
	for i := 0; i < len(pattern); i++ {
		if pattern[i] != '$' {
			continue
		}
		j := i + 1
		for j < len(pattern) && isNameByte(pattern[j]) {
			j++
		}
		if j > i+1 {
			refs = append(refs, pattern[i+1:j])
		}
		i = j - 1
	}
	return refs
}

func isNameByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// javaLayout turns a Java DateTimeFormatter pattern of the letters
// yyyy, MM, dd, HH, mm, ss (and literal separators) into a Go layout.
func javaLayout(p string) (string, error) {
	repl := []struct{ java, goL string }{{"yyyy", "2006"}, {"MM", "01"}, {"dd", "02"}, {"HH", "15"}, {"mm", "04"}, {"ss", "05"}}
	var b strings.Builder
outer:
	for i := 0; i < len(p); {
		for _, r := range repl {
			if strings.HasPrefix(p[i:], r.java) {
				b.WriteString(r.goL)
				i += len(r.java)
				continue outer
			}
		}
		c := p[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return "", fmt.Errorf("%q: only yyyy, MM, dd, HH, mm and ss are supported", p)
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), nil
}

// escapeChar reports whether c is written %XX in a partition folder name,
// as Flink escapes it.
func escapeChar(c byte) bool {
	if c < 0x20 || c == 0x7f {
		return true
	}
	return strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0
}

// appendEscaped appends s escaped for a folder name.
func appendEscaped(dst []byte, s []byte) []byte {
	const hex = "0123456789ABCDEF"
	for _, c := range s {
		if escapeChar(c) {
			dst = append(dst, '%', hex[c>>4], hex[c&15])
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// unescape reverses appendEscaped.
func unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
}

// appendPath appends the partition folder of row, "a=1/b=x", using tmp
// as scratch; it returns both.
func (p *partitioning) appendPath(dst, tmp []byte, row []types.Value) ([]byte, []byte) {
	for k, c := range p.cols {
		if k > 0 {
			dst = append(dst, '/')
		}
		dst = append(dst, p.names[k]...)
		dst = append(dst, '=')
		v := row[c]
		if v.IsNull() {
			dst = append(dst, p.defName...)
			continue
		}
		tmp = v.AppendTextIn(tmp[:0], p.loc)
		if len(tmp) == 0 {
			dst = append(dst, p.defName...) // an empty value, as Flink
			continue
		}
		dst = appendEscaped(dst, tmp)
	}
	return dst, tmp
}

// values parses a partition folder path ("a=1/b=x") into the partition
// values as text, in partition column order.
func (p *partitioning) values(dir string) ([]string, error) {
	vals := make([]string, len(p.names))
	found := make([]bool, len(p.names))
	for _, part := range strings.Split(dir, "/") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		for i, n := range p.names {
			if n == k {
				u, err := unescape(v)
				if err != nil {
					return nil, err
				}
				vals[i], found[i] = u, true
			}
		}
	}
	for i, f := range found {
		if !f {
			return nil, fmt.Errorf("folder %q has no %s=<value> for partition column %s", dir, p.names[i], p.names[i])
		}
	}
	return vals, nil
}

// partitionTime extracts the time of partition dir for the partition-time
// trigger: the pattern with $col replaced by the column's value (or the
// first partition value), read with the formatter in the watermark's
// time zone, as epoch milliseconds.
func (p *partitioning) partitionTime(dir string) (int64, error) {
	vals, err := p.values(dir)
	if err != nil {
		return 0, err
	}
	text := vals[0]
	if p.pattern != "" {
		var b strings.Builder
		for i := 0; i < len(p.pattern); i++ {
			c := p.pattern[i]
			j := i + 1
			for c == '$' && j < len(p.pattern) && isNameByte(p.pattern[j]) {
				j++
			}
			if c != '$' || j == i+1 {
				b.WriteByte(c)
				continue
			}
			for k, n := range p.names {
				if n == p.pattern[i+1:j] {
					b.WriteString(vals[k])
				}
			}
			i = j - 1
		}
		text = b.String()
	}
	layout := p.layout
	if len(text) == len("2006-01-02") && layout == "2006-01-02 15:04:05" {
		layout = "2006-01-02" // a date alone is its midnight, as Flink's default extractor
	}
	t, err := time.ParseInLocation(layout, text, p.wmLoc)
	if err != nil {
		return 0, fmt.Errorf("partition %s: time %q does not match the formatter: %w", dir, text, err)
	}
	return t.UnixMilli(), nil
}

// writeSuccess writes the success file into partition folder dir (under
// root) and syncs the folder. Writing it again is harmless.
func writeSuccess(root, dir, name string) error {
	full := filepath.Join(root, filepath.FromSlash(dir))
	f, err := os.OpenFile(filepath.Join(full, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("filesystem sink: partition commit: %w", err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("filesystem sink: partition commit: %w", err)
	}
	return syncDir(full)
}

// validTxnPath reports whether name is a part file path of a transaction:
// a part file name, in the sink's folder or in a partition folder under
// it (relative, slash-separated, without . or .. steps).
func validTxnPath(name string) (partName, string, bool) {
	dir, base := path.Split(name)
	p, ok := parsePartName(base)
	if !ok {
		return p, "", false
	}
	dir = strings.TrimSuffix(dir, "/")
	if dir != "" && (!filepath.IsLocal(filepath.FromSlash(dir)) || path.Clean(dir) != dir) {
		return p, "", false
	}
	return p, dir, true
}

// walkParts calls fn with every part file under root (a partitioned
// sink's folder): its folder relative to root ("" for root itself,
// slash-separated) and its parsed name. Folders starting with '.' or '_'
// are skipped. A root that does not exist holds none.
func walkParts(root string, fn func(dir, name string, p partName) error) error {
	var walk func(rel string) error
	walk = func(rel string) error {
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			if rel == "" && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("filesystem sink: %w", err)
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() {
				if strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
					continue
				}
				if err := walk(path.Join(rel, n)); err != nil {
					return err
				}
				continue
			}
			if p, ok := parsePartName(n); ok && e.Type().IsRegular() {
				if err := fn(rel, n, p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk("")
}

// fileValues returns the partition values of the file at relative path
// name, read from its folder names and parsed as the columns' types.
func (p *partitioning) fileValues(schema types.Schema, name string) ([]types.Value, error) {
	texts, err := p.values(path.Dir(name))
	if err != nil {
		return nil, err
	}
	vals := make([]types.Value, len(texts))
	for k, text := range texts {
		col := schema.Columns[p.cols[k]]
		if text == p.defName {
			continue // NULL
		}
		if col.Type.Kind == types.KindVarchar {
			vals[k] = types.StringValue(text)
			continue
		}
		v, err := parseScalar([]byte(text), col.Type, tsAny)
		if err != nil {
			return nil, fmt.Errorf("partition column %s: %w", col.Name, err)
		}
		if col.Type.Kind == types.KindTimestampLTZ {
			v = types.TimestampLTZValue(localToInstant(v.Int(), p.loc))
		}
		vals[k] = v
	}
	return vals, nil
}

// fileDecoder decodes the data columns of a file and adds the columns
// that come from the file itself: partition values (from its folders)
// and metadata ('file.path', 'file.name').
type fileDecoder struct {
	decoder
	r   *Reader
	row []types.Value
}

func (d *fileDecoder) output(i int) (types.RowKind, []types.Value) {
	kind, data := d.decoder.output(i)
	src := d.r.src
	for j, c := range src.data {
		d.row[c] = data[j]
	}
	vals := src.fileVals[d.r.file]
	for k, c := range src.fileCols {
		d.row[c] = vals[k]
	}
	return kind, d.row
}

// Metadata keys of the filesystem connector, as Flink's.
const (
	metaFilePath = "file.path"
	metaFileName = "file.name"
)

// MetadataKeys are the metadata columns a filesystem table may declare:
// the path and the name of the file a row was read from (read only).
var MetadataKeys = []connector.MetadataKey{
	{Key: metaFilePath, Type: types.Varchar},
	{Key: metaFileName, Type: types.Varchar},
}

// dataColumns returns the columns the files hold: not partition columns,
// not metadata columns; nil when that is every column.
func dataColumns(t *connector.Table) []int {
	if len(t.PartitionBy) == 0 && len(t.Metadata) == 0 {
		return nil
	}
	var data []int
	for i := range t.Schema.Columns {
		if slices.Contains(t.PartitionBy, i) || t.MetadataOf(i) != nil {
			continue
		}
		data = append(data, i)
	}
	return data
}
