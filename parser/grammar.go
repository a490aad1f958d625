package parser

import (
	"github.com/alecthomas/participle/v2/lexer"
)

// This file holds the participle lexer and grammar structs. The structs are
// an implementation detail: convert.go turns them into the AST of ast.go.
//
// The grammar is LL(1) without backtracking: the parser runs with zero
// lookahead, so a branch that consumed a token and then failed is the
// error, reported where it happened. Where a non-reserved word starts a
// construct (IF NOT EXISTS, WATERMARK FOR, PRIMARY KEY, TIMESTAMP '...',
// f(...), t.*), the grammar reads the word as an identifier first and
// convert.go checks it.
//
// Reserved words become Keyword tokens, so that @Ident never captures
// them; every other word (including grammar words such as TABLES, WATERMARK,
// SECOND or TIMESTAMP) is an Ident and stays usable as a column name. All
// grammar literals match both token types case-insensitively.

// reservedWords are the words that can never be identifiers (unless quoted
// with backticks): they start or end clauses, or follow an expression or a
// relation, where an identifier would be read as an alias.
var reservedWords = []string{
	"ALL", "AND", "AS", "BETWEEN", "BY", "CASE", "CAST", "CREATE", "CROSS",
	"DISTINCT", "DROP", "ELSE", "END", "EXCEPT", "EXISTS", "FALSE", "FOR",
	"FROM", "FULL", "GROUP", "HAVING", "IN", "INNER", "INSERT", "INTERSECT",
	"INTERVAL", "INTO", "IS", "JOIN", "LEFT", "LIKE", "LIMIT", "NATURAL",
	"NOT", "NULL", "ON", "OR", "ORDER", "OUTER", "OVER", "RIGHT", "SELECT",
	"SET", "TABLE", "THEN", "TRUE", "TRY_CAST", "UNION", "USING", "VALUES", "WHEN",
	"WHERE", "WINDOW", "WITH",
}

// Token type names of the lexer.
const (
	tokComment    = "Comment"
	tokWhitespace = "Whitespace"
	tokQIdent     = "QIdent"
	tokBadQIdent  = "BadQIdent"
	tokString     = "String"
	tokBadString  = "BadString"
	tokBadComment = "BadComment"
	tokNumber     = "Number"
	tokKeyword    = "Keyword"
	tokIdent      = "Ident"
	tokOp         = "Op"
	tokChar       = "Char"
)

// newLexer returns the SQL lexer. Rules are tried in order; the Bad* rules
// and Char catch malformed input so that lexing itself never fails and the
// parser can report a precise message.
func newLexer() *lexer.StatefulDefinition {
	return lexer.MustSimple([]lexer.SimpleRule{
		{Name: tokComment, Pattern: `--[^\n]*|/\*(?:[^*]|\*+[^*/])*\*+/`},
		{Name: tokWhitespace, Pattern: `\s+`},
		{Name: tokQIdent, Pattern: "`(?:[^`]|``)*`"},
		{Name: tokBadQIdent, Pattern: "`[\\s\\S]*"},
		{Name: tokString, Pattern: `'(?:[^']|'')*'`},
		{Name: tokBadString, Pattern: `'[\s\S]*`},
		{Name: tokBadComment, Pattern: `/\*[\s\S]*`},
		{Name: tokNumber, Pattern: `(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?`},
		{Name: tokIdent, Pattern: `[\p{L}_][\p{L}\p{N}_]*`},
		// Reserved words are lexed as Ident and retyped by language.lex.
		{Name: tokKeyword, Pattern: `[^\s\S]`},
		{Name: tokOp, Pattern: `<>|!=|<=|>=|=>|\|\||[=<>+\-*/%(),.;\[\]]`},
		{Name: tokChar, Pattern: `[\s\S]`},
	})
}

// ---- statements ----

type gStmt struct {
	Set      *gSet      `parser:"  @@"`
	Reset    *gReset    `parser:"| @@"`
	Create   *gCreate   `parser:"| @@"`
	Drop     *gDrop     `parser:"| @@"`
	Insert   *gInsert   `parser:"| @@"`
	Query    *gQuery    `parser:"| @@"`
	Explain  *gExplain  `parser:"| @@"`
	Show     *gShow     `parser:"| @@"`
	Describe *gDescribe `parser:"| @@"`
	Stop     *gStop     `parser:"| @@"`
	Help     bool       `parser:"| @'HELP'"`
	StmtSet  *gStmtSet  `parser:"| @@"`
	Alter    *gAlter    `parser:"| @@"`
}

