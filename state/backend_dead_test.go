package state

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
)

// checkDead checks the memory backend's bookkeeping of removed group
// entries whose deletion is not yet written (review r18-rev-lead of
// 605925e): every entry of dead is a deleted entry of a group the backend
// holds, each group's ndead is the number of dead's entries that name it,
// and after a snapshot (written) dead is empty and no group is empty.
func checkDead(t *testing.T, m *memBackend, written bool, step string) {
	t.Helper()
	count := map[*memGroup]int{}
	for k, e := range m.dead {
		if e.key != k || e.flags&memDeleted == 0 || e.grp == nil || m.groups[e.grp.prefix] != e.grp {
			t.Fatalf("%s: dead entry %q: deleted %v, group held %v", step, k, e.flags&memDeleted != 0,
				e.grp != nil && m.groups[e.grp.prefix] == e.grp)
		}
		count[e.grp]++
	}
	for p, g := range m.groups {
		if g.ndead != count[g] {
			t.Fatalf("%s: group %q counts %d dead entries, dead holds %d", step, p, g.ndead, count[g])
		}
		if written && g.len() == 0 {
			t.Fatalf("%s: empty group %q kept after a snapshot", step, p)
		}
	}
	if written && len(m.dead) != 0 {
		t.Fatalf("%s: %d dead entries after a snapshot", step, len(m.dead))
	}
}

// TestDeadEntriesBookkeeping drives a few keys' sorted maps (slices and
// B-tree groups) through puts, removals, puts of removed keys and
// snapshots, checking the values against a Go map and the dead entries'
// bookkeeping (checkDead) after every step; at the end every map is
// emptied and a snapshot must leave no group and the bytes of the start.
func TestDeadEntriesBookkeeping(t *testing.T) {
	seed := testseed.Seed(t)
	for _, width := range []int64{40, 600} { // a group's slice, a B-tree
		t.Run(fmt.Sprint("width=", width), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(width)))
			s := revOpen(t, filepath.Join(t.TempDir(), "w"), nil, 0, 1, 64<<20)
			defer func() { _ = s.st.Close() }()
			h := s.k.be.(*hybridBackend)
			base := h.mem.bytes
			model := map[int64]map[int64]int64{}
			snap := 0
			for step := range 6000 {
				key := r.Int64N(4)
				must(t, s.k.SetCurrentKey(Int64{}.Append(nil, key)))
				if model[key] == nil {
					model[key] = map[int64]int64{}
				}
				mk := r.Int64N(width)
				switch op := r.IntN(100); {
				case op < 45:
					v := r.Int64()
					must(t, s.s.Put(mk, v))
					model[key][mk] = v
				case op < 90:
					must(t, s.s.Remove(mk))
					delete(model[key], mk)
				case op < 98:
					v, ok, err := s.s.Get(mk)
					must(t, err)
					if want, wok := model[key][mk]; ok != wok || v != want {
						t.Fatalf("seed %d step %d: key %d get %d = %d,%v want %d,%v", seed, step, key, mk, v, ok, want, wok)
					}
				default:
					snap++
					_, err := s.st.Snapshot(filepath.Join(t.TempDir(), fmt.Sprint("c", snap)))
					must(t, err)
				}
				if h.mem == nil {
					t.Fatal("spilled")
				}
				checkDead(t, h.mem, false, fmt.Sprintf("seed %d step %d", seed, step))
			}
			_, err := s.st.Snapshot(filepath.Join(t.TempDir(), "last"))
			must(t, err)
			checkDead(t, h.mem, true, "after the last snapshot")
			for key, mm := range model {
				must(t, s.k.SetCurrentKey(Int64{}.Append(nil, key)))
				for mk := range mm {
					must(t, s.s.Remove(mk))
				}
			}
			_, err = s.st.Snapshot(filepath.Join(t.TempDir(), "empty"))
			must(t, err)
			checkDead(t, h.mem, true, "after emptying")
			if n := len(h.mem.groups); n != 0 || h.mem.bytes != base {
				t.Fatalf("every map emptied: %d groups, %d bytes (%d at the start)", n, h.mem.bytes, base)
			}
		})
	}
}
