//go:build !unix

// Package cputime reads the CPU time the process has used, for benchmarks
// that report the cost of work done on several goroutines.
package cputime

import "time"

// Process returns 0 where the process CPU time is not available.
func Process() time.Duration { return 0 }
