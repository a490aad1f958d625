package parser

import (
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// converter turns grammar structs into AST nodes. It records the first
// semantic error (a bad type parameter, a misplaced FROM, ...) in err; the
// nodes it returns after an error are incomplete and must be discarded.
type converter struct {
	src string
	err *Error
}

func (c *converter) fail(p lexer.Position, format string, args ...any) {
	if c.err == nil {
		c.err = Errorf(toPos(p), format, args...)
	}
}

// text returns the trimmed source text spanned by toks.
func (c *converter) text(toks []lexer.Token) string {
	if len(toks) == 0 {
		return ""
	}
	first, last := toks[0], toks[len(toks)-1]
	return strings.TrimSpace(c.src[first.Pos.Offset : last.Pos.Offset+len(last.Value)])
}

func (c *converter) base(toks []lexer.Token) StmtBase {
	if len(toks) == 0 {
		return StmtBase{}
	}
	return StmtBase{Pos: toPos(toks[0].Pos), Text: c.text(toks)}
}

// ---- statements ----

func (c *converter) stmt(g *gStmt, toks []lexer.Token) Statement {
	b := c.base(toks)
	switch {
	case g.Set != nil:
		s := &SetStmt{StmtBase: b}
		if g.Set.Key != nil {
			s.Key = c.confKey(g.Set.Key)
			if g.Set.Value == nil {
				c.fail(toks[len(toks)-1].Pos, "SET %q needs a value: SET 'key' = 'value'", s.Key)
			} else {
				s.Value = c.confValue(g.Set.Value)
			}
		}
		return s
	case g.Reset != nil:
		s := &ResetStmt{StmtBase: b}
		if g.Reset.Key != nil {
			s.Key = c.confKey(g.Reset.Key)
		}
		return s
	case g.Create != nil:
		if g.Create.System && g.Create.Function == nil {
			c.fail(g.Create.Pos, "CREATE SYSTEM is only for functions: CREATE TEMPORARY SYSTEM FUNCTION")
		}
		if g.Create.Function != nil {
			return c.createFunction(b, g.Create)
		}
		if g.Create.Table != nil {
			return c.createTable(b, g.Create)
		}
		v := g.Create.View
		name, ifNotExists := c.condName(&v.Name, true)
		return &CreateView{StmtBase: b, Name: name, Temporary: g.Create.Temporary,
			IfNotExists: ifNotExists, Query: c.query(v.Query)}
	case g.Drop != nil:
		name, ifExists := c.condName(&g.Drop.Name, false)
		if g.Drop.System && !g.Drop.Function {
			c.fail(toks[0].Pos, "DROP SYSTEM is only for functions: DROP TEMPORARY SYSTEM FUNCTION")
		}
		if g.Drop.Function {
			return &DropFunction{StmtBase: b, Name: name, IfExists: ifExists,
				Temporary: g.Drop.Temporary, System: g.Drop.System}
		}
		return &DropTable{StmtBase: b, Name: name, View: g.Drop.View,
			IfExists: ifExists, Temporary: g.Drop.Temporary}
	case g.Insert != nil:
		return c.insert(b, g.Insert)
	case g.Query != nil:
		return &QueryStmt{StmtBase: b, Query: c.query(g.Query)}
	case g.Explain != nil:
		e := &Explain{StmtBase: b}
		if g.Explain.Insert != nil {
			e.Stmt = c.insert(c.base(g.Explain.Insert.Tokens), g.Explain.Insert)
		} else {
			q := g.Explain.Query
			e.Stmt = &QueryStmt{StmtBase: c.base(q.Tokens), Query: c.query(q)}
		}
		return e
	case g.Show != nil:
		switch {
		case g.Show.Tables:
			return &ShowTables{StmtBase: b}
		case g.Show.Jobs:
			return &ShowJobs{StmtBase: b}
		case g.Show.Functions:
			return &ShowFunctions{StmtBase: b}
		case g.Show.Views:
			return &ShowViews{StmtBase: b}
		case g.Show.CreateView != nil:
			return &ShowCreateView{StmtBase: b, Name: c.ident(g.Show.CreateView)}
		default:
			return &ShowCreateTable{StmtBase: b, Name: c.ident(g.Show.CreateTable)}
		}
	case g.StmtSet != nil:
		switch {
		case g.StmtSet.Execute != nil:
			return &BeginStatementSet{StmtBase: b, First: c.insert(c.base(g.StmtSet.Execute.Tokens), g.StmtSet.Execute)}
		case g.StmtSet.Begin:
			return &BeginStatementSet{StmtBase: b}
		default:
			return &EndStatementSet{StmtBase: b}
		}
	case g.Alter != nil:
		a := &AlterTable{StmtBase: b, Name: c.ident(&g.Alter.Name)}
		if g.Alter.Set {
			for _, o := range g.Alter.Opts {
				a.Set = append(a.Set, &Option{Pos: toPos(o.Pos), Key: unquoteString(o.Key), Value: unquoteString(o.Value)})
			}
		}
		for _, k := range g.Alter.Reset {
			a.Reset = append(a.Reset, unquoteString(k.Value))
		}
		return a
	case g.Describe != nil:
		return &Describe{StmtBase: b, Name: c.ident(&g.Describe.Name)}
	case g.Stop != nil:
		return &StopJob{StmtBase: b, ID: unquoteString(g.Stop.ID), WithSavepoint: g.Stop.WithSavepoint}
	default:
		return &Help{StmtBase: b}
	}
}

// createFunction converts CREATE [TEMPORARY [SYSTEM]] FUNCTION.
func (c *converter) createFunction(b StmtBase, g *gCreate) *CreateFunction {
	f := g.Function
	name, ifNotExists := c.condName(&f.Name, true)
	if g.System && !g.Temporary {
		c.fail(g.Pos, "CREATE SYSTEM FUNCTION must be TEMPORARY: CREATE TEMPORARY SYSTEM FUNCTION")
	}
	cf := &CreateFunction{StmtBase: b, Name: name, Temporary: g.Temporary, System: g.System,
		IfNotExists: ifNotExists, Identifier: unquoteString(f.Identifier.Value), IDPos: toPos(f.Identifier.Pos)}
	if f.Language != nil {
		cf.Language = strings.ToUpper(c.ident(f.Language))
		cf.LangPos = toPos(f.Language.Pos)
	}
	return cf
}

// confKey returns a SET or RESET key. An empty key is an error: the AST
// represents the bare SET and RESET by an empty key.
func (c *converter) confKey(k *gConfKey) string {
	if k.Quoted != nil {
		key := unquoteString(*k.Quoted)
		if key == "" {
			c.fail(k.Pos, "empty configuration key ''")
		}
		return key
	}
	return k.Words
}

func (c *converter) confValue(v *gConfValue) string {
	if v.Quoted != nil {
		return unquoteString(*v.Quoted)
	}
	return c.text(v.Tokens)
}

// condName returns the name of "[IF [NOT] EXISTS] name" and whether the
// condition was given; wantNot says which of the two forms is valid.
func (c *converter) condName(g *gCondName, wantNot bool) (string, bool) {
	if g.Second == nil {
		return c.ident(&g.First), false
	}
	want := "IF EXISTS"
	if wantNot {
		want = "IF NOT EXISTS"
	}
	if !strings.EqualFold(g.First.Name, "IF") || g.Not != wantNot {
		c.fail(g.First.Pos, "expected a name or %s name", want)
	}
	return c.ident(g.Second), true
}

func (c *converter) insert(b StmtBase, g *gInsert) *Insert {
	s := &Insert{StmtBase: b, Table: c.ident(&g.Table)}
	switch {
	case g.ColsQuery != nil:
		for _, col := range g.Columns {
			s.Columns = append(s.Columns, c.ident(col))
		}
		s.Query = c.query(g.ColsQuery)
	case g.ParenQuery != nil:
		s.Query = c.query(&gQuery{Left: &gQueryTerm{Paren: g.ParenQuery}, Unions: g.Unions})
	default:
		s.Query = c.query(g.Query)
	}
	return s
}

func (c *converter) createTable(b StmtBase, g *gCreate) *CreateTable {
	t := g.Table
	name, ifNotExists := c.condName(&t.Name, true)
	s := &CreateTable{StmtBase: b, Name: name, Temporary: g.Temporary, IfNotExists: ifNotExists}
	if t.Comment != nil {
		s.Comment = unquoteString(*t.Comment)
	}
	setPK := func(p lexer.Position, cols []string, notEnforced bool) {
		switch {
		case s.PrimaryKey != nil:
			c.fail(p, "table %s has more than one PRIMARY KEY", s.Name)
		case !notEnforced:
			c.fail(p, "PRIMARY KEY must be declared NOT ENFORCED (keys are not checked)")
		}
		s.PrimaryKey = cols
	}
	for _, e := range t.Elems {
		switch {
		case e.Watermark != nil:
			if !isWord(e.Name, "WATERMARK") {
				c.fail(e.Watermark.Pos, `unexpected "FOR", expected a type`)
			}
			if s.Watermark != nil {
				c.fail(e.Name.Pos, "table %s has more than one WATERMARK", s.Name)
			}
			s.Watermark = &WatermarkDef{Pos: toPos(e.Name.Pos), Column: c.ident(&e.Watermark.Column),
				Expr: c.expr(e.Watermark.Expr)}
		case e.PrimaryKey != nil:
			if !isWord(e.Name, "PRIMARY") {
				c.fail(e.PrimaryKey.Pos, `unexpected "KEY", expected a type`)
			}
			var cols []string
			for _, id := range e.PrimaryKey.Columns {
				cols = append(cols, c.ident(id))
			}
			setPK(e.Name.Pos, cols, e.PrimaryKey.NotEnforced)
		case e.Computed != nil:
			s.Columns = append(s.Columns, &ColumnDef{Pos: toPos(e.Name.Pos), Name: c.ident(&e.Name), Expr: c.expr(e.Computed.Expr)})
		default:
			col := e.Column
			def := &ColumnDef{Pos: toPos(e.Name.Pos), Name: c.ident(&e.Name), Type: c.typeName(col.Type), NotNull: col.NotNull}
			if m := col.Metadata; m != nil {
				def.Metadata, def.MetadataKey, def.Virtual = true, def.Name, m.Virtual
				if m.From != nil {
					def.MetadataKey = unquoteString(*m.From)
					if def.MetadataKey == "" {
						c.fail(m.Pos, "METADATA FROM needs a key, such as 'timestamp'")
					}
				}
			}
			s.Columns = append(s.Columns, def)
			if col.PrimaryKey {
				setPK(e.Name.Pos, []string{def.Name}, col.PKNotEnforced)
			}
		}
	}
	if t.Like != nil {
		s.Like = &LikeClause{Pos: toPos(t.Like.Pos), Source: c.ident(&t.Like.Source)}
		for _, o := range t.Like.Options {
			mode, what := strings.ToUpper(o.Mode.Name), strings.ToUpper(o.What)
			switch {
			case mode != "INCLUDING" && mode != "EXCLUDING" && mode != "OVERWRITING":
				c.fail(o.Pos, "expected INCLUDING, EXCLUDING or OVERWRITING, not %s", o.Mode.Name)
			case !slices.Contains([]string{"ALL", "CONSTRAINTS", "GENERATED", "OPTIONS", "WATERMARKS", "METADATA", "PARTITIONS"}, what):
				c.fail(o.Pos, "expected ALL, CONSTRAINTS, GENERATED, OPTIONS, WATERMARKS, METADATA or PARTITIONS after %s, not %s", mode, o.What)
			case mode == "OVERWRITING" && (what == "ALL" || what == "CONSTRAINTS" || what == "PARTITIONS"):
				c.fail(o.Pos, "OVERWRITING %s is not valid: %s takes INCLUDING or EXCLUDING", what, what)
			}
			s.Like.Options = append(s.Like.Options, &LikeOption{Pos: toPos(o.Pos), Mode: mode, What: what})
		}
	}
	if len(s.Columns) == 0 && s.Like == nil {
		c.fail(t.Name.First.Pos, "table %s must have at least one column", s.Name)
	}
	for _, id := range t.Partitioned {
		s.PartitionBy = append(s.PartitionBy, c.ident(id))
	}
	if t.With {
		s.Options = []*Option{}
		for _, o := range t.Options {
			s.Options = append(s.Options, &Option{Pos: toPos(o.Pos), Key: unquoteString(o.Key), Value: unquoteString(o.Value)})
		}
	}
	return s
}

// typeParamLimit is the most parameters each type takes.
var typeParamLimit = map[string]int{
	"VARCHAR": 1, "CHAR": 1, "TIMESTAMP": 1, "TIMESTAMP_LTZ": 1, "TIME": 1, "DECIMAL": 2,
	"VARBINARY": 1, "BINARY": 1,
}

func (c *converter) typeName(g *gType) *TypeName {
	elem := func(e *gElemType) *TypeField {
		return &TypeField{Type: c.typeName(e.Type), NotNull: e.NotNull}
	}
	switch {
	case g.Row != nil:
		t := &TypeName{Pos: toPos(g.Pos), Name: "ROW", Fields: []*TypeField{}}
		fields := g.Row.Fields
		if !g.Row.Angle {
			fields = g.Row.Paren
		}
		seen := map[string]bool{}
		for _, f := range fields {
			tf := elem(&f.Type)
			tf.Name = c.ident(&f.Name)
			if seen[strings.ToLower(tf.Name)] {
				c.fail(f.Name.Pos, "ROW type has two fields named %s", tf.Name)
			}
			seen[strings.ToLower(tf.Name)] = true
			t.Fields = append(t.Fields, tf)
		}
		return t
	case g.Array != nil:
		return &TypeName{Pos: toPos(g.Pos), Name: "ARRAY", Fields: []*TypeField{elem(g.Array)}}
	case g.Map != nil:
		return &TypeName{Pos: toPos(g.Pos), Name: "MAP", Fields: []*TypeField{elem(g.Map.Key), elem(g.Map.Value)}}
	}
	name := strings.ToUpper(g.Name)
	switch name {
	case "INTEGER":
		name = "INT"
	case "DEC", "NUMERIC":
		name = "DECIMAL"
	}
	if g.Precision && name != "DOUBLE" {
		c.fail(g.Pos, "PRECISION is only valid in DOUBLE PRECISION")
	}
	t := &TypeName{Pos: toPos(g.Pos), Name: name}
	for _, p := range g.Params {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			c.fail(g.Pos, "type parameter %s of %s must be a non-negative integer", p, name)
		}
		t.Params = append(t.Params, n)
	}
	if g.LocalTZ {
		if name != "TIMESTAMP" {
			c.fail(g.Pos, "WITH LOCAL TIME ZONE is only valid after TIMESTAMP")
		}
		t.Name = "TIMESTAMP_LTZ"
	}
	if len(t.Params) > typeParamLimit[t.Name] {
		if typeParamLimit[t.Name] == 0 {
			c.fail(g.Pos, "type %s takes no parameters", t.Name)
		} else {
			c.fail(g.Pos, "type %s takes at most %d parameter(s)", t.Name, typeParamLimit[t.Name])
		}
	}
	return t
}

