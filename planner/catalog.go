package planner

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

// Catalog holds the tables and views of a session. Names are
// case-insensitive. It is not safe for concurrent use.
type Catalog struct {
	tables map[string]*tableEntry
	views  map[string]*viewEntry
	// functions are the user functions (CREATE FUNCTION), see functions.go.
	functions map[string]*userFunc
}

type tableEntry struct {
	table     *connector.Table // its physical columns
	def       *parser.CreateTable
	watermark *parser.WatermarkDef // kept for event time; nil if none
}

type viewEntry struct {
	name   string
	def    *parser.CreateView
	schema types.Schema
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog {
	return &Catalog{tables: map[string]*tableEntry{}, views: map[string]*viewEntry{}}
}

func key(name string) string { return strings.ToLower(name) }

func itoa(n int) string { return strconv.Itoa(n) }

// supportedTypes is listed in the error for an unsupported column type.
const supportedTypes = "TINYINT, SMALLINT, INT, INTEGER, BIGINT, DECIMAL(p, s), FLOAT, DOUBLE, VARCHAR, STRING, CHAR, BOOLEAN, BYTES, VARBINARY, DATE, TIME, TIMESTAMP(3), TIMESTAMP_LTZ(3)"

// columnType maps a SQL type name to a Weir type.
func columnType(t *parser.TypeName) (types.Type, error) {
	switch t.Name {
	case "ROW", "ARRAY", "MAP":
		fs := make([]types.Field, len(t.Fields))
		for i, f := range t.Fields {
			ft, err := columnType(f.Type)
			if err != nil {
				return types.Type{}, err
			}
			ft.NotNull = f.NotNull
			fs[i] = types.Field{Name: f.Name, Type: ft}
		}
		switch {
		case t.Name == "ROW":
			return types.RowOf(fs...), nil
		case t.Name == "ARRAY" && len(fs) == 1:
			return types.ArrayOf(fs[0].Type), nil
		case t.Name == "MAP" && len(fs) == 2:
			return types.MapOf(fs[0].Type, fs[1].Type), nil
		}
	case "INT", "INTEGER":
		return types.Int, nil
	case "BIGINT":
		return types.BigInt, nil
	case "DOUBLE":
		return types.Double, nil
	case "FLOAT":
		return types.Type{Kind: types.KindFloat}, nil
	case "TINYINT":
		return types.Type{Kind: types.KindTinyInt}, nil
	case "SMALLINT":
		return types.Type{Kind: types.KindSmallInt}, nil
	case "DECIMAL":
		// DECIMAL is DECIMAL(10, 0) and DECIMAL(p) is DECIMAL(p, 0), as in Flink.
		p, s := 10, 0
		if len(t.Params) > 0 {
			p = t.Params[0]
		}
		if len(t.Params) > 1 {
			s = t.Params[1]
		}
		if p < 1 || p > types.MaxDecimalPrecision || s > p {
			return types.Type{}, parser.Errorf(t.Pos, "bad type %s: DECIMAL(p, s) needs 1 <= p <= 38 and 0 <= s <= p", typeNameText(t))
		}
		return types.Decimal(p, s), nil
	case "DATE":
		return types.Type{Kind: types.KindDate}, nil
	case "TIME":
		if len(t.Params) == 0 || t.Params[0] == 0 {
			return types.Type{Kind: types.KindTime}, nil
		}
		return types.Type{}, parser.Errorf(t.Pos, "unsupported type %s: only TIME(0) is supported", typeNameText(t))
	case "BYTES", "VARBINARY", "BINARY":
		return types.Type{Kind: types.KindBytes}, nil
	case "VARCHAR", "STRING", "CHAR":
		return types.Varchar, nil
	case "BOOLEAN":
		return types.Boolean, nil
	case "TIMESTAMP":
		if len(t.Params) == 0 || (len(t.Params) == 1 && t.Params[0] == 3) {
			return types.Timestamp, nil
		}
		return types.Type{}, parser.Errorf(t.Pos, "unsupported type %s: only TIMESTAMP(3) is supported", typeNameText(t))
	case "TIMESTAMP_LTZ":
		if len(t.Params) == 0 || (len(t.Params) == 1 && t.Params[0] == 3) {
			return types.Type{Kind: types.KindTimestampLTZ}, nil
		}
		return types.Type{}, parser.Errorf(t.Pos, "unsupported type %s: only TIMESTAMP_LTZ(3) is supported", typeNameText(t))
	}
	return types.Type{}, parser.Errorf(t.Pos, "unsupported type %s (supported: %s)", typeNameText(t), supportedTypes)
}

// CreateTable adds a table. It fails if the name is taken, unless IF NOT
// EXISTS is given; unsupported column types, duplicate columns, computed
// columns that do not bind, and unknown watermark or primary-key columns
// are errors at their position.
func (c *Catalog) CreateTable(ct *parser.CreateTable) error {
	k := key(ct.Name)
	if _, ok := c.tables[k]; ok || c.views[k] != nil {
		if ct.IfNotExists {
			return nil
		}
		return parser.Errorf(ct.Pos, "table '%s' already exists", ct.Name)
	}
	if ct.Like != nil {
		merged, err := c.mergeLike(ct)
		if err != nil {
			return err
		}
		ct = merged
		if len(ct.Columns) == 0 {
			return parser.Errorf(ct.Pos, "table %s must have at least one column", ct.Name)
		}
	}
	var schema types.Schema
	var meta []connector.MetadataColumn
	seen := map[string]bool{}
	for _, col := range ct.Columns {
		if seen[key(col.Name)] {
			return parser.Errorf(col.Pos, "duplicate column '%s'", col.Name)
		}
		seen[key(col.Name)] = true
		if col.Expr != nil {
			continue
		}
		t, err := columnType(col.Type)
		if err != nil {
			return err
		}
		t.NotNull = col.NotNull
		if col.Metadata {
			meta = append(meta, connector.MetadataColumn{Column: len(schema.Columns), Key: col.MetadataKey, Virtual: col.Virtual})
		}
		schema.Columns = append(schema.Columns, types.Column{Name: col.Name, Type: t})
	}
	var pk []int
	for _, name := range ct.PrimaryKey {
		i := schema.Index(name)
		if i < 0 {
			if seen[key(name)] {
				return parser.Errorf(ct.Pos, "primary key column '%s' is a computed column; a key must be a physical column", name)
			}
			return parser.Errorf(ct.Pos, "unknown primary key column '%s' (columns: %s)", name, strings.Join(schema.Names(), ", "))
		}
		pk = append(pk, i)
		schema.Columns[i].Type.NotNull = true
	}
	var part []int
	for _, name := range ct.PartitionBy {
		i := schema.Index(name)
		if i < 0 {
			if seen[key(name)] {
				return parser.Errorf(ct.Pos, "partition column '%s' is a computed column; PARTITIONED BY takes physical columns", name)
			}
			return parser.Errorf(ct.Pos, "unknown partition column '%s' (columns: %s)", name, strings.Join(schema.Names(), ", "))
		}
		for _, m := range meta {
			if m.Column == i {
				return parser.Errorf(ct.Pos, "partition column '%s' is a metadata column; PARTITIONED BY takes physical columns", name)
			}
		}
		for _, j := range part {
			if j == i {
				return parser.Errorf(ct.Pos, "partition column '%s' is listed twice", name)
			}
		}
		part = append(part, i)
	}
	opts := make(map[string]string, len(ct.Options))
	for _, o := range ct.Options {
		if _, dup := opts[o.Key]; dup {
			return parser.Errorf(o.Pos, "duplicate option '%s'", o.Key)
		}
		opts[o.Key] = o.Value
	}
	e := &tableEntry{
		table:     &connector.Table{Name: ct.Name, Schema: schema, Options: opts, PrimaryKey: pk, Metadata: meta, PartitionBy: part},
		def:       ct,
		watermark: ct.Watermark,
	}
	// Bind the computed columns and the watermark once now, to report
	// mistakes at CREATE TABLE; each query binds them again in its session's
	// time zone.
	if _, err := e.scan(time.UTC); err != nil {
		return err
	}
	c.tables[k] = e
	return nil
}

// scan returns a Scan of the table: its columns in order (computed ones
// bound over the physical columns, in time zone loc) with their time
// attributes, and its watermark.
func (e *tableEntry) scan(loc *time.Location) (*Scan, error) {
	ct, tbl := e.def, e.table
	phys := &Scan{Table: tbl}
	eb := &exprBinder{sc: newScope(rel{node: phys, qual: ct.Name}), where: "in a computed column", loc: loc}
	s := &Scan{Table: tbl}
	var proj []expr.Expr
	hasComputed := false
	for _, col := range ct.Columns {
		if col.Expr == nil {
			i := tbl.Schema.Index(col.Name)
			c := tbl.Schema.Columns[i]
			s.Columns.Columns = append(s.Columns.Columns, c)
			proj = append(proj, expr.NewColumn(i, c.Type, c.Name))
			continue
		}
		hasComputed = true
		x, err := eb.bind(col.Expr)
		if err != nil {
			return nil, err
		}
		t := x.Type()
		if t.Attr != types.Proctime {
			t = t.Plain()
		}
		s.Columns.Columns = append(s.Columns.Columns, types.Column{Name: col.Name, Type: t})
		proj = append(proj, x)
	}
	if w := ct.Watermark; w != nil {
		i := s.Columns.Index(w.Column)
		if i < 0 {
			return nil, parser.Errorf(w.Pos, "unknown watermark column '%s' (columns: %s)", w.Column, strings.Join(s.Columns.Names(), ", "))
		}
		rt := &s.Columns.Columns[i]
		if !rt.Type.Kind.IsTimestamp() || rt.Type.Attr == types.Proctime {
			what := rt.Type.Kind.SQL()
			if rt.Type.Attr == types.Proctime {
				what = "a PROCTIME() column"
			}
			return nil, parser.Errorf(w.Pos, "watermark column '%s' must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), not %s", w.Column, what)
		}
		wmExpr, err := bindWatermark(ct, s, i, loc)
		if err != nil {
			return nil, err
		}
		s.WatermarkText, s.Rowtime = wmExpr.String(), rt.Name
		rt.Type.Attr = types.Rowtime
		// The source generates the watermark from the rows it reads:
		// computed columns are substituted by their expressions.
		overPhys, err := expr.Substitute(wmExpr, proj)
		if err != nil {
			return nil, wrap(w.Pos, err)
		}
		col := -1
		if c, ok := proj[i].(*expr.Column); ok {
			col = c.Index
		}
		s.Watermark = &exec.WatermarkSpec{Column: col, Expr: overPhys}
	}
	if err := alignWatermark(ct, s); err != nil {
		return nil, err
	}
	if hasComputed {
		s.Computed = proj
	}
	return s, nil
}

// alignWatermark reads the table's watermark alignment options into its
// scan's watermark: alignment needs a WATERMARK.
func alignWatermark(ct *parser.CreateTable, s *Scan) error {
	a, err := connector.TableAlignment(s.Table)
	if err != nil || a == nil {
		return err
	}
	if s.Watermark == nil {
		return parser.Errorf(ct.Pos, "table %s: option '%s' needs a WATERMARK FOR on the table: alignment pauses sources by their watermarks", ct.Name, connector.OptionAlignGroup)
	}
	w := *s.Watermark
	w.Align = &exec.WatermarkAlignment{Group: a.Group, MaxDrift: a.MaxDrift, UpdateInterval: a.UpdateInterval}
	s.Watermark = &w
	return nil
}

// bindWatermark binds the expression of WATERMARK FOR over the table's
// columns s (column col is the rowtime column) and checks it: it must be of
// type TIMESTAMP(3) or TIMESTAMP_LTZ(3) and use a timestamp column of the
// table, so that the watermark follows the rows' event time.
func bindWatermark(ct *parser.CreateTable, s *Scan, col int, loc *time.Location) (expr.Expr, error) {
	w := ct.Watermark
	eb := &exprBinder{sc: newScope(rel{node: &Scan{Table: s.Table, Columns: s.Columns}, qual: ct.Name}), where: "in WATERMARK", loc: loc}
	e, err := eb.bind(w.Expr)
	if err != nil {
		return nil, err
	}
	name := s.Columns.Columns[col].Name
	example := fmt.Sprintf("such as %s - INTERVAL '5' SECOND", name)
	if !e.Type().Kind.IsTimestamp() {
		return nil, parser.Errorf(startPos(w.Expr), "WATERMARK expression %s is of type %s; it must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), %s",
			sqlText(w.Expr), e.Type().Nullable().Plain().SQL(), example)
	}
	usesTS := false
	_, _ = expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
		if c, ok := x.(*expr.Column); ok && c.T.Kind.IsTimestamp() {
			usesTS = true
		}
		return x, nil
	})
	if !usesTS {
		return nil, parser.Errorf(startPos(w.Expr), "WATERMARK expression %s does not use a TIMESTAMP column of table %s, so it would not follow the rows' event time; use one, %s",
			sqlText(w.Expr), ct.Name, example)
	}
	return e, nil
}

