package planner

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
)

func mustParse(t *testing.T, src string) []parser.Statement {
	t.Helper()
	st, err := parser.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCatalogLifecycle(t *testing.T) {
	c := NewCatalog()
	st := mustParse(t, `CREATE TABLE Orders (id BIGINT, amount INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen');
CREATE VIEW big AS SELECT id FROM orders WHERE amount > 10;
CREATE TABLE IF NOT EXISTS orders (x INT) WITH ('connector' = 'datagen');
DROP VIEW big;
DROP TABLE IF EXISTS nothing;
DROP TABLE orders`)
	if err := c.CreateTable(st[0].(*parser.CreateTable)); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateView(st[1].(*parser.CreateView)); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(st[2].(*parser.CreateTable)); err != nil {
		t.Fatalf("IF NOT EXISTS: %v", err)
	}
	if got := c.Names(); !reflect.DeepEqual(got, []string{"big", "Orders"}) {
		t.Fatalf("Names = %v", got)
	}
	tab, ok := c.Table("ORDERS")
	if !ok || tab.Schema.Columns[2].Type != types.Timestamp || tab.Schema.Len() != 3 {
		t.Fatalf("Table = %+v, %v", tab, ok)
	}
	if c.Watermark("orders") == nil {
		t.Fatal("watermark not kept")
	}
	if s, err := c.Describe("big"); err != nil || s.String() != "(id BIGINT)" {
		t.Fatalf("Describe(big) = %v, %v", s, err)
	}
	if _, err := c.ShowCreate("big"); err != nil {
		t.Fatal(err)
	}
	for _, s := range st[3:] {
		if err := c.Drop(s.(*parser.DropTable)); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.Names()) != 0 {
		t.Fatalf("left: %v", c.Names())
	}
	err := c.Drop(st[5].(*parser.DropTable))
	if err == nil || !strings.Contains(err.Error(), "unknown table 'orders' (no tables defined)") {
		t.Fatalf("drop twice: %v", err)
	}
	if _, err := c.Describe("orders"); err == nil {
		t.Fatal("Describe of a dropped table")
	}
}

// TestWatermarkReachesSource checks that a table's WATERMARK FOR, bound
// over its columns, is handed to its source vertex (and only to it).
func TestWatermarkReachesSource(t *testing.T) {
	out, plan := runScript(`CREATE TABLE src (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'datagen');
CREATE TABLE other (id BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'datagen');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT id FROM src WHERE id > 0 UNION ALL SELECT id FROM other`)
	if plan == nil {
		t.Fatal(out)
	}
	var got []string
	for _, v := range plan.Graph.Vertices {
		if v.Source == nil {
			if v.Watermark != nil {
				t.Errorf("vertex %s has a watermark without a source", v.Name)
			}
			continue
		}
		w := "none"
		if v.Watermark != nil {
			w = fmt.Sprintf("column %d: %s", v.Watermark.Column, v.Watermark.Expr)
		}
		got = append(got, v.SourceName+" "+w)
	}
	if want := []string{"src column 1: -(ts, INTERVAL '5' SECOND)", "other none"}; !reflect.DeepEqual(got, want) {
		t.Errorf("source watermarks %q, want %q", got, want)
	}
}
