package types

import (
	"encoding/binary"
	"unsafe"
)

// The composite kinds. A ROW, ARRAY or MAP value is its elements encoded
// into the value's string field (see RowBuilder), so a Value stays 32
// bytes, composite values are immutable and compare and hash by their
// bytes, and reading a field (Value.Field) allocates nothing. The SQL
// layer (ROW<…> columns, field access, constructors) is not built yet.
const (
	KindRow   Kind = 64 + iota // ROW<name type, …>: the fields in order
	KindArray                  // ARRAY<t>: the elements in order
	KindMap                    // MAP<k, v>: key, value, key, value, …
)

// Element encoding, one after the other: the kind byte, then for kinds
// kept in n its 8 bytes (little-endian), for DECIMAL the scale byte and
// either 0 and 8 bytes or 1 and the 16 bytes of the wide form, for kinds
// kept in s (VARCHAR, BYTES, ROW, ARRAY, MAP) a uvarint length and the
// bytes; NULL is the kind byte alone.

func storedInString(k Kind) bool {
	return k == KindVarchar || k == KindBytes || k == KindRow || k == KindArray || k == KindMap
}

func appendElem(dst []byte, v Value) []byte {
	dst = append(dst, byte(v.k))
	switch {
	case v.k == KindNull:
	case v.k == KindDecimal:
		dst = append(dst, v.x)
		if v.s != "" {
			dst = append(dst, 1)
			return append(dst, v.s...)
		}
		dst = append(dst, 0)
		dst = binary.LittleEndian.AppendUint64(dst, v.n)
	case storedInString(v.k):
		dst = binary.AppendUvarint(dst, uint64(len(v.s)))
		dst = append(dst, v.s...)
	default:
		dst = binary.LittleEndian.AppendUint64(dst, v.n)
	}
	return dst
}

// readElem reads the element at the start of s and returns it and the
// rest; s was written by appendElem (a malformed s gives NULL and "").
func readElem(s string) (Value, string) {
	if s == "" {
		return Value{}, ""
	}
	k := Kind(s[0])
	s = s[1:]
	switch {
	case k == KindNull:
		return Value{}, s
	case k == KindDecimal:
		if len(s) >= 10 && s[1] == 0 {
			return Value{k: k, x: s[0], n: binary.LittleEndian.Uint64([]byte(s[2:10]))}, s[10:]
		}
		if len(s) >= 18 {
			return Value{k: k, x: s[0], s: s[2:18]}, s[18:]
		}
	case storedInString(k):
		n, w := binary.Uvarint([]byte(s[:min(len(s), binary.MaxVarintLen64)]))
		if w > 0 && uint64(len(s)-w) >= n {
			return Value{k: k, s: s[w : w+int(n)]}, s[w+int(n):]
		}
	default:
		if len(s) >= 8 {
			return Value{k: k, n: binary.LittleEndian.Uint64([]byte(s[:8]))}, s[8:]
		}
	}
	return Value{}, ""
}

// skipElem returns s without the element at its start (as readElem,
// without making the value).
func skipElem(s string) string {
	k := Kind(s[0])
	switch {
	case k == KindNull:
		return s[1:]
	case k == KindDecimal:
		if len(s) >= 3 && s[2] == 0 && len(s) >= 11 {
			return s[11:]
		}
		if len(s) >= 19 {
			return s[19:]
		}
		return ""
	case storedInString(k):
		if len(s) >= 2 && s[1] < 0x80 { // a one-byte length
			if n := 2 + int(s[1]); len(s) >= n {
				return s[n:]
			}
			return ""
		}
		_, rest := readElem(s)
		return rest
	}
	if len(s) >= 9 {
		return s[9:]
	}
	return ""
}

// RowBuilder builds ROW, ARRAY and MAP values. It writes the elements into
// large chunks and hands out values that point into them, so building a
// value allocates only once per chunk (64 KiB), not per value: a
// connector filling a ROW column per record uses one builder per reader.
// A chunk is never written again once a value points into it. Not safe
// for concurrent use.
type RowBuilder struct {
	chunk []byte
	start int
	n     int // elements added since Begin
}

const rowChunkSize = 64 << 10

// Begin starts a new value, dropping an unfinished one.
func (b *RowBuilder) Begin() {
	b.chunk = b.chunk[:b.start]
	b.n = 0
}

// Add appends the next field (ROW), element (ARRAY), or key then value (MAP).
func (b *RowBuilder) Add(v Value) {
	if cap(b.chunk)-len(b.chunk) < 32+len(v.s) {
		b.grow(32 + len(v.s))
	}
	b.chunk = appendElem(b.chunk, v)
	b.n++
}

// grow moves the unfinished value to a new chunk with room for need more bytes.
func (b *RowBuilder) grow(need int) {
	cur := b.chunk[b.start:]
	size := max(rowChunkSize, 2*(len(cur)+need))
	c := make([]byte, len(cur), size)
	copy(c, cur)
	b.chunk, b.start = c, 0
}

// Finish returns the value built since Begin, of kind k (KindRow,
// KindArray or KindMap), and starts the next one.
func (b *RowBuilder) Finish(k Kind) Value {
	buf := b.chunk[b.start:]
	var s string
	if len(buf) > 0 {
		s = unsafe.String(&buf[0], len(buf))
	}
	b.start = len(b.chunk)
	b.n = 0
	return Value{k: k, s: s}
}

// RowValue returns a ROW of fields (allocating; see RowBuilder for the
// connector path).
func RowValue(fields ...Value) Value {
	var b RowBuilder
	for _, f := range fields {
		b.Add(f)
	}
	return b.Finish(KindRow)
}

// ArrayValue returns an ARRAY of elems (allocating; see RowBuilder).
func ArrayValue(elems ...Value) Value {
	var b RowBuilder
	for _, e := range elems {
		b.Add(e)
	}
	return b.Finish(KindArray)
}

// AsComposite returns the value of kind k (KindRow, KindArray, KindMap)
// whose element bytes are v's string, as a decoder restores them.
func (v Value) AsComposite(k Kind) Value { return Value{k: k, s: v.s} }

// Field returns field i (0-based) of a ROW, element i of an ARRAY, or
// entry i of a MAP's key, value sequence; NULL past the end. It does not
// allocate.
func (v Value) Field(i int) Value {
	s := v.s
	for ; i > 0 && s != ""; i-- {
		s = skipElem(s)
	}
	e, _ := readElem(s)
	return e
}

// Len returns the number of fields of a ROW, elements of an ARRAY, or
// entries of a MAP.
func (v Value) Len() int {
	n := 0
	for s := v.s; s != ""; n++ {
		_, s = readElem(s)
	}
	if v.k == KindMap {
		return n / 2
	}
	return n
}

// appendComposite appends v as Flink casts it to a string: a ROW as
// "(a, 2)", an ARRAY as "[1, 2]", a MAP as "{k=v, k2=v2}"; NULL inside is
// "NULL".
func appendComposite(dst []byte, v Value) []byte {
	open, closing := byte('('), byte(')')
	switch v.k {
	case KindArray:
		open, closing = '[', ']'
	case KindMap:
		open, closing = '{', '}'
	}
	dst = append(dst, open)
	i := 0
	for s := v.s; s != ""; i++ {
		var e Value
		e, s = readElem(s)
		if i > 0 {
			if v.k == KindMap && i%2 == 1 {
				dst = append(dst, '=')
			} else {
				dst = append(dst, ", "...)
			}
		}
		if e.k == KindNull {
			dst = append(dst, "NULL"...)
		} else {
			dst = e.AppendText(dst)
		}
	}
	return append(dst, closing)
}
