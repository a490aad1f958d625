package statestore

import (
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// castagnoli is the CRC-32C table of snapshot file checksums (the
// checksum _metadata records; see package checkpoint).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fileKey identifies an immutable file of a store's database: Pebble never
// reuses a file number within one database, and never changes an sstable,
// so its name and size identify its content.
type fileKey struct {
	name string
	size int64
}

// writtenSum is the checksum of an sstable computed while it was written
// for ingestion, with the file's identity (its inode, which Pebble's
// ingestion keeps when it links the file into the database).
type writtenSum struct {
	info os.FileInfo
	crc  uint32
}

// crcFile computes the CRC-32C of what is written to it, in order.
type crcFile struct {
	vfs.File
	crc   uint32
	n     int64
	valid bool // false once anything but an appending Write happened
}

// Write implements vfs.File.
func (f *crcFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.crc = crc32.Update(f.crc, castagnoli, p[:n])
	f.n += int64(n)
	return n, err
}

// WriteAt implements vfs.File; the running checksum no longer holds.
func (f *crcFile) WriteAt(p []byte, off int64) (int, error) {
	f.valid = false
	return f.File.WriteAt(p, off)
}

// fileCRC reads path and returns its CRC-32C.
func fileCRC(path string) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("statestore: checksum: %w", err)
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, f); err != nil {
		return 0, fmt.Errorf("statestore: checksum %s: %w", path, err)
	}
	return h.Sum32(), nil
}

// checksum fills in the CRC32C of every file of a snapshot in dir. The
// sstables of the store are immutable and shared between its snapshots,
// so their checksums are kept from one snapshot to the next, and an
// ingested sstable's checksum was computed while it was written: only
// the files new since the last snapshot that Pebble wrote itself (a
// flush, a compaction) and the small mutable files (MANIFEST, OPTIONS)
// are read.
func (s *Store) checksum(dir string, files []FileInfo, infos []os.FileInfo) error {
	kept := make(map[fileKey]uint32, len(files))
	for i := range files {
		f := &files[i]
		k := fileKey{f.Name, f.Size}
		if isImmutable(f.Name) {
			if c, ok := s.sums[k]; ok {
				f.CRC32C = c
				kept[k] = c
				continue
			}
			if c, ok := s.writtenSum(infos[i]); ok {
				f.CRC32C = c
				kept[k] = c
				continue
			}
		}
		c, err := fileCRC(dir + string(os.PathSeparator) + f.Name)
		if err != nil {
			return err
		}
		s.sumReads++
		f.CRC32C = c
		if isImmutable(f.Name) {
			kept[k] = c
		}
	}
	s.sums = kept
	s.through.written = s.through.written[:0]
	return nil
}

// writtenSum returns the checksum computed while writing the ingested
// sstable that info is (a hard link of).
func (s *Store) writtenSum(info os.FileInfo) (uint32, bool) {
	for _, w := range s.through.written {
		if w.info.Size() == info.Size() && os.SameFile(w.info, info) {
			return w.crc, true
		}
	}
	return 0, false
}
