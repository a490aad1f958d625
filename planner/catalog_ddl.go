package planner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/weir-sql/weir/parser"
)

// This file holds the catalog statements beyond CREATE and DROP: CREATE
// TABLE … LIKE, ALTER TABLE … SET/RESET, SHOW VIEWS, SHOW CREATE VIEW.

// likeStrategy is how a feature of the LIKE source is merged.
type likeStrategy string

const (
	likeIncluding   likeStrategy = "INCLUDING"
	likeExcluding   likeStrategy = "EXCLUDING"
	likeOverwriting likeStrategy = "OVERWRITING"
)

// likeStrategies returns the strategy of each feature (CONSTRAINTS,
// GENERATED, OPTIONS, WATERMARKS, METADATA, PARTITIONS) for l's options,
// as Flink reads them: INCLUDING ALL OVERWRITING OPTIONS unless given,
// ALL setting every feature and later options overriding earlier ones.
func likeStrategies(l *parser.LikeClause) map[string]likeStrategy {
	features := []string{"CONSTRAINTS", "GENERATED", "OPTIONS", "WATERMARKS", "METADATA", "PARTITIONS"}
	s := map[string]likeStrategy{}
	for _, f := range features {
		s[f] = likeIncluding
	}
	s["OPTIONS"] = likeOverwriting
	for _, o := range l.Options {
		if o.What == "ALL" {
			for _, f := range features {
				s[f] = likeStrategy(o.Mode)
			}
			continue
		}
		s[o.What] = likeStrategy(o.Mode)
	}
	return s
}

// mergeLike returns the CREATE TABLE that ct (with a LIKE clause) stands
// for, as Flink merges it: the source's physical columns, then ct's; the
// source's computed columns, watermark, primary key and options as the
// LIKE options say (INCLUDING: kept, an entry of ct with the same name is
// an error; OVERWRITING: kept unless ct has one of the same name;
// EXCLUDING: dropped).
func (c *Catalog) mergeLike(ct *parser.CreateTable) (*parser.CreateTable, error) {
	l := ct.Like
	src, ok := c.tables[key(l.Source)]
	if !ok {
		if _, isView := c.views[key(l.Source)]; isView {
			return nil, parser.Errorf(l.Pos, "LIKE '%s': it is a view; LIKE takes a table", l.Source)
		}
		return nil, parser.Errorf(l.Pos, "LIKE: unknown table '%s' (%s)", l.Source, c.listing())
	}
	st := likeStrategies(l)
	sd := src.def
	out := *ct
	out.Like = nil
	out.Columns = nil
	own := map[string]*parser.ColumnDef{}
	for _, col := range ct.Columns {
		own[key(col.Name)] = col
	}
	used := map[string]bool{}
	for _, col := range sd.Columns {
		mine := own[key(col.Name)]
		switch {
		case col.Expr == nil && mine != nil:
			return nil, parser.Errorf(mine.Pos, "column '%s' is a column of the LIKE table '%s' already", col.Name, sd.Name)
		case col.Expr == nil:
			out.Columns = append(out.Columns, col)
		case st["GENERATED"] == likeExcluding:
		case mine != nil && st["GENERATED"] == likeIncluding:
			return nil, parser.Errorf(mine.Pos, "computed column '%s' is in the LIKE table '%s' too: write OVERWRITING GENERATED to replace it, or EXCLUDING GENERATED", col.Name, sd.Name)
		case mine != nil:
			out.Columns = append(out.Columns, mine)
			used[key(col.Name)] = true
		default:
			out.Columns = append(out.Columns, col)
		}
	}
	for _, col := range ct.Columns {
		if !used[key(col.Name)] {
			out.Columns = append(out.Columns, col)
		}
	}
	switch {
	case sd.Watermark == nil || st["WATERMARKS"] == likeExcluding:
	case ct.Watermark != nil && st["WATERMARKS"] == likeIncluding:
		return nil, parser.Errorf(ct.Watermark.Pos, "the LIKE table '%s' has a WATERMARK too: write OVERWRITING WATERMARKS to replace it, or EXCLUDING WATERMARKS", sd.Name)
	case ct.Watermark == nil:
		out.Watermark = sd.Watermark
	}
	switch {
	case sd.PrimaryKey == nil || st["CONSTRAINTS"] == likeExcluding:
	case ct.PrimaryKey != nil:
		return nil, parser.Errorf(ct.Pos, "the LIKE table '%s' has a PRIMARY KEY too: write EXCLUDING CONSTRAINTS to declare another", sd.Name)
	default:
		out.PrimaryKey = sd.PrimaryKey
	}
	if st["OPTIONS"] != likeExcluding {
		mine := map[string]bool{}
		for _, o := range ct.Options {
			mine[o.Key] = true
		}
		var opts []*parser.Option
		for _, o := range sd.Options {
			if !mine[o.Key] {
				opts = append(opts, o)
				continue
			}
			if st["OPTIONS"] == likeIncluding {
				for _, m := range ct.Options {
					if m.Key == o.Key {
						return nil, parser.Errorf(m.Pos, "option '%s' is an option of the LIKE table '%s' too: write OVERWRITING OPTIONS to replace it", o.Key, sd.Name)
					}
				}
			}
		}
		out.Options = append(opts, ct.Options...)
	}
	return &out, nil
}

