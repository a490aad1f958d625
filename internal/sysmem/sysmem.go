// Package sysmem tells how much memory the process may use, so that
// budgets left to "auto" can be sized from the machine rather than fixed.
package sysmem

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// Total returns the bytes of memory the process may use: the least of the
// Go runtime's memory limit (GOMEMLIMIT, when set), the cgroup's limit
// (cgroup v2 memory.max or v1 memory.limit_in_bytes) when the process runs
// in a limited one, and the machine's physical memory (MemTotal in
// /proc/meminfo). It returns 0 when none of them is known (not Linux, or
// /proc not mounted).
func Total() int64 {
	total := totalIn("/")
	if lim := debug.SetMemoryLimit(-1); lim > 0 && lim < math.MaxInt64 && (total == 0 || lim < total) {
		total = lim
	}
	return total
}

// totalIn is Total without the Go limit, reading the files under root.
func totalIn(root string) int64 {
	total := memTotal(filepath.Join(root, "proc/meminfo"))
	for _, f := range []string{"sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if lim := cgroupLimit(filepath.Join(root, f)); lim > 0 && (total == 0 || lim < total) {
			total = lim
		}
	}
	return total
}

// memTotal reads MemTotal (in kB) from a meminfo file; 0 if it cannot.
func memTotal(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 {
			return 0
		}
		if len(f) > 1 && f[1] != "kB" {
			return 0
		}
		return kb << 10
	}
	return 0
}

// cgroupLimit reads a cgroup memory limit in bytes; 0 when the file is
// missing, says "max", or holds v1's "no limit" (a number near MaxInt64).
func cgroupLimit(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= math.MaxInt64/2 {
		return 0
	}
	return n
}
