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
	"HAVING", "UNION", "INTERSECT", "EXCEPT", "LIMIT", "VALUES", "VIEWS", "ALTER",
	"STATEMENT", "BEGIN", "EXECUTE", "INCLUDING", "EXCLUDING", "OVERWRITING", "ALL", "DISTINCT", "AS", "TEMPORARY", "TABLE", "TABLES", "VIEW",
	"IF", "NOT", "EXISTS", "PLAN", "FOR", "JOBS", "FUNCTIONS", "JOB", "WATERMARK", "PRIMARY",
	"KEY", "ENFORCED", "NULL", "COMMENT", "WITH", "SAVEPOINT", "AND", "OR", "IS",
	"IN", "BETWEEN", "LIKE", "CASE", "WHEN", "THEN", "ELSE", "END", "CAST",
	"INTERVAL", "TIMESTAMP", "TRUE", "FALSE", "BOOLEAN", "INT", "BIGINT", "DOUBLE",
	"VARCHAR", "STRING", "COUNT", "SUM", "AVG", "MIN", "MAX", "COALESCE", "UPPER",
	"LOWER", "CHAR_LENGTH", "SUBSTRING", "CONCAT", "TRIM", "ABS", "MOD", "SECOND",
	"MINUTE", "HOUR", "DAY", "GROUPING", "SETS", "ROLLUP", "CUBE", "GROUPING_ID",
	"METADATA", "VIRTUAL", "PARTITIONED", "FUNCTION", "LANGUAGE", "ORDER", "OVER",
	"PARTITION", "ROWS", "RANGE", "PRECEDING", "CURRENT", "ROW", "UNBOUNDED",
	"ROW_NUMBER", "RANK", "DENSE_RANK", "TUMBLE", "HOP", "CUMULATE", "SESSION",
	"DESCRIPTOR", "PROCTIME", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER",
	"ON", "SYSTEM_TIME", "OF", "ASC", "DESC", "ARRAY", "MAP", "DECIMAL",
}

// setKeys are the SET keys completed after a quote: those Weir uses.
var setKeys = session.SetKeys()

// completer completes the word before the cursor: keywords, table and view
// names, column names; in quotes what the context takes (SET keys and
// values, connector names).
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
	if quoted {
		for _, cand := range c.quotedCandidates(string(line[:start]), word) {
			out = append(out, []rune(cand[len(word):]))
		}
		return out, len([]rune(word))
	}
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
	if !quoted {
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

// quotedCandidates completes a quoted word by what comes before it:
// after SET or RESET a key; after 'connector' = a connector name; after
// SET 'key' = one of the key's values; in WITH ( or after a comma there,
// the 'connector' option. Anywhere else (a string literal) nothing.
func (c completer) quotedCandidates(before, word string) []string {
	var pool []string
	prefix := strings.TrimRightFunc(before, unicode.IsSpace)
	upper := strings.ToUpper(prefix)
	statement := strings.ToUpper(strings.TrimSpace(before))
	switch {
	case strings.HasSuffix(prefix, "="):
		key := lastQuoted(strings.TrimRightFunc(strings.TrimSuffix(prefix, "="), unicode.IsSpace))
		switch {
		case key == "connector":
			pool = c.sh.sess.Connectors.Names()
		case strings.HasPrefix(statement, "SET"):
			pool = session.SetValueChoices(key)
		}
	case strings.HasSuffix(upper, "SET") || strings.HasSuffix(upper, "RESET"):
		pool = setKeys
	case (strings.HasSuffix(prefix, "(") || strings.HasSuffix(prefix, ",")) && strings.Contains(upper, "WITH"):
		pool = []string{"connector"}
	}
	var out []string
	for _, p := range pool {
		cand := "'" + p + "'"
		if len(cand) > len(word) && strings.EqualFold(cand[:len(word)], word) {
			out = append(out, word+cand[len(word):])
		}
	}
	sort.Strings(out)
	return out
}

// lastQuoted returns the content of the quoted string s ends with, or "".
func lastQuoted(s string) string {
	if !strings.HasSuffix(s, "'") {
		return ""
	}
	open := strings.LastIndexByte(s[:len(s)-1], '\'')
	if open < 0 {
		return ""
	}
	return s[open+1 : len(s)-1]
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '-'
}
