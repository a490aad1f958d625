package parser

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Format renders a node as canonical SQL: keywords in upper case,
// identifiers quoted with backticks where needed, and parentheses exactly
// where precedence requires them. Parse(Format(x)) yields x again, apart
// from positions and statement text.
func Format(n Node) string {
	var f formatter
	f.node(n)
	return f.b.String()
}

// Expression precedence levels, loosest first.
const (
	precOr = iota + 1
	precAnd
	precNot
	precCmp
	precConcat
	precAdd
	precMul
	precUnary
	precPrimary
)

type formatter struct {
	b strings.Builder
}

func (f *formatter) w(parts ...string) {
	for _, p := range parts {
		f.b.WriteString(p)
	}
}

func (f *formatter) node(n Node) {
	switch n := n.(type) {
	case Statement:
		f.stmt(n)
	case QueryExpr:
		f.query(n)
	case Relation:
		f.relation(n)
	case Expr:
		f.expr(n, precOr)
	case *ColumnDef:
		f.columnDef(n)
	case *TypeName:
		f.typeName(n)
	case *WatermarkDef:
		f.w("WATERMARK FOR ", quoteIdent(n.Column), " AS ")
		f.expr(n.Expr, precOr)
	case *Option:
		f.w(quoteString(n.Key), " = ", quoteString(n.Value))
	case *SelectItem:
		f.selectItem(n)
	case *When:
		f.w("WHEN ")
		f.expr(n.Cond, precOr)
		f.w(" THEN ")
		f.expr(n.Result, precOr)
	case nil:
	default:
		panic(fmt.Sprintf("parser.Format: unknown node type %T", n))
	}
}

func (f *formatter) stmt(s Statement) {
	switch s := s.(type) {
	case *SetStmt:
		f.w("SET")
		if s.Key != "" {
			f.w(" ", quoteString(s.Key), " = ", quoteString(s.Value))
		}
	case *ResetStmt:
		f.w("RESET")
		if s.Key != "" {
			f.w(" ", quoteString(s.Key))
		}
	case *CreateTable:
		f.createTable(s)
	case *DropTable:
		f.w("DROP ")
		if s.Temporary {
			f.w("TEMPORARY ")
		}
		if s.View {
			f.w("VIEW ")
		} else {
			f.w("TABLE ")
		}
		if s.IfExists {
			f.w("IF EXISTS ")
		}
		f.w(quoteIdent(s.Name))
	case *CreateView:
		f.w("CREATE ")
		if s.Temporary {
			f.w("TEMPORARY ")
		}
		f.w("VIEW ")
		if s.IfNotExists {
			f.w("IF NOT EXISTS ")
		}
		f.w(quoteIdent(s.Name), " AS ")
		f.query(s.Query)
	case *CreateFunction:
		f.w("CREATE ")
		if s.Temporary {
			f.w("TEMPORARY ")
		}
		if s.System {
			f.w("SYSTEM ")
		}
		f.w("FUNCTION ")
		if s.IfNotExists {
			f.w("IF NOT EXISTS ")
		}
		f.w(quoteIdent(s.Name), " AS ", quoteString(s.Identifier))
		if s.Language != "" {
			f.w(" LANGUAGE ", s.Language)
		}
	case *DropFunction:
		f.w("DROP ")
		if s.Temporary {
			f.w("TEMPORARY ")
		}
		if s.System {
			f.w("SYSTEM ")
		}
		f.w("FUNCTION ")
		if s.IfExists {
			f.w("IF EXISTS ")
		}
		f.w(quoteIdent(s.Name))
	case *Insert:
		f.w("INSERT INTO ", quoteIdent(s.Table), " ")
		if s.Columns != nil {
			f.w("(", joinIdents(s.Columns), ") ")
		}
		f.query(s.Query)
	case *QueryStmt:
		f.query(s.Query)
	case *Explain:
		f.w("EXPLAIN ")
		f.stmt(s.Stmt)
	case *ShowTables:
		f.w("SHOW TABLES")
	case *ShowJobs:
		f.w("SHOW JOBS")
	case *ShowFunctions:
		f.w("SHOW FUNCTIONS")
	case *Describe:
		f.w("DESCRIBE ", quoteIdent(s.Name))
	case *ShowCreateTable:
		f.w("SHOW CREATE TABLE ", quoteIdent(s.Name))
	case *StopJob:
		f.w("STOP JOB ", quoteString(s.ID))
		if s.WithSavepoint {
			f.w(" WITH SAVEPOINT")
		}
	case *Help:
		f.w("HELP")
	case *StatementSet:
		f.w("EXECUTE STATEMENT SET BEGIN ")
		for _, ins := range s.Inserts {
			f.stmt(ins)
			f.w("; ")
		}
		f.w("END")
	case *BeginStatementSet:
		if s.First == nil {
			f.w("BEGIN STATEMENT SET")
		} else {
			f.w("EXECUTE STATEMENT SET BEGIN ")
			f.stmt(s.First)
		}
	case *EndStatementSet:
		f.w("END")
	case *AlterTable:
		f.w("ALTER TABLE ", quoteIdent(s.Name))
		if s.Set != nil {
			f.w(" SET (")
			for i, o := range s.Set {
				if i > 0 {
					f.w(", ")
				}
				f.node(o)
			}
		} else {
			f.w(" RESET (")
			for i, k := range s.Reset {
				if i > 0 {
					f.w(", ")
				}
				f.w(quoteString(k))
			}
		}
		f.w(")")
	case *ShowViews:
		f.w("SHOW VIEWS")
	case *ShowCreateView:
		f.w("SHOW CREATE VIEW ", quoteIdent(s.Name))
	default:
		panic(fmt.Sprintf("parser.Format: unknown statement type %T", s))
	}
}

