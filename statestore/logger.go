package statestore

import (
	"fmt"
	"log"
)

// quietLogger drops Pebble's informational messages, keeps its errors, and
// turns its fatal errors (broken Pebble invariants) into panics that the
// task's supervisor can report instead of exiting the process.
type quietLogger struct{}

// Infof drops the message.
func (quietLogger) Infof(string, ...any) {}

// Errorf logs the message.
func (quietLogger) Errorf(format string, args ...any) {
	log.Printf("statestore: pebble: "+format, args...)
}

// Fatalf panics with the message.
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("statestore: pebble: "+format, args...))
}