// ---- queries ----

func (c *converter) query(g *gQuery) QueryExpr {
	// INTERSECT binds tighter than UNION and EXCEPT, which associate to
	// the left (as in standard SQL and Flink).
	terms := []QueryExpr{c.queryTerm(g.Left)}
	var ops []*gUnion
	for _, u := range g.Unions {
		right := c.queryTerm(u.Right)
		op := strings.ToUpper(u.Op)
		if op == "INTERSECT" {
			last := len(terms) - 1
			terms[last] = &SetOp{Pos: toPos(u.Pos), Op: op, All: u.All, Left: terms[last], Right: right}
			continue
		}
		terms, ops = append(terms, right), append(ops, u)
	}
	q := terms[0]
	for i, u := range ops {
		q = &SetOp{Pos: toPos(u.Pos), Op: strings.ToUpper(u.Op), All: u.All, Left: q, Right: terms[i+1]}
	}
	if len(g.Order) > 0 || g.Limit != nil || g.Offset != nil || g.Fetch != nil {
		ol := &OrderLimit{Pos: q.Position(), Body: q, Limit: -1}
		for _, o := range g.Order {
			ol.Order = append(ol.Order, c.orderItem(o))
		}
		count := func(what string, pos lexer.Position, text string) int64 {
			n, err := strconv.ParseInt(text, 10, 64)
			if err != nil || n < 0 {
				c.fail(pos, "%s takes a non-negative whole number, not %s", what, text)
			}
			return n
		}
		if g.Limit != nil {
			ol.Limit = count("LIMIT", g.Limit.Pos, g.Limit.N)
		}
		if g.Offset != nil {
			ol.Offset = count("OFFSET", g.Offset.Pos, g.Offset.N)
		}
		if g.Fetch != nil {
			if g.Limit != nil {
				c.fail(g.Fetch.Pos, "FETCH and LIMIT cannot both be given: they say the same")
			}
			ol.Limit = 1
			if g.Fetch.N != "" {
				ol.Limit = count("FETCH", g.Fetch.Pos, g.Fetch.N)
			}
		}
		q = ol
	}
	if len(g.With) > 0 {
		w := &With{Pos: toPos(g.Pos), Body: q}
		for _, cte := range g.With {
			d := &CTE{Pos: toPos(cte.Name.Pos), Name: c.ident(&cte.Name), Query: c.query(cte.Query)}
			for _, col := range cte.Columns {
				d.Columns = append(d.Columns, c.ident(col))
			}
			w.CTEs = append(w.CTEs, d)
		}
		q = w
	}
	return q
}

