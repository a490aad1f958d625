package planner

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

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
}

type tableEntry struct {
	table     *connector.Table
	def       *parser.CreateTable
	watermark *parser.WatermarkDef // kept for event time; nil if none
	wmSpec    *exec.WatermarkSpec  // the bound watermark, for the source; nil if none
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
const supportedTypes = "INT, INTEGER, BIGINT, DOUBLE, FLOAT, VARCHAR, STRING, CHAR, BOOLEAN, TIMESTAMP, TIMESTAMP(3)"

// columnType maps a SQL type name to a Weir type.
func columnType(t *parser.TypeName) (types.Type, error) {
	switch t.Name {
	case "INT", "INTEGER":
		return types.Int, nil
	case "BIGINT":
		return types.BigInt, nil
	case "DOUBLE", "FLOAT":
		return types.Double, nil
	case "VARCHAR", "STRING", "CHAR":
		return types.Varchar, nil
	case "BOOLEAN":
		return types.Boolean, nil
	case "TIMESTAMP":
		if len(t.Params) == 0 || (len(t.Params) == 1 && t.Params[0] == 3) {
			return types.Timestamp, nil
		}
		return types.Type{}, parser.Errorf(t.Pos, "unsupported type %s: only TIMESTAMP(3) is supported", typeNameText(t))
	}
	return types.Type{}, parser.Errorf(t.Pos, "unsupported type %s (supported: %s)", typeNameText(t), supportedTypes)
}

// CreateTable adds a table. It fails if the name is taken, unless IF NOT
// EXISTS is given; unsupported column types, duplicate columns and unknown
// watermark or primary-key columns are errors at their position.
func (c *Catalog) CreateTable(ct *parser.CreateTable) error {
	k := key(ct.Name)
	if _, ok := c.tables[k]; ok || c.views[k] != nil {
		if ct.IfNotExists {
			return nil
		}
		return parser.Errorf(ct.Pos, "table '%s' already exists", ct.Name)
	}
	var (
		schema types.Schema
		wmSpec *exec.WatermarkSpec
	)
	for _, col := range ct.Columns {
		if schema.Index(col.Name) >= 0 {
			return parser.Errorf(col.Pos, "duplicate column '%s'", col.Name)
		}
		t, err := columnType(col.Type)
		if err != nil {
			return err
		}
		t.NotNull = col.NotNull
		schema.Columns = append(schema.Columns, types.Column{Name: col.Name, Type: t})
	}
	if ct.Watermark != nil {
		i := schema.Index(ct.Watermark.Column)
		if i < 0 {
			return parser.Errorf(ct.Watermark.Pos, "unknown watermark column '%s' (columns: %s)", ct.Watermark.Column, strings.Join(schema.Names(), ", "))
		}
		if schema.Columns[i].Type.Kind != types.KindTimestamp {
			return parser.Errorf(ct.Watermark.Pos, "watermark column '%s' must be TIMESTAMP(3), not %s", ct.Watermark.Column, schema.Columns[i].Type.Kind)
		}
		e, err := bindWatermark(ct, schema, i)
		if err != nil {
			return err
		}
		wmSpec = &exec.WatermarkSpec{Column: i, Expr: e}
	}
	var pk []int
	for _, name := range ct.PrimaryKey {
		i := schema.Index(name)
		if i < 0 {
			return parser.Errorf(ct.Pos, "unknown primary key column '%s' (columns: %s)", name, strings.Join(schema.Names(), ", "))
		}
		pk = append(pk, i)
		schema.Columns[i].Type.NotNull = true
	}
	opts := make(map[string]string, len(ct.Options))
	for _, o := range ct.Options {
		if _, dup := opts[o.Key]; dup {
			return parser.Errorf(o.Pos, "duplicate option '%s'", o.Key)
		}
		opts[o.Key] = o.Value
	}
	c.tables[k] = &tableEntry{
		table:     &connector.Table{Name: ct.Name, Schema: schema, Options: opts, PrimaryKey: pk},
		def:       ct,
		watermark: ct.Watermark,
		wmSpec:    wmSpec,
	}
	return nil
}

// bindWatermark binds the expression of WATERMARK FOR over the table's
// columns (column col is the rowtime column) and checks it: it must be of
// type TIMESTAMP(3) and use a TIMESTAMP column of the table, so that the
// watermark follows the rows' event time.
func bindWatermark(ct *parser.CreateTable, schema types.Schema, col int) (expr.Expr, error) {
	w := ct.Watermark
	tbl := &connector.Table{Name: ct.Name, Schema: schema}
	eb := &exprBinder{sc: newScope(rel{node: &Scan{Table: tbl}, qual: ct.Name}), where: "in WATERMARK"}
	e, err := eb.bind(w.Expr)
	if err != nil {
		return nil, err
	}
	name := schema.Columns[col].Name
	example := fmt.Sprintf("such as %s - INTERVAL '5' SECOND", name)
	if e.Type().Kind != types.KindTimestamp {
		return nil, parser.Errorf(startPos(w.Expr), "WATERMARK expression %s is of type %s; it must be TIMESTAMP(3), %s",
			sqlText(w.Expr), e.Type().Nullable().SQL(), example)
	}
	usesTS := false
	_, _ = expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
		if c, ok := x.(*expr.Column); ok && c.T.Kind == types.KindTimestamp {
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

// watermarkSpec returns the bound WATERMARK FOR of table t, or nil.
func (c *Catalog) watermarkSpec(t *connector.Table) *exec.WatermarkSpec {
	if e, ok := c.tables[key(t.Name)]; ok && e.table == t {
		return e.wmSpec
	}
	return nil
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

// Describe returns the schema of a table or view.
func (c *Catalog) Describe(name string) (types.Schema, error) {
	if e, ok := c.tables[key(name)]; ok {
		return e.table.Schema, nil
	}
	if v, ok := c.views[key(name)]; ok {
		return v.schema, nil
	}
	return types.Schema{}, fmt.Errorf("unknown table '%s' (%s)", name, c.listing())
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
	for _, col := range e.table.Schema.Columns {
		lines = append(lines, "  `"+col.Name+"` "+col.Type.SQL())
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
	b.WriteString("\n) WITH (\n")
	var opts []string
	for _, o := range e.def.Options {
		opts = append(opts, "  '"+o.Key+"' = '"+strings.ReplaceAll(o.Value, "'", "''")+"'")
	}
	b.WriteString(strings.Join(opts, ",\n"))
	b.WriteString("\n)")
	return b.String(), nil
}
