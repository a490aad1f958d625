package expr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/types"
)

// JSON functions with Flink's defaults: lax paths, NULL ON EMPTY and NULL
// ON ERROR (FALSE ON ERROR for JSON_EXISTS). A path is $ followed by
// steps .key, ['key'] or [n]; the path of a literal is parsed once.

func addJSONFuncs(m map[string]*scalarDef) {
	str := []argClass{aStr}
	m["JSON_VALUE"] = &scalarDef{min: 2, max: 2, args: str, prepare: prepareJSONPath, eval3: evalJSONValue, nullable: true,
		doc: "JSON_VALUE(json, path): the scalar at path as a string; NULL if none, not a scalar, or json is not JSON"}
	m["JSON_QUERY"] = &scalarDef{min: 2, max: 2, args: str, prepare: prepareJSONPath, eval3: evalJSONQuery, nullable: true,
		doc: "JSON_QUERY(json, path): the object or array at path as JSON text; NULL if none"}
	m["JSON_EXISTS"] = &scalarDef{min: 2, max: 2, args: str, prepare: prepareJSONPath, eval3: evalJSONExists,
		result: typeOf(types.KindBoolean), doc: "JSON_EXISTS(json, path): whether path exists in json (FALSE if json is not JSON)"}
	m["JSON_ARRAY"] = &scalarDef{min: 0, max: -1, evalN: evalJSONArray, result: func([]Expr) (types.Type, error) {
		return types.Type{Kind: types.KindVarchar, NotNull: true}, nil
	}, doc: "JSON_ARRAY(a, b, ...): a JSON array of the arguments, NULLs left out"}
}

// jsonStep is one step of a path: a member name, or an array index (key "" and idx >= 0).
type jsonStep struct {
	key string
	idx int
}

// parseJSONPath parses a path such as $.a.b[0] or $['a'].
func parseJSONPath(p string) ([]jsonStep, error) {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(strings.ToLower(p), "lax ") {
		p = strings.TrimSpace(p[4:])
	} else if strings.HasPrefix(strings.ToLower(p), "strict ") {
		return nil, fmt.Errorf("strict paths are not supported (lax is)")
	}
	if !strings.HasPrefix(p, "$") {
		return nil, fmt.Errorf("a JSON path starts with $")
	}
	var steps []jsonStep
	for i := 1; i < len(p); {
		switch p[i] {
		case '.':
			j := i + 1
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			if j == i+1 {
				return nil, fmt.Errorf("empty member name at offset %d", i)
			}
			steps = append(steps, jsonStep{key: p[i+1 : j], idx: -1})
			i = j
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("missing ] after offset %d", i)
			}
			in := strings.TrimSpace(p[i+1 : i+end])
			if len(in) >= 2 && (in[0] == '\'' || in[0] == '"') && in[len(in)-1] == in[0] {
				steps = append(steps, jsonStep{key: in[1 : len(in)-1], idx: -1})
			} else {
				n, err := strconv.Atoi(in)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("bad array index [%s]", in)
				}
				steps = append(steps, jsonStep{idx: n})
			}
			i += end + 1
		default:
			return nil, fmt.Errorf("unexpected %q at offset %d", p[i], i)
		}
	}
	return steps, nil
}

func prepareJSONPath(s *Scalar) error {
	v, ok := s.constArg(1)
	if !ok || v.IsNull() {
		return nil
	}
	steps, err := parseJSONPath(v.Str())
	if err != nil {
		return &ArgError{Arg: 1, Err: fmt.Errorf("%s: bad JSON path '%s': %w", s.Name, v.Str(), err)}
	}
	s.state = steps
	return nil
}

// lookup parses doc and follows the call's path; found is false if doc is
// not JSON, the path is bad, or it leads nowhere.
func (s *Scalar) jsonLookup(doc, path string) (v any, found bool) {
	steps, ok := s.state.([]jsonStep)
	if !ok {
		var err error
		if steps, err = parseJSONPath(path); err != nil {
			return nil, false
		}
	}
	d := json.NewDecoder(strings.NewReader(doc))
	d.UseNumber()
	if err := d.Decode(&v); err != nil || d.More() {
		return nil, false
	}
	for _, st := range steps {
		switch x := v.(type) {
		case map[string]any:
			if st.idx >= 0 {
				return nil, false
			}
			if v, ok = x[st.key]; !ok {
				return nil, false
			}
		case []any:
			if st.idx < 0 || st.idx >= len(x) {
				return nil, false
			}
			v = x[st.idx]
		default:
			return nil, false
		}
	}
	return v, true
}

func evalJSONValue(s *Scalar, a, b, _ types.Value) (types.Value, error) {
	v, ok := s.jsonLookup(a.Str(), b.Str())
	if !ok {
		return types.Value{}, nil
	}
	switch x := v.(type) {
	case string:
		return types.StringValue(x), nil
	case json.Number:
		return types.StringValue(x.String()), nil
	case bool:
		return types.StringValue(strconv.FormatBool(x)), nil
	}
	return types.Value{}, nil // null, object or array
}

func evalJSONQuery(s *Scalar, a, b, _ types.Value) (types.Value, error) {
	v, ok := s.jsonLookup(a.Str(), b.Str())
	if !ok {
		return types.Value{}, nil
	}
	switch v.(type) {
	case map[string]any, []any:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return types.Value{}, nil
		}
		return types.StringValue(strings.TrimSuffix(buf.String(), "\n")), nil
	}
	return types.Value{}, nil
}

func evalJSONExists(s *Scalar, a, b, _ types.Value) (types.Value, error) {
	_, ok := s.jsonLookup(a.Str(), b.Str())
	return types.BoolValue(ok), nil
}

// appendJSON appends v as a JSON value.
func appendJSON(dst []byte, v types.Value) []byte {
	switch v.Kind() {
	case types.KindNull:
		return append(dst, "null"...)
	case types.KindBoolean:
		return strconv.AppendBool(dst, v.Bool())
	case types.KindInt, types.KindBigInt, types.KindTinyInt, types.KindSmallInt:
		return strconv.AppendInt(dst, v.Int(), 10)
	case types.KindDouble, types.KindFloat:
		return types.AppendDouble(dst, v.Float())
	case types.KindDecimal:
		return append(dst, castToString(v)...) // a JSON number, exact
	case types.KindVarchar:
		return appendJSONString(dst, v.Str())
	}
	return appendJSONString(dst, castToString(v))
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

func evalJSONArray(s *Scalar, row []types.Value) (types.Value, error) {
	buf := []byte{'['}
	n := 0
	for _, a := range s.Args {
		v, err := a.Eval(row)
		if err != nil {
			return types.Value{}, err
		}
		if v.IsNull() {
			continue
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSON(buf, v)
		n++
	}
	return types.StringValue(string(append(buf, ']'))), nil
}