func (c *converter) queryTerm(g *gQueryTerm) QueryExpr {
	if g.Paren != nil {
		return c.query(g.Paren)
	}
	if g.Values != nil {
		v := &Values{Pos: toPos(g.Values.Pos)}
		for _, r := range g.Values.Rows {
			row := &ValuesRow{Pos: toPos(r.Pos)}
			for _, e := range r.Values {
				row.Values = append(row.Values, c.expr(e))
			}
			v.Rows = append(v.Rows, row)
		}
		return v
	}
	s := g.Select
	sel := &Select{Pos: toPos(s.Pos), Distinct: s.Distinct}
	for _, it := range s.Items {
		sel.Items = append(sel.Items, c.selectItem(it))
	}
	if s.From != nil {
		sel.From = c.from(s.From)
	}
	if s.Where != nil {
		sel.Where = c.expr(s.Where)
	}
	for _, g := range s.GroupBy {
		c.groupItem(sel, g)
	}
	if s.Having != nil {
		sel.Having = c.expr(s.Having)
	}
	for _, w := range s.Windows {
		sel.Windows = append(sel.Windows, &NamedWindow{Pos: toPos(w.Name.Pos), Name: c.ident(&w.Name), Spec: c.windowBody(w.Body)})
	}
	return sel
}