// gStmtSet is EXECUTE STATEMENT SET BEGIN insert (the first statement of
// the set; Parse merges the set up to its END), BEGIN STATEMENT SET (the
// shell's form) or END.
type gStmtSet struct {
	Execute *gInsert `parser:"  'EXECUTE' 'STATEMENT' 'SET' 'BEGIN' @@"`
	Begin   bool     `parser:"| @('BEGIN' 'STATEMENT' 'SET')"`
	End     bool     `parser:"| @'END'"`
}

// gAlter is ALTER TABLE name SET ('k' = 'v', ...) or RESET ('k', ...).
type gAlter struct {
	Name  gIdent     `parser:"'ALTER' 'TABLE' @@"`
	Set   bool       `parser:"( @'SET'"`
	Opts  []*gOption `parser:"  '(' @@ ( ',' @@ )* ')'"`
	Reset []*gString `parser:"| 'RESET' '(' @@ ( ',' @@ )* ')' )"`
}

type gSet struct {
	Key   *gConfKey   `parser:"'SET' ( @@"`
	Value *gConfValue `parser:"'=' @@ )?"`
}

type gReset struct {
	Key *gConfKey `parser:"'RESET' @@?"`
}

// gConfKey is a configuration key: 'quoted' or a dotted word path such as
// parallelism.default or restart-strategy.type.
type gConfKey struct {
	Pos    lexer.Position
	Quoted *string `parser:"  @String"`
	Words  string  `parser:"| @(Ident | Keyword) ( @('.' | '-') @(Ident | Keyword | Number) )*"`
}

// gConfValue is a configuration value: 'quoted' or unquoted words.
type gConfValue struct {
	Pos    lexer.Position
	Tokens []lexer.Token
	Quoted *string `parser:"  @String"`
	Words  string  `parser:"| @(Ident | Keyword | Number | '.' | '-' | '/')+"`
}

type gCreate struct {
	Pos       lexer.Position
	Temporary bool             `parser:"'CREATE' @'TEMPORARY'?"`
	System    bool             `parser:"@'SYSTEM'?"`
	Table     *gCreateTable    `parser:"( @@"`
	View      *gCreateView     `parser:"| @@"`
	Function  *gCreateFunction `parser:"| @@ )"`
}

// gCreateFunction is FUNCTION [IF NOT EXISTS] name AS 'identifier'
// [LANGUAGE word], after CREATE [TEMPORARY [SYSTEM]].
type gCreateFunction struct {
	Name       gCondName `parser:"'FUNCTION' @@"`
	Identifier gFuncID   `parser:"'AS' @@"`
	Language   *gIdent   `parser:"( 'LANGUAGE' @@ )?"`
}

// gFuncID is the quoted identifier of CREATE FUNCTION, with its position.
type gFuncID struct {
	Pos   lexer.Position
	Value string `parser:"@String"`
}

type gCreateTable struct {
	Name    gCondName     `parser:"'TABLE' @@"`
	Elems   []*gTableElem `parser:"( '(' @@ ( ',' @@ )* ')' )?"`
	Comment *string       `parser:"( 'COMMENT' @String )?"`
	// PARTITIONED BY (cols): the partition columns of a filesystem table.
	Partitioned []*gIdent  `parser:"( 'PARTITIONED' 'BY' '(' @@ ( ',' @@ )* ')' )?"`
	With        bool       `parser:"( @'WITH'"`
	Options     []*gOption `parser:"  '(' ( @@ ( ',' @@ )* )? ')' )?"`
	Like        *gLike     `parser:"@@?"`
}

// gLike is LIKE source [(INCLUDING|EXCLUDING|OVERWRITING what ...)] of
// CREATE TABLE; convert.go checks the words.
type gLike struct {
	Pos     lexer.Position
	Source  gIdent         `parser:"'LIKE' @@"`
	Options []*gLikeOption `parser:"( '(' @@ ( ','? @@ )* ')' )?"`
}

