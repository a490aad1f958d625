package cputime

import (
	"runtime"
	"testing"
)

// TestProcessGrows checks that busy work shows up in the process CPU time.
func TestProcessGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no process CPU time here")
	}
	before := Process()
	x := 0
	for i := range 50_000_000 { // some tens of milliseconds
		x ^= i * i
	}
	if after := Process(); after <= before {
		t.Fatalf("CPU time went from %v to %v over a busy loop (%d)", before, after, x)
	}
}
