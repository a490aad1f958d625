package filesystem

import (
	"fmt"

	"github.com/weir-sql/weir/types"
)

// RecordFormat is a parsed 'format' option (csv, json or debezium-json)
// with its format options, for connectors that carry one record per
// message rather than lines in a file (kafka).
type RecordFormat struct{ f format }

// ParseRecordFormat reads 'format' and its options ('csv.*', 'json.*',
// 'debezium-json.*', 'ignore-parse-errors') from opts, as the filesystem
// connector does, and returns the option keys it recognises.
func ParseRecordFormat(opts map[string]string, forSource bool) (RecordFormat, []string, error) {
	f, keys, err := parseFormat(opts, forSource)
	return RecordFormat{f}, keys, err
}

// CheckColumns refuses the columns the format cannot hold: a MAP, or a
// ROW or ARRAY nested in another, in csv.
func (r RecordFormat) CheckColumns(cols []types.Column) error {
	return checkComposite(r.f, types.Schema{Columns: cols}, "read or written")
}

// Name returns the format's name.
func (r RecordFormat) Name() string { return r.f.name }

// IgnoreParseErrors reports whether malformed records are skipped.
func (r RecordFormat) IgnoreParseErrors() bool { return r.f.ignoreErrors }

// IsChangelog reports whether the format carries -U/+U/-D rows
// (debezium-json).
func (r RecordFormat) IsChangelog() bool { return r.f.name == formatDebezium }

// RecordDecoder decodes one whole record at a time into rows.
type RecordDecoder struct{ d decoder }

// NewDecoder returns a decoder of records into rows of cols.
func (r RecordFormat) NewDecoder(cols []types.Column) *RecordDecoder {
	if r.f.name == formatCSV {
		return &RecordDecoder{d: newCSVDecoder(r.f, cols)}
	}
	return &RecordDecoder{d: newJSONDecoder(r.f, cols)}
}

// Decode parses one record (a trailing line break is ignored) and returns
// how many rows it yields (0 for a blank record; 2 for a Debezium update).
func (d *RecordDecoder) Decode(rec []byte) (int, error) {
	rec = trimEOL(rec)
	if d.d.skip(rec) {
		return 0, nil
	}
	if !d.d.complete(rec) {
		return 0, errUnterminated
	}
	return d.d.decode(rec)
}

// Row returns decoded row i; valid until the next Decode.
func (d *RecordDecoder) Row(i int) (types.RowKind, []types.Value) { return d.d.output(i) }

// RecordEncoder encodes one row as one record, without a line break.
type RecordEncoder struct {
	f   format
	csv csvEncoder
	obj *jsonObjectEncoder
}

// NewEncoder returns an encoder of rows of cols.
func (r RecordFormat) NewEncoder(cols []types.Column) *RecordEncoder {
	return &RecordEncoder{f: r.f, csv: newCSVEncoder(r.f, cols), obj: newJSONObjectEncoder(r.f, cols)}
}

// Encode appends row as a record to dst. csv and json accept only
// inserts; debezium-json writes +I and +U as "c" events and -U and -D as
// "d" events, as Flink does.
func (e *RecordEncoder) Encode(dst []byte, kind types.RowKind, row []types.Value) ([]byte, error) {
	switch e.f.name {
	case formatCSV:
		if kind != types.Insert {
			return dst, fmt.Errorf("format '%s' accepts only inserts, got a %s row", e.f.name, kind)
		}
		for c, v := range row {
			if c > 0 {
				dst = append(dst, e.f.delim)
			}
			dst = e.csv.column(dst, c, v)
		}
		return dst, nil
	case formatJSON:
		if kind != types.Insert {
			return dst, fmt.Errorf("format '%s' accepts only inserts, got a %s row", e.f.name, kind)
		}
		return e.obj.object(dst, row), nil
	}
	if kind.IsRetraction() {
		dst = append(dst, `{"before":`...)
		dst = e.obj.object(dst, row)
		return append(dst, `,"after":null,"op":"d"}`...), nil
	}
	dst = append(dst, `{"before":null,"after":`...)
	dst = e.obj.object(dst, row)
	return append(dst, `,"op":"c"}`...), nil
}
