package parser

import (
	"fmt"
	"strings"
)

// Error is a SQL error at a position: a syntax error from the parser, or a
// semantic error from the planner (unknown column, type mismatch). Its
// message names line and column, and, when the source is known, shows the
// line with a caret under the column.
type Error struct {
	Pos Pos
	Msg string
	// Source is the full SQL text the position refers to; may be empty.
	Source string
}

// Errorf returns an *Error at pos.
func Errorf(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// WithSource returns a copy of e that renders its line from src.
func (e *Error) WithSource(src string) *Error {
	c := *e
	c.Source = src
	return &c
}

// Error renders "line L:C: msg", then the source line and a caret.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "line %d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
	if line, ok := sourceLine(e.Source, e.Pos.Line); ok {
		line = strings.ReplaceAll(line, "\t", " ")
		b.WriteString("\n  ")
		b.WriteString(line)
		b.WriteString("\n  ")
		col := e.Pos.Col
		if col < 1 {
			col = 1
		}
		if col > len(line)+1 {
			col = len(line) + 1
		}
		b.WriteString(strings.Repeat(" ", col-1))
		b.WriteByte('^')
	}
	return b.String()
}

func sourceLine(src string, n int) (string, bool) {
	if src == "" || n < 1 {
		return "", false
	}
	lines := strings.Split(src, "\n")
	if n > len(lines) {
		return "", false
	}
	return strings.TrimRight(lines[n-1], "\r"), true
}
