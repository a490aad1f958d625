package filesystem

import (
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/weir-sql/weir/types"
)

// This file reads and writes ROW, ARRAY and MAP columns as JSON, as
// Flink's json format does: a ROW as an object of its fields by name
// (missing ones NULL, unknown ones ignored), an ARRAY as an array, a MAP
// as an object (keys are strings in JSON; a non-string key type is
// parsed from the key's text).

// compositeScratch holds the element values of the composites being
// read, one slice per nesting level, reused from record to record.
type compositeScratch struct {
	levels [][]types.Value
	b      types.RowBuilder
	text   []byte
	// arena holds the text of the strings read for the composite being
	// built, until it is built (a grown arena leaves the old bytes as
	// they were, so earlier strings stay valid).
	arena []byte
}

// level returns the scratch slice of nesting level depth, emptied.
func (s *compositeScratch) level(depth int) []types.Value {
	for len(s.levels) <= depth {
		s.levels = append(s.levels, nil)
	}
	return s.levels[depth][:0]
}

// composite reads the JSON value at the scanner as type t (a ROW, ARRAY
// or MAP) at nesting level depth.
func (d *jsonDecoder) composite(t types.Type, depth int) (types.Value, error) {
	sc := &d.sc
	sc.ws()
	if sc.literal("null") {
		return types.Value{}, nil
	}
	if depth > 64 {
		return types.Value{}, sc.errorf("JSON nested more than 64 levels deep")
	}
	s := &d.comp
	if depth == 0 {
		s.arena = s.arena[:0]
	}
	vals := s.level(depth)
	var err error
	switch t.Kind {
	case types.KindRow:
		fs := t.Fields()
		for range fs {
			vals = append(vals, types.Value{})
		}
		err = d.fields(func(key []byte) error {
			i := fieldIndexBytes(fs, key)
			if i < 0 {
				_, err := sc.skipValue()
				return err
			}
			v, err := d.element(fs[i].Type, depth)
			if err != nil {
				return fmt.Errorf("field %s: %w", fs[i].Name, err)
			}
			vals[i] = v
			return nil
		})
	case types.KindArray:
		if sc.peek() != '[' {
			return types.Value{}, sc.expected("a JSON array")
		}
		sc.i++
		sc.ws()
		if sc.peek() == ']' {
			sc.i++
			break
		}
		for {
			v, err := d.element(t.Elem(), depth)
			if err != nil {
				return types.Value{}, fmt.Errorf("element %d: %w", len(vals)+1, err)
			}
			vals = append(vals, v)
			sc.ws()
			if sc.peek() == ',' {
				sc.i++
				continue
			}
			if sc.peek() != ']' {
				return types.Value{}, sc.expected("',' or ']'")
			}
			sc.i++
			break
		}
	case types.KindMap:
		err = d.fields(func(key []byte) error {
			var k types.Value
			var err error
			if t.Key().Kind == types.KindVarchar {
				k, err = s.str(key)
			} else {
				k, err = parseElem(key, t.Key(), d.sep)
			}
			if err != nil {
				return fmt.Errorf("key %q: %w", key, err)
			}
			vals = append(vals, k)
			v, err := d.element(t.Elem(), depth)
			if err != nil {
				return fmt.Errorf("key %q: %w", key, err)
			}
			vals = append(vals, v)
			return nil
		})
	}
	s.levels[depth] = vals
	if err != nil {
		return types.Value{}, err
	}
	s.b.Begin()
	for _, v := range vals {
		s.b.Add(v)
	}
	return s.b.Finish(t.Kind), nil
}

// element reads one field, element, or map value of type t.
func (d *jsonDecoder) element(t types.Type, depth int) (types.Value, error) {
	sc := &d.sc
	sc.ws()
	if t.Comp != nil {
		return d.composite(t, depth+1)
	}
	switch sc.peek() {
	case 'n':
		if sc.literal("null") {
			return types.Value{}, nil
		}
		return types.Value{}, sc.expected("a value")
	case '"':
		var err error
		if d.comp.text, err = sc.str(d.comp.text[:0]); err != nil {
			return types.Value{}, err
		}
		if t.Kind == types.KindVarchar {
			return d.comp.str(d.comp.text)
		}
		return parseElem(d.comp.text, t, d.sep)
	}
	raw, err := sc.skipValue()
	if err != nil {
		return types.Value{}, err
	}
	if t.Kind == types.KindVarchar {
		return d.comp.str(raw) // numbers, booleans, objects as their JSON text
	}
	if c0 := raw[0]; c0 == '{' || c0 == '[' {
		return types.Value{}, fmt.Errorf("cannot read JSON %s as %s", jsonKind(c0), t.Name())
	}
	return parseElem(raw, t, d.sep)
}

