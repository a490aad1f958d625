package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// compositeRow is one random row of the JSON file the composite tests read.
type compositeRow struct {
	ID    int64
	Name  *string // p.name; p is NULL when PNull
	Age   int64
	PNull bool
	City  *string // p.addr.city; p.addr is NULL when AddrNull
	Zip   int64
	Addr  bool // p.addr present
	Tags  []string
	TagsN bool // tags is NULL
	Attrs map[string]int64
}

func (r compositeRow) json() string {
	m := map[string]any{"id": r.ID}
	if !r.PNull {
		p := map[string]any{"name": r.Name, "age": r.Age}
		if r.Addr {
			p["addr"] = map[string]any{"city": r.City, "zip": r.Zip}
		}
		m["p"] = p
	}
	if !r.TagsN {
		m["tags"] = r.Tags
	}
	if r.Attrs != nil {
		m["attrs"] = r.Attrs
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func writeCompositeRows(t *testing.T, n int, seed uint64) ([]compositeRow, string) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 3))
	words := []string{"a", "b", "c", "d"}
	var rows []compositeRow
	var b strings.Builder
	for i := range n {
		row := compositeRow{Tags: []string{}, ID: int64(i), Age: r.Int64N(50), Zip: r.Int64N(3000), Addr: r.IntN(4) > 0, PNull: r.IntN(8) == 0, TagsN: r.IntN(8) == 0}
		if r.IntN(6) > 0 {
			s := words[r.IntN(len(words))] + "x"
			row.Name = &s
		}
		if r.IntN(6) > 0 {
			s := "city" + fmt.Sprint(r.IntN(5))
			row.City = &s
		}
		for range r.IntN(4) {
			row.Tags = append(row.Tags, words[r.IntN(len(words))])
		}
		if r.IntN(5) > 0 {
			row.Attrs = map[string]int64{"n": r.Int64N(100)}
			if r.IntN(2) == 0 {
				row.Attrs["m"] = -1
			}
		}
		rows = append(rows, row)
		b.WriteString(row.json() + "\n")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rows.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return rows, dir
}

const compositeDDL = `CREATE TABLE t (id BIGINT, p ROW<name STRING, age BIGINT, addr ROW<city STRING, zip INT>>,
  tags ARRAY<STRING>, attrs MAP<STRING, BIGINT>) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
`

