package filesystem

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/weir-sql/weir/types"
)

// jsonDecoder parses JSON lines: with format 'json' one object per line
// whose fields match columns by name, with 'debezium-json' one change
// event per line ({"before":…,"after":…,"op":…}).
type jsonDecoder struct {
	f     format
	cols  []types.Column
	index map[string]int
	sep   byte
	sc    jsonScanner
	rows  [2][]types.Value
	kinds [2]types.RowKind
	order [2]int // which of rows is output i
	seen  []bool
	strs  recordStrings
	key   []byte
	text  []byte
	comp  compositeScratch
}

func newJSONDecoder(f format, cols []types.Column) *jsonDecoder {
	d := &jsonDecoder{f: f, cols: cols, index: make(map[string]int, len(cols)), seen: make([]bool, len(cols)), sep: tsSQL}
	for i, c := range cols {
		d.index[c.Name] = i
	}
	if f.isoTimestamps {
		d.sep = tsISO
	}
	d.rows[0] = make([]types.Value, len(cols))
	d.rows[1] = make([]types.Value, len(cols))
	return d
}

// complete is always true: a JSON record is one line.
func (d *jsonDecoder) complete([]byte) bool { return true }

// skip reports whether rec is blank.
func (d *jsonDecoder) skip(rec []byte) bool { return len(bytes.TrimSpace(rec)) == 0 }

// output returns decoded row i.
func (d *jsonDecoder) output(i int) (types.RowKind, []types.Value) {
	return d.kinds[i], d.rows[d.order[i]]
}

// decode parses one line.
func (d *jsonDecoder) decode(rec []byte) (int, error) {
	d.sc.reset(rec)
	d.strs.reset()
	var n int
	var err error
	if d.f.name == formatDebezium {
		n, err = d.decodeDebezium()
	} else {
		n, err = 1, d.object(d.rows[0])
		d.kinds[0], d.order[0] = types.Insert, 0
		if err == nil && d.f.failOnMissing {
			for c, ok := range d.seen {
				if !ok {
					return 0, fmt.Errorf("missing field '%s'", d.cols[c].Name)
				}
			}
		}
	}
	if err != nil {
		return 0, err
	}
	d.sc.ws()
	if d.sc.i < len(d.sc.b) {
		return 0, d.sc.expected("the end of the line after the object")
	}
	// The values read into columns were checked as they were read; a field
	// name, or the value of a field no column reads, must be UTF-8 too (as
	// Flink's JSON parser requires of the whole record).
	if !utf8.Valid(rec) {
		i := firstInvalidUTF8(rec)
		return 0, fmt.Errorf("invalid UTF-8 at byte %d of the record (byte 0x%02x)", i+1, rec[i])
	}
	d.strs.finish()
	return n, nil
}