// over converts what follows OVER.
func (c *converter) over(g *gOver) *WindowSpec {
	if g.Name != nil {
		return &WindowSpec{Pos: toPos(g.Pos), Name: c.ident(g.Name)}
	}
	return c.windowBody(g.Body)
}

func (c *converter) orderItem(o *gOrderItem) *OrderItem {
	return &OrderItem{Pos: toPos(o.Pos), X: c.expr(o.X),
		Desc: strings.EqualFold(o.Dir, "DESC"), Nulls: strings.ToUpper(o.Nulls)}
}

func (c *converter) windowBody(g *gWindowBody) *WindowSpec {
	w := &WindowSpec{Pos: toPos(g.Pos)}
	for _, e := range g.Partition {
		w.Partition = append(w.Partition, c.expr(e))
	}
	for _, o := range g.Order {
		w.Order = append(w.Order, c.orderItem(o))
	}
	if f := g.Frame; f != nil {
		fr := &Frame{Pos: toPos(f.Pos), Rows: strings.EqualFold(f.Unit, "ROWS")}
		if f.Between {
			fr.Lo, fr.Hi = c.frameBound(f.Lo), c.frameBound(f.Hi)
		} else {
			fr.Lo, fr.Hi = c.frameBound(f.Single), &FrameBound{Pos: fr.Pos, Current: true}
		}
		w.Frame = fr
	}
	return w
}

func (c *converter) frameBound(g *gFrameBound) *FrameBound {
	b := &FrameBound{Pos: toPos(g.Pos), Unbounded: g.Unbounded, Current: g.Current, Following: g.Following}
	switch {
	case g.N != nil:
		n, err := strconv.ParseInt(*g.N, 10, 64)
		if err != nil || n < 0 {
			c.fail(g.Pos, "a frame bound takes a whole number of rows, not %s", *g.N)
		}
		b.N = n
	case g.Interval != nil:
		unit := strings.TrimSuffix(strings.ToUpper(g.Interval.Unit), "S")
		b.Interval = &IntervalLit{Pos: b.Pos, Value: unquoteString(g.Interval.Value), Unit: unit}
	}
	return b
}

func (c *converter) selectItem(g *gSelectItem) *SelectItem {
	it := &SelectItem{Pos: toPos(g.Pos)}
	switch {
	case g.Star:
		it.Star = true
	case starRef(g.Expr) != nil:
		if g.Alias != nil {
			c.fail(g.Alias.Pos, "a star (%s.*) cannot have an alias", starRef(g.Expr).First.Name)
		}
		it.Star = true
		it.Table = c.ident(&starRef(g.Expr).First)
	default:
		it.Expr = c.expr(g.Expr)
		if g.Alias != nil {
			it.Alias = c.ident(g.Alias)
		}
	}
	return it
}

// from converts a FROM clause to a left-deep tree of joins.
func (c *converter) from(g *gFrom) Relation {
	r := c.fromItem(g.First)
	for _, j := range g.Joins {
		kind := CrossJoin
		switch strings.ToUpper(j.Kind) {
		case "LEFT":
			kind = LeftJoin
		case "RIGHT":
			kind = RightJoin
		case "FULL":
			kind = FullJoin
		case "INNER", "":
			if !j.Comma {
				kind = InnerJoin
			}
		}
		jn := &Join{Pos: toPos(j.Pos), Kind: kind, Left: r, Right: c.fromItem(j.Item)}
		switch {
		case j.Comma && j.On != nil:
			c.fail(j.Pos, "ON after a comma join: write JOIN ... ON, or the condition in WHERE")
		case !j.Comma && j.On == nil:
			c.fail(j.Pos, "%s needs an ON condition (CROSS, NATURAL and USING joins are not supported yet)", kind)
		case j.On != nil:
			jn.On = c.expr(j.On)
		}
		r = jn
	}
	return r
}

