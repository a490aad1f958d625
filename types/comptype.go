package types

import (
	"strconv"
	"strings"
)

// Field is a named field of a ROW type (Name is empty for an ARRAY's
// element and a MAP's key and value).
type Field struct {
	Name string
	Type Type
}

// Composite describes the elements of a ROW, ARRAY or MAP type: a ROW's
// fields in order, an ARRAY's one element, a MAP's key and value. It is
// immutable once built; a Type points to it.
type Composite struct {
	Fields []Field
}

// RowOf returns the type ROW<fields…>, nullable.
func RowOf(fields ...Field) Type {
	return Type{Kind: KindRow, Comp: &Composite{Fields: fields}}
}

// ArrayOf returns the type ARRAY<elem>, nullable.
func ArrayOf(elem Type) Type {
	return Type{Kind: KindArray, Comp: &Composite{Fields: []Field{{Type: elem}}}}
}

// MapOf returns the type MAP<key, value>, nullable.
func MapOf(key, value Type) Type {
	return Type{Kind: KindMap, Comp: &Composite{Fields: []Field{{Type: key}, {Type: value}}}}
}

// Fields returns a ROW type's fields (nil for other kinds).
func (t Type) Fields() []Field {
	if t.Kind != KindRow || t.Comp == nil {
		return nil
	}
	return t.Comp.Fields
}

// Elem returns an ARRAY type's element type, or a MAP type's value type.
func (t Type) Elem() Type {
	if t.Comp == nil || len(t.Comp.Fields) == 0 {
		return Type{}
	}
	return t.Comp.Fields[len(t.Comp.Fields)-1].Type
}

// Key returns a MAP type's key type.
func (t Type) Key() Type {
	if t.Kind != KindMap || t.Comp == nil || len(t.Comp.Fields) < 2 {
		return Type{}
	}
	return t.Comp.Fields[0].Type
}

// FieldIndex returns the position of a ROW type's field named name:
// exactly, else ignoring case if only one field matches; -1 if none.
func (t Type) FieldIndex(name string) int {
	fs := t.Fields()
	for i, f := range fs {
		if f.Name == name {
			return i
		}
	}
	found := -1
	for i, f := range fs {
		if strings.EqualFold(f.Name, name) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// SameShape reports whether values of types a and b are encoded alike,
// so that their bytes compare equal exactly when the values are equal:
// the same kinds all the way down (and DECIMAL scales), whatever the
// field names, nullability and time attributes.
func SameShape(a, b Type) bool {
	if a.Kind != b.Kind {
		return false
	}
	if a.Kind == KindDecimal {
		return a.S == b.S
	}
	if a.Kind != KindRow && a.Kind != KindArray && a.Kind != KindMap {
		return true
	}
	if a.Comp == nil || b.Comp == nil {
		return a.Comp == b.Comp
	}
	if len(a.Comp.Fields) != len(b.Comp.Fields) {
		return false
	}
	for i := range a.Comp.Fields {
		if !SameShape(a.Comp.Fields[i].Type, b.Comp.Fields[i].Type) {
			return false
		}
	}
	return true
}

// compositeName renders a composite type as Flink prints it:
// ROW<`id` BIGINT, `name` STRING>, ARRAY<INT>, MAP<STRING, INT>; sql
// selects Type.SQL (STRING) over Type.String (VARCHAR) for the elements.
func compositeName(t Type, sql bool) string {
	elem := func(e Type) string {
		if sql {
			return e.SQL()
		}
		return e.String()
	}
	var b strings.Builder
	b.WriteString(t.Kind.String())
	b.WriteByte('<')
	if t.Comp != nil {
		for i, f := range t.Comp.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			if t.Kind == KindRow {
				b.WriteString(QuoteIdent(f.Name))
				b.WriteByte(' ')
			}
			b.WriteString(elem(f.Type))
		}
	}
	b.WriteByte('>')
	return b.String()
}

// QuoteIdent quotes a name with backquotes, as Flink prints ROW field
// names: `a`, `a“b`.
func QuoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// NewComposite returns the ROW, ARRAY or MAP (k) of elems (a MAP's key,
// value, key, value, …), in one allocation of its exact size: for
// values built one at a time (a constructor in an expression); a
// connector building many uses a RowBuilder.
func NewComposite(k Kind, elems ...Value) Value {
	n := 0
	for _, e := range elems {
		n += 1 + 18 + len(e.s) + 10
	}
	buf := make([]byte, 0, n)
	for _, e := range elems {
		buf = appendElem(buf, e)
	}
	return Value{k: k, s: string(buf)}
}

// Elems calls f with each element of a composite value in order (for a
// MAP: key, value, key, value, …) until f returns false. It does not
// allocate.
func (v Value) Elems(f func(i int, e Value) bool) {
	i := 0
	for s := v.s; s != ""; i++ {
		var e Value
		e, s = readElem(s)
		if !f(i, e) {
			return
		}
	}
}

// fieldLabel names field i of a ROW built by a constructor: EXPR$0, … as
// Flink names them.
func fieldLabel(i int) string { return "EXPR$" + strconv.Itoa(i) }

// RowOfTypes returns the type ROW<EXPR$0 t0, EXPR$1 t1, …> of a ROW(…)
// constructor.
func RowOfTypes(ts ...Type) Type {
	fs := make([]Field, len(ts))
	for i, t := range ts {
		fs[i] = Field{Name: fieldLabel(i), Type: t}
	}
	return RowOf(fs...)
}