// parseElem parses the text of an element of type t. The value may point
// into text: the caller copies it into a composite at once.
func parseElem(text []byte, t types.Type, sep byte) (types.Value, error) {
	if t.Kind == types.KindVarchar {
		if len(text) == 0 {
			return types.StringValue(""), nil
		}
		return types.StringValue(unsafe.String(&text[0], len(text))), nil
	}
	return parseScalar(text, t, sep)
}

// str returns a VARCHAR of text, kept in the arena.
func (s *compositeScratch) str(text []byte) (types.Value, error) {
	if !utf8.Valid(text) {
		return types.Value{}, invalidUTF8(text)
	}
	if len(text) == 0 {
		return types.StringValue(""), nil
	}
	start := len(s.arena)
	s.arena = append(s.arena, text...)
	return types.StringValue(unsafe.String(&s.arena[start], len(text))), nil
}

// fieldIndexBytes finds the field named key (exactly), or -1.
func fieldIndexBytes(fs []types.Field, key []byte) int {
	for i, f := range fs {
		if f.Name == string(key) {
			return i
		}
	}
	return -1
}

// compositeJSON appends the composite v of type t as JSON.
func (e *jsonObjectEncoder) compositeJSON(dst []byte, v types.Value, t types.Type) []byte {
	if v.IsNull() {
		return append(dst, "null"...)
	}
	switch t.Kind {
	case types.KindRow:
		fs := t.Fields()
		dst = append(dst, '{')
		v.Elems(func(i int, x types.Value) bool {
			if i >= len(fs) {
				return false
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, fs[i].Name)
			dst = append(dst, ':')
			dst = e.typed(dst, x, fs[i].Type)
			return true
		})
		return append(dst, '}')
	case types.KindArray:
		dst = append(dst, '[')
		v.Elems(func(i int, x types.Value) bool {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = e.typed(dst, x, t.Elem())
			return true
		})
		return append(dst, ']')
	}
	dst = append(dst, '{')
	v.Elems(func(i int, x types.Value) bool {
		switch {
		case i%2 == 1:
			dst = append(dst, ':')
			dst = e.typed(dst, x, t.Elem())
		default:
			if i > 0 {
				dst = append(dst, ',')
			}
			if x.Kind() == types.KindVarchar {
				dst = appendJSONString(dst, x.Str())
			} else {
				dst = appendJSONString(dst, x.String())
			}
		}
		return true
	})
	return append(dst, '}')
}

// typed appends v of type t as JSON.
func (e *jsonObjectEncoder) typed(dst []byte, v types.Value, t types.Type) []byte {
	if t.Comp != nil {
		return e.compositeJSON(dst, v, t)
	}
	return e.value(dst, v)
}

// checkComposite refuses the composite columns a format cannot hold
// (done is "read" or "written"): 'json' and 'debezium-json' take any;
// 'csv' a ROW or ARRAY of scalars (csvcomposite.go), as Flink's csv.
func checkComposite(f format, schema types.Schema, done string) error {
	if f.name == formatJSON || f.name == formatDebezium {
		return nil
	}
	for _, c := range schema.Columns {
		switch {
		case c.Type.Comp == nil || csvComposite(c.Type):
		case c.Type.Kind == types.KindMap:
			return fmt.Errorf("column %s: a %s cannot be %s with format '%s' (Flink's csv has no MAP either; use format 'json', which nests it)", c.Name, c.Type.Name(), done, f.name)
		default:
			return fmt.Errorf("column %s: a %s cannot be %s with format '%s': csv takes a ROW or ARRAY of scalars, not one nested in another (use format 'json', which nests it)", c.Name, c.Type.Name(), done, f.name)
		}
	}
	return nil
}