type gLikeOption struct {
	Pos  lexer.Position
	Mode gIdent `parser:"@@"`
	What string `parser:"@(Ident | 'ALL')"`
}

// gCondName is a name, or IF [NOT] EXISTS name (read as the identifier
// IF followed by [NOT] EXISTS name; convert.go checks the word).
type gCondName struct {
	First  gIdent  `parser:"@@"`
	Not    bool    `parser:"( @'NOT'?"`
	Second *gIdent `parser:"  'EXISTS' @@ )?"`
}

// gTableElem is a column definition, a computed column (name AS expr),
// WATERMARK FOR col AS expr, or PRIMARY KEY (cols) NOT ENFORCED; all start
// with a word.
type gTableElem struct {
	Name       gIdent       `parser:"@@"`
	Watermark  *gWatermark  `parser:"( @@"`
	PrimaryKey *gPrimaryKey `parser:"| @@"`
	Computed   *gComputed   `parser:"| @@"`
	Column     *gColumn     `parser:"| @@ )"`
}

// gComputed is the AS expr of a computed column.
type gComputed struct {
	Pos  lexer.Position
	Expr *gExpr `parser:"'AS' @@"`
}

type gWatermark struct {
	Pos    lexer.Position
	Column gIdent `parser:"'FOR' @@"`
	Expr   *gExpr `parser:"'AS' @@"`
}

type gPrimaryKey struct {
	Pos         lexer.Position
	Columns     []*gIdent `parser:"'KEY' '(' @@ ( ',' @@ )* ')'"`
	NotEnforced bool      `parser:"@('NOT' 'ENFORCED')?"`
}

type gColumn struct {
	Type          *gType     `parser:"@@"`
	NotNull       bool       `parser:"@('NOT' 'NULL')?"`
	Metadata      *gMetadata `parser:"@@?"`
	PrimaryKey    bool       `parser:"( @('PRIMARY' 'KEY')"`
	PKNotEnforced bool       `parser:"  @('NOT' 'ENFORCED')? )?"`
}

// gMetadata is METADATA [FROM 'key'] [VIRTUAL] of a metadata column.
type gMetadata struct {
	Pos     lexer.Position
	Keyword bool    `parser:"@'METADATA'"`
	From    *string `parser:"( 'FROM' @String )?"`
	Virtual bool    `parser:"@'VIRTUAL'?"`
}

// typeNames are the type names the grammar accepts (canonicalised in convert).
var typeNames = []string{
	"INT", "INTEGER", "BIGINT", "SMALLINT", "TINYINT", "DOUBLE", "FLOAT",
	"BOOLEAN", "VARCHAR", "STRING", "CHAR", "TIMESTAMP", "TIMESTAMP_LTZ",
	"DECIMAL", "DEC", "NUMERIC", "DATE", "TIME", "BYTES", "VARBINARY", "BINARY",
}

type gType struct {
	Pos       lexer.Position
	Row       *gRowType  `parser:"(  'ROW' @@"`
	Array     *gElemType `parser:" | 'ARRAY' '<' @@ '>'"`
	Map       *gMapType  `parser:" | 'MAP' '<' @@ '>'"`
	Name      string     `parser:" | @('INT' | 'INTEGER' | 'BIGINT' | 'SMALLINT' | 'TINYINT' | 'DOUBLE' | 'FLOAT' | 'BOOLEAN' | 'VARCHAR' | 'STRING' | 'CHAR' | 'TIMESTAMP_LTZ' | 'TIMESTAMP' | 'DECIMAL' | 'DEC' | 'NUMERIC' | 'DATE' | 'TIME' | 'BYTES' | 'VARBINARY' | 'BINARY')"`
	Precision bool       `parser:"   @'PRECISION'?"`
	Params    []string   `parser:"   ( '(' @Number ( ',' @Number )* ')' )?"`
	LocalTZ   bool       `parser:"   @('WITH' 'LOCAL' 'TIME' 'ZONE')? )"`
}