func (f *formatter) createTable(s *CreateTable) {
	f.w("CREATE ")
	if s.Temporary {
		f.w("TEMPORARY ")
	}
	f.w("TABLE ")
	if s.IfNotExists {
		f.w("IF NOT EXISTS ")
	}
	f.w(quoteIdent(s.Name))
	if len(s.Columns) == 0 && s.Watermark == nil && s.PrimaryKey == nil {
		f.createTableTail(s)
		return
	}
	f.w(" (")
	sep := "\n  "
	for _, c := range s.Columns {
		f.w(sep)
		f.columnDef(c)
		sep = ",\n  "
	}
	if s.Watermark != nil {
		f.w(sep)
		f.node(s.Watermark)
	}
	if s.PrimaryKey != nil {
		f.w(sep, "PRIMARY KEY (", joinIdents(s.PrimaryKey), ") NOT ENFORCED")
	}
	f.w("\n)")
	f.createTableTail(s)
}

// createTableTail writes what follows the columns of CREATE TABLE.
func (f *formatter) createTableTail(s *CreateTable) {
	if s.Comment != "" {
		f.w(" COMMENT ", quoteString(s.Comment))
	}
	if s.PartitionBy != nil {
		f.w(" PARTITIONED BY (", joinIdents(s.PartitionBy), ")")
	}
	if len(s.Options) > 0 {
		f.w(" WITH (")
		sep := "\n  "
		for _, o := range s.Options {
			f.w(sep)
			f.node(o)
			sep = ",\n  "
		}
		f.w("\n)")
	}
	if l := s.Like; l != nil {
		f.w(" LIKE ", quoteIdent(l.Source))
		if len(l.Options) > 0 {
			f.w(" (")
			for i, o := range l.Options {
				if i > 0 {
					f.w(" ")
				}
				f.w(o.Mode, " ", o.What)
			}
			f.w(")")
		}
	}
}

func (f *formatter) columnDef(c *ColumnDef) {
	if c.Expr != nil {
		f.w(quoteIdent(c.Name), " AS ")
		f.expr(c.Expr, precOr)
		return
	}
	f.w(quoteIdent(c.Name), " ")
	f.typeName(c.Type)
	if c.NotNull {
		f.w(" NOT NULL")
	}
	if c.Metadata {
		f.w(" METADATA")
		if c.MetadataKey != c.Name {
			f.w(" FROM ", quoteString(c.MetadataKey))
		}
		if c.Virtual {
			f.w(" VIRTUAL")
		}
	}
}

