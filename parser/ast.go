package parser

// This file defines Weir's SQL abstract syntax tree: a sealed set of node
// types, each carrying its position in the source. The participle grammar
// structs (grammar.go) are converted into these nodes; the planner sees only
// these.

// Pos is a position in the SQL text: 1-based line and column, 0-based byte offset.
type Pos struct {
	Line, Col, Offset int
}

// Node is any AST node.
type Node interface {
	Position() Pos
	node()
}

// Statement is a top-level SQL statement.
type Statement interface {
	Node
	// SQL returns the statement's source text, as written (without the ';').
	SQL() string
	stmt()
}

// Expr is a scalar expression.
type Expr interface {
	Node
	expr()
}

// QueryExpr is a query: a *Select, *SetOp, *Values, *With or *OrderLimit.
type QueryExpr interface {
	Node
	query()
}

// Relation is an item of a FROM clause: *TableRef, *SubqueryRef, *Join.
type Relation interface {
	Node
	relation()
}

// StmtBase holds what every statement has: its position and source text.
type StmtBase struct {
	Pos  Pos
	Text string
}

// Position returns the statement's start.
func (s *StmtBase) Position() Pos { return s.Pos }

// SQL returns the statement's source text.
func (s *StmtBase) SQL() string { return s.Text }
func (*StmtBase) node()         {}
func (*StmtBase) stmt()         {}

// ---- statements ----

// SetStmt is SET 'key' = 'value', or SET alone (Key == "") to list settings.
type SetStmt struct {
	StmtBase
	Key, Value string
}

// ResetStmt is RESET 'key', or RESET alone (Key == "") to reset all.
type ResetStmt struct {
	StmtBase
	Key string
}

// CreateTable is CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name (...) WITH (...).
type CreateTable struct {
	StmtBase
	Name        string
	Temporary   bool
	IfNotExists bool
	Columns     []*ColumnDef
	Watermark   *WatermarkDef // nil if none
	PrimaryKey  []string      // PRIMARY KEY (...) NOT ENFORCED; nil if none
	Comment     string        // COMMENT '...'; empty if none
	PartitionBy []string      // PARTITIONED BY (...); nil if none
	Options     []*Option     // WITH ('k' = 'v', ...), in order
	Like        *LikeClause   // LIKE source (...); nil if none
}

// ColumnDef is one column of CREATE TABLE: a physical column (Type set)
// or a computed column, name AS expr (Expr set, Type nil).
type ColumnDef struct {
	Pos     Pos
	Name    string
	Type    *TypeName
	NotNull bool
	Expr    Expr // computed column: its expression; nil for a physical column
	// Metadata marks a metadata column (col TYPE METADATA [FROM 'key']
	// [VIRTUAL]): MetadataKey is the key, the column's name when FROM is
	// not given; Virtual columns are read only, never written to a sink.
	Metadata    bool
	MetadataKey string
	Virtual     bool
}

// TypeName is a SQL type as written: Name is upper case and canonical
// ("INT", "BIGINT", "DOUBLE", "VARCHAR", "STRING", "BOOLEAN", "TIMESTAMP",
// ...); Params holds the numbers in parentheses, e.g. TIMESTAMP(3) → [3].
type TypeName struct {
	Pos    Pos
	Name   string
	Params []int
	// Fields are a ROW's fields, an ARRAY's element (one, unnamed) or a
	// MAP's key and value (two, unnamed); nil for the other types.
	Fields []*TypeField
}

// TypeField is a field of ROW<name type [NOT NULL], …>, or the element
// type of an ARRAY or MAP (Name empty).
type TypeField struct {
	Name    string
	Type    *TypeName
	NotNull bool
}

// WatermarkDef is WATERMARK FOR column AS expr.
type WatermarkDef struct {
	Pos    Pos
	Column string
	Expr   Expr
}

// Option is one 'key' = 'value' of a WITH clause.
type Option struct {
	Pos        Pos
	Key, Value string
}

