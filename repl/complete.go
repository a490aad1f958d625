package repl

import (
	"sort"
	"strings"
	"unicode"

	"github.com/weir-sql/weir/session"
)

// keywords are completed in the case the user started typing them in.
var keywords = []string{
	"SELECT", "INSERT", "INTO", "CREATE", "DROP", "SET", "RESET", "EXPLAIN", "SHOW",
	"DESCRIBE", "STOP", "HELP", "QUIT", "EXIT", "FROM", "WHERE", "GROUP", "BY",
	"HAVING", "UNION", "ALL", "DISTINCT", "AS", "TEMPORARY", "TABLE", "TABLES", "VIEW",
	"IF", "NOT", "EXISTS", "PLAN", "FOR", "JOBS", "JOB", "WATERMARK", "PRIMARY",
	"KEY", "ENFORCED", "NULL", "COMMENT", "WITH", "SAVEPOINT", "AND", "OR", "IS",
	"IN", "BETWEEN", "LIKE", "CASE", "WHEN", "THEN", "ELSE", "END", "CAST",
	"INTERVAL", "TIMESTAMP", "TRUE", "FALSE", "BOOLEAN", "INT", "BIGINT", "DOUBLE",
	"VARCHAR", "STRING", "COUNT", "SUM", "AVG", "MIN", "MAX", "COALESCE", "UPPER",
	"LOWER", "CHAR_LENGTH", "SUBSTRING", "CONCAT", "TRIM", "ABS", "MOD", "SECOND",
	"MINUTE", "HOUR", "DAY",
}

// setKeys are the SET keys completed after a quote: those Weir uses.
var setKeys = session.SetKeys()

// completer completes the word before the cursor: keywords, table and view
// names, column names, and after a quote SET keys and connector names.
type completer struct{ sh *Shell }

// Do implements readline.AutoCompleter: it returns the possible endings of
// the word before pos and the length of that word.
func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	start := pos
	for start > 0 && isWordRune(line[start-1]) {
		start--
	}
	quoted := start > 0 && line[start-1] == '\''
	if quoted {
		start--
	}
	word := string(line[start:pos])
	if dot := strings.LastIndexByte(word, '.'); dot >= 0 && !quoted {
		word = word[dot+1:]
	}
	var out [][]rune
	for _, cand := range c.candidates(word, quoted) {
		out = append(out, []rune(cand[len(word):]))
	}
	return out, len([]rune(word))
}

// candidates returns the completions of word, sorted and without duplicates.
func (c completer) candidates(word string, quoted bool) []string {
	seen := map[string]bool{}
	var out []string
	add := func(cand string) {
		if len(cand) > len(word) && strings.EqualFold(cand[:len(word)], word) && !seen[cand] {
			seen[cand] = true
			out = append(out, word+cand[len(word):])
		}
	}
	if quoted {
		for _, k := range setKeys {
			add("'" + k + "'")
		}
		for _, n := range c.sh.sess.Connectors.Names() {
			add("'" + n + "'")
		}
		for _, m := range []string{ModeTable, ModeChangelog, ModeTableau} {
			add("'" + m + "'")
		}
	} else {
		lower := strings.IndexFunc(word, unicode.IsLower) >= 0
		for _, k := range keywords {
			if lower {
				k = strings.ToLower(k)
			}
			add(k)
		}
		cat := c.sh.sess.Catalog
		for _, t := range cat.Names() {
			add(t)
			if s, err := cat.Describe(t); err == nil {
				for _, col := range s.Names() {
					add(col)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '-'
}