func (f *formatter) typeName(t *TypeName) {
	f.w(TypeText(t))
}

// TypeText renders a type as SQL: INT, DECIMAL(10, 2),
// ROW<`a` INT NOT NULL, `b` ARRAY<STRING>>, ROW() (no fields), MAP<STRING, INT>.
func TypeText(t *TypeName) string {
	if t == nil {
		return "?"
	}
	var b strings.Builder
	b.WriteString(t.Name)
	if t.Name == "ROW" && t.Fields != nil && len(t.Fields) == 0 {
		// A ROW of no fields: "ROW<>" would lex as the operator <>.
		b.WriteString("()")
		return b.String()
	}
	if t.Fields != nil {
		b.WriteByte('<')
		for i, fd := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			if t.Name == "ROW" {
				b.WriteString(quoteIdent(fd.Name) + " ")
			}
			b.WriteString(TypeText(fd.Type))
			if fd.NotNull {
				b.WriteString(" NOT NULL")
			}
		}
		b.WriteByte('>')
		return b.String()
	}
	if len(t.Params) > 0 {
		ps := make([]string, len(t.Params))
		for i, p := range t.Params {
			ps[i] = strconv.Itoa(p)
		}
		b.WriteString("(" + strings.Join(ps, ", ") + ")")
	}
	return b.String()
}

func (f *formatter) query(q QueryExpr) {
	switch q := q.(type) {
	case *Select:
		f.selectBlock(q)
	case *SetOp:
		f.setOpArm(q.Left, q.Op != "INTERSECT")
		f.w(" ", q.Op)
		if q.All {
			f.w(" ALL")
		}
		f.w(" ")
		f.setOpArm(q.Right, false)
	case *Values:
		f.w("VALUES ")
		for i, r := range q.Rows {
			if i > 0 {
				f.w(", ")
			}
			f.w("(")
			f.exprList(r.Values)
			f.w(")")
		}
	case *With:
		f.w("WITH ")
		for i, c := range q.CTEs {
			if i > 0 {
				f.w(", ")
			}
			f.w(quoteIdent(c.Name))
			if len(c.Columns) > 0 {
				f.w(" (", joinIdents(c.Columns), ")")
			}
			f.w(" AS (")
			f.query(c.Query)
			f.w(")")
		}
		f.w(" ")
		f.query(q.Body)
	case *OrderLimit:
		switch q.Body.(type) {
		case *With, *OrderLimit:
			f.w("(")
			f.query(q.Body)
			f.w(")")
		default:
			f.query(q.Body)
		}
		for i, o := range q.Order {
			if i == 0 {
				f.w(" ORDER BY ")
			} else {
				f.w(", ")
			}
			f.orderItem(o)
		}
		if q.Limit >= 0 {
			f.w(" LIMIT ", strconv.FormatInt(q.Limit, 10))
		}
		if q.Offset > 0 {
			f.w(" OFFSET ", strconv.FormatInt(q.Offset, 10), " ROWS")
		}
	default:
		panic(fmt.Sprintf("parser.Format: unknown query type %T", q))
	}
}

// setOpArm writes an input of a set operation, in parentheses unless it
// is a plain term (or, with leftChain, a left-associative chain of the
// same level: the left input of UNION and EXCEPT).
func (f *formatter) setOpArm(q QueryExpr, leftChain bool) {
	paren := false
	switch q.(type) {
	case *SetOp:
		paren = !leftChain
	case *With, *OrderLimit:
		paren = true
	}
	if !paren {
		f.query(q)
		return
	}
	f.w("(")
	f.query(q)
	f.w(")")
}

func (f *formatter) orderItem(o *OrderItem) {
	f.expr(o.X, precOr)
	if o.Desc {
		f.w(" DESC")
	}
	if o.Nulls != "" {
		f.w(" NULLS ", o.Nulls)
	}
}

