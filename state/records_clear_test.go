package state

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// countKeys counts the stored keys of operator space op under the
// state names names (all of them when none is given).
func countKeys(t *testing.T, st *statestore.Store, op string, names ...string) int {
	t.Helper()
	sp, err := st.Space(op)
	if err != nil {
		t.Fatal(err)
	}
	bounds := [][2][]byte{{nil, nil}}
	if len(names) > 0 {
		bounds = bounds[:0]
		for _, name := range names {
			p := namePrefix(name)
			bounds = append(bounds, [2][]byte{p, prefixEnd(nil, p)})
		}
	}
	n := 0
	for kg := range types.DefaultMaxParallelism {
		for _, b := range bounds {
			err := sp.Scan(kg, b[0], b[1], false, func(_, _ []byte) (bool, error) {
				n++
				return true, nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return n
}

// TestRecordsClear fills Records over a DeltaSource past its budget
// (spills, blind writes: records, parts, deltas and generation marks in
// the store), clears it, and checks that nothing of it is left in memory
// or in the store, that Records is no longer backed, that records written
// after Clear are read back (also after a snapshot, a restore at
// parallelism 1 and 3), and that nothing cleared comes back. Without
// Exclusive, a second Records of the same operator space keeps its
// records through the first one's Clear.
func TestRecordsClear(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	for _, exclusive := range []bool{true, false} {
		t.Run(fmt.Sprint("exclusive=", exclusive), func(t *testing.T) { testRecordsClear(t, seed, exclusive) })
	}
}

func testRecordsClear(t *testing.T, seed uint64, exclusive bool) {
	t.Logf("seed %d (go test ./state -run TestRecordsClear -seed %d)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 77))
	dir := t.TempDir()
	st := openStore(t, filepath.Join(dir, "work"))
	opts := RecordOptions{Name: "lists", OperatorID: "op", Budget: 1, RecordBytes: 100, Exclusive: exclusive}
	newRun := func(o RecordOptions, store *statestore.Store, restored bool) *deltaRun {
		own := newDeltaOwner()
		rec, err := NewRecords(o, own)
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Attach(store, restored); err != nil {
			t.Fatal(err)
		}
		return &deltaRun{t: t, rec: rec, own: own, model: map[string][]int64{}, seed: seed}
	}
	d := newRun(opts, st, false)
	var other *deltaRun // another state of the operator (not exclusive)
	if !exclusive {
		o := opts
		o.Name = "other"
		other = newRun(o, st, false)
	}
	keyOf := func(i int) []byte { return AppendValue(nil, types.BigIntValue(int64(i))) }
	const keys = 3000
	blind := 0
	for round := range 12 {
		for range 400 {
			key := keyOf(r.IntN(keys))
			if _, ok := d.own.index[string(key)]; !ok && d.rec.Blind() {
				blind++
			}
			d.write(key, randomOp(r))
			if other != nil && r.IntN(4) == 0 {
				other.write(keyOf(r.IntN(keys)), deltaOp{0, r.Int64N(1000)})
			}
		}
		if err := d.rec.Snapshot(); err != nil {
			t.Fatal(err)
		}
		if round%3 == 2 {
			if err := d.rec.Spill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Writes since the last snapshot: in memory and blind, not stored.
	for range 200 {
		d.write(keyOf(r.IntN(keys)), randomOp(r))
	}
	if blind == 0 || !d.rec.Backed() {
		t.Fatalf("seed %d: %d blind writes, backed %v: the state did not spill", seed, blind, d.rec.Backed())
	}
	if other != nil {
		if err := other.rec.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"lists", "lists" + PartSuffix, "lists" + DeltaSuffix, "lists" + GenSuffix}
	otherKeys := countKeys(t, st, "op") - countKeys(t, st, "op", names...)
	for _, name := range []string{"lists", "lists" + DeltaSuffix, "lists" + GenSuffix} { // parts may be none
		if countKeys(t, st, "op", name) == 0 {
			t.Fatalf("seed %d: nothing stored under %s before Clear", seed, name)
		}
	}
	if err := d.rec.Clear(); err != nil {
		t.Fatal(err)
	}
	d.model = map[string][]int64{}
	if d.rec.Len() != 0 || d.rec.Backed() || len(d.own.index) != 0 {
		t.Fatalf("seed %d: after Clear: %d records in memory (owner %d), backed %v", seed, d.rec.Len(), len(d.own.index), d.rec.Backed())
	}
	for _, snap := range []bool{false, true} {
		if snap {
			if err := d.rec.Snapshot(); err != nil {
				t.Fatal(err)
			}
		}
		if n := countKeys(t, st, "op", names...); n != 0 {
			t.Fatalf("seed %d: %d keys of the state stored after Clear (snapshot %v)", seed, n, snap)
		}
		if n := countKeys(t, st, "op"); n != otherKeys {
			t.Fatalf("seed %d: %d keys of the other state stored after Clear, want %d", seed, n, otherKeys)
		}
	}
	// New writes after Clear, with a snapshot between.
	for i := range 600 {
		d.write(keyOf(r.IntN(keys)), deltaOp{0, r.Int64N(1000)})
		if i == 300 {
			if err := d.rec.Snapshot(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if d.rec.Blind() {
		t.Fatalf("seed %d: blind writes after Clear", seed)
	}
	check := func(run *deltaRun, what string, mine func([]byte) bool) {
		for k := range keys {
			key := keyOf(k)
			if mine != nil && !mine(key) {
				continue
			}
			if got, want := run.read(key), run.model[string(key)]; !slices.Equal(got, want) {
				t.Fatalf("seed %d: %s: key %d: %v, want %v", seed, what, k, got, want)
			}
		}
	}
	check(d, "after Clear", nil)
	if other != nil {
		check(other, "the other state after Clear", nil)
	}
	if err := d.rec.Snapshot(); err != nil {
		t.Fatal(err)
	}
	snapDir := filepath.Join(dir, "snap")
	if _, err := st.Snapshot(snapDir); err != nil {
		t.Fatal(err)
	}
	for _, par := range []int{1, 3} {
		for sub := range par {
			first, last := KeyGroupRange(sub, par, types.DefaultMaxParallelism)
			rst, err := statestore.RestoreKeyGroups([]string{snapDir}, filepath.Join(dir, fmt.Sprint("r", par, sub)), first, last, statestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			o := opts
			o.Subtask, o.Parallelism = sub, par
			d2 := newRun(o, rst, true)
			d2.model = d.model
			mine := func(key []byte) bool {
				kg := KeyGroup(key, types.DefaultMaxParallelism)
				return kg >= first && kg <= last
			}
			check(d2, fmt.Sprintf("restored at parallelism %d", par), mine)
			_ = rst.Close()
		}
	}
}
