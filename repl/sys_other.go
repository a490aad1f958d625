//go:build !linux

package repl

import (
	"errors"
	"os"
)

// openInput is unsupported: the shell reads stdin itself.
func openInput(int) (*os.File, error) { return nil, errors.New("not supported on this system") }

// termSize is unknown on this system.
func termSize(int) (cols, rows int, ok bool) { return 0, 0, false }

// keyMode is unsupported here: 'q' needs Enter, Ctrl-C still works.
func keyMode(int) (func(), error) { return func() {}, nil }
