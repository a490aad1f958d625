//go:build unix

// Package cputime reads the CPU time the process has used, for benchmarks
// that report the cost of work done on several goroutines (the runtime's
// tasks, Pebble's background flushes and compactions).
package cputime

import (
	"syscall"
	"time"
)

// Process returns the user plus system CPU time the process has used, or 0
// if it cannot be read.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
