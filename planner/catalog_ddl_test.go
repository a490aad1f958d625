package planner

import (
	"reflect"
	"strings"
	"testing"

	"github.com/weir-sql/weir/parser"
)

// execDDL runs CREATE TABLE, CREATE VIEW and ALTER TABLE statements on c,
// returning the first error.
func execDDL(t *testing.T, c *Catalog, src string) error {
	t.Helper()
	stmts, err := parser.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts {
		switch st := st.(type) {
		case *parser.CreateTable:
			err = c.CreateTable(st)
		case *parser.CreateView:
			err = c.CreateView(st)
		case *parser.AlterTable:
			err = c.AlterTable(st)
		default:
			t.Fatalf("unexpected %T", st)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

const likeBase = `CREATE TABLE base (id BIGINT, ts TIMESTAMP(3), d AS id * 2, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, PRIMARY KEY (id) NOT ENFORCED)
WITH ('connector' = 'datagen', 'number-of-rows' = '10', 'fields.id.kind' = 'sequence');
`

// TestCreateTableLike checks Flink's LIKE merging: the source's physical
// columns first, computed columns, watermark, key and options as the LIKE
// options say (default INCLUDING ALL OVERWRITING OPTIONS), and conflicts
// as errors. Each want is the merged table's DDL written out by hand.
func TestCreateTableLike(t *testing.T) {
	for _, c := range []struct{ ddl, want string }{
		{"CREATE TABLE t WITH ('number-of-rows' = '5') LIKE base",
			"(`id` BIGINT NOT NULL; `ts` TIMESTAMP(3); `d` AS id * 2; WATERMARK FOR `ts` AS ts - INTERVAL '1' SECOND; PRIMARY KEY (`id`) NOT ENFORCED) " +
				"('connector' = 'datagen'; 'fields.id.kind' = 'sequence'; 'number-of-rows' = '5')"},
		{"CREATE TABLE t (extra INT) WITH ('connector' = 'print') LIKE base (EXCLUDING ALL)",
			"(`id` BIGINT; `ts` TIMESTAMP(3); `extra` INT) ('connector' = 'print')"},
		{"CREATE TABLE t (WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) LIKE base (OVERWRITING WATERMARKS EXCLUDING CONSTRAINTS, EXCLUDING GENERATED)",
			"(`id` BIGINT; `ts` TIMESTAMP(3); WATERMARK FOR `ts` AS ts - INTERVAL '5' SECOND) ('connector' = 'datagen'; 'number-of-rows' = '10'; 'fields.id.kind' = 'sequence')"},
		{"CREATE TABLE t (d AS id + 1) LIKE base (OVERWRITING GENERATED)",
			"(`id` BIGINT NOT NULL; `ts` TIMESTAMP(3); `d` AS id + 1; WATERMARK FOR `ts` AS ts - INTERVAL '1' SECOND; PRIMARY KEY (`id`) NOT ENFORCED) ('connector' = 'datagen'; 'number-of-rows' = '10'; 'fields.id.kind' = 'sequence')"},
		{"CREATE TABLE t (id INT) LIKE base", "error: line 1:17: column 'id' is a column of the LIKE table 'base' already"},
		{"CREATE TABLE t (d AS id + 1) LIKE base", "error: line 1:17: computed column 'd' is in the LIKE table 'base' too"},
		{"CREATE TABLE t (WATERMARK FOR ts AS ts) LIKE base", "error: line 1:17: the LIKE table 'base' has a WATERMARK too"},
		{"CREATE TABLE t WITH ('number-of-rows' = '5') LIKE base (INCLUDING OPTIONS)", "error: line 1:22: option 'number-of-rows' is an option of the LIKE table 'base' too"},
		{"CREATE TABLE t LIKE nope", "error: line 1:16: LIKE: unknown table 'nope'"},
	} {
		cat := NewCatalog()
		if err := execDDL(t, cat, likeBase); err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := execDDL(t, cat, c.ddl); err != nil {
			got = "error: " + strings.SplitN(err.Error(), "\n", 2)[0]
		} else {
			text, err := cat.ShowCreate("t")
			if err != nil {
				t.Fatal(err)
			}
			got = compactDDL(text)
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s:\n got  %s\n want %s", c.ddl, got, c.want)
		}
	}
}

// compactDDL renders SHOW CREATE TABLE's text on one line: "(cols) (opts)".
func compactDDL(s string) string {
	_, body, _ := strings.Cut(s, "(\n")
	cols, opts, _ := strings.Cut(body, "\n) WITH (\n")
	trim := func(s string) string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), ")")), "\n") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(l), ","))
		}
		return strings.Join(out, "; ")
	}
	return "(" + trim(cols) + ") (" + strings.TrimSpace(trim(opts)) + ")"
}

// TestAlterTableAndViews: ALTER TABLE SET changes and adds options, RESET
// removes them (not 'connector'); SHOW CREATE TABLE shows the change; SHOW
// VIEWS and SHOW CREATE VIEW list and show views only.
func TestAlterTableAndViews(t *testing.T) {
	cat := NewCatalog()
	if err := execDDL(t, cat, likeBase+`CREATE VIEW v2 AS SELECT id FROM base; CREATE VIEW v1 AS SELECT d FROM base;
ALTER TABLE base SET ('number-of-rows' = '3', 'rows-per-second' = '7');
ALTER TABLE base RESET ('fields.id.kind')`); err != nil {
		t.Fatal(err)
	}
	tab, _ := cat.Table("base")
	want := map[string]string{"connector": "datagen", "number-of-rows": "3", "rows-per-second": "7"}
	if !reflect.DeepEqual(tab.Options, want) {
		t.Fatalf("options %v, want %v", tab.Options, want)
	}
	text, _ := cat.ShowCreate("base")
	if got := compactDDL(text); !strings.HasSuffix(got, "('connector' = 'datagen'; 'number-of-rows' = '3'; 'rows-per-second' = '7')") {
		t.Fatalf("SHOW CREATE TABLE after ALTER: %s", got)
	}
	for _, c := range []struct{ ddl, want string }{
		{"ALTER TABLE base RESET ('connector')", "the 'connector' option cannot be reset"},
		{"ALTER TABLE v1 SET ('a' = 'b')", "'v1' is a view"},
		{"ALTER TABLE nope SET ('a' = 'b')", "unknown table 'nope'"},
	} {
		if err := execDDL(t, cat, c.ddl); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.ddl, err, c.want)
		}
	}
	if got := cat.ViewNames(); !reflect.DeepEqual(got, []string{"v1", "v2"}) {
		t.Fatalf("ViewNames = %v", got)
	}
	if text, err := cat.ShowCreateView("v2"); err != nil || text != "CREATE VIEW v2 AS SELECT id FROM base" {
		t.Fatalf("ShowCreateView(v2) = %q, %v", text, err)
	}
	if _, err := cat.ShowCreateView("base"); err == nil || !strings.Contains(err.Error(), "is a table, not a view") {
		t.Fatalf("ShowCreateView(base): %v", err)
	}
}
