package session

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// FaultsEnv names the environment variable that arms fault points of the
// checkpoint algorithm (DESIGN.md, Testing), for fault-tolerance tests:
//
//	WEIR_FAULTS='K3=kill'          SIGKILL the process the first time K3 is passed
//	WEIR_FAULTS='K2@3=error,K7=panic'  fail at the third K2; panic at the first K7
//
// Each fault fires once. When WEIR_FAULT_LOG names a file, a line "K3 kill"
// is appended (and synced) to it just before a fault fires, so a test can
// count the faults that fired even when the process is killed.
const (
	FaultsEnv   = "WEIR_FAULTS"
	FaultLogEnv = "WEIR_FAULT_LOG"
)

// ErrInjected is the error an "error" fault returns.
var ErrInjected = errors.New("injected fault")

type faultSpec struct {
	at     int // fire on this pass (1-based)
	action string
	passed int
	fired  bool
}

// ParseFaults parses a WEIR_FAULTS specification into a fault hook for
// exec.Options.Fault; logPath may be empty.
func ParseFaults(spec, logPath string) (func(point string) error, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	faults := map[string]*faultSpec{}
	for _, item := range strings.Split(spec, ",") {
		point, action, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return nil, fmt.Errorf("%s: %q: expected POINT[@N]=error|panic|kill", FaultsEnv, item)
		}
		f := &faultSpec{at: 1, action: action}
		if p, n, ok := strings.Cut(point, "@"); ok {
			at, err := strconv.Atoi(n)
			if err != nil || at < 1 {
				return nil, fmt.Errorf("%s: %q: bad pass number", FaultsEnv, item)
			}
			point, f.at = p, at
		}
		switch action {
		case "error", "panic", "kill":
		default:
			return nil, fmt.Errorf("%s: %q: action must be error, panic or kill", FaultsEnv, item)
		}
		faults[point] = f
	}
	var mu sync.Mutex
	return func(point string) error {
		mu.Lock()
		f := faults[point]
		if f == nil || f.fired {
			mu.Unlock()
			return nil
		}
		f.passed++
		if f.passed < f.at {
			mu.Unlock()
			return nil
		}
		f.fired = true
		mu.Unlock()
		logFault(logPath, point, f.action)
		switch f.action {
		case "kill":
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		case "panic":
			panic(fmt.Sprintf("injected panic at fault point %s", point))
		}
		return fmt.Errorf("%w at %s", ErrInjected, point)
	}, nil
}

func logFault(path, point, action string) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%s %s\n", point, action)
	_ = f.Sync()
	_ = f.Close()
}
