package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/weir-sql/weir/types"
)

// The order-preserving key encoding. Each value is a tag byte and a payload;
// comparing two encodings bytewise compares the values (for values of one
// kind), and every encoding is self-delimiting (no encoding is a prefix of
// another), so encodings can be concatenated into composite keys that sort
// column by column.
//
//	NULL      0x01                       (sorts before every other value)
//	BOOLEAN   0x02, 0x00 or 0x01
//	INT, BIGINT 0x03, 8 bytes big-endian with the sign bit flipped
//	TIMESTAMP 0x04, as integers (TIMESTAMP_LTZ too: both are milliseconds
//	          since the epoch; DecodeValue returns TIMESTAMP, and the
//	          column's type tells LTZ, as for INT)
//	INTERVAL  0x05, as integers
//	DOUBLE    0x06, 8 bytes: the IEEE bits with the sign bit flipped for
//	          positive numbers and all bits flipped for negative ones;
//	          -0 is written as 0 and every NaN as one NaN, after +Inf
//	VARCHAR   0x07, the bytes with 0x00 escaped as 0x00 0xFF, then 0x00 0x01
//	TIMESTAMP_LTZ 0x08, as integers
//	DATE      0x09, as integers (days)
//	TIME      0x0A, as integers (milliseconds)
//	DECIMAL   0x0B, the scale byte, then the unscaled integer as 16 bytes
//	          (128-bit big-endian two's complement) with the sign bit flipped
//	BYTES     0x0C, escaped as VARCHAR
//	TINYINT   0x0D, SMALLINT 0x0E: as integers
//	FLOAT     0x0F, as DOUBLE
//	ROW 0x10, ARRAY 0x11, MAP 0x12: their element bytes escaped as VARCHAR
//	          (equal values encode equally; the order is not SQL's)
//
// Each kind decodes back to itself, but for INT (see below). DECIMALs
// order correctly among values of one scale (one column). INT and BIGINT share a tag: equal integers encode equally whatever their
// SQL type, so they are one key and land in one key group. The descending
// form (AppendValueDesc) is the same bytes complemented, which reverses the
// order and stays self-delimiting (NULL then sorts last).
const (
	tagNull      byte = 0x01
	tagBool      byte = 0x02
	tagInt       byte = 0x03
	tagTimestamp byte = 0x04
	tagInterval  byte = 0x05
	tagDouble    byte = 0x06
	tagString    byte = 0x07
	tagTSLTZ     byte = 0x08
	tagDate      byte = 0x09
	tagTime      byte = 0x0A
	tagDecimal   byte = 0x0B
	tagBytes     byte = 0x0C
	tagTinyInt   byte = 0x0D
	tagSmallInt  byte = 0x0E
	tagFloat     byte = 0x0F
	tagRow       byte = 0x10
	tagArray     byte = 0x11
	tagMap       byte = 0x12
)

// ErrBadEncoding reports bytes that DecodeValue cannot read.
var ErrBadEncoding = errors.New("state: malformed key encoding")

const signBit = 1 << 63

// AppendValue appends the order-preserving encoding of v to dst (for ROW,
// ARRAY and MAP an encoding that is only equality-preserving).
func AppendValue(dst []byte, v types.Value) []byte {
	switch v.Kind() {
	case types.KindNull:
		return append(dst, tagNull)
	case types.KindBoolean:
		if v.Bool() {
			return append(dst, tagBool, 1)
		}
		return append(dst, tagBool, 0)
	case types.KindInt, types.KindBigInt:
		return binary.BigEndian.AppendUint64(append(dst, tagInt), uint64(v.Int())^signBit)
	case types.KindTinyInt:
		return binary.BigEndian.AppendUint64(append(dst, tagTinyInt), uint64(v.Int())^signBit)
	case types.KindSmallInt:
		return binary.BigEndian.AppendUint64(append(dst, tagSmallInt), uint64(v.Int())^signBit)
	case types.KindFloat:
		return binary.BigEndian.AppendUint64(append(dst, tagFloat), orderedFloat(v.Float()))
	case types.KindDate:
		return binary.BigEndian.AppendUint64(append(dst, tagDate), uint64(v.Int())^signBit)
	case types.KindTime:
		return binary.BigEndian.AppendUint64(append(dst, tagTime), uint64(v.Int())^signBit)
	case types.KindDecimal:
		dst = append(dst, tagDecimal, byte(v.Scale()))
		var hi, lo uint64
		if n, ok := v.Unscaled(); ok {
			lo = uint64(n)
			hi = uint64(n >> 63) // sign extension
		} else {
			var b [16]byte
			copy(b[:], v.Str())
			hi, lo = binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
		}
		dst = binary.BigEndian.AppendUint64(dst, hi^signBit)
		return binary.BigEndian.AppendUint64(dst, lo)
	case types.KindBytes, types.KindRow, types.KindArray, types.KindMap:
		n := len(dst)
		dst = AppendString(dst, v.Str())
		switch v.Kind() {
		case types.KindBytes:
			dst[n] = tagBytes
		case types.KindRow:
			dst[n] = tagRow
		case types.KindArray:
			dst[n] = tagArray
		default:
			dst[n] = tagMap
		}
		return dst
	case types.KindTimestamp, types.KindTimestampLTZ:
		// TIMESTAMP_LTZ shares TIMESTAMP's encoding (and HashIntKey's fast
		// path); a reader that needs the kind back uses WithColumnKind.
		return binary.BigEndian.AppendUint64(append(dst, tagTimestamp), uint64(v.Int())^signBit)
	case types.KindInterval:
		return binary.BigEndian.AppendUint64(append(dst, tagInterval), uint64(v.Int())^signBit)
	case types.KindDouble:
		return binary.BigEndian.AppendUint64(append(dst, tagDouble), orderedFloat(v.Float()))
	case types.KindVarchar:
		return AppendString(dst, v.Str())
	}
	// Only a Kind that types does not define gets here (TestEncodeEveryKind
	// covers every defined one).
	panic(fmt.Sprintf("state: cannot encode a value of kind %v", v.Kind()))
}

