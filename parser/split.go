package parser

import "strings"

// SplitStatements splits src at each ';' outside string literals, quoted
// identifiers and comments. It returns the complete statements (trimmed,
// without the ';'; statements that are empty or hold only comments are
// dropped) and rest, the text after the last ';', which is an incomplete
// statement unless it is blank. The interactive shell uses it to know when
// a multi-line statement is complete. An unterminated string, quoted
// identifier or comment keeps everything after it in rest.
func SplitStatements(src string) (stmts []string, rest string) {
	toks, err := lang.lex(src, 0)
	if err != nil {
		return nil, src
	}
	start, significant := 0, false
	for _, t := range toks {
		if lang.is(t, tokOp) && t.Value == ";" {
			if significant {
				stmts = append(stmts, strings.TrimSpace(src[start:t.Pos.Offset]))
			}
			start, significant = t.Pos.Offset+1, false
			continue
		}
		significant = true
	}
	return stmts, src[start:]
}
