package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// The changelog traits of the physical plan, derived bottom-up as Flink's
// planner does (FlinkChangelogModeInferenceProgram for the modes,
// FlinkRelMdUniqueKeys and FlinkRelMdUpsertKeys for the keys), each by
// its node's constructor (phys_*.go) from its inputs' traits:
//
//   - a scan has its source's mode (connector.SourceChangelogMode:
//     insert-only unless the source says otherwise, as 'debezium-json'
//     does) and the table's primary key as its unique and upsert key;
//   - a Calc, an exchange, a NOT NULL enforcer and a sink keep their
//     input's mode; a Calc keeps the keys whose columns it passes on
//     unchanged (or widened without loss);
//   - a GroupAggregate emits +I, -U and +U, and -D too when its input has
//     updates or deletes; its group key is its unique and upsert key (a
//     global aggregate, one row at most, has the empty key);
//   - UNION ALL has the union of its inputs' modes and no key;
//   - a hash exchange keeps the upsert keys that contain its hash columns
//     (all changes of such a key go to one subtask, in order), a
//     single-subtask exchange keeps them all, a rebalance none.
//
// A unique key is a set of columns no two rows of the node's result share;
// an upsert key is a set of columns by which the node's changes apply in
// order (a -U/+U pair or a -D is for the row with the same key).

// keySet is a set of keys, each a sorted list of column positions; nil
// when no key is known.
type keySet [][]int

// normKeys sorts each key and the set, and drops duplicate keys.
func normKeys(ks keySet) keySet {
	if len(ks) == 0 {
		return nil
	}
	out := make(keySet, 0, len(ks))
	for _, k := range ks {
		k = slices.Clone(k)
		slices.Sort(k)
		k = slices.Compact(k)
		out = append(out, k)
	}
	slices.SortFunc(out, slices.Compare)
	return slices.CompactFunc(out, slices.Equal)
}

// tableKeys is the primary key of t as a key set.
func tableKeys(t *connector.Table) keySet {
	if len(t.PrimaryKey) == 0 {
		return nil
	}
	return normKeys(keySet{t.PrimaryKey})
}

// projectKeys maps the keys of a Calc's input through its projections: a
// key survives when each of its columns is an output column as it is (or
// cast without loss); it then names the first such output column.
func projectKeys(ks keySet, exprs []expr.Expr) keySet {
	if ks == nil {
		return nil
	}
	out := map[int]int{} // input column -> first output position
	for i, e := range exprs {
		if c, ok := keyColumn(e); ok {
			if _, seen := out[c]; !seen {
				out[c] = i
			}
		}
	}
	var res keySet
next:
	for _, k := range ks {
		m := make([]int, len(k))
		for j, c := range k {
			o, ok := out[c]
			if !ok {
				continue next
			}
			m[j] = o
		}
		res = append(res, m)
	}
	return normKeys(res)
}

// keyColumn returns the input column e passes on without losing
// information: a column, or a cast of one to the same kind or from INT to
// BIGINT or DOUBLE (Flink's "fidelity" casts).
func keyColumn(e expr.Expr) (int, bool) {
	switch x := e.(type) {
	case *expr.Column:
		return x.Index, true
	case *expr.Cast:
		c, ok := x.X.(*expr.Column)
		if !ok {
			return 0, false
		}
		from, to := c.Type().Kind, x.T.Kind
		if from == to || (from == types.KindInt && (to == types.KindBigInt || to == types.KindDouble)) {
			return c.Index, true
		}
	}
	return 0, false
}

// keysContaining keeps the keys that contain every column of cols.
func keysContaining(ks keySet, cols []int) keySet {
	var res keySet
	for _, k := range ks {
		ok := true
		for _, c := range cols {
			if !slices.Contains(k, c) {
				ok = false
				break
			}
		}
		if ok {
			res = append(res, k)
		}
	}
	return normKeys(res)
}

// leadingKey is the key of the first n columns.
func leadingKey(n int) keySet {
	k := make([]int, n)
	for i := range k {
		k[i] = i
	}
	return keySet{k}
}

// keysText renders a key set with column names, as Flink's EXPLAIN does:
// "[[k], [a, b]]".
func keysText(ks keySet, s types.Schema) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		names := make([]string, len(k))
		for j, c := range k {
			names[j] = s.Columns[c].Name
		}
		parts[i] = "[" + strings.Join(names, ", ") + "]"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// aggMode is the mode of a GroupAggregate over input of mode in.
func aggMode(in connector.ChangelogMode) connector.ChangelogMode {
	m := connector.ModeOf(types.Insert, types.UpdateBefore, types.UpdateAfter)
	if !in.IsInsertOnly() {
		m |= connector.ModeOf(types.Delete)
	}
	return m
}

// changeWhat describes the kinds of m: "updates (-U/+U/-D)", "deletes (-D)".
func changeWhat(m connector.ChangelogMode) string {
	if m.Contains(types.UpdateBefore) || m.Contains(types.UpdateAfter) {
		return "updates (" + m.Kinds() + ")"
	}
	if m.Contains(types.Delete) {
		return "deletes (" + m.Kinds() + ")"
	}
	return "rows (" + m.Kinds() + ")"
}

// updateCauses names the operators that make p's result a changelog: the
// nearest aggregates or changelog sources on each path down from p (an
// aggregate over a changelog source is named alone: it would produce
// updates over any input).
func updateCauses(p physNode) []string {
	var out []string
	var walk func(p physNode)
	walk = func(p physNode) {
		if p.traits().mode.IsInsertOnly() {
			return
		}
		if o, ok := p.(updateOrigin); ok {
			if what := o.updateCause(); !slices.Contains(out, what) {
				out = append(out, what)
			}
			return
		}
		for _, k := range p.Children() {
			walk(k)
		}
	}
	walk(p)
	return out
}

// connectorText is "filesystem, format 'debezium-json'": the table's
// connector and its format, if it has one.
func connectorText(t *connector.Table) string {
	s := t.Options["connector"]
	if f, ok := t.Options["format"]; ok {
		s += ", format '" + f + "'"
	}
	return s
}

// checkSinkMode returns an error (without position) when sink, the sink
// of table x, cannot take the changelog of its input in: it says what the
// sink accepts, what the query produces and because of which operators,
// and what to change.
func checkSinkMode(x *Sink, sink connector.Sink, in physNode) error {
	accepts := connector.SinkChangelogMode(sink)
	extra := in.traits().mode &^ accepts
	if extra == 0 {
		return nil
	}
	var what, fix string
	if c, ok := sink.(connector.ChangelogSink); ok {
		what, fix = c.ChangelogHint()
	}
	desc := "sink '" + x.Name + "'"
	if x.Table != nil {
		d := x.Table.Options["connector"]
		if what != "" {
			d += ", " + what
		}
		desc += " (" + d + ")"
	}
	acc := "accepts only inserts"
	if !accepts.IsInsertOnly() {
		acc = "accepts only " + accepts.Kinds()
	}
	msg := fmt.Sprintf("%s %s, but the query produces %s", desc, acc, changeWhat(extra))
	if causes := updateCauses(in); len(causes) > 0 {
		msg += " because of " + strings.Join(causes, " and ")
	}
	if fix != "" {
		return fmt.Errorf("%s; %s, or insert into a table whose connector takes updates ('print', 'blackhole')", msg, fix)
	}
	return fmt.Errorf("%s; insert into a table whose connector takes updates ('print', 'blackhole', 'filesystem' with 'format' = 'debezium-json')", msg)
}