// DropTable is DROP [TEMPORARY] TABLE|VIEW [IF EXISTS] name.
type DropTable struct {
	StmtBase
	Name      string
	View      bool
	IfExists  bool
	Temporary bool
}

// CreateView is CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name AS query.
type CreateView struct {
	StmtBase
	Name        string
	Temporary   bool
	IfNotExists bool
	Query       QueryExpr
}

// CreateFunction is CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS]
// name AS 'identifier' [LANGUAGE lang]: it binds a scalar function
// registered in the build under identifier (package udf) to a SQL name.
type CreateFunction struct {
	StmtBase
	Name        string
	Temporary   bool
	System      bool
	IfNotExists bool
	Identifier  string
	IDPos       Pos    // where the identifier's string stands
	Language    string // upper case; "" when not written
	LangPos     Pos
}

// DropFunction is DROP [TEMPORARY [SYSTEM]] FUNCTION [IF EXISTS] name.
type DropFunction struct {
	StmtBase
	Name      string
	Temporary bool
	System    bool
	IfExists  bool
}

// Insert is INSERT INTO table [(cols)] query.
type Insert struct {
	StmtBase
	Table   string
	Columns []string // nil if not listed
	Query   QueryExpr
}

// QueryStmt is a bare query (SELECT ...), run by the shell.
type QueryStmt struct {
	StmtBase
	Query QueryExpr
}

// Explain is EXPLAIN statement (an INSERT or a query).
type Explain struct {
	StmtBase
	Stmt Statement
}

// ShowTables is SHOW TABLES.
type ShowTables struct{ StmtBase }

// ShowJobs is SHOW JOBS.
type ShowJobs struct{ StmtBase }

// ShowFunctions is SHOW FUNCTIONS.
type ShowFunctions struct{ StmtBase }

// Describe is DESCRIBE name (or DESC name).
type Describe struct {
	StmtBase
	Name string
}

// ShowCreateTable is SHOW CREATE TABLE name.
type ShowCreateTable struct {
	StmtBase
	Name string
}

// StopJob is STOP JOB 'id' [WITH SAVEPOINT].
type StopJob struct {
	StmtBase
	ID            string
	WithSavepoint bool
}

// Help is HELP.
type Help struct{ StmtBase }

// ---- queries ----

// Select is one SELECT block.
type Select struct {
	Pos      Pos
	Distinct bool
	Items    []*SelectItem
	From     Relation // nil if no FROM
	Where    Expr     // nil if none
	GroupBy  []Expr
	// Grouping holds the GROUPING SETS, ROLLUP and CUBE elements of GROUP
	// BY (after the plain expressions of GroupBy); nil if none.
	Grouping []*GroupingElem
	Having   Expr // nil if none
	// Windows are the named windows of the WINDOW clause.
	Windows []*NamedWindow
}

// GroupingElem is GROUPING SETS (…), ROLLUP (…) or CUBE (…) in GROUP BY.
type GroupingElem struct {
	Pos  Pos
	Kind string // "GROUPING SETS", "ROLLUP" or "CUBE"
	// Sets are the sets of GROUPING SETS; for ROLLUP and CUBE, one set
	// holding the columns.
	Sets []*GroupingSet
}

// GroupingSet is one set of expressions of a grouping element.
type GroupingSet struct {
	Pos   Pos
	Exprs []Expr
}

// NamedWindow is name AS (spec) in a WINDOW clause.
type NamedWindow struct {
	Pos  Pos
	Name string
	Spec *WindowSpec
}

// WindowSpec is the window of an OVER: a named window (Name, nothing
// else set) or [PARTITION BY …] [ORDER BY …] [frame].
type WindowSpec struct {
	Pos       Pos
	Name      string
	Partition []Expr
	Order     []*OrderItem
	Frame     *Frame // nil if none
}

