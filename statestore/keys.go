package statestore

import (
	"encoding/binary"
	"fmt"
)

// maxNameLen is the longest operator id or state name the key layout allows.
const maxNameLen = 255

// appendOperatorPrefix appends len(operatorID) | operatorID.
func appendOperatorPrefix(dst []byte, operatorID string) []byte {
	dst = append(dst, byte(len(operatorID)))
	return append(dst, operatorID...)
}

// appendStateKey appends the full Pebble key for (key group, key, state name)
// after an operator prefix built by appendOperatorPrefix.
func appendStateKey(dst, opPrefix []byte, keyGroup int, key []byte, stateName string) []byte {
	dst = append(dst, opPrefix...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(keyGroup))
	dst = append(dst, key...)
	dst = append(dst, stateName...)
	return append(dst, byte(len(stateName)))
}

// decodedKey is a Pebble key split into its parts. The slices alias the
// encoded key.
type decodedKey struct {
	operatorID []byte
	keyGroup   int
	key        []byte
	stateName  []byte
}

// decodeKey splits an encoded key; it fails on keys this package did not
// write.
func decodeKey(k []byte) (decodedKey, error) {
	if len(k) < 1 {
		return decodedKey{}, fmt.Errorf("statestore: empty key")
	}
	opLen := int(k[0])
	if len(k) < 1+opLen+2+1 {
		return decodedKey{}, fmt.Errorf("statestore: key of %d bytes too short", len(k))
	}
	rest := k[1+opLen:]
	d := decodedKey{operatorID: k[1 : 1+opLen], keyGroup: int(binary.BigEndian.Uint16(rest))}
	rest = rest[2:]
	nameLen := int(rest[len(rest)-1])
	rest = rest[:len(rest)-1]
	if len(rest) < nameLen {
		return decodedKey{}, fmt.Errorf("statestore: key with state name length %d too short", nameLen)
	}
	d.key = rest[:len(rest)-nameLen]
	d.stateName = rest[len(rest)-nameLen:]
	return d, nil
}

// keyGroupBounds returns [lower, upper) covering key groups [first, last] of
// the operator with prefix opPrefix.
func keyGroupBounds(opPrefix []byte, first, last int) (lower, upper []byte) {
	lower = binary.BigEndian.AppendUint16(append([]byte(nil), opPrefix...), uint16(first))
	if last+1 <= 0xFFFF {
		upper = binary.BigEndian.AppendUint16(append([]byte(nil), opPrefix...), uint16(last+1))
	} else {
		upper = prefixSuccessor(opPrefix)
	}
	return lower, upper
}

// prefixSuccessor returns the smallest key greater than every key with
// prefix p, or nil if there is none (p is all 0xFF).
func prefixSuccessor(p []byte) []byte {
	out := append([]byte(nil), p...)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i] != 0xFF {
			out[i]++
			return out[:i+1]
		}
	}
	return nil
}
