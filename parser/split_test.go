package parser

import (
	"reflect"
	"testing"
)

func TestSplitStatements(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		stmts []string
		rest  string
	}{
		{"empty", "", nil, ""},
		{"one complete", "SELECT 1;", []string{"SELECT 1"}, ""},
		{"no semicolon yet", "SELECT 1\nFROM t", nil, "SELECT 1\nFROM t"},
		{"two and a partial", "SELECT 1; SELECT 2;\nSELECT", []string{"SELECT 1", "SELECT 2"}, "\nSELECT"},
		{"semicolon in string", "SELECT 'a;b';", []string{"SELECT 'a;b'"}, ""},
		{"escaped quote in string", "SELECT 'it''s;';", []string{"SELECT 'it''s;'"}, ""},
		{"semicolon in quoted identifier", "SELECT `a;b` FROM t;", []string{"SELECT `a;b` FROM t"}, ""},
		{"semicolon in line comment", "SELECT 1 -- no; split\n;", []string{"SELECT 1 -- no; split"}, ""},
		{"semicolon in block comment", "SELECT /* ; */ 1;", []string{"SELECT /* ; */ 1"}, ""},
		{"unterminated string keeps rest", "SELECT 1; SELECT 'abc;\n", []string{"SELECT 1"}, " SELECT 'abc;\n"},
		{"unterminated comment keeps rest", "SELECT /* ;", nil, "SELECT /* ;"},
		{"empty statements dropped", ";; ;\n;", nil, ""},
		{"comment-only statement dropped", "-- hi\n; /* x */ ;SELECT 1;", []string{"SELECT 1"}, ""},
		{"multi-line statement", "INSERT INTO t\nSELECT a\nFROM s;\n", []string{"INSERT INTO t\nSELECT a\nFROM s"}, "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stmts, rest := SplitStatements(tc.src)
			if !reflect.DeepEqual(stmts, tc.stmts) || rest != tc.rest {
				t.Fatalf("SplitStatements(%q) = %q, %q; want %q, %q", tc.src, stmts, rest, tc.stmts, tc.rest)
			}
		})
	}
}
