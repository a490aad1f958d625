package repl

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weir-sql/weir/types"
)

// DefaultWidth is the width tables are fitted to without a terminal.
const DefaultWidth = 80

// minCell is the narrowest a column is squeezed to when fitting a width.
const minCell = 3

// tableFormat draws a table with ASCII box borders, as Flink's tableau
// result mode does:
//
//	+----+-------+
//	|  n | name  |
//	+----+-------+
//	|  1 | ab…   |
//	+----+-------+
//
// Numbers are right-aligned, everything else left-aligned; a cell wider
// than its column is cut and ends with '…'.
type tableFormat struct {
	names  []string
	right  []bool
	widths []int
}

// newTableFormat lays out columns whose content is at most natural[i] wide
// (names included) in a table at most maxWidth wide, squeezing the widest
// columns first.
func newTableFormat(names []string, right []bool, natural []int, maxWidth int) *tableFormat {
	w := make([]int, len(natural))
	copy(w, natural)
	for i, n := range names {
		w[i] = max(w[i], utf8.RuneCountInString(n), 1)
	}
	total := 1
	for _, x := range w {
		total += x + 3
	}
	for total > maxWidth {
		widest := 0
		for i := range w {
			if w[i] > w[widest] {
				widest = i
			}
		}
		if w[widest] <= minCell {
			break // cannot fit; let the terminal wrap
		}
		w[widest]--
		total--
	}
	return &tableFormat{names: names, right: right, widths: w}
}

// width returns the table's width in characters.
func (f *tableFormat) width() int {
	total := 1
	for _, x := range f.widths {
		total += x + 3
	}
	return total
}

func (f *tableFormat) appendBorder(dst []byte) []byte {
	dst = append(dst, '+')
	for _, w := range f.widths {
		for range w + 2 {
			dst = append(dst, '-')
		}
		dst = append(dst, '+')
	}
	return append(dst, '\n')
}

func (f *tableFormat) appendHeader(dst []byte) []byte {
	dst = f.appendBorder(dst)
	dst = f.appendCells(dst, f.names)
	return f.appendBorder(dst)
}

// appendCells appends one row of cells (one per column).
func (f *tableFormat) appendCells(dst []byte, cells []string) []byte {
	dst = append(dst, '|')
	for i, c := range cells {
		dst = append(dst, ' ')
		dst = appendCell(dst, c, f.widths[i], f.right[i])
		dst = append(dst, ' ', '|')
	}
	return append(dst, '\n')
}

// appendCell appends s padded or cut to exactly w characters.
func appendCell(dst []byte, s string, w int, right bool) []byte {
	n := utf8.RuneCountInString(s)
	if n > w {
		cut := 0
		for range w - 1 {
			_, size := utf8.DecodeRuneInString(s[cut:])
			cut += size
		}
		dst = append(dst, s[:cut]...)
		return append(dst, "…"...)
	}
	pad := w - n
	if right {
		dst = appendSpaces(dst, pad)
		return append(dst, s...)
	}
	dst = append(dst, s...)
	return appendSpaces(dst, pad)
}

func appendSpaces(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, ' ')
	}
	return dst
}

// localTimes rewrites, in place, each TIMESTAMP_LTZ value of b as the
// local time it shows in the session's time zone loc, so that the result
// views print it as Flink's client does. It returns b.
func localTimes(b *types.Batch, loc *time.Location) *types.Batch {
	if b == nil {
		return b
	}
	for i, v := range b.Vals {
		if v.Kind() == types.KindTimestampLTZ {
			w := time.UnixMilli(v.Int()).In(loc)
			_, off := w.Zone()
			b.Vals[i] = types.TimestampValue(v.Int() + int64(off)*1000)
		}
	}
	return b
}

// cellText renders one value for a table cell: as the print sink does
// (NULL is "<NULL>"), with control characters replaced so that a cell
// stays on one line.
func cellText(v types.Value) string {
	s := v.String()
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.NewReplacer("\n", "\\n", "\r", "\\r", "\t", "\\t").Replace(s)
	}
	return s
}

// rightAligned reports which columns of s hold numbers.
func rightAligned(s types.Schema) []bool {
	r := make([]bool, s.Len())
	for i, c := range s.Columns {
		r[i] = c.Type.Kind.IsNumeric()
	}
	return r
}

// renderTable renders the rows of m under the column names of s as a
// table at most width wide. If maxRows >= 0 and there are more rows, only
// the first maxRows are drawn, followed by a line saying how many are
// left out.
func renderTable(s types.Schema, m *Materializer, width, maxRows int) string {
	names := s.Names()
	natural := make([]int, len(names))
	var cells [][]string
	m.Rows(func(row []types.Value) bool {
		if maxRows >= 0 && len(cells) == maxRows {
			return false
		}
		r := make([]string, len(row))
		for i, v := range row {
			r[i] = cellText(v)
			natural[i] = max(natural[i], utf8.RuneCountInString(r[i]))
		}
		cells = append(cells, r)
		return true
	})
	f := newTableFormat(names, rightAligned(s), natural, width)
	out := f.appendHeader(nil)
	for _, r := range cells {
		out = f.appendCells(out, r)
	}
	out = f.appendBorder(out)
	if left := m.Len() - len(cells); left > 0 {
		out = append(out, "… "...)
		out = append(out, itoa(left)...)
		out = append(out, " more "+plural(left, "row")+" (the view shows as many rows as fit the terminal)\n"...)
	}
	return string(out)
}

// changelogFormat returns the layout for streaming rows with an "op" column
// in front: column widths come from the types, as the rows are not known
// in advance.
func changelogFormat(s types.Schema, width int) *tableFormat {
	names := append([]string{"op"}, s.Names()...)
	right := append([]bool{false}, rightAligned(s)...)
	natural := make([]int, len(names))
	natural[0] = 2
	for i, c := range s.Columns {
		natural[i+1] = typeWidth(c.Type.Kind)
	}
	return newTableFormat(names, right, natural, width)
}

// typeWidth is the width of a streamed column of kind k.
func typeWidth(k types.Kind) int {
	switch k {
	case types.KindBoolean:
		return 6
	case types.KindInt:
		return 11
	case types.KindBigInt:
		return 20
	case types.KindDouble:
		return 22
	case types.KindTimestamp, types.KindTimestampLTZ:
		return 23
	case types.KindDate:
		return 10
	case types.KindTime:
		return 8
	case types.KindTinyInt:
		return 4
	case types.KindSmallInt:
		return 6
	case types.KindDecimal:
		return 40
	}
	return 20
}

// appendChange appends one changelog row in format f.
func appendChange(dst []byte, f *tableFormat, kind types.RowKind, row []types.Value, scratch []string) ([]byte, []string) {
	scratch = append(scratch[:0], kind.String())
	for _, v := range row {
		scratch = append(scratch, cellText(v))
	}
	return f.appendCells(dst, scratch), scratch
}
