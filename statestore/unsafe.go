package statestore

import "unsafe"

// stringBytes returns the bytes of s without copying. The result must not be
// modified; it is only passed to Pebble, which copies keys into its batch.
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