func (c *converter) fromItem(g *gFromItem) Relation {
	alias := ""
	if g.Alias != nil {
		alias = c.ident(g.Alias)
	}
	if g.Sub != nil {
		sub := &SubqueryRef{Pos: toPos(g.Pos), Query: c.query(g.Sub), Alias: alias}
		if g.SubAlias != nil {
			sub.Alias = c.ident(g.SubAlias)
		}
		for _, col := range g.SubCols {
			sub.Columns = append(sub.Columns, c.ident(col))
		}
		return sub
	}
	if g.TVF != nil {
		w := c.windowTVF(g.TVF)
		w.Pos, w.Alias = toPos(g.Pos), alias
		return w
	}
	t := &TableRef{Pos: toPos(g.Pos), Name: c.ident(g.Table), Alias: alias}
	if g.AsOf != nil {
		t.AsOf = c.expr(g.AsOf.Time)
	}
	return t
}

// starRef returns the t.* that g consists of, or nil.
func starRef(g *gExpr) *gRef {
	if len(g.Rest) > 0 || len(g.Left.Rest) > 0 || g.Left.Left.Cmp == nil {
		return nil
	}
	cmp := g.Left.Left.Cmp
	if len(cmp.Rest) > 0 || len(cmp.Left.Rest) > 0 || len(cmp.Left.Left.Rest) > 0 {
		return nil
	}
	mul := cmp.Left.Left.Left
	if len(mul.Rest) > 0 || mul.Left.Primary == nil {
		return nil
	}
	if ref := mul.Left.Primary.Ref; ref != nil && ref.Star {
		return ref
	}
	return nil
}

// isWord reports whether g is the unquoted word w (in any case).
func isWord(g gIdent, w string) bool {
	return strings.EqualFold(g.Name, w)
}

// ident returns an identifier's name: as written, or unquoted.
func (c *converter) ident(g *gIdent) string {
	if !strings.HasPrefix(g.Name, "`") {
		return g.Name
	}
	name := strings.ReplaceAll(g.Name[1:len(g.Name)-1], "``", "`")
	if name == "" {
		c.fail(g.Pos, "empty quoted identifier")
	}
	return name
}

// unquoteString removes the quotes of a '...' literal and unescapes ”.
func unquoteString(s string) string {
	if len(s) < 2 {
		return s
	}
	return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
}

// ---- expressions ----

func (c *converter) expr(g *gExpr) Expr {
	e := c.and(g.Left)
	for _, arm := range g.Rest {
		e = &Binary{Pos: toPos(arm.Pos), Op: "OR", L: e, R: c.and(arm.Right)}
	}
	return e
}

func (c *converter) and(g *gAnd) Expr {
	e := c.not(g.Left)
	for _, arm := range g.Rest {
		e = &Binary{Pos: toPos(arm.Pos), Op: "AND", L: e, R: c.not(arm.Right)}
	}
	return e
}

func (c *converter) not(g *gNot) Expr {
	if g.Not != nil {
		return &Unary{Pos: toPos(g.Pos), Op: "NOT", X: c.not(g.Not)}
	}
	return c.cmp(g.Cmp)
}

func (c *converter) cmp(g *gCmp) Expr {
	e := c.concat(g.Left)
	for _, arm := range g.Rest {
		p := toPos(arm.Pos)
		switch {
		case arm.IsNull != nil && arm.IsNull.Distinct != nil:
			op := "IS DISTINCT FROM"
			if arm.IsNull.Not {
				op = "IS NOT DISTINCT FROM"
			}
			e = &Binary{Pos: p, Op: op, L: e, R: c.concat(arm.IsNull.Distinct)}
		case arm.IsNull != nil:
			e = &IsNull{Pos: p, X: e, Not: arm.IsNull.Not}
		case arm.Pred != nil:
			pr := arm.Pred
			switch {
			case pr.Between != nil:
				e = &Between{Pos: p, X: e, Lo: c.concat(pr.Between.Lo), Hi: c.concat(pr.Between.Hi), Not: pr.Not}
			case pr.Like != nil:
				e = &Like{Pos: p, X: e, Pattern: c.concat(pr.Like), Not: pr.Not}
			default:
				in := &In{Pos: p, X: e, Not: pr.Not}
				if pr.In.Expr != nil {
					c.fail(arm.Pos, "IN takes a list in parentheses: x IN (a, b, ...) (x IN s is only valid in POSITION(x IN s))")
				}
				if pr.In.Query != nil {
					in.Query = c.query(pr.In.Query)
				}
				for _, x := range pr.In.List {
					in.List = append(in.List, c.expr(x))
				}
				e = in
			}
		default:
			op := arm.Op
			if op == "!=" {
				op = "<>"
			}
			e = &Binary{Pos: p, Op: op, L: e, R: c.concat(arm.Right)}
		}
	}
	return e
}

func (c *converter) concat(g *gConcat) Expr {
	e := c.add(g.Left)
	for _, arm := range g.Rest {
		e = &Binary{Pos: toPos(arm.Pos), Op: "||", L: e, R: c.add(arm.Right)}
	}
	return e
}

func (c *converter) add(g *gAdd) Expr {
	e := c.mul(g.Left)
	for _, arm := range g.Rest {
		e = &Binary{Pos: toPos(arm.Pos), Op: arm.Op, L: e, R: c.mul(arm.Right)}
	}
	return e
}

func (c *converter) mul(g *gMul) Expr {
	e := c.unary(g.Left)
	for _, arm := range g.Rest {
		e = &Binary{Pos: toPos(arm.Pos), Op: arm.Op, L: e, R: c.unary(arm.Right)}
	}
	return e
}