func (f *formatter) selectBlock(s *Select) {
	f.w("SELECT ")
	if s.Distinct {
		f.w("DISTINCT ")
	}
	for i, it := range s.Items {
		if i > 0 {
			f.w(", ")
		}
		f.selectItem(it)
	}
	if s.From != nil {
		f.w(" FROM ")
		f.relation(s.From)
	}
	if s.Where != nil {
		f.w(" WHERE ")
		f.expr(s.Where, precOr)
	}
	if len(s.GroupBy) > 0 || len(s.Grouping) > 0 {
		f.w(" GROUP BY ")
		f.exprList(s.GroupBy)
		for i, g := range s.Grouping {
			if i > 0 || len(s.GroupBy) > 0 {
				f.w(", ")
			}
			f.groupingElem(g)
		}
	}
	if s.Having != nil {
		f.w(" HAVING ")
		f.expr(s.Having, precOr)
	}
	for i, w := range s.Windows {
		if i == 0 {
			f.w(" WINDOW ")
		} else {
			f.w(", ")
		}
		f.w(quoteIdent(w.Name), " AS ")
		f.window(w.Spec)
	}
}

// window writes (PARTITION BY … ORDER BY … frame), or a window's name.
func (f *formatter) window(w *WindowSpec) {
	if w.Name != "" {
		f.w(quoteIdent(w.Name))
		return
	}
	f.w("(")
	sep := ""
	if len(w.Partition) > 0 {
		f.w("PARTITION BY ")
		f.exprList(w.Partition)
		sep = " "
	}
	if len(w.Order) > 0 {
		f.w(sep, "ORDER BY ")
		for i, o := range w.Order {
			if i > 0 {
				f.w(", ")
			}
			f.expr(o.X, precOr)
			if o.Desc {
				f.w(" DESC")
			}
			if o.Nulls != "" {
				f.w(" NULLS ", o.Nulls)
			}
		}
		sep = " "
	}
	if fr := w.Frame; fr != nil {
		unit := "RANGE"
		if fr.Rows {
			unit = "ROWS"
		}
		f.w(sep, unit, " BETWEEN ")
		f.frameBound(fr.Lo)
		f.w(" AND ")
		f.frameBound(fr.Hi)
	}
	f.w(")")
}

func (f *formatter) frameBound(b *FrameBound) {
	switch {
	case b.Current:
		f.w("CURRENT ROW")
		return
	case b.Unbounded:
		f.w("UNBOUNDED")
	case b.Interval != nil:
		f.expr(b.Interval, precOr)
	default:
		f.w(strconv.FormatInt(b.N, 10))
	}
	if b.Following {
		f.w(" FOLLOWING")
	} else {
		f.w(" PRECEDING")
	}
}

func (f *formatter) selectItem(it *SelectItem) {
	switch {
	case it.Star && it.Table != "":
		f.w(quoteIdent(it.Table), ".*")
	case it.Star:
		f.w("*")
	default:
		f.expr(it.Expr, precOr)
		if it.Alias != "" {
			f.w(" AS ", quoteIdent(it.Alias))
		}
	}
}

func (f *formatter) relation(r Relation) {
	alias := ""
	switch r := r.(type) {
	case *TableRef:
		f.w(quoteIdent(r.Name))
		if r.AsOf != nil {
			f.w(" FOR SYSTEM_TIME AS OF ")
			f.expr(r.AsOf, precOr)
		}
		alias = r.Alias
	case *SubqueryRef:
		f.w("(")
		f.query(r.Query)
		f.w(")")
		alias = r.Alias
		if len(r.Columns) > 0 {
			defer f.w(" (", joinIdents(r.Columns), ")")
		}
	case *Join:
		f.relation(r.Left)
		if r.Kind == CrossJoin {
			f.w(", ")
		} else {
			f.w(" ", r.Kind.String(), " ")
		}
		f.relation(r.Right)
		if r.On != nil {
			f.w(" ON ")
			f.expr(r.On, precOr)
		}
	case *WindowTVF:
		f.w("TABLE(", r.Kind, "(TABLE ", quoteIdent(r.Table))
		for i, p := range r.Partition {
			if i == 0 {
				f.w(" PARTITION BY (")
			} else {
				f.w(", ")
			}
			f.w(quoteIdent(p))
		}
		if len(r.Partition) > 0 {
			f.w(")")
		}
		f.w(", DESCRIPTOR(", quoteIdent(r.TimeCol), ")")
		for _, a := range []Expr{r.Slide, r.Step, r.Size, r.Gap, r.Offset} {
			if a != nil {
				f.w(", ")
				f.expr(a, precOr)
			}
		}
		f.w("))")
		alias = r.Alias
	default:
		panic(fmt.Sprintf("parser.Format: unknown relation type %T", r))
	}
	if alias != "" {
		f.w(" AS ", quoteIdent(alias))
	}
}