// TestCompositeQueries reads ROW, ARRAY and MAP columns (with NULLs at
// every level) from JSON and checks field access, subscripts (in and out
// of range, missing keys), the functions and constructors against the
// answers computed here.
func TestCompositeQueries(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rows, dir := writeCompositeRows(t, 400, seed)
	out := runScript(t, fmt.Sprintf(`SET 'parallelism.default' = '2';
`+compositeDDL+`
CREATE TABLE o (id BIGINT, name STRING, city STRING, zip INT, t1 STRING, t2 STRING, t0 STRING, n BIGINT, c INT, hasb BOOLEAN,
  r ROW<a BIGINT, b STRING>, old BOOLEAN, arr ARRAY<BIGINT>, m MAP<STRING, INT>) WITH ('connector' = 'print');
INSERT INTO o SELECT id, p.name, t.p.addr.city, `+"`p`.`addr`.`zip`"+`, tags[1], tags[1 + 1], tags[0], attrs['n'], CARDINALITY(tags),
  ARRAY_CONTAINS(tags, 'b'), ROW(id, p.name), (p.age, 1) = ROW(CAST(40 AS BIGINT), 1), ARRAY[id, p.age], MAP['x', CAST(id AS INT)]
FROM t;
`, dir))
	str := func(s *string) string {
		if s == nil {
			return "<NULL>"
		}
		return *s
	}
	inner := func(s string) string { // NULL inside a composite
		if s == "<NULL>" {
			return "NULL"
		}
		return s
	}
	var want []string
	for _, r := range rows {
		name, city, zip, age := "<NULL>", "<NULL>", "<NULL>", "<NULL>"
		if !r.PNull {
			name, age = str(r.Name), fmt.Sprint(r.Age)
			if r.Addr {
				city, zip = str(r.City), fmt.Sprint(r.Zip)
			}
		}
		tag := func(i int) string {
			if r.TagsN || i < 1 || i > len(r.Tags) {
				return "<NULL>"
			}
			return r.Tags[i-1]
		}
		n, c, hasb := "<NULL>", "<NULL>", "<NULL>"
		if v, ok := r.Attrs["n"]; ok {
			n = fmt.Sprint(v)
		}
		if !r.TagsN {
			c, hasb = fmt.Sprint(len(r.Tags)), "false"
			for _, x := range r.Tags {
				if x == "b" {
					hasb = "true"
				}
			}
		}
		old := "<NULL>" // (p.age, 1) = (40, 1): NULL when p.age is
		if !r.PNull {
			old = fmt.Sprint(r.Age == 40)
		}
		want = append(want, fmt.Sprintf("[%d, %s, %s, %s, %s, %s, <NULL>, %s, %s, %s, (%d, %s), %s, [%d, %s], {x=%d}]",
			r.ID, name, city, zip, tag(1), tag(2), n, c, hasb, r.ID, inner(name), old, r.ID, inner(age), r.ID))
	}
	sort.Strings(want)
	got := sortedRows(applyChangelog(t, out))
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// TestGroupByComposite groups by an ARRAY and by a ROW at parallelism 2:
// the keys go through the hash exchange and keyed state; the counts must
// be those computed here.
func TestGroupByComposite(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rows, dir := writeCompositeRows(t, 600, seed)
	// Two runs: runScript's buffer is not shared safely between sinks.
	setup := fmt.Sprintf(`SET 'parallelism.default' = '2';
`+compositeDDL+`
CREATE TABLE o (k STRING, c BIGINT) WITH ('connector' = 'print');
`, dir)
	out := runScript(t, setup+"INSERT INTO o SELECT CAST(tags AS STRING), COUNT(*) FROM t GROUP BY tags;") +
		runScript(t, setup+"INSERT INTO o SELECT CAST(r AS STRING), COUNT(*) FROM (SELECT ROW(p.name, CARDINALITY(tags)) AS r FROM t) GROUP BY r;")
	counts := map[string]int{}
	for _, r := range rows {
		k := "<NULL>"
		if !r.TagsN {
			k = "[" + strings.Join(r.Tags, ", ") + "]"
		}
		counts[k]++
		name, card := "NULL", "NULL"
		if !r.PNull && r.Name != nil {
			name = *r.Name
		}
		if !r.TagsN {
			card = fmt.Sprint(len(r.Tags))
		}
		counts["("+name+", "+card+")"]++
	}
	var want []string
	for k, c := range counts {
		want = append(want, fmt.Sprintf("[%s, %d]", k, c))
	}
	sort.Strings(want)
	got := sortedRows(applyChangelog(t, out))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCompositeRuntimeErrors: ELEMENT of an ARRAY of two elements fails
// the job naming the function, never a wrong value.
func TestCompositeRuntimeErrors(t *testing.T) {
	var stdout, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	err := s.RunScript(context.Background(), `
CREATE TABLE n (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3');
CREATE TABLE o (e BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT ELEMENT(ARRAY[id, id + 1]) FROM n;
`, RunOptions{JobName: t.Name(), Quiet: true, Exec: exec.Options{}})
	if err == nil || !strings.Contains(err.Error(), "ELEMENT of an ARRAY of 2 elements") {
		t.Fatalf("run: %v, want the ELEMENT error", err)
	}
}

// TestDescribeComposite: DESCRIBE prints nested types as Flink does.
func TestDescribeComposite(t *testing.T) {
	var stdout bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &bytes.Buffer{}})
	src := fmt.Sprintf(compositeDDL, t.TempDir()) + "DESCRIBE t;"
	if err := s.RunScript(context.Background(), src, RunOptions{Quiet: true}); err != nil {
		t.Fatal(err)
	}
	want := "id\tBIGINT\tTRUE\n" +
		"p\tROW<`name` STRING, `age` BIGINT, `addr` ROW<`city` STRING, `zip` INT>>\tTRUE\n" +
		"tags\tARRAY<STRING>\tTRUE\n" +
		"attrs\tMAP<STRING, BIGINT>\tTRUE\n"
	if stdout.String() != want {
		t.Errorf("DESCRIBE printed\n%q\nwant\n%q", stdout.String(), want)
	}
}

// TestTypesNestedExample runs examples/types_nested.sql: it must plan and
// run, one card per person of the data file.
func TestTypesNestedExample(t *testing.T) {
	src, err := os.ReadFile("../examples/types_nested.sql")
	if err != nil {
		t.Fatal(err)
	}
	script := strings.ReplaceAll(string(src), "'examples/data/", "'../examples/data/")
	// One print sink: runScript's buffer is not shared safely between sinks.
	script, _, _ = strings.Cut(script, "-- Grouping")
	out := runScript(t, script)
	data, err := os.ReadFile("../examples/data/people.json")
	if err != nil {
		t.Fatal(err)
	}
	people := strings.Count(strings.TrimSpace(string(data)), "\n") + 1
	if got := strings.Count(out, "+I["); got != people {
		t.Errorf("%d cards, want %d:\n%s", got, people, out)
	}
}
