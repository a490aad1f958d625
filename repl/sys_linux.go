//go:build linux

package repl

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// openInput opens the terminal on fd again as a file of its own whose reads
// a deadline can interrupt (the shell must be able to stop reading keys).
func openInput(fd int) (*os.File, error) {
	f, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", fd), os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open terminal input: %w", err)
	}
	return f, nil
}

// termSize returns the terminal's columns and rows.
func termSize(fd int) (cols, rows int, ok bool) {
	var ws struct{ Row, Col, X, Y uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws)))
	if errno != 0 || ws.Col == 0 {
		return 0, 0, false
	}
	return int(ws.Col), int(ws.Row), true
}

// keyMode makes the terminal deliver each key at once, without echo, while
// Ctrl-C still raises SIGINT and output keeps its line breaks; restore
// undoes it.
func keyMode(fd int) (restore func(), err error) {
	var old syscall.Termios
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TCGETS, uintptr(unsafe.Pointer(&old))); errno != 0 {
		return nil, fmt.Errorf("get terminal mode: %w", errno)
	}
	t := old
	t.Lflag &^= syscall.ICANON | syscall.ECHO
	t.Lflag |= syscall.ISIG
	t.Cc[syscall.VMIN] = 1
	t.Cc[syscall.VTIME] = 0
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TCSETS, uintptr(unsafe.Pointer(&t))); errno != 0 {
		return nil, fmt.Errorf("set terminal mode: %w", errno)
	}
	return func() {
		syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TCSETS, uintptr(unsafe.Pointer(&old)))
	}, nil
}
