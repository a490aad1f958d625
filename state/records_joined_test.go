package state

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// TestRecordsSnapshotWith checks Records.SnapshotWith on two Records of
// one operator, as a GroupAgg has (its groups and its DISTINCT entries):
// over checkpoints that add, change and remove records of both, each
// checkpoint restores, at parallelism 1 and 3, to exactly the records a
// Go map of each holds. The leading Records writes more than a
// write-through run's batch holds, so its run is an ingested sstable; the
// other's records go in the same run, so (without spills) each checkpoint
// adds one level-0 sublevel, not two. The other Records' name sorts first
// in some cases and last in the others; small chunks make both interleave
// chunk by chunk; one case spills (budget 1), so that the snapshots write
// records of backed Records. The level-0 depth is checked in the cases
// without removals (q16's: deletions go to a memtable, whose flush makes
// a level-0 file of its own).
func TestRecordsSnapshotWith(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	for _, tc := range []struct {
		name, other  string
		chunk, ochnk int
		budget       int64
		removals     bool
	}{
		{"other first", "grp", 700, 60, 64 << 20, true},
		{"other last", "groups-of-entries", 700, 60, 64 << 20, true},
		{"other first, no removals", "grp", 700, 60, 64 << 20, false},
		{"other last, one chunk each, no removals", "groups-of-entries", chunkEntries, chunkEntries, 64 << 20, false},
		{"spilled", "groups-of-entries", 700, 60, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recordsSnapshotWith(t, seed, tc.other, tc.chunk, tc.ochnk, tc.budget, tc.removals)
		})
	}
}

