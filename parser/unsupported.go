package parser

import (
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// This file recognises constructs of Flink SQL that Weir does not support
// yet, so that their errors say so instead of giving a parser hint that
// misleads ("LIMIT is a reserved word", "expected one of ..."). The grammar
// stays as small as what Weir runs: a construct is recognised only where
// the parse of a statement fails, by the words at that point and by what
// the grammar would have accepted there (probed as for "expected one of").
// Functions Weir lacks are listed in unsupportedFunctions, for the planner.

// ruleContext is where a rule's words must stand for the rule to apply.
type ruleContext uint8

const (
	// ctxStatement: the words start the statement and the parse fails
	// within them; the error points at the statement's first word.
	ctxStatement ruleContext = iota
	// ctxAccepts: the grammar accepts the candidate accepts (and not
	// rejects) where the words start.
	ctxAccepts
	// ctxAfterCall: the words follow the ")" of a function call.
	ctxAfterCall
)

// unsupportedRule is one construct and where it is recognised.
type unsupportedRule struct {
	ctx ruleContext
	// accepts and rejects are vocabulary keys (see buildVocabulary) for
	// ctxAccepts: "UNION" is accepted where a query may end, "WHERE" but
	// not "FROM" right after a FROM item, "SELECT" where a query may
	// start, "<number>" where an expression may start.
	accepts, rejects string
	// before are words that must stand just before the construct.
	before []string
	// words are matched from where the construct starts: "A|B" is either
	// word, a leading "?" makes a word optional, "*" is any word.
	words []string
	// caret is the index in words of the word the error points at.
	caret int
	// msg is the error message: "$*" is replaced with the matched words,
	// "$1", "$2", ... with the matched word of that index in words; ""
	// for that of the function named by the first word (see
	// UnsupportedFunction).
	msg string
}

// unsupportedRules are tried in order; the first that matches gives the
// error. Longer patterns come before their prefixes.
var unsupportedRules = []unsupportedRule{
	// Statements.
	{ctx: ctxStatement, words: []string{"ALTER", "?TEMPORARY", "?SYSTEM", "FUNCTION"}, msg: "$* is not supported yet: drop the function and create it again"},
	{ctx: ctxStatement, words: []string{"CREATE|DROP|ALTER", "CATALOG|DATABASE"}, msg: "$* is not supported yet"},
	{ctx: ctxStatement, words: []string{"ALTER", "?TEMPORARY", "VIEW"}, msg: "$* is not supported yet: drop it and create it again"},
	{ctx: ctxStatement, words: []string{"ALTER", "?TEMPORARY", "TABLE", "*", "RENAME|ADD|MODIFY|DROP"}, caret: 4, msg: "ALTER TABLE ... $5 is not supported yet: ALTER TABLE takes SET (...) and RESET (...); drop the table and create it again"},
	{ctx: ctxStatement, words: []string{"ALTER"}, msg: "ALTER is not supported yet"},
	{ctx: ctxStatement, words: []string{"SHOW", "CURRENT", "?CATALOG|DATABASE"}, msg: "$* is not supported yet"},
	{ctx: ctxStatement, words: []string{"SHOW", "?USER|FULL", "FUNCTIONS|CATALOGS|DATABASES|MODULES|JARS|COLUMNS|PARTITIONS|PROCEDURES"}, msg: "$* is not supported yet"},
	{ctx: ctxStatement, words: []string{"USE"}, msg: "USE (catalogs, databases and modules) is not supported yet"},
	{ctx: ctxStatement, words: []string{"LOAD|UNLOAD", "MODULE"}, msg: "$* is not supported yet"},
	{ctx: ctxStatement, words: []string{"ADD|REMOVE", "JAR"}, msg: "$* is not supported yet"},
	{ctx: ctxStatement, words: []string{"INSERT", "OVERWRITE"}, msg: "INSERT OVERWRITE is not supported yet"},

	// Flink reserves FILTER: after a call it starts the FILTER (WHERE ...)
	// clause of an aggregate, never an alias.
	{ctx: ctxAfterCall, words: []string{"FILTER", "FROM|,|)|;|WHERE|GROUP|HAVING|UNION"}, msg: "FILTER after a function call starts FILTER (WHERE ...) (to name the column filter, write AS filter)"},

	// FROM: table functions, then joins after a FROM item.
	{ctx: ctxAccepts, accepts: "<ident>", before: []string{"FROM"}, words: []string{"UNNEST", "("}, msg: "UNNEST is not supported yet"},
	{ctx: ctxAccepts, accepts: "<ident>", before: []string{"FROM"}, words: []string{"LATERAL"}, msg: "LATERAL is not supported yet"},
	{ctx: ctxAccepts, accepts: "<ident>", before: []string{","}, words: []string{"LATERAL", "TABLE"}, msg: "LATERAL TABLE (a join with a table function) is not supported yet"},
	{ctx: ctxAccepts, accepts: "WHERE", words: []string{"USING"}, msg: "JOIN ... USING is not supported yet: write JOIN ... ON a.x = b.x"},
	{ctx: ctxAccepts, accepts: "WHERE", rejects: "FROM", words: []string{"NATURAL", "?INNER|LEFT|RIGHT|FULL", "?OUTER", "JOIN"}, msg: "$* is not supported yet: write JOIN ... ON with the equalities"},
	{ctx: ctxAccepts, accepts: "WHERE", rejects: "FROM", words: []string{"CROSS", "JOIN"}, msg: "CROSS JOIN is not supported yet: write FROM a, b (a join on no condition) or JOIN ... ON"},
	{ctx: ctxAccepts, accepts: "WHERE", rejects: "FROM", words: []string{"CROSS|OUTER", "APPLY"}, msg: "$* is not supported yet: write JOIN ... ON"},
	{ctx: ctxAccepts, accepts: "WHERE", rejects: "FROM", words: []string{"MATCH_RECOGNIZE", "("}, msg: "MATCH_RECOGNIZE is not supported yet"},

	// Clauses after the body of a query.
	{ctx: ctxAccepts, accepts: "UNION", words: []string{"MINUS"}, msg: "MINUS is not supported yet: write EXCEPT"},

	// Expressions.
	{ctx: ctxAccepts, accepts: "<number>", words: []string{"LEFT|RIGHT", "("}},
	{ctx: ctxAccepts, accepts: "<number>", before: []string{"("}, words: []string{"SELECT"}, msg: "subqueries in expressions ((SELECT ...)) are not supported yet"},
}

// unsupported returns the error for a construct Weir does not support yet
// if the parse of seg failed (at token k) at one, or nil.
func (l *language) unsupported(seg segment, k int, try tryFunc) *Error {
	for i := range unsupportedRules {
		r := &unsupportedRules[i]
		if r.ctx == ctxStatement {
			if at, text, n := l.match(seg.toks, 0, r); n > k {
				return Errorf(toPos(seg.toks[at].Pos), "%s", expandMsg(r.msg, text))
			}
			continue
		}
		// The construct starts where the parse failed, or one word
		// earlier when that word (not reserved) was read as a name: the
		// grammar takes FETCH in "FROM t FETCH FIRST" for an alias.
		for _, start := range []int{k, k - 1} {
			if start < 0 || start >= len(seg.toks) || start < k && !l.is(seg.toks[start], tokIdent) {
				continue
			}
			at, text, n := l.match(seg.toks, start, r)
			if n == 0 || !l.inContext(seg, start, r, try) {
				continue
			}
			return Errorf(toPos(seg.toks[at].Pos), "%s", expandMsg(r.msg, text))
		}
	}
	// A call of a function Weir lacks may use syntax Weir lacks too
	// (POSITION(a IN b)).
	if k <= len(seg.toks) {
		if at := innermostCallAt(l, seg.toks[:k]); at >= 0 {
			if msg, ok := UnsupportedFunction(seg.toks[at].Value, false); ok {
				return Errorf(toPos(seg.toks[at].Pos), "%s", msg)
			}
		}
	}
	return nil
}

// match matches r.before and r.words at toks[start:]. It returns the index
// of the token the caret goes to, the matched words (upper case, by index
// in r.words; "" for an optional word that is absent), and the number of
// tokens from start that matched (0: no match).
func (l *language) match(toks []lexer.Token, start int, r *unsupportedRule) (at int, text []string, n int) {
	if start < len(r.before) {
		return 0, nil, 0
	}
	for i, w := range r.before {
		if !l.wordMatches(toks[start-len(r.before)+i], w) {
			return 0, nil, 0
		}
	}
	text = make([]string, len(r.words))
	j := start
	at = start
	for i, w := range r.words {
		optional := strings.HasPrefix(w, "?")
		w = strings.TrimPrefix(w, "?")
		if j < len(toks) && l.wordMatches(toks[j], w) {
			text[i] = strings.ToUpper(toks[j].Value)
			if i == r.caret {
				at = j
			}
			j++
			continue
		}
		if !optional {
			return 0, nil, 0
		}
	}
	return at, text, j - start
}

// wordMatches reports whether t is one of the "|"-separated words of w
// (any word for "*"): an unquoted word, or an operator such as "(".
func (l *language) wordMatches(t lexer.Token, w string) bool {
	if !l.is(t, tokIdent) && !l.is(t, tokKeyword) && !l.is(t, tokOp) {
		return false
	}
	if w == "*" {
		return !l.is(t, tokOp)
	}
	for _, alt := range strings.Split(w, "|") {
		if strings.EqualFold(t.Value, alt) {
			return true
		}
	}
	return false
}

// inContext reports whether a construct starting at token start of seg
// stands where r requires.
func (l *language) inContext(seg segment, start int, r *unsupportedRule, try tryFunc) bool {
	switch r.ctx {
	case ctxAfterCall:
		return start > 0 && l.closesCall(seg.toks[:start])
	case ctxAccepts:
		if !l.acceptsAt(seg, start, r.accepts, try) {
			return false
		}
		return r.rejects == "" || !l.acceptsAt(seg, start, r.rejects, try)
	}
	return false
}

// closesCall reports whether toks ends with the ")" of a function call.
func (l *language) closesCall(toks []lexer.Token) bool {
	last := len(toks) - 1
	if !l.is(toks[last], tokOp) || toks[last].Value != ")" {
		return false
	}
	depth := 0
	for i := last; i >= 0; i-- {
		if !l.is(toks[i], tokOp) {
			continue
		}
		switch toks[i].Value {
		case ")":
			depth++
		case "(":
			depth--
			if depth == 0 {
				return i > 0 && l.is(toks[i-1], tokIdent)
			}
		}
	}
	return false
}

// acceptsAt reports whether the grammar accepts the vocabulary candidate
// key after the first k tokens of seg.
func (l *language) acceptsAt(seg segment, k int, key string, try tryFunc) bool {
	if k > maxProbePrefix {
		return false
	}
	for _, c := range l.vocab {
		if c.key == key {
			return l.probe(seg, k, c, try, make([]lexer.Token, 0, k+2))
		}
	}
	return false
}

// expandMsg replaces "$*" in msg with the matched words and "$1", "$2",
// ... with the word matched by that word of the pattern.
func expandMsg(msg string, text []string) string {
	if msg == "" {
		msg, _ = UnsupportedFunction(text[0], false)
		return msg
	}
	var words []string
	for _, w := range text {
		if w != "" {
			words = append(words, w)
		}
	}
	msg = strings.ReplaceAll(msg, "$*", strings.Join(words, " "))
	for i := len(text); i >= 1; i-- {
		msg = strings.ReplaceAll(msg, "$"+strconv.Itoa(i), text[i-1])
	}
	return msg
}

// unsupportedFunc is a built-in function of Flink SQL that Weir lacks.
type unsupportedFunc struct {
	// bare: Flink calls it without parentheses (CURRENT_TIMESTAMP).
	bare bool
	// what names the kind of function, or "" to just say it is missing.
	what string
	// instead says what Weir offers instead, or "".
	instead string
}

// unsupportedFunctions are the built-in functions of Flink SQL that Weir
// does not have yet, by upper-case name. A function Weir gains must leave
// this list (the planner's tests check).
var unsupportedFunctions = func() map[string]unsupportedFunc {
	m := map[string]unsupportedFunc{}
	add := func(f unsupportedFunc, names ...string) {
		for _, n := range names {
			m[n] = f
		}
	}
	add(unsupportedFunc{bare: true, what: "time function"},
		"CURRENT_TIME", "LOCALTIME")
	add(unsupportedFunc{what: "time function"},
		"CURRENT_ROW_TIMESTAMP", "SOURCE_WATERMARK", "TO_DATE", "CONVERT_TZ")
	add(unsupportedFunc{what: "window function"},
		"ROW_NUMBER", "RANK", "DENSE_RANK", "PERCENT_RANK", "CUME_DIST", "NTILE", "LAG", "LEAD")
	add(unsupportedFunc{what: "aggregate function"},
		"VARIANCE", "COLLECT", "ARRAY_AGG", "JSON_OBJECTAGG", "JSON_ARRAYAGG")
	add(unsupportedFunc{},
		// numeric
		"BIN", "HEX", "UNHEX",
		// string
		"OVERLAY", "TRANSLATE", "STR_TO_MAP", "DECODE", "ENCODE", "PARSE_URL", "ELT",
		// conditional and conversion
		"IS_ALPHA", "IS_DECIMAL", "IS_DIGIT", "TYPEOF",
		// JSON and collections
		"JSON_STRING", "JSON_OBJECT",
		"ARRAY", "MAP", "ROW")
	add(unsupportedFunc{instead: "COALESCE(a, b) does the same"}, "IFNULL")
	return m
}()

// UnsupportedFunction reports whether name (any case) is a built-in
// function of Flink SQL that Weir does not support yet, and if so returns
// the message that says so. With bare set, name was written without
// parentheses, as a column: then only the functions Flink calls that way
// (CURRENT_TIMESTAMP, ...) count.
func UnsupportedFunction(name string, bare bool) (string, bool) {
	name = strings.ToUpper(name)
	f, ok := unsupportedFunctions[name]
	if !ok || bare && !f.bare {
		return "", false
	}
	msg := name + " is not supported yet"
	if f.what != "" {
		msg = name + " (" + f.what + ") is not supported yet"
	}
	if f.instead != "" {
		msg += ": " + f.instead
	}
	return msg, true
}

// UnsupportedFunctionNames returns the names UnsupportedFunction knows.
func UnsupportedFunctionNames() []string {
	out := make([]string, 0, len(unsupportedFunctions))
	for n := range unsupportedFunctions {
		out = append(out, n)
	}
	return out
}