// startPos returns where expression e starts in the text (a binary
// expression's own position is its operator's).
func startPos(e parser.Expr) parser.Pos {
	p := e.Position()
	for _, k := range astChildren(e) {
		if k == nil {
			continue
		}
		if q := startPos(k); q.Offset < p.Offset {
			p = q
		}
	}
	return p
}

// scanOf returns the Scan of table t in time zone loc (see tableEntry.scan).
func (c *Catalog) scanOf(t *connector.Table, loc *time.Location) (*Scan, error) {
	if e, ok := c.tables[key(t.Name)]; ok && e.table == t {
		return e.scan(loc)
	}
	return &Scan{Table: t}, nil
}

// CreateView adds a view after checking that its query binds.
func (c *Catalog) CreateView(cv *parser.CreateView) error {
	k := key(cv.Name)
	if _, ok := c.tables[k]; ok || c.views[k] != nil {
		if cv.IfNotExists {
			return nil
		}
		return parser.Errorf(cv.Pos, "table or view '%s' already exists", cv.Name)
	}
	b := &binder{cat: c}
	rel, err := b.bindQuery(cv.Query)
	if err != nil {
		return err
	}
	c.views[k] = &viewEntry{name: cv.Name, def: cv, schema: rel.node.Schema()}
	return nil
}

