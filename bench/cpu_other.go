//go:build !unix

package bench

import "time"

// processCPU returns 0 where the process CPU time is not available.
func processCPU() time.Duration { return 0 }