// OrderItem is expr [ASC|DESC] [NULLS FIRST|LAST]. Nulls is "", "FIRST" or "LAST".
type OrderItem struct {
	Pos   Pos
	X     Expr
	Desc  bool
	Nulls string
}

// Frame is an OVER window's frame: Rows (ROWS) or RANGE, from Lo to Hi
// (Hi is CURRENT ROW when the frame gives one bound).
type Frame struct {
	Pos    Pos
	Rows   bool
	Lo, Hi *FrameBound
}

// FrameBound is one end of a frame: UNBOUNDED, CURRENT ROW, N rows or an
// interval (Interval), PRECEDING unless Following.
type FrameBound struct {
	Pos       Pos
	Unbounded bool
	Current   bool
	N         int64
	Interval  *IntervalLit
	Following bool
}

// SelectItem is one item of a select list: an expression with an optional
// alias, or a star (Star; Table set for t.*).
type SelectItem struct {
	Pos   Pos
	Expr  Expr // nil for a star
	Alias string
	Star  bool
	Table string // qualifier of t.*
}

// SetOp is Left UNION|INTERSECT|EXCEPT [ALL] Right.
type SetOp struct {
	Pos         Pos
	Op          string // "UNION", "INTERSECT" or "EXCEPT"
	All         bool
	Left, Right QueryExpr
}

// TableRef is a table or view name in FROM, with an optional alias and,
// on a temporal join's right side, FOR SYSTEM_TIME AS OF AsOf.
type TableRef struct {
	Pos   Pos
	Name  string
	Alias string
	// AsOf is the time of FOR SYSTEM_TIME AS OF (nil: none).
	AsOf Expr
}

// JoinKind is the kind of a join.
type JoinKind int

// Join kinds. CrossJoin is the comma form (FROM a, b), whose conditions
// are in WHERE.
const (
	InnerJoin JoinKind = iota
	LeftJoin
	RightJoin
	FullJoin
	CrossJoin
)

// String returns the kind as SQL writes it ("LEFT JOIN").
func (k JoinKind) String() string {
	return [...]string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", ","}[k]
}

// Join is Left [kind] JOIN Right ON On, or Left, Right (CrossJoin, On nil).
type Join struct {
	Pos         Pos // of the JOIN keyword (or the comma)
	Kind        JoinKind
	Left, Right Relation
	On          Expr
}

// SubqueryRef is (query) [AS] alias [(columns)] in FROM.
type SubqueryRef struct {
	Pos     Pos
	Query   QueryExpr
	Alias   string
	Columns []string // the alias's column names; nil if none
}

// WindowTVF is a window table-valued function in FROM:
// TABLE(TUMBLE|HOP|CUMULATE|SESSION(TABLE t [PARTITION BY k, …],
// DESCRIPTOR(ts), …)) [AS] alias, its positional or named arguments
// sorted into fields (nil when not given). It adds the columns
// window_start, window_end and window_time to t's.
type WindowTVF struct {
	Pos       Pos
	Kind      string // TUMBLE, HOP, CUMULATE or SESSION
	Table     string
	TablePos  Pos
	Partition []string // SESSION's PARTITION BY columns
	TimeCol   string
	TimePos   Pos
	Size      Expr // TUMBLE, HOP, CUMULATE
	Slide     Expr // HOP
	Step      Expr // CUMULATE
	Gap       Expr // SESSION
	Offset    Expr // TUMBLE, HOP, CUMULATE (optional)
	Alias     string
}

// ---- expressions ----

// ColumnRef is a column name, optionally qualified: t.col.
type ColumnRef struct {
	Pos   Pos
	Table string
	Name  string
}

// NumberLit is a numeric literal as written; IsFloat if it has '.' or an exponent.
type NumberLit struct {
	Pos     Pos
	Text    string
	IsFloat bool
}

// StringLit is a string literal (quotes removed, ” unescaped).
type StringLit struct {
	Pos   Pos
	Value string
}

// BoolLit is TRUE or FALSE.
type BoolLit struct {
	Pos   Pos
	Value bool
}

