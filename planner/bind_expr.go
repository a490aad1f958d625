package planner

import (
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/confval"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// isAggCall reports whether e calls an aggregate function of the registry.
func isAggCall(e parser.Expr) (*parser.Call, bool) {
	c, ok := e.(*parser.Call)
	return c, ok && c.Over == nil && aggfunc.Builtins().Has(c.Name)
}

// exprBinder turns AST expressions into compiled expressions over a scope.
// With agg set, it binds the expressions above an aggregate: group keys
// and aggregate calls become columns of the aggregate's output.
type exprBinder struct {
	sc    *scope
	agg   *aggScope
	where string         // clause name for "aggregate not allowed in ..." errors
	loc   *time.Location // the session's time zone; nil: UTC
	cat   *Catalog       // for user functions (CREATE FUNCTION); nil: none
	// over binds the window function calls of a select list (bindOver).
	over map[*parser.Call]expr.Expr
}

func wrap(pos parser.Pos, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*parser.Error); ok {
		return err
	}
	return parser.Errorf(pos, "%s", err.Error())
}

func (b *exprBinder) bind(e parser.Expr) (expr.Expr, error) {
	if c, ok := e.(*parser.Call); ok && c.Over != nil {
		if x, ok := b.over[c]; ok {
			return x, nil
		}
		return nil, parser.Errorf(c.Pos, "%s(…) OVER is only allowed in a SELECT list (filter on it in an enclosing query: SELECT * FROM (SELECT …, %s() OVER (…) AS rn FROM t) WHERE rn <= 3)", c.Name, c.Name)
	}
	if b.agg != nil {
		if x, ok, err := b.agg.lookup(e); ok || err != nil {
			return x, err
		}
	}
	x, err := b.bind1(e)
	if err != nil {
		return nil, wrap(e.Position(), err)
	}
	return expr.Fold(x), nil
}

