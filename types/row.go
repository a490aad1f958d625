package types

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
)

// RowKind is a row's changelog kind, as in Flink.
type RowKind uint8

// The changelog kinds.
const (
	Insert       RowKind = iota // +I: a new row
	UpdateBefore                // -U: retracts the old value of an update
	UpdateAfter                 // +U: the new value of an update
	Delete                      // -D: retracts a row
)

var rowKindNames = [...]string{"+I", "-U", "+U", "-D"}

// String returns "+I", "-U", "+U" or "-D".
func (k RowKind) String() string {
	if int(k) < len(rowKindNames) {
		return rowKindNames[k]
	}
	return fmt.Sprintf("RowKind(%d)", k)
}

// IsRetraction reports whether the row takes something away (-U or -D).
func (k RowKind) IsRetraction() bool { return k == UpdateBefore || k == Delete }

// Column is a named, typed column.
type Column struct {
	Name string
	Type Type
}

// Schema is an ordered list of columns.
type Schema struct {
	Columns []Column
}

// Len returns the number of columns.
func (s Schema) Len() int { return len(s.Columns) }

// Index returns the position of the column named name (case-insensitive), or -1.
func (s Schema) Index(name string) int {
	for i, c := range s.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// Names returns the column names.
func (s Schema) Names() []string {
	out := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = c.Name
	}
	return out
}

// String renders the schema as "(a BIGINT, b VARCHAR)".
func (s Schema) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, c := range s.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name)
		b.WriteByte(' ')
		b.WriteString(c.Type.String())
	}
	b.WriteByte(')')
	return b.String()
}

// Batch is a group of rows of one width, stored row-major in one slice of
// values so that a batch of n rows costs one allocation, not n. Operators
// exchange batches, never single rows.
type Batch struct {
	Width int       // values per row
	Kinds []RowKind // one per row
	Vals  []Value   // len(Kinds)*Width values
}

// NewBatch returns an empty batch for rows of width values with room for capacity rows.
func NewBatch(width, capacity int) *Batch {
	return &Batch{Width: width, Kinds: make([]RowKind, 0, capacity), Vals: make([]Value, 0, capacity*width)}
}

// Len returns the number of rows.
func (b *Batch) Len() int { return len(b.Kinds) }

// Row returns row i as a slice into the batch (not a copy).
func (b *Batch) Row(i int) []Value { return b.Vals[i*b.Width : (i+1)*b.Width : (i+1)*b.Width] }

// Append adds a row; row must have Width values.
func (b *Batch) Append(kind RowKind, row []Value) {
	b.Kinds = append(b.Kinds, kind)
	b.Vals = append(b.Vals, row...)
}

// AppendEmpty adds a row of NULLs and returns it to be filled in place.
func (b *Batch) AppendEmpty(kind RowKind) []Value {
	b.Kinds = append(b.Kinds, kind)
	n := len(b.Vals)
	if cap(b.Vals)-n >= b.Width {
		b.Vals = b.Vals[:n+b.Width]
		row := b.Vals[n:]
		clear(row)
		return row
	}
	var zero [8]Value
	for w := b.Width; w > 0; {
		c := min(w, len(zero))
		b.Vals = append(b.Vals, zero[:c]...)
		w -= c
	}
	return b.Vals[n:]
}

// Reset empties the batch, keeping its memory. Strings held are released.
func (b *Batch) Reset() {
	clear(b.Vals)
	b.Kinds = b.Kinds[:0]
	b.Vals = b.Vals[:0]
}

// FormatRow renders a row in Flink's print format, e.g. "+I[1, abc]".
func FormatRow(kind RowKind, row []Value) string {
	return string(AppendRowText(nil, kind, row))
}

// AppendRowText appends FormatRow's output to dst.
func AppendRowText(dst []byte, kind RowKind, row []Value) []byte {
	return AppendRowTextIn(dst, kind, row, time.UTC)
}

// AppendRowTextIn is AppendRowText with TIMESTAMP_LTZ values shown in loc.
func AppendRowTextIn(dst []byte, kind RowKind, row []Value, loc *time.Location) []byte {
	dst = append(dst, kind.String()...)
	dst = append(dst, '[')
	for i, v := range row {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = v.AppendTextIn(dst, loc)
	}
	return append(dst, ']')
}