// NullLit is NULL.
type NullLit struct{ Pos Pos }

// IntervalLit is INTERVAL 'value' UNIT, e.g. INTERVAL '5' SECOND. Unit is
// upper case: SECOND, MINUTE, HOUR, DAY (also plural forms normalised).
type IntervalLit struct {
	Pos   Pos
	Value string
	Unit  string
}

// TimestampLit is TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.fff]', or with Type
// "DATE" or "TIME" the literal DATE 'yyyy-mm-dd' or TIME 'hh:mm:ss'.
type TimestampLit struct {
	Pos   Pos
	Value string
	Type  string // "" (TIMESTAMP), "DATE" or "TIME"
}

// Binary is L Op R. Op is upper case: + - * / % || = <> < <= > >= AND OR
// ("!=" is normalised to "<>").
type Binary struct {
	Pos  Pos
	Op   string
	L, R Expr
}

// Unary is Op X: "-", "+" or "NOT".
type Unary struct {
	Pos Pos
	Op  string
	X   Expr
}

// IsNull is X IS [NOT] NULL.
type IsNull struct {
	Pos Pos
	X   Expr
	Not bool
}

// In is X [NOT] IN (list), or X [NOT] IN (query) when Query is set.
type In struct {
	Pos   Pos
	X     Expr
	List  []Expr
	Query QueryExpr
	Not   bool
}

// Exists is EXISTS (query).
type Exists struct {
	Pos   Pos
	Query QueryExpr
}

// Between is X [NOT] BETWEEN Lo AND Hi.
type Between struct {
	Pos    Pos
	X      Expr
	Lo, Hi Expr
	Not    bool
}

// Like is X [NOT] LIKE Pattern.
type Like struct {
	Pos     Pos
	X       Expr
	Pattern Expr
	Not     bool
}

// Case is CASE [Operand] WHEN ... THEN ... [ELSE ...] END.
type Case struct {
	Pos     Pos
	Operand Expr // nil for a searched CASE
	Whens   []*When
	Else    Expr // nil if none
}

// When is one WHEN cond THEN result arm.
type When struct {
	Pos          Pos
	Cond, Result Expr
}

// Cast is CAST(X AS Type), or TRY_CAST(X AS Type) with Try set.
type Cast struct {
	Pos  Pos
	X    Expr
	Type *TypeName
	Try  bool
}

// FieldAccess is X.Field: a field of a ROW. The parser makes it of a
// third name (t.r.f); the planner also reads t.f as one when t is a ROW
// column rather than a table.
type FieldAccess struct {
	Pos   Pos // of the field name
	X     Expr
	Field string
}

// Subscript is X[Index]: an ARRAY's element (1-based) or a MAP's value.
type Subscript struct {
	Pos   Pos // of the '['
	X     Expr
	Index Expr
}

// Constructor is ROW(a, …) (also (a, b, …)), ARRAY[a, …] or MAP[k, v, …].
type Constructor struct {
	Pos  Pos
	Kind string // "ROW", "ARRAY" or "MAP"
	Args []Expr
}

// Call is a function call. Name is upper case. Star marks COUNT(*);
// Distinct marks COUNT(DISTINCT x).
type Call struct {
	Pos      Pos
	Name     string
	Args     []Expr
	Distinct bool
	Star     bool
	Filter   Expr // an aggregate's FILTER (WHERE ...) condition; nil if none
	// Over is the window of a window function call f(…) OVER …, or nil.
	Over *WindowSpec
}