// AlterTable applies ALTER TABLE name SET ('k' = 'v', …) (an option added
// or changed) or RESET ('k', …) (removed) to a table. Jobs already
// running keep the options they started with.
func (c *Catalog) AlterTable(a *parser.AlterTable) error {
	e, ok := c.tables[key(a.Name)]
	if !ok {
		if _, isView := c.views[key(a.Name)]; isView {
			return parser.Errorf(a.Pos, "'%s' is a view: ALTER TABLE changes tables", a.Name)
		}
		return parser.Errorf(a.Pos, "unknown table '%s' (%s)", a.Name, c.listing())
	}
	def := *e.def
	def.Options = append([]*parser.Option(nil), e.def.Options...)
	seen := map[string]bool{}
	for _, o := range a.Set {
		if seen[o.Key] {
			return parser.Errorf(o.Pos, "option '%s' is set twice", o.Key)
		}
		seen[o.Key] = true
		replaced := false
		for i, old := range def.Options {
			if old.Key == o.Key {
				def.Options[i], replaced = o, true
			}
		}
		if !replaced {
			def.Options = append(def.Options, o)
		}
	}
	for _, k := range a.Reset {
		if k == "connector" {
			return parser.Errorf(a.Pos, "ALTER TABLE %s RESET: the 'connector' option cannot be reset (SET it to another connector)", a.Name)
		}
		def.Options = slicesDeleteOption(def.Options, k)
	}
	opts := make(map[string]string, len(def.Options))
	for _, o := range def.Options {
		opts[o.Key] = o.Value
	}
	t := *e.table
	t.Options = opts
	c.tables[key(a.Name)] = &tableEntry{table: &t, def: &def, watermark: e.watermark}
	return nil
}

func slicesDeleteOption(opts []*parser.Option, k string) []*parser.Option {
	out := opts[:0]
	for _, o := range opts {
		if o.Key != k {
			out = append(out, o)
		}
	}
	return out
}

// ViewNames returns the names of the views, sorted (SHOW VIEWS).
func (c *Catalog) ViewNames() []string {
	var out []string
	for _, v := range c.views {
		out = append(out, v.name)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// ShowCreateView returns the statement that created view name.
func (c *Catalog) ShowCreateView(name string) (string, error) {
	if v, ok := c.views[key(name)]; ok {
		return v.def.SQL(), nil
	}
	if _, ok := c.tables[key(name)]; ok {
		return "", fmt.Errorf("'%s' is a table, not a view: SHOW CREATE TABLE shows it", name)
	}
	var views string
	if n := c.ViewNames(); len(n) > 0 {
		views = "views: " + strings.Join(n, ", ")
	} else {
		views = "no views defined"
	}
	return "", fmt.Errorf("unknown view '%s' (%s)", name, views)
}
