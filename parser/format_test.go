package parser

import "testing"

func TestFormatNodes(t *testing.T) {
	stmts, err := Parse("CREATE TABLE t (a INT NOT NULL, WATERMARK FOR a AS a - 1) WITH ('k' = 'v');" +
		"SELECT x AS `select`, CASE WHEN a THEN 1 END FROM (SELECT 1) AS s")
	if err != nil {
		t.Fatal(err)
	}
	ct := stmts[0].(*CreateTable)
	sel := stmts[1].(*QueryStmt).Query.(*Select)
	tests := []struct {
		node Node
		want string
	}{
		{ct.Columns[0], "a INT NOT NULL"},
		{ct.Columns[0].Type, "INT"},
		{ct.Watermark, "WATERMARK FOR a AS a - 1"},
		{ct.Options[0], "'k' = 'v'"},
		{sel.Items[0], "x AS `select`"},
		{sel.Items[1].Expr.(*Case).Whens[0], "WHEN a THEN 1"},
		{sel.From, "(SELECT 1) AS s"},
		{&TableRef{Name: "my t", Alias: "from"}, "`my t` AS `from`"},
		{&Binary{Op: "*", L: &Binary{Op: "+", L: &NumberLit{Text: "1"}, R: &NumberLit{Text: "2"}}, R: &NumberLit{Text: "3"}}, "(1 + 2) * 3"},
		{&Binary{Op: "-", L: &NumberLit{Text: "1"}, R: &Binary{Op: "-", L: &NumberLit{Text: "2"}, R: &NumberLit{Text: "3"}}}, "1 - (2 - 3)"},
		{&Unary{Op: "-", X: &Unary{Op: "-", X: &ColumnRef{Name: "a"}}}, "- -a"},
		{&StringLit{Value: "it's"}, "'it''s'"},
		{&ColumnRef{Table: "t", Name: "a`b"}, "t.`a``b`"},
		{&SetOp{Op: "UNION", Left: &Select{Items: []*SelectItem{{Star: true}}},
			Right: &SetOp{Op: "UNION", All: true, Left: &Select{Items: []*SelectItem{{Star: true, Table: "t"}}},
				Right: &Select{Items: []*SelectItem{{Expr: &NullLit{}}}}}}, "SELECT * UNION (SELECT t.* UNION ALL SELECT NULL)"},
	}
	for _, tc := range tests {
		if got := Format(tc.node); got != tc.want {
			t.Errorf("Format(%T) = %q, want %q", tc.node, got, tc.want)
		}
	}
}
