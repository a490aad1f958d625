package state

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// TestRecordsSnapshotWithOneRun checks that SnapshotWith writes the keys
// of both Records as one ascending run, in random shapes: names of random
// lengths and bytes (either sorting first), keys of one length or of
// mixed lengths, records in only some key groups (the last among them),
// one Records empty, chunks of random sizes, several max parallelisms.
// The first checkpoint of an empty store shows it: a run of more than a
// batch's keys, all ascending, is one sstable that Pebble ingests into
// the empty bottom level, so level 0 stays empty; a key out of order
// sends it and the rest of the run into a batch, whose memtable the
// snapshot flushes into level 0.
func TestRecordsSnapshotWithOneRun(t *testing.T) {
	seed := rand.Uint64()
	if s, err := strconv.ParseUint(os.Getenv("WEIR_TEST_SEED"), 10, 64); err == nil {
		seed = s // replay a failure
	}
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 99))
	name := func() string {
		b := make([]byte, 1+r.IntN(12))
		for i := range b {
			b[i] = "abcdz.-"[r.IntN(7)]
		}
		return string(b)
	}
	for trial := range 24 {
		maxPar := []int{128, 128, 7, 1000}[r.IntN(4)]
		lname, oname := name(), name()
		for oname == lname {
			oname = name()
		}
		// The key groups that hold records: all, a few, or the last alone
		// (and one other).
		var kgs []int
		switch r.IntN(3) {
		case 0, map[bool]int{true: 1, false: 2}[maxPar > 128]:
			for kg := range maxPar {
				kgs = append(kgs, kg)
			}
		case 1:
			for range 1 + r.IntN(5) {
				kgs = append(kgs, r.IntN(maxPar))
			}
			kgs = append(kgs, maxPar-1)
		default:
			kgs = []int{r.IntN(maxPar), maxPar - 1}
		}
		inKGs := func(key []byte) bool {
			kg := KeyGroup(key, maxPar)
			for _, k := range kgs {
				if k == kg {
					return true
				}
			}
			return false
		}
		nl, no := r.IntN(14000), r.IntN(14000)
		switch r.IntN(4) {
		case 0:
			nl, no = 0, 9000+r.IntN(5000)
		case 1:
			nl, no = 9000+r.IntN(5000), 0
		}
		if nl+no < 9000 {
			nl = 9000 - no
		}
		mixedL, mixedO := r.IntN(2) == 0, r.IntN(2) == 0
		t.Run(fmt.Sprintf("%d %q %q %d+%d maxpar %d kgs %d", trial, lname, oname, nl, no, maxPar, len(kgs)), func(t *testing.T) {
			st, err := statestore.Open(filepath.Join(t.TempDir(), "work"), statestore.Options{MaxParallelism: maxPar})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			lown, oown := newFakeOwner(), newFakeOwner()
			lrec, err := NewRecords(RecordOptions{Name: lname, OperatorID: "op", MaxParallelism: maxPar, Budget: 64 << 20, RecordBytes: 40}, lown)
			if err != nil {
				t.Fatal(err)
			}
			orec, err := NewRecords(RecordOptions{Name: oname, OperatorID: "op", MaxParallelism: maxPar, Budget: 64 << 20, RecordBytes: 40}, oown)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range []*Records{lrec, orec} {
				if err := x.Attach(st, false); err != nil {
					t.Fatal(err)
				}
				x.chunk = []int{1, 1 + r.IntN(50), 1 + r.IntN(3000), chunkEntries}[r.IntN(4)]
			}
			fill := func(rec *Records, own *fakeOwner, n int, mixed bool) {
				for i, tries := 0, 0; i < n; tries++ {
					if tries > 50*n*maxPar {
						t.Fatalf("only %d of %d keys in key groups %v", i, n, kgs)
					}
					var key []byte
					isInt := !mixed || r.IntN(2) == 0
					v := r.Int64N(1<<40) - 1<<39
					if isInt {
						key = AppendInt64(nil, v)
					} else {
						key = AppendString(nil, strings.Repeat("k", r.IntN(12))+fmt.Sprint(v))
					}
					if _, ok := own.index[string(key)]; ok || !inKGs(key) {
						continue
					}
					slot := own.add(key)
					own.vals[slot] = v
					if isInt {
						rec.AddedInt(slot, types.KindBigInt, v)
					} else {
						rec.AddedKey(slot, key)
					}
					rec.Changed(slot)
					i++
				}
			}
			fill(lrec, lown, nl, mixedL)
			fill(orec, oown, no, mixedO)
			if err := lrec.SnapshotWith(orec); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Snapshot(filepath.Join(t.TempDir(), "snap")); err != nil {
				t.Fatal(err)
			}
			if d := st.Level0Sublevels(); d != 0 {
				t.Fatalf("level 0 is %d deep after the first checkpoint, want 0: a key of the run was out of order", d)
			}
		})
	}
}
