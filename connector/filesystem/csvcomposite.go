package filesystem

import (
	"fmt"
	"unicode/utf8"

	"github.com/weir-sql/weir/types"
)

// This file reads and writes ROW and ARRAY columns in CSV, as Flink's csv
// format does: the fields of a ROW, or the elements of an ARRAY, in one
// CSV field, separated by 'csv.array-element-delimiter' (';' by default).
// An element that holds the delimiter or a backslash has them escaped with
// a backslash, so that any string survives the round trip (Flink's csv
// leaves this to an optional escape character). An empty element is NULL
// (or, for VARCHAR, the empty string), as an empty CSV field is, and the
// null literal, when one is set, is NULL. A ROW or ARRAY nested in another
// and MAP columns are refused (checkComposite), as Flink's csv has them
// neither.

// csvComposite reports whether t is a ROW or ARRAY the csv format takes:
// its fields or elements are not composite themselves.
func csvComposite(t types.Type) bool {
	switch t.Kind {
	case types.KindRow:
		for _, f := range t.Fields() {
			if f.Type.Comp != nil {
				return false
			}
		}
		return true
	case types.KindArray:
		return t.Elem().Comp == nil
	}
	return false
}

// appendComposite appends a ROW's fields or an ARRAY's elements, separated
// by the array element delimiter, each escaped (the caller quotes the
// whole as a CSV field).
func (e *csvEncoder) appendComposite(dst []byte, v types.Value) []byte {
	v.Elems(func(i int, el types.Value) bool {
		if i > 0 {
			dst = append(dst, e.f.arrayDelim)
		}
		if el.IsNull() {
			dst = append(dst, e.f.nullLiteral...)
			return true
		}
		start := len(dst)
		dst = e.scalarText(dst, el)
		dst = e.escapeElem(dst, start)
		return true
	})
	return dst
}

// escapeElem escapes the delimiter and backslashes in dst[start:].
func (e *csvEncoder) escapeElem(dst []byte, start int) []byte {
	n := 0
	for _, c := range dst[start:] {
		if c == e.f.arrayDelim || c == '\\' {
			n++
		}
	}
	if n == 0 {
		return dst
	}
	end := len(dst)
	dst = append(dst, make([]byte, n)...)
	w := len(dst)
	for r := end - 1; r >= start; r-- {
		c := dst[r]
		w--
		dst[w] = c
		if c == e.f.arrayDelim || c == '\\' {
			w--
			dst[w] = '\\'
		}
	}
	return dst
}

// composite parses text, a CSV field of column type t (a ROW or ARRAY of
// scalars), into a value built in d.comp.
func (d *csvDecoder) composite(text []byte, t types.Type) (types.Value, error) {
	var fields []types.Field
	if t.Kind == types.KindRow {
		fields = t.Fields()
	}
	b := &d.comp
	b.Begin()
	n, rawStart := 0, 0
	elem := d.elem[:0]
	// add takes the element whose escaped text is text[rawStart:end] and
	// whose unescaped text is elem.
	add := func(end int) error {
		et := t
		if fields != nil {
			if n >= len(fields) {
				return fmt.Errorf("more than the %d fields of %s", len(fields), t.Name())
			}
			et = fields[n].Type
		} else {
			et = t.Elem()
		}
		var v types.Value
		switch {
		case d.f.hasNullLiteral && string(text[rawStart:end]) == d.f.nullLiteral:
		case et.Kind == types.KindVarchar:
			if !utf8.Valid(elem) {
				return fmt.Errorf("element %d: %w", n+1, invalidUTF8(elem))
			}
			v, _ = parseElem(elem, et, tsAny)
		case len(elem) == 0:
		default:
			var err error
			if v, err = parseScalar(elem, et, tsAny); err != nil {
				return fmt.Errorf("element %d: %w", n+1, err)
			}
			if et.Kind == types.KindTimestampLTZ {
				v = types.TimestampLTZValue(localToInstant(v.Int(), d.f.loc))
			}
		}
		b.Add(v)
		n++
		elem = elem[:0]
		return nil
	}
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\\' && i+1 < len(text):
			i++
			elem = append(elem, text[i])
		case c == d.f.arrayDelim:
			if err := add(i); err != nil {
				return types.Value{}, err
			}
			rawStart = i + 1
		default:
			elem = append(elem, c)
		}
	}
	if err := add(len(text)); err != nil {
		return types.Value{}, err
	}
	d.elem = elem
	if fields != nil && n != len(fields) {
		return types.Value{}, fmt.Errorf("%d fields, %s has %d", n, t.Name(), len(fields))
	}
	return b.Finish(t.Kind), nil
}