func (c *converter) unary(g *gUnary) Expr {
	if g.X != nil {
		return &Unary{Pos: toPos(g.Pos), Op: g.Op, X: c.unary(g.X)}
	}
	e := c.primary(g.Primary)
	for i, sfx := range g.Suffix {
		p := toPos(sfx.Pos)
		if sfx.Field != nil {
			e = &FieldAccess{Pos: toPos(sfx.Field.Pos), X: e, Field: c.ident(sfx.Field)}
			continue
		}
		// ARRAY[…] and MAP[…] read as a reference with a subscript.
		if ref, ok := e.(*ColumnRef); ok && i == 0 && ref.Table == "" && g.Primary.Ref != nil && !strings.HasPrefix(g.Primary.Ref.First.Name, "`") {
			if kind := strings.ToUpper(ref.Name); kind == "ARRAY" || kind == "MAP" {
				ctor := &Constructor{Pos: ref.Pos, Kind: kind}
				for _, x := range sfx.Index {
					ctor.Args = append(ctor.Args, c.expr(x))
				}
				if kind == "MAP" && len(ctor.Args)%2 != 0 {
					c.fail(sfx.Pos, "MAP[…] takes keys and values in pairs (k1, v1, k2, v2, …), not %d values", len(ctor.Args))
				}
				e = ctor
				continue
			}
		}
		if len(sfx.Index) != 1 {
			c.fail(sfx.Index[1].Left.Left.Pos, "a subscript takes one index: x[i]")
		}
		e = &Subscript{Pos: p, X: e, Index: c.expr(sfx.Index[0])}
	}
	return e
}

func (c *converter) primary(g *gPrimary) Expr {
	p := toPos(g.Pos)
	switch {
	case g.Cast != nil:
		return &Cast{Pos: p, X: c.expr(g.Cast.X), Type: c.typeName(g.Cast.Type), Try: g.Cast.Try}
	case g.Case != nil:
		return c.caseExpr(p, g.Case)
	case g.Interval != nil:
		unit := strings.TrimSuffix(strings.ToUpper(g.Interval.Unit), "S")
		return &IntervalLit{Pos: p, Value: unquoteString(g.Interval.Value), Unit: unit}
	case g.Number != nil:
		return &NumberLit{Pos: p, Text: *g.Number, IsFloat: strings.ContainsAny(*g.Number, ".eE")}
	case g.String != nil:
		return &StringLit{Pos: p, Value: unquoteString(*g.String)}
	case g.True, g.False:
		return &BoolLit{Pos: p, Value: g.True}
	case g.Null:
		return &NullLit{Pos: p}
	case g.Ref != nil:
		return c.ref(p, g.Ref)
	case g.LRCall != nil:
		return c.call(p, g.LRName, g.LRCall)
	case g.Exists != nil:
		return &Exists{Pos: p, Query: c.query(g.Exists)}
	case len(g.ParenMore) > 0:
		row := &Constructor{Pos: p, Kind: "ROW", Args: []Expr{c.expr(g.Paren)}}
		for _, x := range g.ParenMore {
			row.Args = append(row.Args, c.expr(x))
		}
		return row
	default:
		return c.expr(g.Paren)
	}
}

func (c *converter) caseExpr(p Pos, g *gCase) *Case {
	e := &Case{Pos: p}
	if g.Operand != nil {
		e.Operand = c.expr(g.Operand)
	}
	for _, w := range g.Whens {
		e.Whens = append(e.Whens, &When{Pos: toPos(w.Pos), Cond: c.expr(w.Cond), Result: c.expr(w.Result)})
	}
	if g.Else != nil {
		e.Else = c.expr(g.Else)
	}
	return e
}

// ref converts what starts with an identifier.
func (c *converter) ref(p Pos, g *gRef) Expr {
	switch {
	case g.Call != nil:
		if strings.HasPrefix(g.First.Name, "`") {
			c.fail(g.First.Pos, "a function name cannot be quoted")
		}
		if isWord(g.First, "ROW") {
			cl := g.Call
			if cl.Star || cl.Distinct || cl.From != nil || cl.To != nil || cl.Filter != nil || cl.Over != nil {
				c.fail(cl.Pos, "ROW(…) takes a list of values")
			}
			row := &Constructor{Pos: p, Kind: "ROW"}
			if cl.First != nil {
				row.Args = append(row.Args, c.expr(cl.First))
			}
			for _, x := range cl.More {
				row.Args = append(row.Args, c.expr(x))
			}
			return row
		}
		return c.call(p, g.First.Name, g.Call)
	case g.Literal != nil:
		lit := &TimestampLit{Pos: p, Value: unquoteString(g.Literal.Value)}
		switch {
		case isWord(g.First, "DATE"):
			lit.Type = "DATE"
		case isWord(g.First, "TIME"):
			lit.Type = "TIME"
		case !isWord(g.First, "TIMESTAMP"):
			c.fail(g.Literal.Pos, "unexpected string %s after %s", g.Literal.Value, g.First.Name)
		}
		return lit
	case g.Star:
		c.fail(g.First.Pos, "%s.* is only valid as an item of a select list", g.First.Name)
	}
	col := &ColumnRef{Pos: p, Name: c.ident(&g.First)}
	if g.Second != nil {
		col.Table, col.Name = col.Name, c.ident(g.Second)
	}
	return col
}