func (b *exprBinder) bindAll(es []parser.Expr) ([]expr.Expr, error) {
	out := make([]expr.Expr, len(es))
	for i, e := range es {
		x, err := b.bind(e)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func (b *exprBinder) bind1(e parser.Expr) (expr.Expr, error) {
	switch n := e.(type) {
	case *parser.ColumnRef:
		if x, ok, err := b.bareTimeFunction(n); ok || err != nil {
			return x, err
		}
		if err := b.bareFunction(n); err != nil {
			return nil, err
		}
		if b.agg != nil {
			return nil, parser.Errorf(n.Pos, "expression '%s' must appear in GROUP BY or be used in an aggregate", sqlText(n))
		}
		if n.Table != "" && b.sc.part(n.Table) == nil {
			// r.f: a field of the ROW column r, when r is no table in scope.
			col := &parser.ColumnRef{Pos: n.Pos, Name: n.Table}
			if r, err := b.sc.resolve(col); err == nil {
				return b.fieldGet(r, n.Name, fieldPos(n))
			}
		}
		return b.sc.resolve(n)
	case *parser.FieldAccess:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		return b.fieldGet(x, n.Field, n.Pos)
	case *parser.Subscript:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		i, err := b.bind(n.Index)
		if err != nil {
			return nil, err
		}
		s, err := expr.NewSubscript(x, i)
		if err != nil {
			return nil, parser.Errorf(n.Pos, "%s", err.Error())
		}
		return s, nil
	case *parser.Constructor:
		args, err := b.bindAll(n.Args)
		if err != nil {
			return nil, err
		}
		kind := map[string]types.Kind{"ROW": types.KindRow, "ARRAY": types.KindArray, "MAP": types.KindMap}[n.Kind]
		x, err := expr.NewConstructor(kind, args)
		var ae *expr.ArgError
		if errors.As(err, &ae) && ae.Arg < len(n.Args) {
			return nil, parser.Errorf(startPos(n.Args[ae.Arg]), "%s", err.Error())
		}
		return x, err
	case *parser.NumberLit:
		return numberLit(n)
	case *parser.StringLit:
		return expr.NewLiteral(types.StringValue(n.Value), types.Varchar), nil
	case *parser.BoolLit:
		return expr.NewLiteral(types.BoolValue(n.Value), types.Boolean), nil
	case *parser.NullLit:
		return expr.NewLiteral(types.NullValue(), types.Null), nil
	case *parser.IntervalLit:
		return intervalLit(n)
	case *parser.TimestampLit:
		switch n.Type {
		case "DATE":
			d, err := expr.ParseDate(n.Value)
			if err != nil {
				return nil, parser.Errorf(n.Pos, "bad DATE literal '%s': want 'yyyy-mm-dd'", n.Value)
			}
			return expr.NewLiteral(types.DateValue(d), types.Type{Kind: types.KindDate}), nil
		case "TIME":
			ms, err := expr.ParseTime(n.Value)
			if err != nil {
				return nil, parser.Errorf(n.Pos, "bad TIME literal '%s': want 'hh:mm:ss'", n.Value)
			}
			return expr.NewLiteral(types.TimeValue(ms), types.Type{Kind: types.KindTime}), nil
		}
		ms, err := expr.ParseTimestamp(n.Value)
		if err != nil {
			return nil, parser.Errorf(n.Pos, "bad TIMESTAMP literal '%s': want 'yyyy-mm-dd hh:mm:ss.fff'", n.Value)
		}
		return expr.NewLiteral(types.TimestampValue(ms), types.Timestamp), nil
	case *parser.Binary:
		l, err := b.bind(n.L)
		if err != nil {
			return nil, err
		}
		r, err := b.bind(n.R)
		if err != nil {
			return nil, err
		}
		switch n.Op {
		case "AND":
			return expr.NewAnd(l, r)
		case "OR":
			return expr.NewOr(l, r)
		case "=", "<>", "<", "<=", ">", ">=":
			// A TIMESTAMP compares with a TIMESTAMP_LTZ as a local time
			// of the session's time zone.
			lk, rk := l.Type().Kind, r.Type().Kind
			if lk == types.KindTimestamp && rk == types.KindTimestampLTZ {
				if l, err = expr.NewCastIn(l, types.Type{Kind: rk}, b.loc); err != nil {
					return nil, err
				}
			} else if lk == types.KindTimestampLTZ && rk == types.KindTimestamp {
				if r, err = expr.NewCastIn(r, types.Type{Kind: lk}, b.loc); err != nil {
					return nil, err
				}
			}
			return expr.NewCompare(n.Op, l, r)
		case "||":
			return expr.NewCall("||", []expr.Expr{l, r})
		case "IS DISTINCT FROM", "IS NOT DISTINCT FROM":
			return expr.NewIsDistinct(l, r, n.Op == "IS NOT DISTINCT FROM")
		}
		a, err := expr.NewArith(n.Op, l, r)
		if err == nil {
			a.(*expr.Arith).Src = srcOf(n)
		}
		return a, err
	case *parser.Unary:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		switch n.Op {
		case "NOT":
			return expr.NewNot(x)
		case "-":
			neg, err := expr.NewNeg(x)
			if err == nil {
				neg.(*expr.Neg).Src = srcOf(n)
			}
			return neg, err
		}
		if !x.Type().Kind.IsNumeric() {
			return nil, parser.Errorf(n.Pos, "cannot apply unary '+' to %s", x.Type().Kind)
		}
		return x, nil
	case *parser.IsNull:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		return expr.NewIsNull(x, n.Not), nil
	case *parser.In:
		if n.Query != nil {
			return nil, parser.Errorf(n.Pos, "IN (SELECT ...) is supported only as a condition of WHERE, alone or AND-ed with other conditions")
		}
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		list, err := b.bindAll(n.List)
		if err != nil {
			return nil, err
		}
		return expr.NewIn(x, list, n.Not)
	case *parser.Exists:
		return nil, parser.Errorf(n.Pos, "EXISTS (SELECT ...) is supported only as a condition of WHERE, alone or AND-ed with other conditions")
	case *parser.Between:
		xs, err := b.bindAll([]parser.Expr{n.X, n.Lo, n.Hi})
		if err != nil {
			return nil, err
		}
		return expr.NewBetween(xs[0], xs[1], xs[2], n.Not)
	case *parser.Like:
		xs, err := b.bindAll([]parser.Expr{n.X, n.Pattern})
		if err != nil {
			return nil, err
		}
		return expr.NewLike(xs[0], xs[1], n.Not)
	case *parser.Case:
		return b.bindCase(n)
	case *parser.Cast:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		t, err := columnType(n.Type)
		if err != nil {
			return nil, err
		}
		var c expr.Expr
		if n.Try {
			c, err = expr.NewTryCast(x, t, b.loc)
		} else {
			c, err = expr.NewCastIn(x, t, b.loc)
		}
		if err == nil {
			c.(*expr.Cast).Src = srcOf(n)
		}
		return c, err
	case *parser.Call:
		if aggfunc.Builtins().Has(n.Name) {
			where := b.where
			if where == "" {
				where = "here"
			}
			return nil, parser.Errorf(n.Pos, "aggregate function %s is not allowed %s", n.Name, where)
		}
		if n.Filter != nil {
			return nil, parser.Errorf(startPos(n.Filter), "FILTER (WHERE ...) is only valid on an aggregate function, not on %s", n.Name)
		}
		if expr.IsTimeFunction(n.Name) || (n.Name == "FLOOR" || n.Name == "CEIL" || n.Name == "CEILING") && len(n.Args) == 2 {
			return b.bindTimeCall(n)
		}
		if f, name, ok := b.cat.Function(n.Name); ok {
			return b.bindUserCall(n, name, f)
		}
		if !expr.IsFunction(n.Name) {
			return nil, unknownFunction(n)
		}
		args, err := b.bindAll(n.Args)
		if err != nil {
			return nil, err
		}
		x, err := expr.NewCall(n.Name, args)
		var ae *expr.ArgError
		if errors.As(err, &ae) && ae.Arg < len(n.Args) {
			return nil, parser.Errorf(startPos(n.Args[ae.Arg]), "%s", err.Error())
		}
		return x, err
	}
	return nil, parser.Errorf(e.Position(), "unsupported expression %s", sqlText(e))
}

// fieldGet binds field name of the ROW x; an unknown field is an error at pos.
func (b *exprBinder) fieldGet(x expr.Expr, name string, pos parser.Pos) (expr.Expr, error) {
	f, err := expr.NewFieldGet(x, name)
	if err != nil {
		return nil, parser.Errorf(pos, "%s", err.Error())
	}
	return f, nil
}

// fieldPos is where the field name of r.f starts: after "r.".
func fieldPos(n *parser.ColumnRef) parser.Pos {
	p := n.Pos
	w := len(n.Table) + 1
	if !isPlainName(n.Table) {
		w += 2 + strings.Count(n.Table, "`")
	}
	p.Col += w
	p.Offset += w
	return p
}

// isPlainName reports whether name is written without backquotes.
func isPlainName(name string) bool {
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return name != ""
}

// bareTimeFunction binds CURRENT_TIMESTAMP and LOCALTIMESTAMP, written
// without parentheses, unless ref names a column in scope.
func (b *exprBinder) bareTimeFunction(ref *parser.ColumnRef) (expr.Expr, bool, error) {
	name := strings.ToUpper(ref.Name)
	if ref.Table != "" || !expr.IsBareTimeFunction(name) {
		return nil, false, nil
	}
	sc := b.sc
	if b.agg != nil {
		sc = b.agg.in.sc
	}
	if sc != nil {
		if _, err := sc.resolve(ref); err == nil {
			return nil, false, nil
		}
	}
	x, err := expr.NewTimeCall(name, "", nil, b.loc)
	return x, true, err
}

// bindTimeCall binds a call of a time function: a unit argument (DAY in
// EXTRACT(DAY FROM ts)) is a word, not a column; an error about one
// argument (a bad format string) points at it.
func (b *exprBinder) bindTimeCall(n *parser.Call) (expr.Expr, error) {
	var unit string
	var args []expr.Expr
	var argNodes []parser.Expr
	for i, a := range n.Args {
		if expr.UnitArg(n.Name, i) {
			ref, ok := a.(*parser.ColumnRef)
			if !ok || ref.Table != "" {
				return nil, parser.Errorf(a.Position(), "%s expects a time unit here (such as DAY, HOUR, MINUTE, SECOND), not %s", n.Name, sqlText(a))
			}
			unit = strings.ToUpper(ref.Name)
			continue
		}
		x, err := b.bind(a)
		if err != nil {
			return nil, err
		}
		args = append(args, x)
		argNodes = append(argNodes, a)
	}
	x, err := expr.NewTimeCall(n.Name, unit, args, b.loc)
	var ae *expr.ArgError
	if errors.As(err, &ae) && ae.Arg < len(argNodes) {
		return nil, parser.Errorf(startPos(argNodes[ae.Arg]), "%s", err.Error())
	}
	if tf, ok := x.(*expr.TimeFunc); ok && err == nil {
		tf.Src = srcOf(n)
	}
	return x, err
}

// bareFunction returns the error for a function of Flink written without
// parentheses that Weir lacks (CURRENT_TIMESTAMP), unless ref names a
// column in scope.
func (b *exprBinder) bareFunction(ref *parser.ColumnRef) error {
	if ref.Table != "" {
		return nil
	}
	msg, ok := parser.UnsupportedFunction(ref.Name, true)
	if !ok {
		return nil
	}
	sc := b.sc
	if b.agg != nil {
		sc = b.agg.in.sc
	}
	if sc != nil {
		if _, err := sc.resolve(ref); err == nil {
			return nil
		}
	}
	return parser.Errorf(ref.Pos, "%s", msg)
}

// unknownFunction is the error for a call of a function Weir does not
// have: "not supported yet" for a built-in function of Flink, "unknown"
// otherwise, with the closest names of functions Weir has (all of them
// when none is close, for an unknown one).
func unknownFunction(n *parser.Call) error {
	if msg, ok := groupWindowMisuse(n.Name); ok {
		return parser.Errorf(n.Pos, "%s", msg)
	}
	msg, flink := parser.UnsupportedFunction(n.Name, false)
	if !flink {
		msg = "unknown function " + n.Name
	}
	if near := closestFunctions(n.Name, flink); len(near) > 0 {
		msg += " (closest known functions: " + strings.Join(near, ", ") + ")"
	} else if !flink {
		msg += " (known functions: " + strings.Join(knownFunctions(), ", ") + ")"
	}
	return parser.Errorf(n.Pos, "%s", msg)
}

// knownFunctions are the names of the functions Weir has, sorted:
// aggregates and scalar functions.
func knownFunctions() []string {
	names := append(expr.FunctionNames(), expr.TimeFunctionNames()...)
	names = append(names, aggfunc.Builtins().Names()...)
	sort.Strings(names)
	return names
}

// maxClosest bounds how many close function names an error lists.
const maxClosest = 3

// closestFunctions returns up to maxClosest names of known functions close
// to name (upper case), closest first: within one edit for names of up to
// three letters, two up to eight, a third of the length beyond; or, for
// names of four letters or more, containing name or contained in it
// (LENGTH, CHAR_LENGTH). A real function of Flink (flink) is no typo: only
// names one edit away or containing it count.
func closestFunctions(name string, flink bool) []string {
	type near struct {
		name string
		dist int
	}
	var found []near
	limit := max(2, len(name)/3)
	if len(name) <= 3 || flink {
		limit = 1
	}
	for _, k := range knownFunctions() {
		d := confval.EditDistance(name, k)
		contains := min(len(name), len(k)) >= 4 && (strings.Contains(k, name) || strings.Contains(name, k))
		if d <= limit || contains {
			found = append(found, near{k, d})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].dist < found[j].dist })
	var out []string
	for i := 0; i < len(found) && i < maxClosest; i++ {
		out = append(out, found[i].name)
	}
	return out
}

func (b *exprBinder) bindCase(n *parser.Case) (expr.Expr, error) {
	var operand expr.Expr
	if n.Operand != nil {
		x, err := b.bind(n.Operand)
		if err != nil {
			return nil, err
		}
		operand = x
	}
	var conds, results []expr.Expr
	for _, w := range n.Whens {
		c, err := b.bind(w.Cond)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if c, err = expr.NewCompare("=", operand, c); err != nil {
				return nil, wrap(w.Pos, err)
			}
		}
		r, err := b.bind(w.Result)
		if err != nil {
			return nil, err
		}
		conds, results = append(conds, c), append(results, r)
	}
	var els expr.Expr
	if n.Else != nil {
		x, err := b.bind(n.Else)
		if err != nil {
			return nil, err
		}
		els = x
	}
	return expr.NewCase(conds, results, els)
}

