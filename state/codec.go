package state

import (
	"encoding/binary"
	"fmt"

	"github.com/weir-sql/weir/types"
)

// Codec turns values of type T into bytes and back. Append must not retain
// dst beyond returning it; Decode must not retain src (its bytes are valid
// only during the call).
//
// A codec used for the keys of a MapState or SortedMapState must be
// order-preserving (bytewise order of encodings is the order of values);
// Desc also needs it self-delimiting. The codecs of this package that say so
// are both.
type Codec[T any] interface {
	Append(dst []byte, v T) []byte
	Decode(src []byte) (T, error)
}

// Int64 is an order-preserving, self-delimiting codec of int64 (8 bytes,
// big-endian, sign bit flipped).
type Int64 struct{}

// Append implements Codec.
func (Int64) Append(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^signBit)
}

// Decode implements Codec.
func (Int64) Decode(src []byte) (int64, error) {
	if len(src) != 8 {
		return 0, fmt.Errorf("state: int64 of %d bytes", len(src))
	}
	return int64(binary.BigEndian.Uint64(src) ^ signBit), nil
}

// String is an order-preserving, self-delimiting codec of strings (the
// VARCHAR encoding of AppendString).
type String struct{}

// Append implements Codec.
func (String) Append(dst []byte, v string) []byte { return AppendString(dst, v) }

// Decode implements Codec.
func (String) Decode(src []byte) (string, error) {
	v, rest, err := DecodeValue(src)
	if err != nil || v.Kind() != types.KindVarchar || len(rest) != 0 {
		return "", fmt.Errorf("state: bad string encoding %x", src)
	}
	return v.Str(), nil
}

// Bytes stores byte slices as they are. It is order-preserving but not
// self-delimiting: fine for values and for the keys of a map, not for Desc.
// Decode copies.
type Bytes struct{}

// Append implements Codec.
func (Bytes) Append(dst []byte, v []byte) []byte { return append(dst, v...) }

// Decode implements Codec.
func (Bytes) Decode(src []byte) ([]byte, error) { return append([]byte(nil), src...), nil }

// BytesView is Bytes without the copy: Decode returns the stored bytes
// themselves, valid only until the callback that received them returns
// (in an iteration) or until the next call on the Keyed (Get). For
// operators that copy what they keep: it spares an allocation and a copy
// of every key and value an iteration visits.
type BytesView struct{}

// Append implements Codec.
func (BytesView) Append(dst []byte, v []byte) []byte { return append(dst, v...) }

// Decode implements Codec.
func (BytesView) Decode(src []byte) ([]byte, error) { return src, nil }

// Values is an order-preserving, self-delimiting codec of rows of SQL
// values (AppendValue per value). Kinds, when set, gives each position's
// kind, so that an INT column decodes as INT rather than BIGINT, and a
// TIMESTAMP_LTZ column as TIMESTAMP_LTZ rather than TIMESTAMP.
type Values struct {
	Kinds []types.Kind
}

// Append implements Codec.
func (c Values) Append(dst []byte, v []types.Value) []byte {
	for _, x := range v {
		dst = AppendValue(dst, x)
	}
	return dst
}

// Decode implements Codec. It allocates the row.
func (c Values) Decode(src []byte) ([]types.Value, error) {
	var row []types.Value
	if c.Kinds != nil {
		row = make([]types.Value, 0, len(c.Kinds))
	}
	return c.appendRow(row, src)
}

// appendRow appends the values of the row encoded in src to dst, with
// their columns' kinds, and returns dst.
func (c Values) appendRow(dst []types.Value, src []byte) ([]types.Value, error) {
	start := len(dst)
	for i := 0; len(src) > 0; i++ {
		v, rest, err := DecodeValue(src)
		if err != nil {
			return nil, fmt.Errorf("state: value %d of a row: %w", i, err)
		}
		if i < len(c.Kinds) {
			v = WithColumnKind(v, c.Kinds[i])
		}
		dst = append(dst, v)
		src = rest
	}
	if c.Kinds != nil && len(dst)-start != len(c.Kinds) {
		return nil, fmt.Errorf("state: row of %d values, want %d", len(dst)-start, len(c.Kinds))
	}
	return dst, nil
}

// ValuesIn is Values decoding into the caller's arena: Decode appends the
// row's values to *Arena, or, when they do not fit, to a new block of
// ValuesInBlock values that becomes *Arena, and returns them (capacity
// clipped, so appending to a row never writes over the next). Decoding
// many rows then allocates a block per thousand or so, never copies them,
// and keeps no more than they hold. The caller reuses the last block
// (*Arena = (*Arena)[:0]) once it no longer uses the rows decoded.
type ValuesIn struct {
	Values
	Arena *[]types.Value
}

// ValuesInBlock is the number of values of a ValuesIn arena block.
const ValuesInBlock = 4096

// Decode implements Codec.
func (c ValuesIn) Decode(src []byte) ([]types.Value, error) {
	a := *c.Arena
	if n := max(len(c.Kinds), 1); len(a)+n > cap(a) {
		a = make([]types.Value, 0, max(ValuesInBlock, n))
	}
	start := len(a)
	a, err := c.appendRow(a, src)
	if err != nil {
		return nil, err
	}
	*c.Arena = a
	return a[start:len(a):len(a)], nil
}

// WithColumnKind gives a decoded value the kind of its column where the
// encoding does not tell it: INT (decoded as BIGINT) and TIMESTAMP_LTZ
// (decoded as TIMESTAMP). Other values are returned as they are.
func WithColumnKind(v types.Value, k types.Kind) types.Value {
	switch {
	case k == types.KindInt && v.Kind() == types.KindBigInt,
		k == types.KindTimestampLTZ && v.Kind() == types.KindTimestamp:
		return v.WithKind(k)
	}
	return v
}

// Desc reverses the order of an order-preserving, self-delimiting codec by
// complementing its bytes, for sorted state that iterates largest first.
func Desc[T any](c Codec[T]) Codec[T] { return desc[T]{c} }

type desc[T any] struct{ c Codec[T] }

func (d desc[T]) Append(dst []byte, v T) []byte {
	n := len(dst)
	dst = d.c.Append(dst, v)
	complement(dst[n:])
	return dst
}

func (d desc[T]) Decode(src []byte) (T, error) {
	var buf [64]byte
	b := append(buf[:0], src...)
	complement(b)
	return d.c.Decode(b)
}
