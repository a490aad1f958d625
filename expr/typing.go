package expr

import "github.com/weir-sql/weir/types"

// numericRank orders numeric kinds for widening: TINYINT < SMALLINT < INT
// < BIGINT < DECIMAL < FLOAT < DOUBLE.
func numericRank(k types.Kind) int {
	switch k {
	case types.KindTinyInt:
		return 1
	case types.KindSmallInt:
		return 2
	case types.KindInt:
		return 3
	case types.KindBigInt:
		return 4
	case types.KindDecimal:
		return 5
	case types.KindFloat:
		return 6
	case types.KindDouble:
		return 7
	}
	return 0
}

// CommonType returns the type both a and b convert to implicitly: the wider
// of two numeric types, the same kind, or the other type when one is the
// NULL type. ok is false if there is none.
func CommonType(a, b types.Type) (t types.Type, ok bool) {
	nn := a.NotNull && b.NotNull
	switch {
	case a.Kind == types.KindNull:
		return b.Nullable(), true
	case b.Kind == types.KindNull:
		return a.Nullable(), true
	case a.Kind == types.KindDecimal && (b.Kind == types.KindDecimal || b.Kind.IsInteger()),
		b.Kind == types.KindDecimal && a.Kind.IsInteger():
		t := MergeDecimal(a, b)
		t.NotNull = nn
		return t, true
	case isComposite(a.Kind) || isComposite(b.Kind):
		return commonComposite(a, b)
	case a.Kind == b.Kind:
		return types.Type{Kind: a.Kind, NotNull: nn}, true
	case a.Kind.IsNumeric() && b.Kind.IsNumeric():
		k := a.Kind
		if numericRank(b.Kind) > numericRank(k) {
			k = b.Kind
		}
		return types.Type{Kind: k, NotNull: nn}, true
	}
	return types.Type{}, false
}

// Comparable reports whether values of kinds a and b can be compared with
// = < and friends: numbers with numbers, otherwise the same kind (NULL with anything).
func Comparable(a, b types.Kind) bool {
	if a == types.KindNull || b == types.KindNull || a == b {
		return true
	}
	return a.IsNumeric() && b.IsNumeric()
}

// CanAssign reports whether a value of type from may be stored in a column
// of type to without an explicit CAST: the same kind, NULL, or a widening
// numeric conversion (TINYINT→…→BIGINT→DECIMAL→FLOAT→DOUBLE). A DECIMAL
// converts to any DECIMAL (a value that does not fit fails at run time).
func CanAssign(from, to types.Type) bool {
	if isComposite(from.Kind) || isComposite(to.Kind) {
		return from.Kind == to.Kind && castableComposite(from, to) == nil
	}
	if from.Kind == types.KindNull || from.Kind == to.Kind {
		return true
	}
	return from.Kind.IsNumeric() && to.Kind.IsNumeric() && numericRank(from.Kind) < numericRank(to.Kind)
}

// Coerce returns e converted to kind t (a CAST), or e itself if it already
// has that kind.
func Coerce(e Expr, t types.Type) (Expr, error) {
	if et := e.Type(); et.Kind == t.Kind && (t.Kind != types.KindDecimal || et.P == t.P && et.S == t.S) && (t.Comp == nil || types.SameShape(et, t)) {
		return e, nil
	}
	c, err := NewCast(e, t)
	if err != nil {
		return nil, err
	}
	// A constant converts at once (CAST(NULL AS BIGINT) is a BIGINT NULL),
	// so that plans and operator ids do not depend on where a coercion
	// was made.
	return Fold(c), nil
}
