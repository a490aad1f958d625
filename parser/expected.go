package parser

import (
	"errors"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// This file computes the "expected one of ..." part of syntax errors.
// Participle reports where parsing failed but not which tokens would have
// been accepted there, so after an error the parser is re-run on the
// statement's prefix followed by each candidate token of a fixed
// vocabulary: a candidate is expected if the parse gets past it. Errors are
// rare, so the extra parses cost nothing that matters.

// candidate is one token the error message may list.
type candidate struct {
	key   string      // identity: the word, the operator, or <ident>/<number>/<string>/<end>
	label string      // how it is shown
	tok   lexer.Token // the token tried (Pos set at use)
}

// tryFunc parses a token slice (ending in EOF) and returns the error.
type tryFunc func(toks []lexer.Token) error

func (l *language) tryStmt(toks []lexer.Token) error {
	_, err := l.stmt.ParseFromLexer(upgrade(toks))
	return err
}

func (l *language) tryExpr(toks []lexer.Token) error {
	_, err := l.expr.ParseFromLexer(upgrade(toks))
	return err
}

// vocabularyWords are the words tried, in the order they are listed.
var vocabularyWords = []string{
	"SELECT", "INSERT", "CREATE", "DROP", "SET", "RESET", "EXPLAIN", "SHOW",
	"DESCRIBE", "STOP", "HELP",
	"FROM", "WHERE", "GROUP", "BY", "HAVING", "UNION", "ALL", "DISTINCT", "AS",
	"TEMPORARY", "TABLE", "VIEW", "IF", "NOT", "EXISTS", "INTO", "PLAN", "FOR",
	"TABLES", "JOBS", "FUNCTIONS", "JOB", "WATERMARK", "PRIMARY", "KEY", "ENFORCED", "NULL",
	"COMMENT", "WITH", "SAVEPOINT", "AND", "OR", "IS", "IN", "BETWEEN", "LIKE",
	"WHEN", "THEN", "ELSE", "END", "CASE", "CAST", "TRY_CAST", "INTERVAL", "TIMESTAMP",
	"TRUE", "FALSE", "PRECISION", "LOCAL", "TIME", "ZONE",
}

var vocabularyOps = []string{
	"(", ")", ",", ".", "*", "=", "<>", "!=", "<", "<=", ">", ">=", "+", "-",
	"/", "%", "||", "[", "]",
}

// candidateGroups collapse long runs of candidates into one label.
var candidateGroups = []struct {
	label    string
	required []string
	members  []string
}{
	{"an expression", []string{"<ident>", "<number>", "<string>"}, []string{
		"<ident>", "<number>", "<string>", "TRUE", "FALSE", "NULL", "CASE",
		"CAST", "TRY_CAST", "INTERVAL", "TIMESTAMP", "NOT", "EXISTS", "(", "-", "+"}},
	{"an operator", []string{"=", "+"}, []string{
		"=", "<>", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "||",
		"AND", "OR", "IS", "IN", "BETWEEN", "LIKE", "NOT", ".", "["}},
	{"a type", []string{"INT", "VARCHAR"}, typeNames},
}

// maxProbePrefix bounds the statement prefix (in tokens) for which the
// expected tokens are computed: each candidate costs a parse of the prefix.
const maxProbePrefix = 150

// maxListed bounds the number of alternatives an error message lists.
const maxListed = 10

func (l *language) buildVocabulary() []candidate {
	var out []candidate
	seen := map[string]bool{}
	add := func(c candidate) {
		if !seen[c.key] {
			seen[c.key] = true
			out = append(out, c)
		}
	}
	word := func(w string) {
		typ := l.types[tokIdent]
		for _, r := range reservedWords {
			if r == w {
				typ = l.types[tokKeyword]
			}
		}
		add(candidate{key: w, label: w, tok: lexer.Token{Type: typ, Value: w}})
	}
	for _, w := range vocabularyWords {
		word(w)
	}
	for _, w := range intervalUnits {
		word(w)
	}
	for _, w := range typeNames {
		word(w)
	}
	for _, op := range vocabularyOps {
		add(candidate{key: op, label: `"` + op + `"`, tok: lexer.Token{Type: l.types[tokOp], Value: op}})
	}
	add(candidate{key: "<ident>", label: "an identifier", tok: lexer.Token{Type: l.types[tokIdent], Value: "x"}})
	add(candidate{key: "<number>", label: "a number", tok: lexer.Token{Type: l.types[tokNumber], Value: "1"}})
	add(candidate{key: "<string>", label: "a string", tok: lexer.Token{Type: l.types[tokString], Value: "'s'"}})
	add(candidate{key: "<end>", label: `";"`, tok: lexer.Token{Type: lexer.EOF}})
	return out
}

// expected lists what the grammar accepts at token k of seg, and reports
// whether an identifier would fit there.
func (l *language) expected(seg segment, k int, try tryFunc) (list string, identOK bool) {
	if k > maxProbePrefix {
		return "", false
	}
	accepted := map[string]bool{}
	buf := make([]lexer.Token, 0, k+2)
	for _, c := range l.vocab {
		if l.probe(seg, k, c, try, buf) {
			accepted[c.key] = true
		}
	}
	l.dropRelaxed(seg.toks[:k], accepted)
	labels := map[string]string{}
	grouped := map[string]bool{}
	for _, c := range l.vocab {
		// A non-reserved word is an identifier too: when any identifier
		// fits, listing such words adds nothing.
		if accepted["<ident>"] && c.tok.Type == l.types[tokIdent] && c.key != "<ident>" {
			continue
		}
		if accepted[c.key] {
			labels[c.key] = c.label
		}
	}
	for _, g := range candidateGroups {
		all := true
		for _, r := range g.required {
			all = all && labels[r] != ""
		}
		if !all {
			continue
		}
		first := true
		for _, c := range l.vocab {
			if !containsString(g.members, c.key) || labels[c.key] == "" || grouped[c.key] {
				continue
			}
			if first {
				labels[c.key] = g.label
				grouped[c.key] = true
				first = false
			} else {
				delete(labels, c.key)
			}
		}
	}
	if labels["<end>"] != "" {
		labels["<end>"] = seg.endLabel
	}
	var names []string
	for _, c := range l.vocab {
		if lb := labels[c.key]; lb != "" {
			names = append(names, lb)
		}
	}
	identOK = accepted["<ident>"]
	switch {
	case len(names) == 0:
		return "", identOK
	case len(names) == 1:
		return names[0], identOK
	case len(names) > maxListed:
		names = append(names[:maxListed], "...")
	}
	return "one of " + strings.Join(names, ", "), identOK
}

// dropRelaxed removes candidates that the grammar accepts only because it
// reads some constructs loosely (convert.go then rejects them): a string
// after an identifier other than TIMESTAMP, KEY after anything but
// PRIMARY, PRECISION after anything but DOUBLE, FOR outside WATERMARK FOR, PLAN FOR and SUBSTRING, and FROM in
// a call other than SUBSTRING.
func (l *language) dropRelaxed(prefix []lexer.Token, accepted map[string]bool) {
	prev := ""
	if len(prefix) > 0 {
		prev = strings.ToUpper(prefix[len(prefix)-1].Value)
		if l.is(prefix[len(prefix)-1], tokIdent) && !containsString([]string{"TIMESTAMP", "JOB", "COMMENT", "RESET"}, prev) {
			delete(accepted, "<string>")
		}
	}
	if prev != "PRIMARY" {
		delete(accepted, "KEY")
	}
	if prev != "DOUBLE" {
		delete(accepted, "PRECISION")
	}
	switch call := innermostCall(l, prefix); call {
	case "SUBSTRING":
	case "":
		if prev != "WATERMARK" && prev != "PLAN" {
			delete(accepted, "FOR")
		}
	default:
		delete(accepted, "FOR")
		delete(accepted, "FROM")
	}
}

// innermostCall returns the upper-cased function name before the innermost
// unclosed '(' of toks, or "" if that parenthesis does not open a call.
func innermostCall(l *language, toks []lexer.Token) string {
	if i := innermostCallAt(l, toks); i >= 0 {
		return strings.ToUpper(toks[i].Value)
	}
	return ""
}

// innermostCallAt returns the index in toks of the function name before
// the innermost unclosed '(' of toks, or -1 if that parenthesis does not
// open a call.
func innermostCallAt(l *language, toks []lexer.Token) int {
	var open []int
	for i, t := range toks {
		switch {
		case l.is(t, tokOp) && t.Value == "(":
			open = append(open, i)
		case l.is(t, tokOp) && t.Value == ")" && len(open) > 0:
			open = open[:len(open)-1]
		}
	}
	if len(open) == 0 {
		return -1
	}
	i := open[len(open)-1]
	if i == 0 || !l.is(toks[i-1], tokIdent) {
		return -1
	}
	return i - 1
}

// probe reports whether the grammar accepts candidate c after the first k
// tokens of seg; buf is scratch space for the tokens tried.
func (l *language) probe(seg segment, k int, c candidate, try tryFunc, buf []lexer.Token) bool {
	at := seg.end
	if k < len(seg.toks) {
		at = toPos(seg.toks[k].Pos)
	}
	atPos := lexer.Position{Line: at.Line, Column: at.Col, Offset: at.Offset}
	toks := append(buf[:0], seg.toks[:k]...)
	if c.tok.Type == lexer.EOF {
		return try(append(toks, lexer.EOFToken(atPos))) == nil
	}
	after := atPos
	after.Column++
	after.Offset++
	t := c.tok
	t.Pos = atPos
	toks = append(toks, t, lexer.EOFToken(after))
	// The candidate fits if the parser gets past it: the parser never
	// backtracks, so a branch that took the candidate fails at the end.
	err := try(toks)
	return err == nil || errorOffset(err) > at.Offset
}

// errorOffset is the byte offset a participle error points at.
func errorOffset(err error) int {
	var ute *participle.UnexpectedTokenError
	if errors.As(err, &ute) {
		return ute.Unexpected.Pos.Offset
	}
	var pe participle.Error
	if errors.As(err, &pe) {
		return pe.Position().Offset
	}
	return -1
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