// AppendValueDesc appends the descending encoding of v: the complement of
// AppendValue's, so larger values sort first.
func AppendValueDesc(dst []byte, v types.Value) []byte {
	n := len(dst)
	dst = AppendValue(dst, v)
	complement(dst[n:])
	return dst
}

// AppendInt64 appends the encoding of BIGINT i (that of INT i too).
func AppendInt64(dst []byte, i int64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, tagInt), uint64(i)^signBit)
}

// AppendString appends the encoding of VARCHAR s.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, tagString)
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			break
		}
		dst = append(append(dst, s[:i]...), 0, 0xFF)
		s = s[i+1:]
	}
	return append(append(dst, s...), 0, 1)
}

// ValueSize returns the number of bytes AppendValue appends for v.
func ValueSize(v types.Value) int {
	switch v.Kind() {
	case types.KindNull:
		return 1
	case types.KindBoolean:
		return 2
	case types.KindDecimal:
		return 18
	case types.KindVarchar, types.KindBytes, types.KindRow, types.KindArray, types.KindMap:
		s := v.Str()
		return 3 + len(s) + strings.Count(s, "\x00")
	}
	return 9
}

// ValuesSize returns the number of bytes Values.Append appends for row.
func ValuesSize(row []types.Value) int {
	n := 0
	for _, v := range row {
		n += ValueSize(v)
	}
	return n
}