func (f *formatter) exprList(es []Expr) {
	for i, e := range es {
		if i > 0 {
			f.w(", ")
		}
		f.expr(e, precOr)
	}
}

// binaryPrec is the precedence level of a binary operator.
func binaryPrec(op string) int {
	switch op {
	case "OR":
		return precOr
	case "AND":
		return precAnd
	case "||":
		return precConcat
	case "+", "-":
		return precAdd
	case "*", "/", "%":
		return precMul
	default:
		return precCmp
	}
}

// exprPrec is how tightly e binds.
func exprPrec(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		return binaryPrec(e.Op)
	case *Unary:
		if e.Op == "NOT" {
			return precNot
		}
		return precUnary
	case *IsNull, *In, *Between, *Like:
		return precCmp
	default:
		return precPrimary
	}
}

// expr writes e, in parentheses if it binds looser than min.
func (f *formatter) expr(e Expr, min int) {
	if exprPrec(e) < min {
		f.w("(")
		f.expr(e, precOr)
		f.w(")")
		return
	}
	switch e := e.(type) {
	case *Binary:
		p := binaryPrec(e.Op)
		f.expr(e.L, p)
		f.w(" ", e.Op, " ")
		f.expr(e.R, p+1)
	case *Unary:
		if e.Op == "NOT" {
			f.w("NOT ")
			f.expr(e.X, precNot)
			return
		}
		f.w(e.Op)
		if x, ok := e.X.(*Unary); ok && x.Op != "NOT" && e.Op == "-" && x.Op == "-" {
			f.w(" ") // "--" would start a comment
		}
		f.expr(e.X, precUnary)
	case *IsNull:
		f.expr(e.X, precCmp)
		if e.Not {
			f.w(" IS NOT NULL")
		} else {
			f.w(" IS NULL")
		}
	case *In:
		f.expr(e.X, precCmp)
		f.w(not(e.Not), " IN (")
		if e.Query != nil {
			f.query(e.Query)
		} else {
			f.exprList(e.List)
		}
		f.w(")")
	case *Exists:
		f.w("EXISTS (")
		f.query(e.Query)
		f.w(")")
	case *Between:
		f.expr(e.X, precCmp)
		f.w(not(e.Not), " BETWEEN ")
		f.expr(e.Lo, precConcat)
		f.w(" AND ")
		f.expr(e.Hi, precConcat)
	case *Like:
		f.expr(e.X, precCmp)
		f.w(not(e.Not), " LIKE ")
		f.expr(e.Pattern, precConcat)
	case *ColumnRef:
		if e.Table != "" {
			f.w(quoteIdent(e.Table), ".")
		}
		f.w(quoteIdent(e.Name))
	case *NumberLit:
		f.w(e.Text)
	case *StringLit:
		f.w(quoteString(e.Value))
	case *BoolLit:
		if e.Value {
			f.w("TRUE")
		} else {
			f.w("FALSE")
		}
	case *NullLit:
		f.w("NULL")
	case *IntervalLit:
		f.w("INTERVAL ", quoteString(e.Value), " ", e.Unit)
	case *TimestampLit:
		if e.Type != "" {
			f.w(e.Type, " ", quoteString(e.Value))
		} else {
			f.w("TIMESTAMP ", quoteString(e.Value))
		}
	case *Case:
		f.w("CASE")
		if e.Operand != nil {
			f.w(" ")
			f.expr(e.Operand, precOr)
		}
		for _, wh := range e.Whens {
			f.w(" ")
			f.node(wh)
		}
		if e.Else != nil {
			f.w(" ELSE ")
			f.expr(e.Else, precOr)
		}
		f.w(" END")
	case *Cast:
		if e.Try {
			f.w("TRY_")
		}
		f.w("CAST(")
		f.expr(e.X, precOr)
		f.w(" AS ")
		f.typeName(e.Type)
		f.w(")")
	case *Call:
		f.w(e.Name, "(")
		switch {
		case e.Star:
			f.w("*")
		case e.Distinct:
			f.w("DISTINCT ")
			f.exprList(e.Args)
		case e.Name == "EXTRACT" && len(e.Args) == 2:
			f.expr(e.Args[0], precOr)
			f.w(" FROM ")
			f.expr(e.Args[1], precOr)
		case e.Name == "POSITION" && len(e.Args) == 2:
			f.expr(e.Args[0], precConcat)
			f.w(" IN ")
			f.expr(e.Args[1], precConcat)
		case (e.Name == "FLOOR" || e.Name == "CEIL") && len(e.Args) == 2:
			f.expr(e.Args[0], precOr)
			f.w(" TO ")
			f.expr(e.Args[1], precOr)
		default:
			f.exprList(e.Args)
		}
		f.w(")")
		if e.Filter != nil {
			f.w(" FILTER (WHERE ")
			f.expr(e.Filter, precOr)
			f.w(")")
		}
		if e.Over != nil {
			f.w(" OVER ")
			f.window(e.Over)
		}
	case *FieldAccess:
		// Only a qualified column, a call or another access stays bare
		// before '.': `(k).f` is not a table's column, `(0).f` not `0.`.
		switch x := e.X.(type) {
		case *FieldAccess, *Subscript, *Call:
			f.expr(e.X, precPrimary)
		case *ColumnRef:
			if x.Table != "" {
				f.expr(e.X, precPrimary)
				break
			}
			f.w("(")
			f.expr(e.X, precOr)
			f.w(")")
		default:
			f.w("(")
			f.expr(e.X, precOr)
			f.w(")")
		}
		f.w(".", quoteIdent(e.Field))
	case *Subscript:
		f.expr(e.X, precPrimary)
		f.w("[")
		f.expr(e.Index, precOr)
		f.w("]")
	case *Constructor:
		if e.Kind == "ROW" {
			f.w("ROW(")
			f.exprList(e.Args)
			f.w(")")
			return
		}
		f.w(e.Kind, "[")
		f.exprList(e.Args)
		f.w("]")
	default:
		panic(fmt.Sprintf("parser.Format: unknown expression type %T", e))
	}
}