func (n *ColumnDef) Position() Pos    { return n.Pos }
func (n *TypeName) Position() Pos     { return n.Pos }
func (n *WatermarkDef) Position() Pos { return n.Pos }
func (n *Option) Position() Pos       { return n.Pos }
func (n *Select) Position() Pos       { return n.Pos }
func (n *SelectItem) Position() Pos   { return n.Pos }
func (n *SetOp) Position() Pos        { return n.Pos }
func (n *TableRef) Position() Pos     { return n.Pos }
func (n *SubqueryRef) Position() Pos  { return n.Pos }
func (n *Join) Position() Pos         { return n.Pos }
func (n *WindowTVF) Position() Pos    { return n.Pos }
func (n *ColumnRef) Position() Pos    { return n.Pos }
func (n *NumberLit) Position() Pos    { return n.Pos }
func (n *StringLit) Position() Pos    { return n.Pos }
func (n *BoolLit) Position() Pos      { return n.Pos }
func (n *NullLit) Position() Pos      { return n.Pos }
func (n *IntervalLit) Position() Pos  { return n.Pos }
func (n *TimestampLit) Position() Pos { return n.Pos }
func (n *Binary) Position() Pos       { return n.Pos }
func (n *Unary) Position() Pos        { return n.Pos }
func (n *IsNull) Position() Pos       { return n.Pos }
func (n *In) Position() Pos           { return n.Pos }
func (n *Exists) Position() Pos       { return n.Pos }
func (n *Between) Position() Pos      { return n.Pos }
func (n *Like) Position() Pos         { return n.Pos }
func (n *Case) Position() Pos         { return n.Pos }
func (n *When) Position() Pos         { return n.Pos }
func (n *Cast) Position() Pos         { return n.Pos }
func (n *Call) Position() Pos         { return n.Pos }
func (n *FieldAccess) Position() Pos  { return n.Pos }
func (n *Subscript) Position() Pos    { return n.Pos }
func (n *Constructor) Position() Pos  { return n.Pos }
func (n *NamedWindow) Position() Pos  { return n.Pos }
func (n *GroupingElem) Position() Pos { return n.Pos }
func (n *GroupingSet) Position() Pos  { return n.Pos }
func (n *WindowSpec) Position() Pos   { return n.Pos }
func (n *OrderItem) Position() Pos    { return n.Pos }
func (n *Frame) Position() Pos        { return n.Pos }
func (n *FrameBound) Position() Pos   { return n.Pos }

func (*ColumnDef) node()    {}
func (*TypeName) node()     {}
func (*WatermarkDef) node() {}
func (*Option) node()       {}
func (*Select) node()       {}
func (*SelectItem) node()   {}
func (*SetOp) node()        {}
func (*TableRef) node()     {}
func (*SubqueryRef) node()  {}
func (*Join) node()         {}
func (*WindowTVF) node()    {}
func (*ColumnRef) node()    {}
func (*NumberLit) node()    {}
func (*StringLit) node()    {}
func (*BoolLit) node()      {}
func (*NullLit) node()      {}
func (*IntervalLit) node()  {}
func (*TimestampLit) node() {}
func (*Binary) node()       {}
func (*Unary) node()        {}
func (*IsNull) node()       {}
func (*In) node()           {}
func (*Exists) node()       {}
func (*Between) node()      {}
func (*Like) node()         {}
func (*Case) node()         {}
func (*When) node()         {}
func (*Cast) node()         {}
func (*Call) node()         {}
func (*FieldAccess) node()  {}
func (*Subscript) node()    {}
func (*Constructor) node()  {}
func (*NamedWindow) node()  {}
func (*GroupingElem) node() {}
func (*GroupingSet) node()  {}
func (*WindowSpec) node()   {}
func (*OrderItem) node()    {}
func (*Frame) node()        {}
func (*FrameBound) node()   {}

func (*Select) query() {}
func (*SetOp) query()  {}

func (*TableRef) relation()    {}
func (*SubqueryRef) relation() {}
func (*Join) relation()        {}
func (*WindowTVF) relation()   {}

func (*ColumnRef) expr()    {}
func (*NumberLit) expr()    {}
func (*StringLit) expr()    {}
func (*BoolLit) expr()      {}
func (*NullLit) expr()      {}
func (*IntervalLit) expr()  {}
func (*TimestampLit) expr() {}
func (*Binary) expr()       {}
func (*Unary) expr()        {}
func (*IsNull) expr()       {}
func (*In) expr()           {}
func (*Exists) expr()       {}
func (*Between) expr()      {}
func (*Like) expr()         {}
func (*Case) expr()         {}
func (*Cast) expr()         {}
func (*Call) expr()         {}