// gRowType is the field list of ROW<name type, …> or ROW(name type, …).
type gRowType struct {
	Angle  bool         `parser:"(  @'<'"`
	Fields []*gRowField `parser:"   ( @@ ( ',' @@ )* )? '>'"`
	Paren  []*gRowField `parser:" | '(' ( @@ ( ',' @@ )* )? ')' )"`
}

// gRowField is one field of a ROW type: name type [NOT NULL].
type gRowField struct {
	Name gIdent    `parser:"@@"`
	Type gElemType `parser:"@@"`
}

// gElemType is the type of a ROW field, ARRAY element or MAP key or value.
type gElemType struct {
	Type    *gType `parser:"@@"`
	NotNull bool   `parser:"@('NOT' 'NULL')?"`
}

// gMapType is the key and value of MAP<k, v>.
type gMapType struct {
	Key   *gElemType `parser:"@@ ','"`
	Value *gElemType `parser:"@@"`
}

type gOption struct {
	Pos   lexer.Position
	Key   string `parser:"@String '='"`
	Value string `parser:"@String"`
}

type gCreateView struct {
	Name  gCondName `parser:"'VIEW' @@"`
	Query *gQuery   `parser:"'AS' @@"`
}

type gDrop struct {
	Temporary bool      `parser:"'DROP' @'TEMPORARY'?"`
	System    bool      `parser:"@'SYSTEM'?"`
	Table     bool      `parser:"( @'TABLE'"`
	View      bool      `parser:"| @'VIEW'"`
	Function  bool      `parser:"| @'FUNCTION' )"`
	Name      gCondName `parser:"@@"`
}

type gInsert struct {
	Tokens     []lexer.Token
	Table      gIdent    `parser:"'INSERT' 'INTO' @@"`
	Columns    []*gIdent `parser:"(  '(' ( @@ ( ',' @@ )* ')'"`
	ColsQuery  *gQuery   `parser:"          @@"`
	ParenQuery *gQuery   `parser:"        | @@ ')'"`
	Unions     []*gUnion `parser:"          @@* )"`
	Query      *gQuery   `parser:" | @@ )"`
}

type gExplain struct {
	Plan   bool     `parser:"'EXPLAIN' @('PLAN' 'FOR')?"`
	Insert *gInsert `parser:"( @@"`
	Query  *gQuery  `parser:"| @@ )"`
}

type gShow struct {
	Tables      bool    `parser:"'SHOW' ( @'TABLES'"`
	Jobs        bool    `parser:"| @'JOBS'"`
	Functions   bool    `parser:"| @'FUNCTIONS'"`
	Views       bool    `parser:"| @'VIEWS'"`
	CreateTable *gIdent `parser:"| 'CREATE' ( 'TABLE' @@"`
	CreateView  *gIdent `parser:"           | 'VIEW' @@ ) )"`
}

type gDescribe struct {
	Name gIdent `parser:"( 'DESCRIBE' | 'DESC' ) @@"`
}

type gStop struct {
	ID            string `parser:"'STOP' 'JOB' @String"`
	WithSavepoint bool   `parser:"@('WITH' 'SAVEPOINT')?"`
}

// ---- queries ----

type gQuery struct {
	Pos    lexer.Position
	Tokens []lexer.Token
	With   []*gCTE       `parser:"( 'WITH' @@ ( ',' @@ )* )?"`
	Left   *gQueryTerm   `parser:"@@"`
	Unions []*gUnion     `parser:"@@*"`
	Order  []*gOrderItem `parser:"( 'ORDER' 'BY' @@ ( ',' @@ )* )?"`
	Limit  *gLimit       `parser:"@@?"`
	Offset *gOffset      `parser:"@@?"`
	Fetch  *gFetch       `parser:"@@?"`
}

// gLimit is LIMIT n.
type gLimit struct {
	Pos lexer.Position
	N   string `parser:"'LIMIT' @Number"`
}

// gOffset is OFFSET n [ROW|ROWS].
type gOffset struct {
	Pos lexer.Position
	N   string `parser:"'OFFSET' @Number ( 'ROW' | 'ROWS' )?"`
}

// gFetch is FETCH FIRST|NEXT [n] ROW|ROWS ONLY (no n: one row).
type gFetch struct {
	Pos lexer.Position
	N   string `parser:"'FETCH' ( 'FIRST' | 'NEXT' ) @Number? ( 'ROW' | 'ROWS' ) 'ONLY'"`
}