// decodeDebezium reads a change event into rows[0] (before) and rows[1]
// (after).
func (d *jsonDecoder) decodeDebezium() (int, error) {
	sc := &d.sc
	var hasBefore, hasAfter bool
	var op byte
	err := d.fields(func(key []byte) error {
		switch string(key) {
		case "before", "after":
			which := 0
			if key[0] == 'a' {
				which = 1
			}
			if sc.literal("null") {
				return nil
			}
			if err := d.object(d.rows[which]); err != nil {
				// Not key: the object's own keys reuse its buffer.
				return fmt.Errorf("%s: %w", [2]string{"before", "after"}[which], err)
			}
			if which == 0 {
				hasBefore = true
			} else {
				hasAfter = true
			}
		case "op":
			if sc.peek() != '"' {
				return sc.expected("a string for \"op\"")
			}
			var err error
			if d.text, err = sc.str(d.text[:0]); err != nil {
				return err
			}
			if len(d.text) != 1 {
				return fmt.Errorf("unknown op %q", d.text)
			}
			op = d.text[0]
		default:
			_, err := sc.skipValue()
			return err
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	need := func(has bool, what string) error {
		if !has {
			return fmt.Errorf("op '%c' needs a non-null \"%s\"", op, what)
		}
		return nil
	}
	switch op {
	case 'c', 'r':
		d.kinds[0], d.order[0] = types.Insert, 1
		return 1, need(hasAfter, "after")
	case 'd':
		d.kinds[0], d.order[0] = types.Delete, 0
		return 1, need(hasBefore, "before")
	case 'u':
		d.kinds[0], d.order[0] = types.UpdateBefore, 0
		d.kinds[1], d.order[1] = types.UpdateAfter, 1
		if err := need(hasBefore, "before"); err != nil {
			return 0, err
		}
		return 2, need(hasAfter, "after")
	case 0:
		return 0, fmt.Errorf("missing field \"op\"")
	}
	return 0, fmt.Errorf("unknown op %q", op)
}

// fields reads an object, calling field with each key while the scanner is
// at the key's value; field must consume the value.
func (d *jsonDecoder) fields(field func(key []byte) error) error {
	sc := &d.sc
	sc.ws()
	if sc.peek() != '{' {
		return sc.expected("a JSON object")
	}
	sc.i++
	sc.ws()
	if sc.peek() == '}' {
		sc.i++
		return nil
	}
	for {
		sc.ws()
		if sc.peek() != '"' {
			return sc.expected("a field name")
		}
		var err error
		if d.key, err = sc.str(d.key[:0]); err != nil {
			return err
		}
		sc.ws()
		if sc.peek() != ':' {
			return sc.expected("':'")
		}
		sc.i++
		sc.ws()
		if err := field(d.key); err != nil {
			return err
		}
		sc.ws()
		switch sc.peek() {
		case ',':
			sc.i++
		case '}':
			sc.i++
			return nil
		default:
			return sc.expected("',' or '}'")
		}
	}
}

// object reads an object into row: fields matched to columns by name,
// missing ones NULL, unknown ones ignored.
func (d *jsonDecoder) object(row []types.Value) error {
	clear(row)
	clear(d.seen)
	return d.fields(func(key []byte) error {
		c, ok := d.column(key)
		if !ok {
			_, err := d.sc.skipValue()
			return err
		}
		d.seen[c] = true
		return d.value(c, &row[c])
	})
}

// column returns the index of the column named key: by comparing names
// when there are few columns (cheaper than hashing the key), else from
// the index.
func (d *jsonDecoder) column(key []byte) (int, bool) {
	if len(d.cols) <= 8 {
		for i := range d.cols {
			if d.cols[i].Name == string(key) {
				return i, true
			}
		}
		return 0, false
	}
	c, ok := d.index[string(key)]
	return c, ok
}

// value reads the value of column c into *dst.
func (d *jsonDecoder) value(c int, dst *types.Value) error {
	sc := &d.sc
	kind := d.cols[c].Type.Kind
	if d.cols[c].Type.Comp != nil {
		v, err := d.composite(d.cols[c].Type, 0)
		if err != nil {
			return fmt.Errorf("column %s: %w", d.cols[c].Name, err)
		}
		*dst = v
		return nil
	}
	var text []byte
	switch sc.peek() {
	case 'n':
		if sc.literal("null") {
			*dst = types.NullValue()
			return nil
		}
		return sc.expected("a value")
	case '"':
		var err error
		if d.text, err = sc.str(d.text[:0]); err != nil {
			return err
		}
		text = d.text
	default:
		raw, err := sc.skipValue()
		if err != nil {
			return err
		}
		if kind == types.KindVarchar {
			text = raw // numbers, booleans, objects as their JSON text
			break
		}
		if c0 := raw[0]; c0 == '{' || c0 == '[' || (kind.IsTimestamp() && c0 != 't' && c0 != 'f') {
			return fmt.Errorf("column %s: cannot read JSON %s as %s", d.cols[c].Name, jsonKind(c0), kind)
		}
		text = raw
	}
	if kind == types.KindVarchar {
		if err := d.strs.add(dst, text); err != nil {
			return fmt.Errorf("column %s: %w", d.cols[c].Name, err)
		}
		return nil
	}
	v, err := parseScalar(text, d.cols[c].Type, d.sep)
	if err != nil {
		return fmt.Errorf("column %s: %w", d.cols[c].Name, err)
	}
	if kind == types.KindTimestampLTZ {
		v = types.TimestampLTZValue(localToInstant(v.Int(), d.f.loc))
	}
	*dst = v
	return nil
}

func jsonKind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}
