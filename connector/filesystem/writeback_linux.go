//go:build linux

package filesystem

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing bytes off..off+n-1 of f
// to the disk, without waiting (sync_file_range with
// SYNC_FILE_RANGE_WRITE). It is a hint: durability still comes from the
// fsync when the file is finished, which then waits only for what is not
// written yet. An error means the hint is not supported here.
func startWriteback(f *os.File, off, n int64) error {
	return unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
