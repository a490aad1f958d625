package parser

import (
	"errors"
	"strings"
	"testing"
)

// wantLimitError checks that err is an *Error at line:col whose message
// contains msg and whose rendering shows the caret under that column.
func wantLimitError(t *testing.T, err error, line, col int, msg string) {
	t.Helper()
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("got %v (%T), want an *Error", err, err)
	}
	if perr.Pos.Line != line || perr.Pos.Col != col || !strings.Contains(perr.Msg, msg) {
		t.Fatalf("got line %d:%d: %s, want line %d:%d: …%s…", perr.Pos.Line, perr.Pos.Col, perr.Msg, line, col, msg)
	}
	text := perr.Error()
	lines := strings.Split(text, "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "line ") {
		t.Fatalf("error text is not a message, a source line and a caret:\n%.300s", text)
	}
	if caret := strings.Index(lines[2], "^"); caret != col+1 { // two spaces of indent
		t.Fatalf("caret at column %d of the caret line, want %d", caret-1, col)
	}
}

// TestDeepNestingIsRefused checks that nesting far deeper than the limit
// (which would overflow the stack of the recursive parser, killing the
// process) is a SQL error at the first token beyond the limit.
func TestDeepNestingIsRefused(t *testing.T) {
	prefix := "SELECT 1;\n-- comment\n  SELECT "
	col0 := len("  SELECT ") + 1 // column of the first nesting token on line 3
	cases := []struct {
		name  string
		deep  int
		open  string // one level of nesting
		at    int    // offset in open of the token that opens the level
		inner string
		close string
	}{
		{"parentheses", 100_000, "(", 0, "1", ")"},
		{"function calls", 5000, "ABS(", 3, "1", ")"},
		{"CAST", 5000, "CAST(", 4, "1", " AS INT)"},
		{"CASE", 5000, "CASE WHEN TRUE THEN ", 0, "1", " END"},
		{"NOT", 100_000, "NOT ", 0, "TRUE", ""},
		{"unary minus", 100_000, "- ", 0, "1", ""},
		{"subqueries", 5000, "a FROM (SELECT ", 7, "a FROM t", ") AS s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := strings.Repeat(c.open, c.deep) + c.inner + strings.Repeat(c.close, c.deep)
			_, err := Parse(prefix + body)
			// The first token beyond the limit opens level maxNesting+1.
			col := col0 + maxNesting*len(c.open) + c.at
			wantLimitError(t, err, 3, col, "nested too deeply")
			if c.name != "subqueries" {
				_, err = ParseExpr(body)
				wantLimitError(t, err, 1, 1+maxNesting*len(c.open)+c.at, "nested too deeply")
			}
			// At the limit it parses.
			ok := strings.Repeat(c.open, maxNesting) + c.inner + strings.Repeat(c.close, maxNesting)
			if c.name == "subqueries" {
				ok = strings.Repeat(c.open, maxNesting-1) + c.inner + strings.Repeat(c.close, maxNesting-1)
			}
			if _, err := Parse("SELECT " + ok); err != nil {
				t.Fatalf("%d levels: %.300v", maxNesting, err)
			}
		})
	}
}

// TestStatementTokenLimit checks that a statement of more tokens than the
// limit is a SQL error at its first token beyond the limit, while the
// statements around it do not count towards it.
func TestStatementTokenLimit(t *testing.T) {
	// SELECT 1 + 1 + … : token 2k+1 is the '+' of the k-th " + 1".
	k := maxStatementTokens / 2
	src := "SELECT 1;\nSELECT 1" + strings.Repeat(" + 1", k) + ";\nSELECT 2"
	_, err := Parse(src)
	wantLimitError(t, err, 2, len("SELECT 1")+4*(k-1)+2, "statement too long")

	// The count restarts after each ';'.
	toks, err := lang.lex("a b c; d e f;g h i", 3)
	if err != nil || len(toks) != 11 {
		t.Fatalf("3 tokens a statement, limit 3: %d tokens, %v", len(toks), err)
	}
	_, err = lang.lex("a b c; d e f g", 3)
	var perr *Error
	if !errors.As(err, &perr) || perr.Pos.Col != 14 {
		t.Fatalf("4 tokens, limit 3: got %v, want an error at column 14", err)
	}
}
