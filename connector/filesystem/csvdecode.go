package filesystem

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/weir-sql/weir/types"
)

// span is a field's text at buf[start:end] of the CSV decoder.
type span struct {
	start, end int
	quoted     bool
}

// csvDecoder parses CSV records (RFC 4180 with a configurable delimiter and
// quote character) into rows of the table's columns.
type csvDecoder struct {
	f      format
	cols   []types.Column
	fields []span
	buf    []byte // unquoted field text of the current record
	row    []types.Value
	strs   recordStrings
	comp   types.RowBuilder // the ROW and ARRAY values of the records
	elem   []byte           // an element's unescaped text
}

func newCSVDecoder(f format, cols []types.Column) *csvDecoder {
	return &csvDecoder{f: f, cols: cols, row: make([]types.Value, len(cols))}
}

var errUnterminated = errors.New("unterminated quoted field")

// complete reports whether rec ends outside a quoted field.
func (d *csvDecoder) complete(rec []byte) bool {
	if bytes.IndexByte(rec, d.f.quote) < 0 {
		return true
	}
	return !errors.Is(d.split(rec), errUnterminated)
}

// skip reports whether rec is a blank line or a comment line.
func (d *csvDecoder) skip(rec []byte) bool {
	return len(rec) == 0 || (d.f.comments && rec[0] == '#')
}

// split cuts rec into fields, unquoting quoted ones into d.buf.
func (d *csvDecoder) split(rec []byte) error {
	d.fields, d.buf = d.fields[:0], d.buf[:0]
	delim, quote := d.f.delim, d.f.quote
	i := 0
	for {
		start := len(d.buf)
		quoted := i < len(rec) && rec[i] == quote
		if quoted {
			i++
			for {
				j := bytes.IndexByte(rec[i:], quote)
				if j < 0 {
					return errUnterminated
				}
				d.buf = append(d.buf, rec[i:i+j]...)
				i += j + 1
				if i < len(rec) && rec[i] == quote { // an escaped quote
					d.buf = append(d.buf, quote)
					i++
					continue
				}
				break
			}
			if i < len(rec) && rec[i] != delim {
				return fmt.Errorf("field %d: unexpected %q after the closing quote", len(d.fields)+1, rec[i])
			}
		} else {
			j := bytes.IndexByte(rec[i:], delim)
			if j < 0 {
				j = len(rec) - i
			}
			d.buf = append(d.buf, rec[i:i+j]...)
			i += j
		}
		d.fields = append(d.fields, span{start, len(d.buf), quoted})
		if i >= len(rec) {
			return nil
		}
		i++ // the delimiter
	}
}

// decode parses one record into d.row.
func (d *csvDecoder) decode(rec []byte) (int, error) {
	if err := d.split(rec); err != nil {
		return 0, err
	}
	if len(d.fields) != len(d.cols) {
		return 0, fmt.Errorf("expected %d fields, found %d", len(d.cols), len(d.fields))
	}
	d.strs.reset()
	for c := range d.cols {
		fd := d.fields[c]
		text := d.buf[fd.start:fd.end]
		kind := d.cols[c].Type.Kind
		switch {
		case d.f.hasNullLiteral && !fd.quoted && string(text) == d.f.nullLiteral:
			d.row[c] = types.NullValue()
		case kind == types.KindVarchar:
			if err := d.strs.add(&d.row[c], text); err != nil {
				return 0, fmt.Errorf("column %s: %w", d.cols[c].Name, err)
			}
		case len(bytes.TrimSpace(text)) == 0 && kind != types.KindBytes:
			// An empty field is NULL, but empty BYTES (as an empty
			// VARCHAR) is empty.
			d.row[c] = types.NullValue()
		case d.cols[c].Type.Comp != nil:
			v, err := d.composite(text, d.cols[c].Type)
			if err != nil {
				return 0, fmt.Errorf("column %s: %w", d.cols[c].Name, err)
			}
			d.row[c] = v
		default:
			v, err := parseScalar(text, d.cols[c].Type, tsAny)
			if err != nil {
				return 0, fmt.Errorf("column %s: %w", d.cols[c].Name, err)
			}
			if kind == types.KindTimestampLTZ {
				v = types.TimestampLTZValue(localToInstant(v.Int(), d.f.loc))
			}
			d.row[c] = v
		}
	}
	d.strs.finish()
	return 1, nil
}

// output returns the decoded row.
func (d *csvDecoder) output(int) (types.RowKind, []types.Value) { return types.Insert, d.row }