// Drop removes a table or view (DROP VIEW removes only views, DROP TABLE only tables).
func (c *Catalog) Drop(d *parser.DropTable) error {
	k := key(d.Name)
	if d.View {
		if _, ok := c.views[k]; ok {
			delete(c.views, k)
			return nil
		}
	} else if _, ok := c.tables[k]; ok {
		delete(c.tables, k)
		return nil
	}
	if d.IfExists {
		return nil
	}
	what := "table"
	if d.View {
		what = "view"
	}
	return parser.Errorf(d.Pos, "unknown %s '%s' (%s)", what, d.Name, c.listing())
}

// Table returns the table named name (case-insensitive).
func (c *Catalog) Table(name string) (*connector.Table, bool) {
	e, ok := c.tables[key(name)]
	if !ok {
		return nil, false
	}
	return e.table, true
}

// Watermark returns the watermark definition of a table, or nil.
func (c *Catalog) Watermark(name string) *parser.WatermarkDef {
	if e, ok := c.tables[key(name)]; ok {
		return e.watermark
	}
	return nil
}

// Names returns the names of all tables and views, sorted.
func (c *Catalog) Names() []string {
	var out []string
	for _, e := range c.tables {
		out = append(out, e.table.Name)
	}
	for _, v := range c.views {
		out = append(out, v.name)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

func (c *Catalog) listing() string {
	n := c.Names()
	if len(n) == 0 {
		return "no tables defined"
	}
	return "tables: " + strings.Join(n, ", ")
}

// Describe returns the columns of a table (computed ones included, with
// their time attributes) or view.
func (c *Catalog) Describe(name string) (types.Schema, error) {
	if e, ok := c.tables[key(name)]; ok {
		s, err := e.scan(time.UTC)
		if err != nil {
			return types.Schema{}, err
		}
		return s.Schema(), nil
	}
	if v, ok := c.views[key(name)]; ok {
		return v.schema, nil
	}
	return types.Schema{}, fmt.Errorf("unknown table '%s' (%s)", name, c.listing())
}

// DescribeRow is one column as Flink's DESCRIBE shows it.
type DescribeRow struct {
	Name string
	// Type is the type without NOT NULL, with a time attribute as Flink
	// prints it ("TIMESTAMP_LTZ(3) *ROWTIME*").
	Type string
	Null bool
	// Key is "PRI(cols)" for a primary key column; Extras a computed
	// column's "AS expr"; Watermark the WATERMARK FOR expression on the
	// rowtime column.
	Key, Extras, Watermark string
}

// DescribeHeader is the header of DescribeTable's rows, as Flink's.
var DescribeHeader = []string{"name", "type", "null", "key", "extras", "watermark"}

// DescribeTable returns the rows of DESCRIBE name, for a table or a view.
func (c *Catalog) DescribeTable(name string) ([]DescribeRow, error) {
	schema, err := c.Describe(name)
	if err != nil {
		return nil, err
	}
	rows := make([]DescribeRow, len(schema.Columns))
	for i, col := range schema.Columns {
		t := col.Type
		t.NotNull = false
		rows[i] = DescribeRow{Name: col.Name, Type: t.SQL(), Null: !col.Type.NotNull}
	}
	e, ok := c.tables[key(name)]
	if !ok {
		return rows, nil
	}
	var pk []string
	for _, k := range e.table.PrimaryKey {
		pk = append(pk, e.table.Schema.Columns[k].Name)
	}
	for i, def := range e.def.Columns {
		if def.Expr != nil {
			rows[i].Extras = "AS " + sqlText(def.Expr)
		}
		if def.Metadata {
			rows[i].Extras = metadataText(def)
		}
		for _, p := range pk {
			if strings.EqualFold(p, def.Name) {
				rows[i].Key = "PRI(" + strings.Join(pk, ", ") + ")"
			}
		}
		if w := e.watermark; w != nil && strings.EqualFold(w.Column, def.Name) {
			rows[i].Watermark = sqlText(w.Expr)
		}
	}
	return rows, nil
}

// ShowCreate returns canonical DDL for a table, or a view's statement text.
func (c *Catalog) ShowCreate(name string) (string, error) {
	if v, ok := c.views[key(name)]; ok {
		return v.def.SQL(), nil
	}
	e, ok := c.tables[key(name)]
	if !ok {
		return "", fmt.Errorf("unknown table '%s' (%s)", name, c.listing())
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE `" + e.table.Name + "` (\n")
	var lines []string
	for _, def := range e.def.Columns {
		if def.Expr != nil {
			lines = append(lines, "  `"+def.Name+"` AS "+sqlText(def.Expr))
			continue
		}
		col := e.table.Schema.Columns[e.table.Schema.Index(def.Name)]
		line := "  `" + col.Name + "` " + col.Type.SQL()
		if def.Metadata {
			line += " " + metadataText(def)
		}
		lines = append(lines, line)
	}
	if w := e.watermark; w != nil {
		lines = append(lines, "  WATERMARK FOR `"+w.Column+"` AS "+sqlText(w.Expr))
	}
	if len(e.table.PrimaryKey) > 0 {
		var ks []string
		for _, i := range e.table.PrimaryKey {
			ks = append(ks, "`"+e.table.Schema.Columns[i].Name+"`")
		}
		lines = append(lines, "  PRIMARY KEY ("+strings.Join(ks, ", ")+") NOT ENFORCED")
	}
	b.WriteString(strings.Join(lines, ",\n"))
	b.WriteString("\n)")
	if len(e.table.PartitionBy) > 0 {
		var ps []string
		for _, i := range e.table.PartitionBy {
			ps = append(ps, "`"+e.table.Schema.Columns[i].Name+"`")
		}
		b.WriteString(" PARTITIONED BY (" + strings.Join(ps, ", ") + ")")
	}
	b.WriteString(" WITH (\n")
	var opts []string
	for _, o := range e.def.Options {
		opts = append(opts, "  '"+o.Key+"' = '"+strings.ReplaceAll(o.Value, "'", "''")+"'")
	}
	b.WriteString(strings.Join(opts, ",\n"))
	b.WriteString("\n)")
	return b.String(), nil
}

// metadataText renders a metadata column's METADATA FROM 'key' [VIRTUAL].
func metadataText(def *parser.ColumnDef) string {
	t := "METADATA FROM '" + strings.ReplaceAll(def.MetadataKey, "'", "''") + "'"
	if def.Virtual {
		t += " VIRTUAL"
	}
	return t
}
