package parser

import (
	"strings"
	"testing"
)

func BenchmarkParseQuery(b *testing.B) {
	src := "SELECT a, COUNT(*) AS n, SUM(DISTINCT b) FROM (SELECT a, b FROM t WHERE a > 1 AND b IS NOT NULL) AS s GROUP BY a HAVING COUNT(*) > 10"
	for i := 0; i < b.N; i++ {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseError(b *testing.B) {
	src := "SELECT a, COUNT(*) AS n FROM t WHERE a > 1 AND b c"
	for i := 0; i < b.N; i++ {
		if _, err := Parse(src); err == nil {
			b.Fatal("no error")
		}
	}
}

func BenchmarkParseErrorLongStatement(b *testing.B) {
	src := "SELECT " + strings.Repeat("a + ", 500) + "FROM t"
	for i := 0; i < b.N; i++ {
		if _, err := Parse(src); err == nil {
			b.Fatal("no error")
		}
	}
}