// A bare alias (one without AS) is never OFFSET n or FETCH FIRST|NEXT
// (the lookaheads "(?! 'OFFSET' Number | …)" below): OFFSET and FETCH are
// not reserved (a column may be named offset), but there they start the
// clause.

// gCTE is name [(cols)] AS (query) of a WITH clause.
type gCTE struct {
	Name    gIdent    `parser:"@@"`
	Columns []*gIdent `parser:"( '(' @@ ( ',' @@ )* ')' )?"`
	Query   *gQuery   `parser:"'AS' '(' @@ ')'"`
}

// gUnion is UNION, INTERSECT or EXCEPT [ALL|DISTINCT] and its right input.
type gUnion struct {
	Pos   lexer.Position
	Op    string      `parser:"@('UNION' | 'INTERSECT' | 'EXCEPT')"`
	All   bool        `parser:"( @'ALL' | 'DISTINCT' )?"`
	Right *gQueryTerm `parser:"@@"`
}

type gQueryTerm struct {
	Select *gSelect `parser:"  @@"`
	Paren  *gQuery  `parser:"| '(' @@ ')'"`
	Values *gValues `parser:"| @@"`
}

// gValues is VALUES (a, b), (c, d), ...
type gValues struct {
	Pos  lexer.Position
	Rows []*gValuesRow `parser:"'VALUES' @@ ( ',' @@ )*"`
}

type gValuesRow struct {
	Pos    lexer.Position
	Values []*gExpr `parser:"'(' @@ ( ',' @@ )* ')'"`
}

type gSelect struct {
	Pos      lexer.Position
	Distinct bool            `parser:"'SELECT' ( @'DISTINCT' | 'ALL' )?"`
	Items    []*gSelectItem  `parser:"@@ ( ',' @@ )*"`
	From     *gFrom          `parser:"( 'FROM' @@ )?"`
	Where    *gExpr          `parser:"( 'WHERE' @@ )?"`
	GroupBy  []*gGroupItem   `parser:"( 'GROUP' 'BY' @@ ( ',' @@ )* )?"`
	Having   *gExpr          `parser:"( 'HAVING' @@ )?"`
	Windows  []*gNamedWindow `parser:"( 'WINDOW' @@ ( ',' @@ )* )?"`
}

// gGroupItem is an element of GROUP BY: an expression (ROLLUP (…) and
// CUBE (…) read as calls), or GROUPING SETS (…), read as the identifier
// GROUPING followed by SETS; convert.go checks both.
type gGroupItem struct {
	Expr *gExpr          `parser:"@@"`
	Sets []*gGroupingSet `parser:"( 'SETS' '(' @@ ( ',' @@ )* ')' )?"`
}

// gGroupingSet is one set of GROUPING SETS: (a, b), () or a bare a.
type gGroupingSet struct {
	Pos   lexer.Position
	Paren bool     `parser:"( @'('"`
	Exprs []*gExpr `parser:"  ( @@ ( ',' @@ )* )? ')'"`
	One   *gExpr   `parser:"| @@ )"`
}

// gNamedWindow is name AS (window spec) of a WINDOW clause.
type gNamedWindow struct {
	Name gIdent       `parser:"@@ 'AS'"`
	Body *gWindowBody `parser:"'(' @@ ')'"`
}

// gOver is what follows OVER: a window's name or (window spec).
type gOver struct {
	Pos  lexer.Position
	Name *gIdent      `parser:"  @@"`
	Body *gWindowBody `parser:"| '(' @@ ')'"`
}

// gWindowBody is [PARTITION BY ...] [ORDER BY ...] [frame].
type gWindowBody struct {
	Pos       lexer.Position
	Partition []*gExpr      `parser:"( 'PARTITION' 'BY' @@ ( ',' @@ )* )?"`
	Order     []*gOrderItem `parser:"( 'ORDER' 'BY' @@ ( ',' @@ )* )?"`
	Frame     *gFrame       `parser:"@@?"`
}

