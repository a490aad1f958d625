package repl

import (
	"bufio"
	"errors"
	"io"
	"strings"

	"github.com/weir-sql/weir/parser"
)

// located is one complete statement with where it starts in the input it
// was typed or read in, so that errors point into that input.
type located struct {
	text string
	// src is the input the statement is part of; line and col (1-based)
	// are where text starts in it.
	src       string
	line, col int
	off       int // byte offset of text in src
}

// splitter accumulates input lines and cuts complete statements (ended by
// ';') out of them with parser.SplitStatements.
type splitter struct {
	text string // input so far
	done int    // offset in text where the unfinished statement starts
}

// add appends a line and returns the statements it completed.
func (s *splitter) add(line string) []located {
	s.text += line + "\n"
	stmts, rest := parser.SplitStatements(s.text[s.done:])
	if len(stmts) == 0 {
		return nil
	}
	out := make([]located, 0, len(stmts))
	at := s.done
	for _, st := range stmts {
		i := strings.Index(s.text[at:], st)
		if i < 0 { // cannot happen: statements are substrings of the input
			i = 0
		}
		off := at + i
		line, col := lineCol(s.text, off)
		out = append(out, located{text: st, src: s.text, line: line, col: col, off: off})
		at = off + len(st)
	}
	s.done = len(s.text) - len(rest)
	return out
}

// pending reports whether an unfinished statement is being typed.
func (s *splitter) pending() bool {
	return strings.TrimSpace(s.rest()) != "" && !onlyComments(s.rest())
}

// rest returns the text of the unfinished statement.
func (s *splitter) rest() string { return s.text[s.done:] }

// forget drops the finished statements (positions of later statements then
// count from the unfinished one), or everything if the rest is blank.
func (s *splitter) forget() {
	if s.pending() {
		s.text = s.text[s.done:]
	} else {
		s.text = ""
	}
	s.done = 0
}

// onlyComments reports whether src holds nothing but comments and blanks.
func onlyComments(src string) bool {
	stmts, rest := parser.SplitStatements(src + "\n;")
	return len(stmts) == 0 && strings.TrimSpace(rest) == ""
}

// lineCol returns the 1-based line and column of byte offset off in src.
func lineCol(src string, off int) (int, int) {
	before := src[:off]
	line := 1 + strings.Count(before, "\n")
	return line, off - strings.LastIndexByte(before, '\n')
}

// relocate makes a SQL error found in a statement's own text point into the
// input the statement came from: a syntax error (whose source is the
// statement's text) as well as an error of a later stage (without source).
func relocate(err error, st located) error {
	var perr *parser.Error
	if !errors.As(err, &perr) || error(perr) != err || perr.Pos.Line < 1 ||
		(perr.Source != "" && perr.Source != st.text) {
		return err
	}
	c := *perr
	if c.Pos.Line == 1 {
		c.Pos.Col += st.col - 1
	}
	c.Pos.Line += st.line - 1
	c.Pos.Offset += st.off
	c.Source = st.src
	return &c
}

// lineReader reads lines without a terminal.
type lineReader struct{ r *bufio.Reader }

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: bufio.NewReader(r)} }

// next returns the next line without its line break; at the end of the
// input it returns the unterminated last line (maybe empty) and io.EOF.
func (l *lineReader) next() (string, error) {
	line, err := l.r.ReadString('\n')
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	return line, err
}
