package connector

import "github.com/weir-sql/weir/types"

// ProjectableSource is a Source that can read fewer columns than its table
// has, and fewer fields of its ROW columns (projection pushdown, as Flink's
// SupportsProjectionPushDown with nested projection). The planner offers
// the fields a query reads; a source that reads only those saves the work
// of producing the others.
type ProjectableSource interface {
	Source
	// Project returns a source of the same table whose rows hold only the
	// values at paths, in that order, each as a column of its own. A path
	// is a column index of the table's schema, then for a ROW column the
	// index of one of its fields, and so on: [2] is column 2, [2, 0] the
	// first field of the ROW column 2. ok is false if the source cannot
	// read some path that way; the planner then reads whole columns.
	Project(paths [][]int) (src Source, ok bool)
}

// FilterableSource is a Source that can skip the rows in which a column
// does not equal a constant (filter pushdown of col = value, as Nexmark's
// views filter event_type = n).
type FilterableSource interface {
	Source
	// FilterEquals returns a source of the same table that reads only the
	// rows whose column col (an index of the table's schema) equals v, a
	// non-NULL value of the column's type; it must read exactly those. ok
	// is false if it cannot, and the planner keeps the condition.
	FilterEquals(col int, v types.Value) (src Source, ok bool)
}
