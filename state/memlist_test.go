package state

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// TestListStateMemList runs random adds, clears, checkpoints and restores
// on ListState lists over a store, and checks every list against a Go
// model after each restore and at the end. With a large budget the lists
// are memLists (the test checks that some are), so this covers their
// writing to the store (whole, appended to, cleared, cleared and
// refilled shorter) and a restore's generic lists turning back into
// memLists; with a small budget the state spills mid-run.
func TestListStateMemList(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (go test ./state -run TestListStateMemList -seed %d)", seed, seed)
	for _, budget := range []int64{64 << 20, 6 << 10} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(budget)))
			dir := t.TempDir()
			sopts := statestore.Options{CacheBytes: budget, MaxParallelism: maxPar, MemTableBytes: 1 << 20}
			const nkeys = 8
			model := make([][]int64, nkeys)
			var ckModel [][]int64
			var ckDir string
			var store *statestore.Store
			var k *Keyed
			var l *ListState[int64]
			gen, cks, restores, memLists := 0, 0, 0, 0
			open := func(from string) {
				gen++
				work := filepath.Join(dir, fmt.Sprint("work", gen))
				var err error
				if from == "" {
					store, err = statestore.Open(work, sopts)
				} else {
					store, err = statestore.Restore(from, work, sopts)
				}
				must(t, err)
				k, err = Open(store, Options{OperatorID: "op", MaxParallelism: maxPar})
				must(t, err)
				l, err = NewListState(k, "l", Int64{})
				must(t, err)
			}
			setKey := func(i int) {
				must(t, k.SetCurrentKey(AppendValue(nil, types.BigIntValue(int64(i)))))
			}
			verify := func(what string) {
				for i := range nkeys {
					setKey(i)
					var got []int64
					must(t, l.Get(func(v int64) (bool, error) { got = append(got, v); return true, nil }))
					if !slices.Equal(got, model[i]) {
						t.Fatalf("seed %d, %s: key %d: list %v, want %v", seed, what, i, got, model[i])
					}
				}
			}
			open("")
			for step := range 2000 {
				i := r.IntN(nkeys)
				setKey(i)
				switch op := r.IntN(100); {
				case op < 70:
					v := r.Int64N(1 << 40)
					must(t, l.Add(v))
					model[i] = append(model[i], v)
				case op < 80:
					must(t, l.Clear())
					model[i] = nil
				case op < 85:
					// A shorter list than the store holds, at once.
					must(t, l.Clear())
					model[i] = nil
					for range r.IntN(3) {
						v := r.Int64N(100)
						must(t, l.Add(v))
						model[i] = append(model[i], v)
					}
				case op < 93:
					if h, ok := k.be.(*hybridBackend); ok && h.mem != nil {
						for _, e := range h.mem.points {
							if e.list != nil && e.flags&memDeleted == 0 {
								memLists++
							}
						}
					}
					cks++
					ckDir = filepath.Join(dir, fmt.Sprint("chk", cks))
					_, err := store.Snapshot(ckDir)
					must(t, err)
					ckModel = make([][]int64, nkeys)
					for j := range model {
						ckModel[j] = slices.Clone(model[j])
					}
				case op < 96 && ckDir != "":
					must(t, store.Close())
					open(ckDir)
					restores++
					for j := range ckModel {
						model[j] = slices.Clone(ckModel[j])
					}
					verify(fmt.Sprintf("step %d, restore of checkpoint %d", step, cks))
				default:
					verify(fmt.Sprintf("step %d", step))
				}
			}
			verify("end")
			must(t, store.Close())
			t.Logf("%d checkpoints, %d restores, %d memLists seen at checkpoints", cks, restores, memLists)
			if budget > 1<<20 && memLists == 0 {
				t.Errorf("no list was kept as a memList")
			}
		})
	}
}