// srcOf names expression e, by its text and where it starts, for run-time errors:
// "'a + 1' at line 1:8".
func srcOf(e parser.Expr) expr.Source {
	return func() string {
		pos := startPos(e)
		return "'" + sqlText(e) + "' at line " + strconv.Itoa(pos.Line) + ":" + strconv.Itoa(pos.Col)
	}
}

func numberLit(n *parser.NumberLit) (expr.Expr, error) {
	if n.IsFloat && !strings.ContainsAny(n.Text, "eE") {
		// An exact literal such as 0.908 is DECIMAL(p, s), as in Flink:
		// s digits after the point, p digits in all.
		intPart, frac, _ := strings.Cut(n.Text, ".")
		intPart = strings.TrimLeft(intPart, "0")
		s := len(frac)
		p := max(len(intPart)+s, 1)
		if p > types.MaxDecimalPrecision {
			return nil, parser.Errorf(n.Pos, "number %s has more than 38 digits", n.Text)
		}
		v, err := types.ParseDecimal(n.Text, p, s)
		if err != nil {
			return nil, parser.Errorf(n.Pos, "bad number %s", n.Text)
		}
		return expr.NewLiteral(v, types.Decimal(p, s)), nil
	}
	if n.IsFloat {
		f, err := strconv.ParseFloat(n.Text, 64)
		if err != nil {
			return nil, parser.Errorf(n.Pos, "bad number %s", n.Text)
		}
		return expr.NewLiteral(types.DoubleValue(f), types.Double), nil
	}
	i, err := strconv.ParseInt(n.Text, 10, 64)
	if err != nil {
		// Beyond BIGINT: DECIMAL(p, 0), as in Flink.
		digits := strings.TrimLeft(n.Text, "0")
		if len(digits) > types.MaxDecimalPrecision {
			return nil, parser.Errorf(n.Pos, "number %s has more than 38 digits", n.Text)
		}
		v, err := types.ParseDecimal(n.Text, len(digits), 0)
		if err != nil {
			return nil, parser.Errorf(n.Pos, "bad number %s", n.Text)
		}
		return expr.NewLiteral(v, types.Decimal(len(digits), 0)), nil
	}
	if i >= math.MinInt32 && i <= math.MaxInt32 {
		return expr.NewLiteral(types.IntValue(i), types.Int), nil
	}
	return expr.NewLiteral(types.BigIntValue(i), types.BigInt), nil
}

var unitMillis = map[string]int64{
	"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000,
}

func intervalLit(n *parser.IntervalLit) (expr.Expr, error) {
	unit := strings.TrimSuffix(n.Unit, "S")
	ms, ok := unitMillis[unit]
	if !ok {
		return nil, parser.Errorf(n.Pos, "unsupported interval unit %s (supported: DAY, HOUR, MINUTE, SECOND, MILLISECOND)", n.Unit)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64)
	if err != nil {
		return nil, parser.Errorf(n.Pos, "bad interval value '%s'", n.Value)
	}
	lit := expr.NewLiteral(types.IntervalValue(int64(math.Round(f*float64(ms)))), types.Interval)
	lit.Text = "INTERVAL '" + n.Value + "' " + unit
	return lit, nil
}
