package parser

import (
	"fmt"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// maxNesting bounds the nesting of parentheses, CASE and prefix operators,
// so that hostile input cannot exhaust the stack of the recursive parser
// (a Go stack overflow kills the process).
const maxNesting = 1000

// maxStatementTokens bounds the size of one statement, in tokens: parsing
// and planning cost memory and time linear in it (about 4 KB and 20 µs a
// token, mostly in the parser), and a chain a + b + c + … becomes a tree
// as deep as it is long. 300,000 tokens is a megabyte or more of SQL, far
// beyond what anyone writes by hand (a flat sum of 100,000 terms plans);
// the limit keeps a runaway generated statement from taking the process's
// memory.
const maxStatementTokens = 300_000

// language is the lexer and the participle parsers, built once. It is
// immutable after construction and safe for concurrent use.
type language struct {
	def      *lexer.StatefulDefinition
	stmt     *participle.Parser[gStmt]
	expr     *participle.Parser[gExprRoot]
	types    map[string]lexer.TokenType
	reserved map[string]bool // upper case
	vocab    []candidate
}

// lang is the process-wide parser; participle parsers are immutable.
var lang = newLanguage()

func newLanguage() *language {
	def := newLexer()
	opts := []participle.Option{
		participle.Lexer(def),
		participle.CaseInsensitive(tokKeyword, tokIdent),
		// No backtracking: a branch that consumed a token and then failed
		// is the error (the grammar is LL(1)), which keeps errors precise.
		participle.UseLookahead(0),
	}
	l := &language{
		def:   def,
		stmt:  participle.MustBuild[gStmt](opts...),
		expr:  participle.MustBuild[gExprRoot](opts...),
		types: def.Symbols(),
	}
	l.reserved = map[string]bool{}
	for _, w := range reservedWords {
		l.reserved[w] = true
	}
	l.vocab = l.buildVocabulary()
	return l
}

func (l *language) is(t lexer.Token, name string) bool { return t.Type == l.types[name] }

// Parse parses a script of statements separated by ';' (the last ';' is
// optional). Empty statements and comments yield nothing. Errors are *Error
// with Source set to src.
func Parse(src string) ([]Statement, error) {
	toks, err := lang.lex(src, maxStatementTokens)
	if err != nil {
		return nil, withSource(err, src)
	}
	var out []Statement
	for _, seg := range lang.segments(src, toks) {
		st, perr := lang.parseStmt(src, seg)
		if perr != nil {
			return nil, perr.WithSource(src)
		}
		out = append(out, st)
	}
	out, perr := mergeStatementSets(src, out)
	if perr != nil {
		return nil, perr.WithSource(src)
	}
	return out, nil
}

// mergeStatementSets replaces each statement set whose BEGIN and END are
// both in the script (EXECUTE STATEMENT SET BEGIN ...; ...; END, or BEGIN
// STATEMENT SET; ...; END) with one *StatementSet. A set whose END is not
// in the script is left as it is, for the shell, which reads statements
// one at a time.
func mergeStatementSets(src string, stmts []Statement) ([]Statement, *Error) {
	var out []Statement
	for i := 0; i < len(stmts); i++ {
		begin, ok := stmts[i].(*BeginStatementSet)
		if !ok {
			out = append(out, stmts[i])
			continue
		}
		end := -1
		for j := i + 1; j < len(stmts) && end < 0; j++ {
			if _, ok := stmts[j].(*EndStatementSet); ok {
				end = j
			}
		}
		if end < 0 {
			out = append(out, stmts[i:]...)
			break
		}
		set := &StatementSet{StmtBase: StmtBase{Pos: begin.Pos,
			Text: src[begin.Pos.Offset : stmts[end].Position().Offset+len(stmts[end].SQL())]}}
		if begin.First != nil {
			set.Inserts = append(set.Inserts, begin.First)
		}
		for _, st := range stmts[i+1 : end] {
			ins, ok := st.(*Insert)
			if !ok {
				return nil, Errorf(st.Position(), "only INSERT statements can be in a statement set, not %s", firstWordOf(st.SQL()))
			}
			set.Inserts = append(set.Inserts, ins)
		}
		if len(set.Inserts) == 0 {
			return nil, Errorf(stmts[end].Position(), "a statement set needs at least one INSERT before END")
		}
		out = append(out, set)
		i = end
	}
	return out, nil
}

// firstWordOf returns the first word of a statement, upper case.
func firstWordOf(sql string) string {
	if f := strings.Fields(sql); len(f) > 0 {
		return strings.ToUpper(f[0])
	}
	return sql
}

// ParseExpr parses a single scalar expression.
func ParseExpr(src string) (Expr, error) {
	toks, err := lang.lex(src, maxStatementTokens)
	if err != nil {
		return nil, withSource(err, src)
	}
	seg := segment{toks: toks, end: endPos(src, toks), endName: "end of input", endLabel: "end of input"}
	if perr := lang.checkTokens(seg); perr != nil {
		return nil, perr.WithSource(src)
	}
	if len(toks) == 0 {
		return nil, Errorf(seg.end, "expected an expression").WithSource(src)
	}
	g, err := lang.expr.ParseFromLexer(seg.peeker(lang, len(toks)))
	if err != nil {
		return nil, lang.syntaxError(seg, err, lang.tryExpr).WithSource(src)
	}
	c := converter{src: src}
	e := c.expr(g.X)
	if c.err != nil {
		return nil, c.err.WithSource(src)
	}
	return e, nil
}

// segment is the tokens of one statement and where it ends.
type segment struct {
	toks     []lexer.Token
	end      Pos    // position of the terminating ';', or just after the last token
	endName  string // how to name the end when it is unexpected: `";"` or "end of input"
	endLabel string // how to name the end when it is expected
}

// lex returns the significant tokens of src (no whitespace or comments).
// With limit > 0, a statement (the tokens between two ';') of more than
// limit tokens is an *Error at its first token beyond the limit, reported
// before the rest of src is lexed.
func (l *language) lex(src string, limit int) ([]lexer.Token, error) {
	lx, err := l.def.LexString("", src)
	if err != nil {
		return nil, fmt.Errorf("sql lexer: %w", err)
	}
	var toks []lexer.Token
	inStmt := 0 // tokens of the current statement so far
	for {
		t, err := lx.Next()
		if err != nil {
			return nil, fmt.Errorf("sql lexer: %w", err)
		}
		if t.EOF() {
			return toks, nil
		}
		if l.is(t, tokWhitespace) || l.is(t, tokComment) {
			continue
		}
		if l.is(t, tokIdent) && l.reserved[strings.ToUpper(t.Value)] {
			t.Type = l.types[tokKeyword]
		}
		if l.is(t, tokOp) && t.Value == ";" {
			inStmt = 0
		} else if inStmt++; limit > 0 && inStmt > limit {
			return nil, Errorf(toPos(t.Pos), "statement too long: more than %d tokens (names, literals, operators)", limit)
		}
		toks = append(toks, t)
	}
}

// withSource attaches src to err if it is an *Error.
func withSource(err error, src string) error {
	if perr, ok := err.(*Error); ok {
		return perr.WithSource(src)
	}
	return err
}

// segments splits tokens at ';' and drops empty statements.
func (l *language) segments(src string, toks []lexer.Token) []segment {
	var out []segment
	start := 0
	for i, t := range toks {
		if l.is(t, tokOp) && t.Value == ";" {
			if i > start {
				out = append(out, segment{toks: toks[start:i], end: toPos(t.Pos), endName: `";"`, endLabel: `";"`})
			}
			start = i + 1
		}
	}
	if start < len(toks) {
		out = append(out, segment{toks: toks[start:], end: endPos(src, toks), endName: "end of input", endLabel: `";"`})
	}
	return out
}

// endPos is the position just after the last token (or the input start).
func endPos(src string, toks []lexer.Token) Pos {
	if len(toks) == 0 {
		return Pos{Line: 1, Col: 1}
	}
	p := toks[len(toks)-1].Pos
	p.Advance(toks[len(toks)-1].Value)
	return toPos(p)
}

func toPos(p lexer.Position) Pos { return Pos{Line: p.Line, Col: p.Column, Offset: p.Offset} }

// parseStmt parses one statement's tokens.
func (l *language) parseStmt(src string, seg segment) (Statement, *Error) {
	if perr := l.checkTokens(seg); perr != nil {
		return nil, perr
	}
	g, err := l.stmt.ParseFromLexer(seg.peeker(l, len(seg.toks)))
	if err != nil {
		return nil, l.syntaxError(seg, err, l.tryStmt)
	}
	c := converter{src: src}
	st := c.stmt(g, seg.toks)
	if c.err != nil {
		return nil, c.err
	}
	return st, nil
}

// checkTokens reports malformed tokens and excessive nesting.
func (l *language) checkTokens(seg segment) *Error {
	depth, prefix := 0, 0
	for _, t := range seg.toks {
		p := toPos(t.Pos)
		switch {
		case l.is(t, tokBadString):
			return Errorf(p, "unterminated string literal")
		case l.is(t, tokBadQIdent):
			return Errorf(p, "unterminated quoted identifier")
		case l.is(t, tokBadComment):
			return Errorf(p, "unterminated comment")
		case l.is(t, tokChar) && t.Value == `"`:
			return Errorf(p, "unexpected character '\"' (quote identifiers with backticks: `name`)")
		case l.is(t, tokChar):
			return Errorf(p, "unexpected character %q", t.Value)
		}
		v := strings.ToUpper(t.Value)
		switch v {
		case "(", "CASE":
			depth++
		case ")", "END":
			depth--
		}
		if v == "NOT" || v == "-" || v == "+" {
			prefix++
		} else {
			prefix = 0
		}
		if depth > maxNesting || prefix > maxNesting {
			return Errorf(p, "expression nested too deeply (more than %d levels)", maxNesting)
		}
	}
	return nil
}

// peeker returns a participle token stream of the first n tokens of seg,
// ended by an EOF token at seg.end.
func (s segment) peeker(l *language, n int) *lexer.PeekingLexer {
	toks := make([]lexer.Token, 0, n+1)
	toks = append(toks, s.toks[:n]...)
	end := lexer.Position{Line: s.end.Line, Column: s.end.Col, Offset: s.end.Offset}
	return upgrade(append(toks, lexer.EOFToken(end)))
}

// upgrade wraps a token slice ending in EOF as a participle PeekingLexer.
func upgrade(toks []lexer.Token) *lexer.PeekingLexer {
	pl, err := lexer.Upgrade(&sliceLexer{toks: toks})
	if err != nil {
		// sliceLexer never fails.
		panic(fmt.Sprintf("parser: upgrading token slice: %v", err))
	}
	return pl
}

// sliceLexer replays a token slice that ends with EOF.
type sliceLexer struct {
	toks []lexer.Token
	i    int
}

func (s *sliceLexer) Next() (lexer.Token, error) {
	if s.i >= len(s.toks) {
		return s.toks[len(s.toks)-1], nil
	}
	t := s.toks[s.i]
	s.i++
	return t, nil
}

// errorIndex returns the index in seg.toks of the token participle's error
// points at (len(seg.toks) for the end).
func errorIndex(seg segment, err error) int {
	off := errorOffset(err)
	for i, t := range seg.toks {
		if t.Pos.Offset >= off {
			return i
		}
	}
	return len(seg.toks)
}

// syntaxError turns a participle error into an *Error naming the
// unexpected token and what the grammar would have accepted there.
func (l *language) syntaxError(seg segment, err error, try tryFunc) *Error {
	k := errorIndex(seg, err)
	var pos Pos
	var got string
	if k < len(seg.toks) {
		pos = toPos(seg.toks[k].Pos)
		got = describeToken(l, seg.toks[k])
	} else {
		pos = seg.end
		got = seg.endName
	}
	if perr := l.unsupported(seg, k, try); perr != nil {
		return perr
	}
	expected, identOK := l.expected(seg, k, try)
	msg := "unexpected " + got
	if expected != "" {
		msg += ", expected " + expected
	}
	if identOK && k < len(seg.toks) && l.is(seg.toks[k], tokKeyword) && !isStructural(seg.toks[k].Value) {
		w := seg.toks[k].Value
		msg += fmt.Sprintf(" (%s is a reserved word: write `%s` to use it as a name)", w, w)
	} else if k > 0 && k <= len(seg.toks) && strings.EqualFold(seg.toks[k-1].Value, "EXISTS") && l.is(seg.toks[k-1], tokKeyword) {
		// EXISTS starts EXISTS (SELECT ...): a column named exists was meant.
		w := seg.toks[k-1].Value
		msg += fmt.Sprintf(" (%s is a reserved word: write `%s` to use it as a name)", w, w)
	}
	return &Error{Pos: pos, Msg: msg}
}

// isStructural reports whether a reserved word is almost always meant in
// its grammatical role, so that an error at it does not suggest quoting.
func isStructural(word string) bool {
	switch strings.ToUpper(word) {
	case "AND", "AS", "BETWEEN", "BY", "ELSE", "END", "FROM", "GROUP", "HAVING",
		"IN", "IS", "JOIN", "LIKE", "NOT", "ON", "OR", "THEN", "UNION", "WHEN", "WHERE":
		return true
	}
	return false
}

// describeToken renders a token for an error message.
func describeToken(l *language, t lexer.Token) string {
	v := t.Value
	if len(v) > 40 {
		v = v[:37] + "..."
	}
	switch {
	case l.is(t, tokString):
		return "string " + v
	case l.is(t, tokNumber):
		return "number " + v
	}
	return fmt.Sprintf("%q", v)
}
