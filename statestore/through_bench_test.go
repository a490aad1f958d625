package statestore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/objstorage"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weir-sql/weir/internal/cputime"
)

// q16Keys returns n state keys shaped like Nexmark q16's DISTINCT entries
// (family, value, group key of a channel and a day) in ascending order.
func q16Keys(n int) [][]byte {
	rng := rand.New(rand.NewPCG(3, 4))
	op := appendOperatorPrefix(nil, "0123456789abcdef")
	keys := make([][]byte, n)
	for i := range keys {
		var k []byte
		k = append(k, 11)
		k = append(k, "distinct.v1"...)
		k = append(k, byte(rng.IntN(2)))
		k = binary.BigEndian.AppendUint64(k, uint64(rng.Int64N(2_000_000))^(1<<63))
		k = append(k, 5)
		k = fmt.Appendf(k, "channel-%04d", rng.IntN(10000))
		k = append(k, 5)
		k = append(k, "2015-07-15"...)
		keys[i] = appendStateKey(nil, op, rng.IntN(64), k, "r")
	}
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, func(a, b []byte) bool { return bytes.Equal(a, b) })
	// One buffer in key order, as a snapshot's gathered records are.
	var buf []byte
	for _, k := range keys {
		buf = append(buf, k...)
	}
	for i, off := 0, 0; i < len(keys); i++ {
		n := len(keys[i])
		keys[i] = buf[off : off+n : off+n]
		off += n
	}
	return keys
}

// BenchmarkIngestWriter writes 1M keys shaped like Nexmark q16's DISTINCT
// entries into an sstable as a checkpoint's write-through does, with
// Pebble's own 4 KiB-buffered file writable and with bufferedWritable,
// and with variations of the writer options; it reports the process's CPU
// per key.
func BenchmarkIngestWriter(b *testing.B) {
	keys := q16Keys(1_000_000)
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	base := s.through.opts.MakeWriterOptions(0, s.db.TableFormat())
	cases := []struct {
		name       string
		pebbleFile bool
		tune       func(*sstable.WriterOptions)
	}{
		{"pebble-writable", true, func(*sstable.WriterOptions) {}},
		{"buffered", false, func(*sstable.WriterOptions) {}},
		{"buffered+nofilter", false, func(o *sstable.WriterOptions) { o.FilterPolicy = nil }},
		{"buffered+nocompress", false, func(o *sstable.WriterOptions) { o.Compression = sstable.NoCompression }},
	}
	val := []byte{1, 2, 1, 0}
	out := &bufferedWritable{bw: bufio.NewWriterSize(nil, ingestBufferBytes)}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			var cpu int64
			for i := range b.N {
				wo := base
				c.tune(&wo)
				path := filepath.Join(dir, fmt.Sprint(i))
				f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
				if err != nil {
					b.Fatal(err)
				}
				c0 := cputime.Process()
				var wr objstorage.Writable = out
				if c.pebbleFile {
					wr = objstorageprovider.NewFileWritable(f)
				} else {
					out.reset(f)
				}
				w := sstable.NewWriter(wr, wo)
				for _, k := range keys {
					if err := w.Set(k, val); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				cpu += int64(cputime.Process() - c0)
				if err := os.Remove(path); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpu)/float64(b.N*len(keys)), "cpu-ns/key")
		})
	}
}