// gOrderItem is expr [ASC|DESC] [NULLS FIRST|LAST].
type gOrderItem struct {
	Pos   lexer.Position
	X     *gExpr `parser:"@@"`
	Dir   string `parser:"@('ASC' | 'DESC')?"`
	Nulls string `parser:"( 'NULLS' @('FIRST' | 'LAST') )?"`
}

// gFrame is ROWS|RANGE bound or ROWS|RANGE BETWEEN bound AND bound.
type gFrame struct {
	Pos     lexer.Position
	Unit    string       `parser:"@('ROWS' | 'RANGE')"`
	Between bool         `parser:"( @'BETWEEN'"`
	Lo      *gFrameBound `parser:"  @@ 'AND'"`
	Hi      *gFrameBound `parser:"  @@"`
	Single  *gFrameBound `parser:"| @@ )"`
}

// gFrameBound is UNBOUNDED PRECEDING, CURRENT ROW, n PRECEDING or
// INTERVAL '…' unit PRECEDING.
type gFrameBound struct {
	Pos       lexer.Position
	Current   bool       `parser:"  @('CURRENT' 'ROW')"`
	Unbounded bool       `parser:"| ( @'UNBOUNDED'"`
	N         *string    `parser:"  | @Number"`
	Interval  *gInterval `parser:"  | @@ )"`
	Following bool       `parser:"  ( 'PRECEDING' | @'FOLLOWING' )"`
}

// gSelectItem is *, an expression, or t.* (parsed as a reference with a
// star, see gRef).
type gSelectItem struct {
	Pos   lexer.Position
	Star  bool    `parser:"  @'*'"`
	Expr  *gExpr  `parser:"| @@"`
	As    bool    `parser:"  ( @'AS'"`
	Alias *gIdent `parser:"    @@ | (?! 'OFFSET' Number | 'FETCH' ( 'FIRST' | 'NEXT' ) ) @@ )?"`
}

// gFrom is a FROM clause: an item followed by joins, left-deep.
type gFrom struct {
	First *gFromItem `parser:"@@"`
	Joins []*gJoin   `parser:"@@*"`
}

// gJoin is ", item" (a cross join, conditions in WHERE) or
// "[INNER|LEFT|RIGHT|FULL [OUTER]] JOIN item ON cond".
type gJoin struct {
	Pos   lexer.Position
	Comma bool       `parser:"(  @','"`
	Kind  string     `parser:" | ( @('INNER' | 'LEFT' | 'RIGHT' | 'FULL') 'OUTER'? )? 'JOIN' )"`
	Item  *gFromItem `parser:"@@"`
	On    *gExpr     `parser:"( 'ON' @@ )?"`
}

type gFromItem struct {
	Pos      lexer.Position
	Sub      *gQuery   `parser:"(  '(' @@ ')'"`
	SubAlias *gIdent   `parser:"   ( ( 'AS' @@ | (?! 'OFFSET' Number | 'FETCH' ( 'FIRST' | 'NEXT' ) ) @@ )"`
	SubCols  []*gIdent `parser:"     ( '(' @@ ( ',' @@ )* ')' )? )?"`
	TVF      *gTVF     `parser:" | 'TABLE' '(' @@ ')'"`
	Table    *gIdent   `parser:" | @@ )"`
	AsOf     *gAsOf    `parser:"@@?"`
	Alias    *gIdent   `parser:"( 'AS' @@ | (?! 'OFFSET' Number | 'FETCH' ( 'FIRST' | 'NEXT' ) ) @@ )?"`
}

// gAsOf is FOR SYSTEM_TIME AS OF expr after a table name (a temporal
// join's right side).
type gAsOf struct {
	Pos  lexer.Position
	Time *gExpr `parser:"'FOR' 'SYSTEM_TIME' 'AS' 'OF' @@"`
}

// gTVF is a table function call in FROM TABLE(...): a window TVF such as
// TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE), with positional or
// named (NAME => value) arguments. convert.go checks the function and its
// arguments.
type gTVF struct {
	Pos  lexer.Position
	Name gIdent     `parser:"@@ '('"`
	Args []*gTVFArg `parser:"( @@ ( ',' @@ )* )? ')'"`
}