func (c *converter) call(p Pos, name string, g *gCall) *Call {
	e := &Call{Pos: p, Name: strings.ToUpper(name), Star: g.Star, Distinct: g.Distinct}
	if g.Filter != nil {
		e.Filter = c.expr(g.Filter)
	}
	if x, s, ok := positionArgs(g); ok && e.Name == "POSITION" {
		e.Args = []Expr{c.concat(x), c.concat(s)}
		return e
	}
	if e.Name == "TRIM" && g.From != nil && len(g.More) == 0 && g.For == nil {
		return c.trim(e, g)
	}
	if g.First != nil {
		e.Args = append(e.Args, c.expr(g.First))
	}
	for _, a := range g.More {
		e.Args = append(e.Args, c.expr(a))
	}
	if g.From != nil {
		if msg, ok := UnsupportedFunction(e.Name, false); ok {
			if c.err == nil {
				c.err = Errorf(p, "%s", msg)
			}
		} else if e.Name != "SUBSTRING" && e.Name != "EXTRACT" {
			c.fail(g.Pos, "FROM inside a function call is only valid in SUBSTRING(s FROM i [FOR n]) and EXTRACT(unit FROM t)")
		} else if e.Name == "EXTRACT" && g.For != nil {
			c.fail(g.Pos, "FOR is only valid in SUBSTRING(s FROM i FOR n)")
		}
		e.Args = append(e.Args, c.expr(g.From))
		if g.For != nil {
			e.Args = append(e.Args, c.expr(g.For))
		}
	}
	if g.To != nil {
		if e.Name != "FLOOR" && e.Name != "CEIL" {
			c.fail(g.Pos, "TO inside a function call is only valid in FLOOR(t TO unit) and CEIL(t TO unit)")
		}
		e.Args = append(e.Args, c.expr(g.To))
	}
	if g.Over != nil {
		e.Over = c.over(g.Over)
	}
	return e
}

// positionArgs returns x and s of a call (x IN s), the arguments of
// POSITION(x IN s).
func positionArgs(g *gCall) (x, s *gConcat, ok bool) {
	if g.First == nil || len(g.More) > 0 || g.From != nil || g.To != nil || len(g.First.Rest) > 0 {
		return nil, nil, false
	}
	and := g.First.Left
	if len(and.Rest) > 0 || and.Left.Cmp == nil {
		return nil, nil, false
	}
	cmp := and.Left.Cmp
	if len(cmp.Rest) != 1 || cmp.Rest[0].Pred == nil {
		return nil, nil, false
	}
	pr := cmp.Rest[0].Pred
	if pr.Not || pr.In == nil || pr.In.Expr == nil {
		return nil, nil, false
	}
	return cmp.Left, pr.In.Expr, true
}

// trim converts TRIM([BOTH | LEADING | TRAILING] [chars] FROM s) into
// TRIM(s, chars), LTRIM(s, chars) or RTRIM(s, chars) (chars ' ' if left out).
func (c *converter) trim(e *Call, g *gCall) *Call {
	mode := "BOTH"
	var chars Expr
	if ref := plainRef(g.First); ref != nil && ref.Second == nil && !ref.Star && ref.Call == nil &&
		(isWord(ref.First, "BOTH") || isWord(ref.First, "LEADING") || isWord(ref.First, "TRAILING")) {
		mode = strings.ToUpper(ref.First.Name)
		if ref.Literal != nil {
			chars = &StringLit{Pos: toPos(ref.Literal.Pos), Value: unquoteString(ref.Literal.Value)}
		}
	} else {
		chars = c.expr(g.First)
	}
	if chars == nil {
		chars = &StringLit{Pos: e.Pos, Value: " "}
	}
	switch mode {
	case "LEADING":
		e.Name = "LTRIM"
	case "TRAILING":
		e.Name = "RTRIM"
	}
	e.Args = []Expr{c.expr(g.From), chars}
	return e
}

// windowParams lists, per window TVF, its parameters after DATA and
// TIMECOL in positional order; a trailing "?" marks an optional one.
var windowParams = map[string][]string{
	"TUMBLE":   {"SIZE", "OFFSET?"},
	"HOP":      {"SLIDE", "SIZE", "OFFSET?"},
	"CUMULATE": {"STEP", "SIZE", "OFFSET?"},
	"SESSION":  {"GAP"},
}

// windowTVF checks a FROM TABLE(f(...)) call and sorts its arguments.
func (c *converter) windowTVF(g *gTVF) *WindowTVF {
	kind := strings.ToUpper(c.ident(&g.Name))
	params, ok := windowParams[kind]
	if !ok {
		c.fail(g.Name.Pos, "table function %s is not supported (FROM TABLE(...) takes the window functions TUMBLE, HOP, CUMULATE and SESSION)", c.ident(&g.Name))
		return &WindowTVF{Kind: kind}
	}
	w := &WindowTVF{Kind: kind}
	all := append([]string{"DATA", "TIMECOL"}, params...)
	given := map[string]bool{}
	named := false
	for i, a := range g.Args {
		name, pos := "", a.Pos
		var table *gTVFTable
		var x *gExpr
		if a.Value != nil {
			ref := bareIdent(a.Expr)
			if ref == nil {
				c.fail(a.Pos, "a named argument is NAME => value")
				return w
			}
			name = strings.ToUpper(c.ident(ref))
			table, x, pos = a.Value.Table, a.Value.Expr, a.Value.Pos
			named = true
		} else {
			if named {
				c.fail(a.Pos, "a positional argument cannot follow a named one")
				return w
			}
			if i >= len(all) {
				c.fail(a.Pos, "%s takes at most %d arguments (%s)", kind, len(all), windowSignature(kind))
				return w
			}
			name = all[i]
			table, x = a.Table, a.Expr
		}
		name = strings.TrimSuffix(name, "?")
		known := false
		for _, p := range all {
			known = known || strings.TrimSuffix(p, "?") == name
		}
		if !known {
			c.fail(a.Pos, "%s has no parameter %s (%s)", kind, name, windowSignature(kind))
			return w
		}
		if given[name] {
			c.fail(a.Pos, "%s: parameter %s is given twice", kind, name)
			return w
		}
		given[name] = true
		switch name {
		case "DATA":
			if table == nil {
				c.fail(pos, "%s: the DATA argument is TABLE name", kind)
				return w
			}
			w.Table, w.TablePos = c.ident(&table.Name), toPos(table.Name.Pos)
			for _, p := range table.Partition {
				w.Partition = append(w.Partition, c.ident(p))
			}
			if len(w.Partition) > 0 && kind != "SESSION" {
				c.fail(table.Partition[0].Pos, "PARTITION BY is only for SESSION windows")
				return w
			}
		case "TIMECOL":
			col := descriptorCol(x)
			if col == nil {
				c.fail(pos, "%s: the TIMECOL argument is DESCRIPTOR(time_column)", kind)
				return w
			}
			w.TimeCol, w.TimePos = c.ident(col), toPos(col.Pos)
		default:
			if table != nil {
				c.fail(pos, "%s: %s is an interval, not a table", kind, name)
				return w
			}
			e := c.expr(x)
			switch name {
			case "SIZE":
				w.Size = e
			case "SLIDE":
				w.Slide = e
			case "STEP":
				w.Step = e
			case "GAP":
				w.Gap = e
			case "OFFSET":
				w.Offset = e
			}
		}
	}
	for _, p := range all {
		if !strings.HasSuffix(p, "?") && !given[p] {
			c.fail(g.Pos, "%s needs the argument %s (%s)", kind, p, windowSignature(kind))
			return w
		}
	}
	return w
}

