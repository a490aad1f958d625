package expr

import (
	"fmt"

	"github.com/weir-sql/weir/types"
)

// addCompositeFuncs adds the functions on ARRAY and MAP values.
func addCompositeFuncs(m map[string]*scalarDef) {
	m["CARDINALITY"] = &scalarDef{min: 1, max: 1,
		result: func(args []Expr) (types.Type, error) {
			if k := args[0].Type().Kind; k != types.KindArray && k != types.KindMap && k != types.KindNull {
				return types.Type{}, &ArgError{Arg: 0, Err: fmt.Errorf("CARDINALITY takes an ARRAY or a MAP, not %s", sqlName(args[0].Type()))}
			}
			return types.Int, nil
		},
		eval3: func(_ *Scalar, a, _, _ types.Value) (types.Value, error) {
			return types.IntValue(int64(a.Len())), nil
		},
		doc: "CARDINALITY(a): the number of elements of an ARRAY or entries of a MAP"}
	m["ELEMENT"] = &scalarDef{min: 1, max: 1, nullable: true,
		result: func(args []Expr) (types.Type, error) {
			if k := args[0].Type().Kind; k != types.KindArray {
				return types.Type{}, &ArgError{Arg: 0, Err: fmt.Errorf("ELEMENT takes an ARRAY, not %s", sqlName(args[0].Type()))}
			}
			return args[0].Type().Elem().Nullable(), nil
		},
		eval3: func(_ *Scalar, a, _, _ types.Value) (types.Value, error) {
			switch a.Len() {
			case 0:
				return types.Value{}, nil
			case 1:
				return a.Field(0), nil
			}
			return types.Value{}, fmt.Errorf("ELEMENT of an ARRAY of %d elements: it must have at most one", a.Len())
		},
		doc: "ELEMENT(a): the sole element of an ARRAY; NULL if empty, an error if it has more"}
	m["ARRAY_CONTAINS"] = &scalarDef{min: 2, max: 2,
		result: func(args []Expr) (types.Type, error) {
			at := args[0].Type()
			if at.Kind != types.KindArray {
				return types.Type{}, &ArgError{Arg: 0, Err: fmt.Errorf("ARRAY_CONTAINS takes an ARRAY, not %s", sqlName(at))}
			}
			if !Comparable(at.Elem().Kind, args[1].Type().Kind) {
				return types.Type{}, &ArgError{Arg: 1, Err: fmt.Errorf("ARRAY_CONTAINS: the elements are %s, not %s", sqlName(at.Elem()), sqlName(args[1].Type()))}
			}
			return types.Boolean, nil
		},
		eval3: func(_ *Scalar, a, x, _ types.Value) (types.Value, error) {
			found := false
			a.Elems(func(_ int, e types.Value) bool {
				found = !e.IsNull() && types.Compare(e, x) == 0
				return !found
			})
			return types.BoolValue(found), nil
		},
		doc: "ARRAY_CONTAINS(a, x): whether the ARRAY a has an element equal to x"}
}