// UvarintSize returns the number of bytes binary.AppendUvarint appends
// for x.
func UvarintSize(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// VarintSize returns the number of bytes binary.AppendVarint appends for
// x.
func VarintSize(x int64) int { return UvarintSize(uint64(x<<1) ^ uint64(x>>63)) }

func complement(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

func orderedFloat(f float64) uint64 {
	switch {
	case f == 0:
		f = 0 // -0 is 0
	case math.IsNaN(f):
		return math.Float64bits(math.NaN()) | signBit
	}
	b := math.Float64bits(f)
	if b&signBit != 0 {
		return ^b
	}
	return b | signBit
}

func unorderedFloat(b uint64) float64 {
	if b&signBit != 0 {
		return math.Float64frombits(b &^ signBit)
	}
	return math.Float64frombits(^b)
}

// DecodeValue reads one value written by AppendValue and returns it with
// the rest of src. Integers come back as BIGINT (INT and BIGINT share an
// encoding) and instants as TIMESTAMP (TIMESTAMP_LTZ shares its encoding);
// use Value.WithKind for an INT or TIMESTAMP_LTZ column.
func DecodeValue(src []byte) (types.Value, []byte, error) { return decodeValue(src, 0) }

// DecodeValueDesc reads one value written by AppendValueDesc.
func DecodeValueDesc(src []byte) (types.Value, []byte, error) { return decodeValue(src, 0xFF) }

// decodeValue reads one value whose bytes were xored with x.
func decodeValue(src []byte, x byte) (types.Value, []byte, error) {
	if len(src) == 0 {
		return types.Value{}, nil, ErrBadEncoding
	}
	tag := src[0] ^ x
	src = src[1:]
	fixed := func() (uint64, bool) {
		if len(src) < 8 {
			return 0, false
		}
		u := binary.BigEndian.Uint64(src)
		if x != 0 {
			u = ^u
		}
		src = src[8:]
		return u, true
	}
	switch tag {
	case tagNull:
		return types.NullValue(), src, nil
	case tagBool:
		if len(src) < 1 || (src[0]^x) > 1 {
			return types.Value{}, nil, ErrBadEncoding
		}
		return types.BoolValue(src[0]^x == 1), src[1:], nil
	case tagInt, tagTimestamp, tagInterval, tagDouble, tagTSLTZ, tagDate, tagTime, tagTinyInt, tagSmallInt, tagFloat:
		u, ok := fixed()
		if !ok {
			return types.Value{}, nil, ErrBadEncoding
		}
		switch tag {
		case tagInt:
			return types.BigIntValue(int64(u ^ signBit)), src, nil
		case tagTimestamp:
			return types.TimestampValue(int64(u ^ signBit)), src, nil
		case tagInterval:
			return types.IntervalValue(int64(u ^ signBit)), src, nil
		case tagTSLTZ:
			return types.TimestampLTZValue(int64(u ^ signBit)), src, nil
		case tagDate:
			return types.DateValue(int64(u ^ signBit)), src, nil
		case tagTime:
			return types.TimeValue(int64(u ^ signBit)), src, nil
		case tagTinyInt:
			return types.TinyIntValue(int64(u ^ signBit)), src, nil
		case tagSmallInt:
			return types.SmallIntValue(int64(u ^ signBit)), src, nil
		case tagFloat:
			return types.FloatValue(unorderedFloat(u)), src, nil
		}
		return types.DoubleValue(unorderedFloat(u)), src, nil
	case tagDecimal:
		if len(src) < 17 || src[0]^x > types.MaxDecimalPrecision {
			return types.Value{}, nil, ErrBadEncoding
		}
		scale := int(src[0] ^ x)
		var b [16]byte
		for i := range b {
			b[i] = src[1+i] ^ x
		}
		src = src[17:]
		hi, lo := binary.BigEndian.Uint64(b[:8])^signBit, binary.BigEndian.Uint64(b[8:])
		if hi == uint64(int64(lo)>>63) { // fits in an int64
			return types.DecimalValue(int64(lo), scale), src, nil
		}
		binary.BigEndian.PutUint64(b[:8], hi)
		u := new(big.Int).SetBytes(b[:])
		if hi&signBit != 0 {
			u.Sub(u, new(big.Int).Lsh(big.NewInt(1), 128))
		}
		v, err := types.DecimalFromBig(u, scale)
		if err != nil {
			return types.Value{}, nil, ErrBadEncoding
		}
		return v, src, nil
	case tagString, tagBytes, tagRow, tagArray, tagMap:
		var out []byte
		for i := 0; i+1 < len(src); i++ {
			c := src[i] ^ x
			if c != 0 {
				out = append(out, c)
				continue
			}
			switch src[i+1] ^ x {
			case 0xFF:
				out = append(out, 0)
				i++
			case 1:
				switch tag {
				case tagBytes:
					return types.BytesValue(string(out)), src[i+2:], nil
				case tagRow:
					return types.StringValue(string(out)).AsComposite(types.KindRow), src[i+2:], nil
				case tagArray:
					return types.StringValue(string(out)).AsComposite(types.KindArray), src[i+2:], nil
				case tagMap:
					return types.StringValue(string(out)).AsComposite(types.KindMap), src[i+2:], nil
				}
				return types.StringValue(string(out)), src[i+2:], nil
			default:
				return types.Value{}, nil, ErrBadEncoding
			}
		}
		return types.Value{}, nil, ErrBadEncoding
	}
	return types.Value{}, nil, ErrBadEncoding
}

// KeyGroup returns the key group of an encoded key (the concatenated
// encodings of its values): xxhash64 of the bytes modulo maxParallelism.
// The hash is stable across processes and versions, as restored state
// depends on it. It differs from types.HashKey, which the hash exchange and
// GroupAggregate use (see the package documentation).
func KeyGroup(key []byte, maxParallelism int) int {
	return int(xxhash.Sum64(key) % uint64(maxParallelism))
}

// KeyGroupRange returns the key groups [first, last] that subtask owns at
// the given parallelism (types.KeyGroupRange).
func KeyGroupRange(subtask, parallelism, maxParallelism int) (first, last int) {
	return types.KeyGroupRange(subtask, parallelism, maxParallelism)
}