// gTVFArg is TABLE t [PARTITION BY cols], an expression (DESCRIPTOR(ts)
// is a call), or NAME => value (the name parsed as an expression).
type gTVFArg struct {
	Pos   lexer.Position
	Table *gTVFTable `parser:"(  'TABLE' @@"`
	Expr  *gExpr     `parser:" | @@"`
	Value *gTVFValue `parser:"   ( '=>' @@ )? )"`
}

type gTVFValue struct {
	Pos   lexer.Position
	Table *gTVFTable `parser:"  'TABLE' @@"`
	Expr  *gExpr     `parser:"| @@"`
}

// gTVFTable is TABLE t [PARTITION BY k | PARTITION BY (k, j, …)].
type gTVFTable struct {
	Name      gIdent    `parser:"@@"`
	Partition []*gIdent `parser:"( 'PARTITION' 'BY' ( '(' @@ ( ',' @@ )* ')' | @@ ) )?"`
}

// gIdent is an identifier, plain or `quoted`.
type gIdent struct {
	Pos  lexer.Position
	Name string `parser:"@(Ident | QIdent)"`
}

// ---- expressions, loosest binding first ----

type gExpr struct {
	Left *gAnd     `parser:"@@"`
	Rest []*gOrArm `parser:"@@*"`
}

type gOrArm struct {
	Pos   lexer.Position
	Right *gAnd `parser:"'OR' @@"`
}

type gAnd struct {
	Left *gNot      `parser:"@@"`
	Rest []*gAndArm `parser:"@@*"`
}

type gAndArm struct {
	Pos   lexer.Position
	Right *gNot `parser:"'AND' @@"`
}

type gNot struct {
	Pos lexer.Position
	Not *gNot `parser:"  'NOT' @@"`
	Cmp *gCmp `parser:"| @@"`
}

type gCmp struct {
	Left *gConcat   `parser:"@@"`
	Rest []*gCmpArm `parser:"@@*"`
}

type gCmpArm struct {
	Pos    lexer.Position
	Op     string   `parser:"  @('=' | '<>' | '!=' | '<=' | '>=' | '<' | '>')"`
	Right  *gConcat `parser:"  @@"`
	IsNull *gIsNull `parser:"| @@"`
	Pred   *gPred   `parser:"| @@"`
}

type gIsNull struct {
	Not      bool     `parser:"'IS' @'NOT'?"`
	Null     bool     `parser:"( @'NULL'"`
	Distinct *gConcat `parser:"| 'DISTINCT' 'FROM' @@ )"`
}

type gPred struct {
	Not     bool      `parser:"@'NOT'?"`
	In      *gInList  `parser:"(  'IN' @@"`
	Between *gBetween `parser:" | 'BETWEEN' @@"`
	Like    *gConcat  `parser:" | 'LIKE' @@ )"`
}

// gInList is the list of x IN (a, b, ...), the subquery of x IN (SELECT
// ...), or the string s of
// POSITION(x IN s) (valid only there).
type gInList struct {
	Query *gQuery  `parser:"  '(' ( (?= 'SELECT') @@"`
	List  []*gExpr `parser:"      | @@ ( ',' @@ )* ) ')'"`
	Expr  *gConcat `parser:"| @@"`
}

type gBetween struct {
	Lo *gConcat `parser:"@@ 'AND'"`
	Hi *gConcat `parser:"@@"`
}

type gConcat struct {
	Left *gAdd         `parser:"@@"`
	Rest []*gConcatArm `parser:"@@*"`
}

type gConcatArm struct {
	Pos   lexer.Position
	Right *gAdd `parser:"'||' @@"`
}

type gAdd struct {
	Left *gMul      `parser:"@@"`
	Rest []*gAddArm `parser:"@@*"`
}

type gAddArm struct {
	Pos   lexer.Position
	Op    string `parser:"@('+' | '-')"`
	Right *gMul  `parser:"@@"`
}

type gMul struct {
	Left *gUnary    `parser:"@@"`
	Rest []*gMulArm `parser:"@@*"`
}

type gMulArm struct {
	Pos   lexer.Position
	Op    string  `parser:"@('*' | '/' | '%')"`
	Right *gUnary `parser:"@@"`
}