func recordsSnapshotWith(t *testing.T, seed uint64, other string, chunk, ochunk int, budget int64, removals bool) {
	r := rand.New(rand.NewPCG(seed, uint64(len(other))))
	dir := t.TempDir()
	st, err := statestore.Open(filepath.Join(dir, "work"), statestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lead, oth := newFakeOwner(), newFakeOwner()
	lopts := RecordOptions{Name: "entries", OperatorID: "op", Budget: budget, RecordBytes: 40}
	oopts := RecordOptions{Name: other, OperatorID: "op", Budget: budget, RecordBytes: 40}
	lrec, err := NewRecords(lopts, lead)
	if err != nil {
		t.Fatal(err)
	}
	orec, err := NewRecords(oopts, oth)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Records{lrec, orec} {
		if err := x.Attach(st, false); err != nil {
			t.Fatal(err)
		}
	}
	lrec.chunk, orec.chunk = chunk, ochunk
	lmodel, omodel := map[string]int64{}, map[string]int64{}
	var lkeys, okeys []string // every key ever added, to pick from
	// write changes (or adds) the record of key in rec, or removes it.
	write := func(rec *Records, own *fakeOwner, model map[string]int64, key []byte, n int64, remove bool) {
		slot, ok := findOrLoad(t, rec, own.index, key)
		if remove {
			if ok {
				if err := rec.Removed(slot); err != nil {
					t.Fatal(err)
				}
				own.remove(slot)
			}
			delete(model, string(key))
			return
		}
		if !ok {
			slot = own.add(key)
			if rec == lrec {
				rec.AddedInt(slot, types.KindBigInt, n)
			} else {
				rec.AddedKey(slot, key)
			}
		}
		v := r.Int64N(1 << 40)
		own.vals[slot] = v
		rec.Changed(slot)
		model[string(key)] = v
	}
	const cycles = 4
	next := int64(0)
	spills := 0
	for c := range cycles {
		for range 9000 + r.IntN(2000) { // new entries: more than a batch's run
			next += 1 + r.Int64N(3)
			key := AppendInt64(nil, next)
			lkeys = append(lkeys, string(key))
			write(lrec, lead, lmodel, key, next, false)
		}
		for range 500 { // old entries change or go
			k := lkeys[r.IntN(len(lkeys))]
			write(lrec, lead, lmodel, []byte(k), readInt64Key(t, k), removals && r.IntN(3) == 0)
		}
		for range 1200 { // groups: half new, the rest changed or removed
			var k string
			if len(okeys) == 0 || r.IntN(2) == 0 {
				k = string(AppendString(nil, fmt.Sprintf("g%d", r.IntN(50000))))
				okeys = append(okeys, k)
			} else {
				k = okeys[r.IntN(len(okeys))]
			}
			write(orec, oth, omodel, []byte(k), 0, removals && r.IntN(8) == 0)
		}
		for _, x := range []*Records{lrec, orec} {
			if x.OverBudget() {
				if err := x.Spill(); err != nil {
					t.Fatal(err)
				}
				spills++
			}
		}
		if err := lrec.SnapshotWith(orec); err != nil {
			t.Fatal(err)
		}
		snap := filepath.Join(dir, fmt.Sprint("snap", c))
		if _, err := st.Snapshot(snap); err != nil {
			t.Fatal(err)
		}
		checkRestoredRecords(t, dir, snap, c, lopts, oopts, maps.Clone(lmodel), maps.Clone(omodel))
	}
	if budget == 1 {
		if spills == 0 || !lrec.Backed() || !orec.Backed() {
			t.Fatalf("%d spills, backed %v %v: the case needs spilled records", spills, lrec.Backed(), orec.Backed())
		}
		return
	}
	if removals {
		return // the deletions' memtable flushes add sublevels too
	}
	// The first checkpoint's sstable lands in the empty bottom level; each
	// later one is one more sublevel of level 0.
	if d := st.Level0Sublevels(); d > cycles-1 {
		t.Fatalf("level 0 is %d deep after %d checkpoints, want at most %d: the two Records were written as two runs", d, cycles, cycles-1)
	}
}

// readInt64Key returns the integer of a key AppendInt64 encoded.
func readInt64Key(t *testing.T, k string) int64 {
	t.Helper()
	v, _, err := DecodeValue([]byte(k))
	if err != nil || v.Kind() != types.KindBigInt {
		t.Fatalf("key %x: %v %v", k, v, err)
	}
	return v.Int()
}

// checkRestoredRecords restores snapshot snap at parallelism 1 and 3 and
// requires both Records to hold exactly the models' records.
func checkRestoredRecords(t *testing.T, dir, snap string, c int, lopts, oopts RecordOptions, lmodel, omodel map[string]int64) {
	t.Helper()
	for _, par := range []int{1, 3} {
		lgot, ogot := map[string]int64{}, map[string]int64{}
		for sub := range par {
			first, last := KeyGroupRange(sub, par, 128)
			work := filepath.Join(dir, fmt.Sprintf("r%d-%d-%d", c, par, sub))
			rst, err := statestore.RestoreKeyGroups([]string{snap}, work, first, last, statestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, side := range []struct {
				opts RecordOptions
				got  map[string]int64
			}{{lopts, lgot}, {oopts, ogot}} {
				o := side.opts
				o.Budget, o.Subtask, o.Parallelism = 64<<20, sub, par
				own := newFakeOwner()
				rec, err := NewRecords(o, own)
				if err != nil {
					t.Fatal(err)
				}
				if err := rec.Attach(rst, true); err != nil {
					t.Fatal(err)
				}
				if rec.Backed() {
					t.Fatalf("checkpoint %d, parallelism %d: %s restored backed", c, par, o.Name)
				}
				for k, slot := range own.index {
					if kg := KeyGroup([]byte(k), 128); kg < first || kg > last {
						t.Fatalf("checkpoint %d: %s key %x of key group %d restored in subtask %d of %d", c, o.Name, k, kg, sub, par)
					}
					if _, dup := side.got[k]; dup {
						t.Fatalf("checkpoint %d: %s key %x restored twice", c, o.Name, k)
					}
					side.got[k] = own.vals[slot]
				}
			}
			if err := rst.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for _, cmp := range []struct {
			name      string
			got, want map[string]int64
		}{{lopts.Name, lgot, lmodel}, {oopts.Name, ogot, omodel}} {
			if len(cmp.got) != len(cmp.want) {
				t.Fatalf("checkpoint %d, parallelism %d: %s restored %d records, want %d", c, par, cmp.name, len(cmp.got), len(cmp.want))
			}
			for k, v := range cmp.want {
				if g, ok := cmp.got[k]; !ok || g != v {
					t.Fatalf("checkpoint %d, parallelism %d: %s key %x: %d (%v), want %d", c, par, cmp.name, k, g, ok, v)
				}
			}
		}
	}
}
