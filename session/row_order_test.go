package session

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// rowOrderCmp orders the p ROWs of compositeRows ascending as Flink
// compares ROW fields: field by field, a NULL field (or nested ROW)
// before any value.
func rowOrderCmp(a, b compositeRow) int {
	nullFirst := func(an, bn bool) (int, bool) {
		switch {
		case an && bn:
			return 0, false
		case an:
			return -1, true
		case bn:
			return 1, true
		}
		return 0, false
	}
	if c, done := nullFirst(a.Name == nil, b.Name == nil); done {
		return c
	} else if a.Name != nil && b.Name != nil {
		if c := strings.Compare(*a.Name, *b.Name); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(a.Age, b.Age); c != 0 {
		return c
	}
	if c, done := nullFirst(!a.Addr, !b.Addr); done || !a.Addr {
		return c
	}
	if c, done := nullFirst(a.City == nil, b.City == nil); done {
		return c
	} else if a.City != nil && b.City != nil {
		if c := strings.Compare(*a.City, *b.City); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Zip, b.Zip)
}

// TestOrderByRow sorts random ROWs with NULLs at every level (the ROW,
// its fields, a nested ROW and its fields) by ORDER BY, in a Top-N, and
// compares them with <, against the order computed here: a NULL ROW by
// NULLS FIRST|LAST (by default first ascending, last descending), a NULL
// field as the smallest value, ties by id.
func TestOrderByRow(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rows, dir := writeCompositeRows(t, 300, seed)
	// ORDER BY p [DESC] [NULLS LAST], id: the ids in order.
	sorted := func(desc, nullsLast bool) []string {
		s := slices.Clone(rows)
		slices.SortStableFunc(s, func(a, b compositeRow) int {
			if a.PNull || b.PNull {
				if c := cmp.Compare(boolInt(a.PNull), boolInt(b.PNull)); c != 0 {
					if nullsLast {
						return c
					}
					return -c
				}
			} else if c := rowOrderCmp(a, b); c != 0 {
				if desc {
					return -c
				}
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
		out := make([]string, len(s))
		for i, r := range s {
			out[i] = fmt.Sprintf("[%d]", r.ID)
		}
		return out
	}
	ordered := func(query string) []string {
		t.Helper()
		out := runScript(t, fmt.Sprintf("SET 'parallelism.default' = '2';\n"+compositeDDL+
			"CREATE TABLE o (id BIGINT) WITH ('connector' = 'print');\nINSERT INTO o %s;\n", dir, query))
		var got []string
		forPrintLines(t, out, func(kind, row string) {
			if kind != "+I" {
				t.Fatalf("%s: a sort emitted %s%s", query, kind, row)
			}
			got = append(got, row)
		})
		return got
	}
	for _, c := range []struct {
		order           string
		desc, nullsLast bool
	}{{"p", false, false}, {"p DESC", true, true}, {"p NULLS LAST", false, true}, {"p DESC NULLS FIRST", true, false}} {
		got := ordered("SELECT id FROM t ORDER BY " + c.order + ", id")
		if want := sorted(c.desc, c.nullsLast); !slices.Equal(got, want) {
			t.Errorf("ORDER BY %s, id:\n got  %v\n want %v", c.order, head(got), head(want))
		}
	}

	// A Top-N ordered by the ROW: the first 7 by p DESC, id.
	out := runScript(t, fmt.Sprintf("SET 'parallelism.default' = '2';\n"+compositeDDL+
		"CREATE TABLE o (id BIGINT) WITH ('connector' = 'print');\n"+
		"INSERT INTO o SELECT id FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY p DESC, id) AS rn FROM t) WHERE rn <= 7;\n", dir))
	want := sorted(true, true)[:7]
	slices.Sort(want)
	if got := sortedRows(applyChangelog(t, out)); !slices.Equal(got, want) {
		t.Errorf("Top-N by p DESC: got %v, want %v", got, want)
	}

	// p < ROW('bx', 20, ROW('city2', 1000)): field by field, NULL once a
	// NULL field is met before two fields differ.
	out = runScript(t, fmt.Sprintf("SET 'parallelism.default' = '2';\n"+compositeDDL+
		"CREATE TABLE o (id BIGINT, lt BOOLEAN) WITH ('connector' = 'print');\n"+
		"INSERT INTO o SELECT id, p < ROW('bx', CAST(20 AS BIGINT), ROW('city2', 1000)) FROM t;\n", dir))
	var wantLt []string
	for _, r := range rows {
		wantLt = append(wantLt, fmt.Sprintf("[%d, %s]", r.ID, rowLess(r)))
	}
	slices.Sort(wantLt)
	if got := sortedRows(applyChangelog(t, out)); !slices.Equal(got, wantLt) {
		t.Errorf("p < ROW(…):\n got  %v\n want %v", head(got), head(wantLt))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rowLess is p < ('bx', 20, ('city2', 1000)) in SQL's three-valued logic.
func rowLess(r compositeRow) string {
	decide := func(c int) (string, bool) {
		switch {
		case c < 0:
			return "true", true
		case c > 0:
			return "false", true
		}
		return "", false
	}
	if r.PNull || r.Name == nil {
		return "<NULL>"
	}
	if s, ok := decide(strings.Compare(*r.Name, "bx")); ok {
		return s
	}
	if s, ok := decide(cmp.Compare(r.Age, 20)); ok {
		return s
	}
	if !r.Addr || r.City == nil {
		return "<NULL>"
	}
	if s, ok := decide(strings.Compare(*r.City, "city2")); ok {
		return s
	}
	if s, ok := decide(cmp.Compare(r.Zip, 1000)); ok {
		return s
	}
	return "false"
}
