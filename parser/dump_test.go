package parser

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// dump renders an AST as a deterministic indented tree: one node per line
// with its type, position (line:col, and @offset for statements and
// column refs) and non-zero scalar fields; child nodes follow, indented,
// under their field name. With withPos false, positions and statement
// text are left out (used to compare ASTs for the round trip).
func dump(n Node, withPos bool) string {
	d := dumper{withPos: withPos}
	d.node(reflect.ValueOf(n), 0)
	return d.b.String()
}

type dumper struct {
	b       strings.Builder
	withPos bool
}

var (
	posType      = reflect.TypeOf(Pos{})
	stmtBaseType = reflect.TypeOf(StmtBase{})
	nodeType     = reflect.TypeOf((*Node)(nil)).Elem()
)

func (d *dumper) indent(depth int) {
	d.b.WriteString(strings.Repeat("  ", depth))
}

// node writes v (a pointer to an AST struct) starting on the current line.
func (d *dumper) node(v reflect.Value, depth int) {
	if v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if !v.IsValid() || v.IsNil() {
		d.b.WriteString("nil\n")
		return
	}
	s := v.Elem()
	t := s.Type()
	d.b.WriteString(t.Name())
	var children []int
	for i := 0; i < t.NumField(); i++ {
		f, fv := t.Field(i), s.Field(i)
		switch {
		case f.Type == posType:
			if d.withPos {
				d.pos(fv.Interface().(Pos), t.Name() == "ColumnRef")
			}
		case f.Type == stmtBaseType:
			base := fv.Interface().(StmtBase)
			if d.withPos {
				d.pos(base.Pos, true)
				fmt.Fprintf(&d.b, " %s", strconv.Quote(base.Text))
			}
		case isNodeish(f.Type):
			children = append(children, i)
		default:
			d.scalar(f.Name, fv)
		}
	}
	d.b.WriteString("\n")
	for _, i := range children {
		f, fv := t.Field(i), s.Field(i)
		if fv.Kind() == reflect.Slice {
			if fv.Len() == 0 {
				continue
			}
			d.indent(depth + 1)
			fmt.Fprintf(&d.b, "%s:\n", f.Name)
			for j := 0; j < fv.Len(); j++ {
				d.indent(depth + 2)
				d.b.WriteString("- ")
				d.node(fv.Index(j), depth+3)
			}
			continue
		}
		if fv.IsNil() {
			continue
		}
		d.indent(depth + 1)
		fmt.Fprintf(&d.b, "%s: ", f.Name)
		d.node(fv, depth+1)
	}
}

func (d *dumper) pos(p Pos, offset bool) {
	fmt.Fprintf(&d.b, " %d:%d", p.Line, p.Col)
	if offset {
		fmt.Fprintf(&d.b, "@%d", p.Offset)
	}
}

// isNodeish reports whether a field holds nodes (dumped as children).
func isNodeish(t reflect.Type) bool {
	if t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t.Implements(nodeType) || (t.Kind() == reflect.Interface && t.Implements(nodeType))
}

func (d *dumper) scalar(name string, v reflect.Value) {
	if fs, ok := v.Interface().([]*TypeField); ok {
		if fs != nil {
			kind := ""
			if len(fs) > 0 && fs[0].Name != "" {
				kind = "ROW"
			}
			fmt.Fprintf(&d.b, " %s=%s", name, strconv.Quote(TypeText(&TypeName{Name: kind, Fields: fs})))
		}
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			fmt.Fprintf(&d.b, " %s", name)
		}
	case reflect.String:
		if v.String() != "" {
			fmt.Fprintf(&d.b, " %s=%s", name, strconv.Quote(v.String()))
		}
	case reflect.Slice:
		if v.Len() == 0 {
			return
		}
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(v.Index(i).Interface())
			if s, ok := v.Index(i).Interface().(string); ok {
				parts[i] = strconv.Quote(s)
			}
		}
		fmt.Fprintf(&d.b, " %s=[%s]", name, strings.Join(parts, " "))
	default:
		fmt.Fprintf(&d.b, " %s=%v", name, v.Interface())
	}
}
