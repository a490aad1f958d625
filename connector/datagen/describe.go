package datagen

import (
	"fmt"
	"strings"
	"time"
)

// DescribePosition says what a reader's position (from Position) means:
// the subtask, how many of its rows it emitted and the next row number
// (global; a sequence column's value is its start plus the row number),
// the base of its random timestamps as a time, and the earlier runs at
// other parallelisms whose rows it skips.
func DescribePosition(pos []byte) (string, error) {
	p, err := decodePosition(pos)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	next := int64(p.subtask) + p.cursor*int64(p.parallelism)
	if len(p.layers) == 0 {
		fmt.Fprintf(&b, "subtask %d of %d: %d rows emitted, next row %d", p.subtask, p.parallelism, p.cursor, next)
	} else {
		fmt.Fprintf(&b, "subtask %d of %d: %d of its rows passed, next row %d", p.subtask, p.parallelism, p.cursor, next)
	}
	fmt.Fprintf(&b, "; timestamp base %s (row 0's time)", time.UnixMilli(p.base).UTC().Format("2006-01-02T15:04:05.000Z"))
	for _, l := range p.layers {
		fmt.Fprintf(&b, "\nskips the rows below %d that an earlier run at parallelism %d emitted (rows per subtask: %s)",
			l.Horizon, l.P, joinInts(l.Cursors))
	}
	return b.String(), nil
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