func not(b bool) string {
	if b {
		return " NOT"
	}
	return ""
}

// plainIdent matches what the lexer reads as one identifier.
var plainIdent = regexp.MustCompile(`^[\p{L}_][\p{L}\p{N}_]*$`)

// quoteIdent returns name as written in SQL: bare when that reads back as
// the same identifier, otherwise in backticks.
func quoteIdent(name string) string {
	if plainIdent.MatchString(name) && !isReserved(name) {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

func isReserved(word string) bool {
	for _, r := range reservedWords {
		if strings.EqualFold(r, word) {
			return true
		}
	}
	return false
}

func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func joinIdents(names []string) string {
	qs := make([]string, len(names))
	for i, n := range names {
		qs[i] = quoteIdent(n)
	}
	return strings.Join(qs, ", ")
}

// groupingElem writes GROUPING SETS ((a, b), ()), ROLLUP (a, b) or CUBE (a, b).
func (f *formatter) groupingElem(g *GroupingElem) {
	if g.Kind != "GROUPING SETS" {
		f.w(g.Kind, " (")
		f.exprList(g.Sets[0].Exprs)
		f.w(")")
		return
	}
	f.w("GROUPING SETS (")
	for i, s := range g.Sets {
		if i > 0 {
			f.w(", ")
		}
		f.w("(")
		f.exprList(s.Exprs)
		f.w(")")
	}
	f.w(")")
}
