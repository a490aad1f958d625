package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// This file encodes the accumulators' per-group state as bytes, for keyed
// state in the state store. Encodings are compact (varints) and versioned by
// the group record's leading byte (see groupStateVersion).

// errBadState reports a state record that cannot be decoded.
var errBadState = errors.New("malformed aggregate state")

func readVarint(src []byte) (int64, []byte, error) {
	v, n := binary.Varint(src)
	if n <= 0 {
		return 0, nil, errBadState
	}
	return v, src[n:], nil
}

func readUvarint(src []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(src)
	if n <= 0 {
		return 0, nil, errBadState
	}
	return v, src[n:], nil
}

func readFloat(src []byte) (float64, []byte, error) {
	if len(src) < 8 {
		return 0, nil, errBadState
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(src)), src[8:], nil
}

func appendFloat(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

func (a *countAcc) save(g int32, dst []byte) []byte { return binary.AppendVarint(dst, a.n[g]) }
func (a *countAcc) load(g int32, src []byte) (rest []byte, err error) {
	a.n[g], rest, err = readVarint(src)
	return rest, err
}

// save writes SUM's sum (a varint for integers, the float's 8 bytes for
// DOUBLE) and count; AVG's integer sum, float sum and count, one of the two
// sums zero.
func (a *sumAcc) save(g int32, dst []byte) []byte {
	s := &a.s[g]
	var isum int64
	var fsum float64
	if a.floatIn {
		fsum = math.Float64frombits(s.sum)
	} else {
		isum = int64(s.sum)
	}
	switch {
	case a.avg:
		dst = appendFloat(binary.AppendVarint(dst, isum), fsum)
	case a.floatIn:
		dst = appendFloat(dst, fsum)
	default:
		dst = binary.AppendVarint(dst, isum)
	}
	return binary.AppendVarint(dst, s.n)
}
func (a *sumAcc) load(g int32, src []byte) (rest []byte, err error) {
	s, rest, err := a.decode(src)
	if err != nil {
		return nil, err
	}
	a.s[g] = s
	return rest, nil
}

// decode reads a state written by save.
func (a *sumAcc) decode(src []byte) (s sumState, rest []byte, err error) {
	rest = src
	if !a.avg && !a.floatIn { // SUM of integers: the common case
		var isum int64
		if isum, rest, err = readVarint(rest); err != nil {
			return s, nil, err
		}
		s.sum = uint64(isum)
		s.n, rest, err = readVarint(rest)
		return s, rest, err
	}
	var isum int64
	var fsum float64
	if a.avg {
		if isum, rest, err = readVarint(rest); err != nil {
			return s, nil, err
		}
	}
	if fsum, rest, err = readFloat(rest); err != nil {
		return s, nil, err
	}
	if a.floatIn {
		s.sum = math.Float64bits(fsum)
	} else {
		s.sum = uint64(isum)
	}
	s.n, rest, err = readVarint(rest)
	return s, rest, err
}

func (a *minMaxAcc) save(g int32, dst []byte) []byte {
	s := a.vals[g]
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	for _, e := range s {
		dst = types.AppendKey(dst, e.v)
		dst = binary.AppendVarint(dst, e.n)
	}
	return dst
}
func (a *minMaxAcc) load(g int32, src []byte) ([]byte, error) {
	n, rest, err := readUvarint(src)
	if err != nil || n > uint64(len(rest)) {
		return nil, errBadState
	}
	s := make([]valCount, n)
	for i := range s {
		if s[i].v, rest, err = types.DecodeKey(rest); err != nil {
			return nil, fmt.Errorf("%w: %v", errBadState, err)
		}
		if s[i].n, rest, err = readVarint(rest); err != nil {
			return nil, err
		}
	}
	if a.insertOnly && len(s) > 1 {
		// A state written by the sorted form: keep its extreme.
		if a.max {
			s = s[len(s)-1:]
		} else {
			s = s[:1]
		}
	}
	a.vals[g] = s
	return rest, nil
}

func (a *distinctAcc) save(g int32, dst []byte) []byte {
	m := a.seen[g]
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	for k, c := range m {
		dst = appendDistinctEntry(dst, k, *c)
	}
	return a.inner.save(g, dst)
}

// readDistinctEntry reads an entry written by appendDistinctEntry.
func readDistinctEntry(src []byte) (key []byte, count int64, rest []byte, err error) {
	l, rest, err := readUvarint(src)
	if err != nil || l > uint64(len(rest)) {
		return nil, 0, nil, errBadState
	}
	key, rest = rest[:l], rest[l:]
	if count, rest, err = readVarint(rest); err != nil {
		return nil, 0, nil, err
	}
	return key, count, rest, nil
}

// eachDistinctEntry reads a saved DISTINCT set at the start of src (the
// number of entries, then each as appendDistinctEntry writes it), calling
// fn with each entry's key encoding, its value and its count, and returns
// the rest of src.
func eachDistinctEntry(src []byte, fn func(kb []byte, v types.Value, c int64) error) ([]byte, error) {
	n, rest, err := readUvarint(src)
	if err != nil || n > uint64(len(rest)) {
		return nil, errBadState
	}
	for range n {
		var kb []byte
		var c int64
		if kb, c, rest, err = readDistinctEntry(rest); err != nil {
			return nil, err
		}
		v, tail, err := types.DecodeKey(kb)
		if err != nil || len(tail) != 0 {
			return nil, errBadState
		}
		if err := fn(kb, v, c); err != nil {
			return nil, err
		}
	}
	return rest, nil
}

// appendDistinctEntry appends one value of a DISTINCT set as distinctAcc
// saves it: the length of its key encoding, the key, its count.
func appendDistinctEntry[K string | []byte](dst []byte, key K, count int64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	return binary.AppendVarint(dst, count)
}
func (a *distinctAcc) load(g int32, src []byte) ([]byte, error) {
	n, rest, err := readUvarint(src)
	if err != nil || n > uint64(len(rest)) {
		return nil, errBadState
	}
	m := make(map[string]*int64, n)
	for range n {
		var k []byte
		c := new(int64)
		if k, *c, rest, err = readDistinctEntry(rest); err != nil {
			return nil, err
		}
		m[string(k)] = c
	}
	a.seen[g] = m
	return a.inner.load(g, rest)
}

// decodeKeyColumns decodes an encoded group key into row at cols (nil:
// columns 0, 1, …, one per len(row)), giving back the column kinds the
// encoding shares: bit i of ints marks an INT column, of ltz a
// TIMESTAMP_LTZ one. what names the key in errors ("group key").
func decodeKeyColumns(key []byte, row []types.Value, cols []int, ints, ltz uint64, what string) error {
	n := len(cols)
	if cols == nil {
		n = len(row)
	}
	kr := key
	for i := range n {
		v, rest, err := state.DecodeValue(kr)
		if err != nil {
			return fmt.Errorf("%s %x: %w", what, key, err)
		}
		kr = rest
		switch {
		case ints&(1<<i) != 0:
			v = state.WithColumnKind(v, types.KindInt)
		case ltz&(1<<i) != 0:
			v = state.WithColumnKind(v, types.KindTimestampLTZ)
		}
		c := i
		if cols != nil {
			c = cols[i]
		}
		row[c] = v
	}
	if len(kr) != 0 {
		return fmt.Errorf("%s %x: %d bytes left over", what, key, len(kr))
	}
	return nil
}