// windowSignature is the argument list of a window TVF, for errors.
func windowSignature(kind string) string {
	parts := []string{"TABLE t", "DESCRIPTOR(ts)"}
	for _, p := range windowParams[kind] {
		if strings.HasSuffix(p, "?") {
			parts = append(parts, "["+strings.ToLower(strings.TrimSuffix(p, "?"))+"]")
		} else {
			parts = append(parts, strings.ToLower(p))
		}
	}
	return kind + "(" + strings.Join(parts, ", ") + ")"
}

// plainRef returns the primary reference that g consists of, or nil.
func plainRef(g *gExpr) *gRef {
	if g == nil || len(g.Rest) > 0 || len(g.Left.Rest) > 0 || g.Left.Left.Cmp == nil {
		return nil
	}
	cmp := g.Left.Left.Cmp
	if len(cmp.Rest) > 0 || len(cmp.Left.Rest) > 0 || len(cmp.Left.Left.Rest) > 0 {
		return nil
	}
	mul := cmp.Left.Left.Left
	if len(mul.Rest) > 0 || mul.Left.Primary == nil {
		return nil
	}
	return mul.Left.Primary.Ref
}

// bareIdent returns the identifier that g consists of, or nil.
func bareIdent(g *gExpr) *gIdent {
	r := plainRef(g)
	if r == nil || r.Call != nil || r.Star || r.Second != nil || r.Literal != nil {
		return nil
	}
	return &r.First
}

// descriptorCol returns the column of DESCRIPTOR(col), or nil.
func descriptorCol(g *gExpr) *gIdent {
	r := plainRef(g)
	if r == nil || r.Call == nil || !isWord(r.First, "DESCRIPTOR") {
		return nil
	}
	cl := r.Call
	if cl.Star || cl.Distinct || cl.First == nil || len(cl.More) > 0 || cl.From != nil || cl.To != nil {
		return nil
	}
	return bareIdent(cl.First)
}

// groupItem adds a GROUP BY element to sel: a plain expression, or a
// grouping element (ROLLUP (…) and CUBE (…) parse as calls, GROUPING SETS
// as the identifier GROUPING followed by the sets).
func (c *converter) groupItem(sel *Select, g *gGroupItem) {
	e := c.expr(g.Expr)
	if g.Sets != nil {
		if r, ok := e.(*ColumnRef); !ok || r.Table != "" || !strings.EqualFold(r.Name, "GROUPING") {
			c.fail(g.Sets[0].Pos, "SETS must follow GROUPING in GROUP BY")
			return
		}
		el := &GroupingElem{Pos: e.Position(), Kind: "GROUPING SETS"}
		for _, s := range g.Sets {
			set := &GroupingSet{Pos: toPos(s.Pos)}
			if s.One != nil {
				set.Exprs = []Expr{c.expr(s.One)}
			}
			for _, x := range s.Exprs {
				set.Exprs = append(set.Exprs, c.expr(x))
			}
			for _, x := range set.Exprs {
				if call, ok := x.(*Call); ok && (strings.EqualFold(call.Name, "ROLLUP") || strings.EqualFold(call.Name, "CUBE")) {
					c.fail(lexer.Position{Line: call.Pos.Line, Column: call.Pos.Col, Offset: call.Pos.Offset}, "%s inside GROUPING SETS is not supported yet: list its sets", strings.ToUpper(call.Name))
					return
				}
			}
			el.Sets = append(el.Sets, set)
		}
		sel.Grouping = append(sel.Grouping, el)
		return
	}
	if call, ok := e.(*Call); ok && call.Over == nil && call.Filter == nil && !call.Star && !call.Distinct {
		if kind := strings.ToUpper(call.Name); kind == "ROLLUP" || kind == "CUBE" {
			if len(call.Args) == 0 {
				c.fail(lexer.Position{Line: call.Pos.Line, Column: call.Pos.Col, Offset: call.Pos.Offset}, "%s needs at least one column", kind)
				return
			}
			sel.Grouping = append(sel.Grouping, &GroupingElem{Pos: call.Pos, Kind: kind, Sets: []*GroupingSet{{Pos: call.Pos, Exprs: call.Args}}})
			return
		}
	}
	sel.GroupBy = append(sel.GroupBy, e)
}
