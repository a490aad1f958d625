package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// This file pushes a Calc's work into the source it reads, for sources
// that can do it (connector.FilterableSource, connector.ProjectableSource):
// conditions col = constant, which the source then meets by not producing
// the other rows, and the columns and ROW fields the Calc, the computed
// columns and the watermark read, which the source then produces alone,
// as flat columns. Nexmark's views over the reference's ROW table are the
// case in point: `bid` reads event_type = 2 and the fields bid.auction,
// bid.price, ...; pushed down, the source generates bids only and no ROW
// values, and the computed `dateTime` (a CASE on event_type) folds to the
// field bid.dateTime.

// pushIntoScans rewrites every Calc directly over a Scan whose source
// takes pushdowns. It runs after optimize, so each Calc is the merged
// filter and projection of everything the query does to the scanned rows
// before its first stateful operator or exchange.
func (p *Planner) pushIntoScans(n Node) (Node, error) {
	kids := n.Children()
	if len(kids) > 0 {
		nk := make([]Node, len(kids))
		changed := false
		for i, k := range kids {
			r, err := p.pushIntoScans(k)
			if err != nil {
				return nil, err
			}
			nk[i], changed = r, changed || r != k
		}
		if changed {
			n = n.WithChildren(nk)
		}
	}
	c, ok := n.(*Calc)
	if !ok {
		return n, nil
	}
	s, ok := c.Input.(*Scan)
	if !ok || s.Source != nil {
		return n, nil
	}
	return p.pushIntoScan(c, s)
}