// AppendKey appends an order-independent, self-delimiting binary encoding of
// v, used for grouping keys and state keys. Equal values encode equally.
func AppendKey(dst []byte, v Value) []byte {
	dst = append(dst, byte(v.k))
	switch v.k {
	case KindNull:
	case KindVarchar, KindBytes, KindRow, KindArray, KindMap:
		dst = binary.AppendUvarint(dst, uint64(len(v.s)))
		dst = append(dst, v.s...)
	case KindDecimal:
		// The scale, then the unscaled integer: 0 and 8 bytes, or 1 and
		// the 16 bytes of the wide form.
		dst = append(dst, v.x)
		if v.s != "" {
			dst = append(dst, 1)
			return append(dst, v.s...)
		}
		dst = append(dst, 0)
		dst = binary.LittleEndian.AppendUint64(dst, v.n)
	case KindDouble, KindFloat:
		f := math.Float64frombits(v.n)
		if f == 0 {
			f = 0 // -0 groups with 0
		}
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
	default:
		dst = binary.LittleEndian.AppendUint64(dst, v.n)
	}
	return dst
}

// KeySize returns the number of bytes AppendKey appends for v.
func KeySize(v Value) int {
	switch v.k {
	case KindNull:
		return 1
	case KindVarchar, KindBytes, KindRow, KindArray, KindMap:
		return 1 + (bits.Len64(uint64(len(v.s))|1)+6)/7 + len(v.s)
	case KindDecimal:
		if v.s != "" {
			return 3 + len(v.s)
		}
		return 11
	}
	return 9
}

// ErrBadKey reports a key encoding that DecodeKey cannot read.
var ErrBadKey = errors.New("malformed key encoding")

// DecodeKey reads one value written by AppendKey and returns it with the rest of src.
func DecodeKey(src []byte) (Value, []byte, error) {
	if len(src) == 0 {
		return Value{}, nil, ErrBadKey
	}
	k := Kind(src[0])
	src = src[1:]
	switch k {
	case KindNull:
		return Value{}, src, nil
	case KindVarchar:
		n, w := binary.Uvarint(src)
		if w <= 0 || uint64(len(src)-w) < n {
			return Value{}, nil, ErrBadKey
		}
		return Value{k: k, s: string(src[w : w+int(n)])}, src[w+int(n):], nil
	case KindBytes, KindRow, KindArray, KindMap:
		n, w := binary.Uvarint(src)
		if w <= 0 || uint64(len(src)-w) < n {
			return Value{}, nil, ErrBadKey
		}
		return Value{k: k, s: string(src[w : w+int(n)])}, src[w+int(n):], nil
	case KindDecimal:
		if len(src) < 2 || src[0] > MaxDecimalPrecision {
			return Value{}, nil, ErrBadKey
		}
		x, wide := src[0], src[1]
		src = src[2:]
		switch {
		case wide == 0 && len(src) >= 8:
			return Value{k: k, x: x, n: binary.LittleEndian.Uint64(src)}, src[8:], nil
		case wide == 1 && len(src) >= 16:
			return Value{k: k, x: x, s: string(src[:16])}, src[16:], nil
		}
		return Value{}, nil, ErrBadKey
	case KindBoolean, KindInt, KindBigInt, KindDouble, KindTimestamp, KindInterval, KindTimestampLTZ,
		KindTinyInt, KindSmallInt, KindFloat, KindDate, KindTime:
		if len(src) < 8 {
			return Value{}, nil, ErrBadKey
		}
		return Value{k: k, n: binary.LittleEndian.Uint64(src)}, src[8:], nil
	}
	return Value{}, nil, ErrBadKey
}

// HashKey hashes an encoded key (see AppendKey). The hash is stable across
// processes and versions: key groups, and so restored state, depend on it.
func HashKey(key []byte) uint64 { return xxhash.Sum64(key) }

// DefaultMaxParallelism is the default number of key groups.
const DefaultMaxParallelism = 128

// KeyGroup returns the key group of a key hash: hash mod maxParallelism.
func KeyGroup(hash uint64, maxParallelism int) int { return int(hash % uint64(maxParallelism)) }

// SubtaskForKeyGroup returns the subtask that owns key group kg:
// kg * parallelism / maxParallelism.
func SubtaskForKeyGroup(kg, parallelism, maxParallelism int) int {
	return kg * parallelism / maxParallelism
}

// KeyGroupRange returns the key groups [first, last] that subtask owns at
// parallelism (those SubtaskForKeyGroup maps to it), or -1, -1 when it owns
// none (more subtasks than key groups).
func KeyGroupRange(subtask, parallelism, maxParallelism int) (first, last int) {
	// kg*p/max == s  <=>  s*max <= kg*p < (s+1)*max
	first = (subtask*maxParallelism + parallelism - 1) / parallelism
	last = ((subtask+1)*maxParallelism+parallelism-1)/parallelism - 1
	if first > last || first >= maxParallelism {
		return -1, -1
	}
	return first, last
}