// ---- statement sets, ALTER TABLE, SHOW VIEWS, CREATE TABLE LIKE ----

// StatementSet is EXECUTE STATEMENT SET BEGIN insert; ...; END (or BEGIN
// STATEMENT SET; ...; END within one script): its INSERTs run as one job.
type StatementSet struct {
	StmtBase
	Inserts []*Insert
}

// BeginStatementSet starts a statement set whose END is not in the same
// script (the shell reads statements one at a time): BEGIN STATEMENT SET,
// or EXECUTE STATEMENT SET BEGIN with its first INSERT in First.
type BeginStatementSet struct {
	StmtBase
	First *Insert // nil for BEGIN STATEMENT SET
}

// EndStatementSet is the END of a statement set whose BEGIN is not in the
// same script.
type EndStatementSet struct{ StmtBase }

// AlterTable is ALTER TABLE name SET ('k' = 'v', ...) or RESET ('k', ...).
type AlterTable struct {
	StmtBase
	Name  string
	Set   []*Option // nil for RESET
	Reset []string
}

// ShowViews is SHOW VIEWS.
type ShowViews struct{ StmtBase }

// ShowCreateView is SHOW CREATE VIEW name.
type ShowCreateView struct {
	StmtBase
	Name string
}

// LikeClause is LIKE source [(options)] of CREATE TABLE.
type LikeClause struct {
	Pos     Pos
	Source  string
	Options []*LikeOption
}

// LikeOption is one INCLUDING|EXCLUDING|OVERWRITING ALL|CONSTRAINTS|
// GENERATED|OPTIONS|WATERMARKS|METADATA|PARTITIONS of a LIKE clause (upper case).
type LikeOption struct {
	Pos  Pos
	Mode string
	What string
}

// ---- VALUES, WITH, ORDER BY and LIMIT ----

// Values is VALUES (row), (row), ...
type Values struct {
	Pos  Pos
	Rows []*ValuesRow
}

// ValuesRow is one (a, b, ...) of VALUES.
type ValuesRow struct {
	Pos    Pos
	Values []Expr
}

// With is WITH name AS (query), ... body.
type With struct {
	Pos  Pos
	CTEs []*CTE
	Body QueryExpr
}

// CTE is name [(columns)] AS (query) of a WITH clause.
type CTE struct {
	Pos     Pos
	Name    string
	Columns []string
	Query   QueryExpr
}

// OrderLimit is body ORDER BY ... and/or LIMIT n (Limit -1: none) or
// FETCH FIRST n ROWS ONLY (the same Limit), and/or OFFSET m ROWS (Offset
// 0: none).
type OrderLimit struct {
	Pos    Pos
	Body   QueryExpr
	Order  []*OrderItem
	Limit  int64
	Offset int64
}

func (n *LikeClause) Position() Pos { return n.Pos }
func (n *LikeOption) Position() Pos { return n.Pos }
func (n *Values) Position() Pos     { return n.Pos }
func (n *ValuesRow) Position() Pos  { return n.Pos }
func (n *With) Position() Pos       { return n.Pos }
func (n *CTE) Position() Pos        { return n.Pos }
func (n *OrderLimit) Position() Pos { return n.Pos }

func (*LikeClause) node() {}
func (*LikeOption) node() {}
func (*Values) node()     {}
func (*ValuesRow) node()  {}
func (*With) node()       {}
func (*CTE) node()        {}
func (*OrderLimit) node() {}

func (*Values) query()     {}
func (*With) query()       {}
func (*OrderLimit) query() {}
func (*FieldAccess) expr() {}
func (*Subscript) expr()   {}
func (*Constructor) expr() {}