type gUnary struct {
	Pos     lexer.Position
	Op      string     `parser:"  @('-' | '+')"`
	X       *gUnary    `parser:"  @@"`
	Primary *gPrimary  `parser:"| @@"`
	Suffix  []*gSuffix `parser:"  @@*"`
}

// gSuffix follows a primary: [index] (also the element list of
// ARRAY[…] and MAP[…], which start as a reference) or .field.
type gSuffix struct {
	Pos   lexer.Position
	Index []*gExpr `parser:"  '[' @@ ( ',' @@ )* ']'"`
	Field *gIdent  `parser:"| '.' @@"`
}

// gPrimary lists the most frequent alternatives first: participle tries
// them in order, and each alternative tried costs allocations.
type gPrimary struct {
	Pos    lexer.Position
	Ref    *gRef   `parser:"  @@"`
	Number *string `parser:"| @Number"`
	String *string `parser:"| @String"`
	Paren  *gExpr  `parser:"| '(' @@"`
	// (a, b) is ROW(a, b).
	ParenMore []*gExpr   `parser:"  ( ',' @@ )* ')'"`
	Exists    *gQuery    `parser:"| 'EXISTS' '(' @@ ')'"`
	Cast      *gCast     `parser:"| @@"`
	Case      *gCase     `parser:"| @@"`
	Interval  *gInterval `parser:"| @@"`
	True      bool       `parser:"| @'TRUE'"`
	False     bool       `parser:"| @'FALSE'"`
	Null      bool       `parser:"| @'NULL'"`
	// LEFT(s, n) and RIGHT(s, n): reserved words called as functions.
	LRName string `parser:"| @('LEFT' | 'RIGHT')"`
	LRCall *gCall `parser:"  @@"`
}

type gCast struct {
	Try  bool   `parser:"( @'TRY_CAST' | 'CAST' ) '('"`
	X    *gExpr `parser:"@@"`
	Type *gType `parser:"'AS' @@ ')'"`
}

type gCase struct {
	Operand *gExpr   `parser:"'CASE' @@?"`
	Whens   []*gWhen `parser:"@@+"`
	Else    *gExpr   `parser:"( 'ELSE' @@ )? 'END'"`
}

type gWhen struct {
	Pos    lexer.Position
	Cond   *gExpr `parser:"'WHEN' @@"`
	Result *gExpr `parser:"'THEN' @@"`
}

// intervalUnits are the accepted INTERVAL units (plurals normalised).
var intervalUnits = []string{"SECOND", "MINUTE", "HOUR", "DAY"}

type gInterval struct {
	Value string `parser:"'INTERVAL' @String"`
	Unit  string `parser:"@('SECOND' | 'SECONDS' | 'MINUTE' | 'MINUTES' | 'HOUR' | 'HOURS' | 'DAY' | 'DAYS')"`
}

// gRef starts with an identifier: a column a, t.a, t.* (select lists
// only), a call f(...), or the literal TIMESTAMP '...'.
type gRef struct {
	First   gIdent   `parser:"@@"`
	Call    *gCall   `parser:"( @@"`
	Star    bool     `parser:"| '.' ( @'*'"`
	Second  *gIdent  `parser:"      | @@ )"`
	Literal *gString `parser:"| @@ )?"`
}

// gString is a string literal with its position.
type gString struct {
	Pos   lexer.Position
	Value string `parser:"@String"`
}

type gCall struct {
	Pos      lexer.Position
	Star     bool     `parser:"'(' ( @'*'"`
	Distinct bool     `parser:"| @'DISTINCT'?"`
	First    *gExpr   `parser:"  @@"`
	More     []*gExpr `parser:"  ( ( ',' @@ )+"`
	From     *gExpr   `parser:"  | 'FROM' @@"`
	For      *gExpr   `parser:"    ( 'FOR' @@ )?"`
	To       *gExpr   `parser:"  | 'TO' @@ )? )? ')'"`
	Filter   *gExpr   `parser:"( 'FILTER' '(' 'WHERE' @@ ')' )?"`
	Over     *gOver   `parser:"( 'OVER' @@ )?"`
}

// gExprRoot is the root of ParseExpr.
type gExprRoot struct {
	X *gExpr `parser:"@@"`
}
