package repl

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// change is one changelog row: a kind and (key, count) values.
type change struct {
	kind  types.RowKind
	key   string
	count int64
}

func kvSchema() types.Schema {
	return types.Schema{Columns: []types.Column{{Name: "word", Type: types.Varchar}, {Name: "cnt", Type: types.BigInt}}}
}

// counts is the changelog a grouped COUNT(*) emits for words, in order.
func counts(words ...string) []change {
	n := map[string]int64{}
	var out []change
	for _, w := range words {
		if c := n[w]; c > 0 {
			out = append(out, change{types.UpdateBefore, w, c})
			n[w] = c + 1
			out = append(out, change{types.UpdateAfter, w, c + 1})
			continue
		}
		n[w] = 1
		out = append(out, change{types.Insert, w, 1})
	}
	return out
}

// batchCounts is the batch answer: each word with its count, sorted.
func batchCounts(words ...string) []string {
	n := map[string]int64{}
	for _, w := range words {
		n[w]++
	}
	var out []string
	for w, c := range n {
		out = append(out, fmt.Sprintf("%s=%d", w, c))
	}
	slices.Sort(out)
	return out
}

func materialize(t *testing.T, changes []change) *Materializer {
	t.Helper()
	m := NewMaterializer(2)
	b := types.NewBatch(2, 4)
	for i, c := range changes {
		b.Append(c.kind, []types.Value{types.StringValue(c.key), types.BigIntValue(c.count)})
		if b.Len() == 3 || i == len(changes)-1 { // apply in uneven batches
			if err := m.ApplyBatch(b); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	return m
}

func rowsOf(m *Materializer) []string {
	var out []string
	m.Rows(func(r []types.Value) bool {
		out = append(out, fmt.Sprintf("%s=%s", r[0], r[1]))
		return true
	})
	return out
}

func TestMaterializerMatchesBatchAnswer(t *testing.T) {
	many := strings.Fields(strings.Repeat("a b c d e f g h ", 50) + "a a z")
	tests := []struct {
		name    string
		changes []change
		want    []string // the batch answer
	}{
		{"inserts only", counts("x", "y", "z"), batchCounts("x", "y", "z")},
		{"updates", counts("a", "b", "a", "a", "c", "b"), batchCounts("a", "b", "a", "a", "c", "b")},
		{"many updates compact", counts(many...), batchCounts(many...)},
		{"delete", append(counts("a", "b"), change{types.Delete, "a", 1}), []string{"b=1"}},
		{"delete all", append(counts("a"), change{types.Delete, "a", 1}), nil},
		{"duplicates", []change{{types.Insert, "a", 1}, {types.Insert, "a", 1}, {types.Delete, "a", 1}}, []string{"a=1"}},
		{"update without +U", []change{{types.Insert, "a", 1}, {types.Insert, "b", 1}, {types.UpdateBefore, "a", 1}, {types.Insert, "c", 1}}, []string{"b=1", "c=1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := materialize(t, tc.changes)
			got := rowsOf(m)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("materialized %v, batch answer %v", got, tc.want)
			}
			if m.Len() != len(tc.want) {
				t.Fatalf("Len() = %d, want %d", m.Len(), len(tc.want))
			}
		})
	}
}

func TestMaterializerKeepsPositionOnUpdate(t *testing.T) {
	m := materialize(t, counts("a", "b", "c", "a", "b", "a"))
	if got, want := rowsOf(m), []string{"a=3", "b=2", "c=1"}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v (updated rows stay in place)", got, want)
	}
}

func TestMaterializerCompactsDeletes(t *testing.T) {
	var changes []change
	for i := range 300 {
		changes = append(changes, change{types.Insert, fmt.Sprint(i), int64(i)})
	}
	var want []string
	for i := range 300 {
		if i%10 == 0 {
			want = append(want, fmt.Sprintf("%d=%d", i, i))
			continue
		}
		changes = append(changes, change{types.Delete, fmt.Sprint(i), int64(i)})
	}
	changes = append(changes, change{types.Insert, "last", 1})
	want = append(want, "last=1")
	m := materialize(t, changes)
	if got := rowsOf(m); !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if len(m.slots) > 2*len(want)+64 {
		t.Fatalf("%d slots for %d rows: removed rows were not compacted", len(m.slots), len(want))
	}
}

func TestMaterializerRejectsUnknownRetraction(t *testing.T) {
	m := NewMaterializer(2)
	err := m.Apply(types.Delete, []types.Value{types.StringValue("a"), types.BigIntValue(1)})
	if err == nil || !strings.Contains(err.Error(), "not in the result") {
		t.Fatalf("err = %v, want a retraction error", err)
	}
}

func TestRenderTable(t *testing.T) {
	words := []string{"apple", "banana", "apple", "cherry-with-a-very-long-name", "apple", "banana"}
	tests := []struct {
		name  string
		width int
		max   int
		want  string
	}{
		{"wide", 80, -1, `
+------------------------------+-----+
| word                         | cnt |
+------------------------------+-----+
| apple                        |   3 |
| banana                       |   2 |
| cherry-with-a-very-long-name |   1 |
+------------------------------+-----+
`},
		{"narrow", 24, -1, `
+----------------+-----+
| word           | cnt |
+----------------+-----+
| apple          |   3 |
| banana         |   2 |
| cherry-with-a… |   1 |
+----------------+-----+
`},
		{"few rows", 80, 2, `
+--------+-----+
| word   | cnt |
+--------+-----+
| apple  |   3 |
| banana |   2 |
+--------+-----+
… 1 more row (the view shows as many rows as fit the terminal)
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := materialize(t, counts(words...))
			got := renderTable(kvSchema(), m, tc.width, tc.max)
			if want := strings.TrimPrefix(tc.want, "\n"); got != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
			for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
				if n := len([]rune(line)); n > tc.width {
					t.Errorf("line %q is %d wide, more than %d", line, n, tc.width)
				}
			}
		})
	}
}

func TestChangelogRows(t *testing.T) {
	f := changelogFormat(kvSchema(), 30)
	var out []byte
	out = append(out, f.appendHeader(nil)...)
	var scratch []string
	for _, c := range counts("a", "a") {
		out, scratch = appendChange(out, f, c.kind, []types.Value{types.StringValue(c.key), types.BigIntValue(c.count)}, scratch)
	}
	out = f.appendBorder(out)
	want := `+----+-----------+-----------+
| op | word      |       cnt |
+----+-----------+-----------+
| +I | a         |         1 |
| -U | a         |         1 |
| +U | a         |         2 |
+----+-----------+-----------+
`
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}