// pushIntoScan pushes what it can of c into the source of s.
func (p *Planner) pushIntoScan(c *Calc, s *Scan) (Node, error) {
	t := s.Table
	if len(t.PrimaryKey) > 0 || len(t.Metadata) > 0 || len(t.PartitionBy) > 0 {
		return c, nil // keys and metadata name physical columns: left as they are
	}
	src, err := p.Connectors.Source(t, p.Env)
	if err != nil {
		return nil, err
	}
	// The source is built once: kept in the Scan even if nothing is
	// pushed, so that lowering does not build it again.
	unchanged := func() (Node, error) {
		ns := *s
		ns.Source = src
		out := *c
		out.Input = &ns
		return &out, nil
	}
	_, canFilter := src.(connector.FilterableSource)
	_, canProject := src.(connector.ProjectableSource)
	if !canFilter && !canProject {
		return unchanged()
	}
	phys := t.Schema
	comp := s.Computed
	if comp == nil {
		comp, _ = identity(&Scan{Table: t})
	}

	// Filters: conjuncts of the form physical column = constant.
	known := make([]expr.Expr, phys.Len()) // constant of each filtered column, else nil
	var kept []expr.Expr
	var pushed []string
	for _, cj := range conjuncts(c.Cond) {
		over, err := substituteFold(cj, comp)
		if err != nil {
			return nil, err
		}
		col, lit, ok := columnEquals(over)
		if ok && known[col.Index] != nil && types.Compare(known[col.Index].(*expr.Literal).V, lit.V) == 0 {
			continue // pushed already
		}
		if ok && known[col.Index] == nil && lit.T.Kind == phys.Columns[col.Index].Type.Kind {
			if fs, isF := src.(connector.FilterableSource); isF {
				if ns, accepted := fs.FilterEquals(col.Index, lit.V); accepted {
					src = ns
					known[col.Index] = expr.NewLiteral(lit.V, phys.Columns[col.Index].Type)
					pushed = append(pushed, over.String())
					continue
				}
			}
		}
		kept = append(kept, cj)
	}
	// The filtered columns are constants in everything that reads them:
	// a CASE on event_type folds to one arm.
	constants := func(e expr.Expr) (expr.Expr, error) {
		return expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
			if col, ok := x.(*expr.Column); ok && known[col.Index] != nil {
				return known[col.Index], nil
			}
			return simplifyCase(expr.Fold(x))
		})
	}
	comp2 := make([]expr.Expr, len(comp))
	for i, e := range comp {
		if comp2[i], err = constants(e); err != nil {
			return nil, err
		}
	}
	cond, err := andAll(kept)
	if err != nil {
		return nil, err
	}
	rt := -1 // the rowtime column of the table
	cols := s.Schema()
	for i, col := range cols.Columns {
		if col.Type.Attr == types.Rowtime {
			rt = i
		}
	}
	// The Calc over the physical columns. A rowtime column that is not
	// a column or field (a CASE over several) stays a computed column of
	// the scan, after the physical ones: compX reads it as column
	// phys.Len().
	compX := comp2
	var rtExpr expr.Expr
	if rt >= 0 {
		if _, ok := pathOf(comp2[rt]); !ok {
			rtExpr = comp2[rt]
			compX = slices.Clone(comp2)
			compX[rt] = expr.NewColumn(phys.Len(), cols.Columns[rt].Type, cols.Columns[rt].Name)
		}
	}
	var condP expr.Expr
	if cond != nil {
		if condP, err = substituteFold(cond, compX); err != nil {
			return nil, err
		}
	}
	exprsP := make([]expr.Expr, len(c.Exprs))
	for i, e := range c.Exprs {
		if exprsP[i], err = substituteFold(e, compX); err != nil {
			return nil, err
		}
	}
	var wm expr.Expr
	if s.Watermark != nil {
		if wm, err = constants(s.Watermark.Expr); err != nil {
			return nil, err
		}
	}

	// Projection: the columns and ROW fields read.
	reads := append([]expr.Expr{condP, wm, rtExpr}, exprsP...)
	paths := readPaths(reads, phys.Len())
	if len(paths) == 0 {
		paths = [][]int{{0}} // a row needs some column to exist
	}
	if ps, ok := src.(connector.ProjectableSource); ok {
		ns, ok := ps.Project(paths)
		if !ok {
			paths = topLevel(paths)
			ns, ok = ps.Project(paths)
		}
		if ok {
			src = ns
		} else {
			paths = nil
		}
	} else {
		paths = nil
	}
	if paths == nil {
		if len(pushed) == 0 {
			return unchanged()
		}
		for i := range phys.Columns {
			paths = append(paths, []int{i})
		}
	}

	// The new physical schema: one column per path; the scan's columns:
	// those, then the computed rowtime column if any. The rowtime
	// attribute moves onto the column that holds the rowtime.
	var newPhys types.Schema
	for _, pth := range paths {
		newPhys.Columns = append(newPhys.Columns, pathColumn(phys, pth))
	}
	nt := *t
	nt.Schema = newPhys
	ns := &Scan{Table: &nt, Source: src, WatermarkText: s.WatermarkText, Rowtime: s.Rowtime,
		Pushed: pushedText(pushed, newPhys, paths, phys)}
	scanCols := slices.Clone(newPhys.Columns)
	rtP := -1 // the rowtime's physical column, if it is one
	switch {
	case rtExpr != nil:
		scanCols = append(scanCols, cols.Columns[rt])
	case rt >= 0:
		p, _ := pathOf(comp2[rt])
		rtP = slices.IndexFunc(paths, func(q []int) bool { return slices.Equal(p, q) })
		if rtP < 0 {
			return nil, fmt.Errorf("pushdown into %s: the rowtime column is not read", t.Name)
		}
		scanCols[rtP].Type.Attr = types.Rowtime
		ns.Rowtime = scanCols[rtP].Name
	}
	ns.Columns = types.Schema{Columns: scanCols}
	remap := func(e expr.Expr, to []types.Column) (expr.Expr, error) {
		if e == nil {
			return nil, nil
		}
		return remapPaths(e, paths, phys.Len(), to)
	}
	if rtExpr != nil {
		ns.Computed, _ = identity(&Scan{Table: &nt})
		x, err := remap(rtExpr, newPhys.Columns)
		if err != nil {
			return nil, err
		}
		ns.Computed = append(ns.Computed, x)
	}
	if s.Watermark != nil {
		wmP, err := remap(wm, newPhys.Columns)
		if err != nil {
			return nil, err
		}
		ns.Watermark = &exec.WatermarkSpec{Column: rtP, Expr: wmP, Align: s.Watermark.Align}
	}
	out := &Calc{Input: ns, Names: c.Names}
	if out.Cond, err = remap(condP, scanCols); err != nil {
		return nil, err
	}
	for _, e := range exprsP {
		x, err := remap(e, scanCols)
		if err != nil {
			return nil, err
		}
		out.Exprs = append(out.Exprs, x)
	}
	r, _, err := dropIdentityCalc(out)
	return r, err
}

// columnEquals matches col = literal (either way round), a non-NULL literal.
func columnEquals(e expr.Expr) (*expr.Column, *expr.Literal, bool) {
	cmp, ok := e.(*expr.Compare)
	if !ok || cmp.Op != "=" {
		return nil, nil, false
	}
	col, ok1 := cmp.L.(*expr.Column)
	lit, ok2 := cmp.R.(*expr.Literal)
	if !ok1 || !ok2 {
		col, ok1 = cmp.R.(*expr.Column)
		lit, ok2 = cmp.L.(*expr.Literal)
	}
	if !ok1 || !ok2 || lit.V.IsNull() {
		return nil, nil, false
	}
	return col, lit, true
}

// simplifyCase drops the arms of a CASE whose condition is a FALSE or
// NULL literal and ends it at an arm whose condition is TRUE: a CASE with
// no arm left is its ELSE (or that first TRUE arm's result).
func simplifyCase(e expr.Expr) (expr.Expr, error) {
	c, ok := e.(*expr.Case)
	if !ok {
		return e, nil
	}
	var conds, results []expr.Expr
	els, changed := c.Else, false
	for i, cond := range c.Conds {
		lit, isLit := cond.(*expr.Literal)
		if !isLit {
			conds, results = append(conds, cond), append(results, c.Results[i])
			continue
		}
		changed = true
		if !lit.V.IsNull() && lit.V.Bool() {
			els = c.Results[i]
			break
		}
	}
	if !changed {
		return e, nil
	}
	if len(conds) > 0 {
		return expr.NewCase(conds, results, els)
	}
	t := c.Type()
	if els == nil {
		return expr.NewLiteral(types.NullValue(), t), nil
	}
	if et := els.Type(); et.Kind != t.Kind || et.P != t.P || et.S != t.S {
		return e, nil
	}
	return els, nil
}

// pathOf returns the path of e if it is a column or a field of one
// (col.f.g: [col, f, g]).
func pathOf(e expr.Expr) ([]int, bool) {
	switch x := e.(type) {
	case *expr.Column:
		return []int{x.Index}, true
	case *expr.FieldGet:
		p, ok := pathOf(x.X)
		if !ok {
			return nil, false
		}
		return append(p, x.Index), true
	}
	return nil, false
}

// readPaths lists the paths es read, in order: whole columns, and fields
// of ROW columns read only through their fields. A path under another
// that is read whole is left out.
func readPaths(es []expr.Expr, width int) [][]int {
	var all [][]int
	var walk func(e expr.Expr)
	walk = func(e expr.Expr) {
		if p, ok := pathOf(e); ok {
			if p[0] < width { // not the computed rowtime
				all = append(all, p)
			}
			return
		}
		if n, ok := e.(expr.Node); ok {
			for _, k := range n.Children() {
				walk(k)
			}
		}
	}
	for _, e := range es {
		if e != nil {
			walk(e)
		}
	}
	slices.SortFunc(all, slices.Compare)
	var out [][]int
	for _, p := range all {
		if len(out) > 0 && isPrefix(out[len(out)-1], p) {
			continue // the same path, or under one read already
		}
		out = append(out, p)
	}
	return out
}

func isPrefix(pre, p []int) bool { return len(pre) <= len(p) && slices.Equal(pre, p[:len(pre)]) }

// topLevel returns the columns of paths, once each.
func topLevel(paths [][]int) [][]int {
	var out [][]int
	for _, p := range paths {
		if len(out) == 0 || out[len(out)-1][0] != p[0] {
			out = append(out, []int{p[0]})
		}
	}
	return out
}

// pathColumn is the column of path p in schema s: named col.field, of
// the field's type (nullable if a ROW on the way is).
func pathColumn(s types.Schema, p []int) types.Column {
	c := s.Columns[p[0]]
	name, t := c.Name, c.Type
	for _, f := range p[1:] {
		fd := t.Fields()[f]
		nullable := !t.NotNull
		name += "." + fd.Name
		t = fd.Type
		if nullable {
			t = t.Nullable()
		}
	}
	return types.Column{Name: name, Type: t}
}

// remapPaths rewrites e, over the old physical columns (width of them,
// then the computed rowtime), to read the new columns of paths (their
// types in cols, then the computed rowtime) instead.
func remapPaths(e expr.Expr, paths [][]int, width int, cols []types.Column) (expr.Expr, error) {
	if p, ok := pathOf(e); ok {
		if p[0] >= width && len(p) == 1 {
			i := len(paths) + p[0] - width
			return expr.NewColumn(i, cols[i].Type, cols[i].Name), nil
		}
		for i, q := range paths {
			if slices.Equal(p, q) {
				return expr.NewColumn(i, cols[i].Type, cols[i].Name), nil
			}
		}
		// Under a path read whole: rewrite the column, keep the accesses.
	}
	if col, ok := e.(*expr.Column); ok {
		return nil, fmt.Errorf("column %s is not among the pushed-down fields", col)
	}
	n, ok := e.(expr.Node)
	if !ok || len(n.Children()) == 0 {
		return e, nil
	}
	kids := n.Children()
	nk := make([]expr.Expr, len(kids))
	for i, k := range kids {
		r, err := remapPaths(k, paths, width, cols)
		if err != nil {
			return nil, err
		}
		nk[i] = r
	}
	return n.WithChildren(nk)
}

// pushedText renders what was pushed into a scan for EXPLAIN:
// filter=[...], project=[...] (the latter when fewer values are read).
func pushedText(filters []string, newPhys types.Schema, paths [][]int, old types.Schema) string {
	var parts []string
	if len(filters) > 0 {
		parts = append(parts, "filter=["+strings.Join(filters, ", ")+"]")
	}
	whole := len(paths) == old.Len()
	for i, p := range paths {
		whole = whole && len(p) == 1 && p[0] == i
	}
	if !whole {
		parts = append(parts, "project=["+fields(newPhys)+"]")
	}
	return strings.Join(parts, ", ")
}
