package state

import (
	"math/rand/v2"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/statestore"
)

// TestPointMemoInvariant (review of memBackend.lastP): random puts, reads
// and deletions of point keys, list appends and clears, write-backs to a
// store (which drop stored deletions from the hash map), and loaded
// entries claimed by a group after a point lookup remembered them; after
// every step lastP is nil or the hash map's entry of its key, and every
// point key reads as a Go map of the live values says.
func TestPointMemoInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t), 23))
	st, err := statestore.Open(t.TempDir(), statestore.Options{CacheBytes: 1 << 20, MaxParallelism: 128})
	must(t, err)
	defer st.Close()
	sp, err := st.Space("op")
	must(t, err)
	for _, track := range []bool{false, true} {
		m := newMemBackend()
		m.track = track
		model := map[string]string{}
		lists := map[string]int{}
		check := func(step int, what string) {
			t.Helper()
			if e := m.lastP; e != nil && m.points[e.key] != e {
				t.Fatalf("track %v step %d (%s): lastP %q is not the hash map's entry", track, step, what, e.key)
			}
			for _, i := range r.Perm(4) {
				k := []string{"a", "b", "c", "d"}[i]
				v, ok, err := m.get(1, []byte(k), 0)
				must(t, err)
				want, wok := model[k]
				if ok != wok || string(v) != want {
					t.Fatalf("track %v step %d (%s): %q = %q %v, want %q %v", track, step, what, k, v, ok, want, wok)
				}
			}
		}
		// Loaded entries (as at a restore): a group's, looked up as a
		// point first, then claimed by the group.
		for i, k := range []string{"gb1", "ga2", "ga1"} {
			m.load(m.memKey(2, []byte(k)), []byte{byte(i)})
			if e := m.point(m.memKey(2, []byte(k))); e == nil {
				t.Fatalf("loaded %q not found", k)
			}
		}
		if m.lastP == nil || m.lastP.key != string(m.memKey(2, []byte("ga1"))) {
			t.Fatalf("the last point lookup not remembered")
		}
		if g := m.group(m.memKey(2, []byte("ga"))); g == nil || g.len() != 2 {
			t.Fatalf("group ga not claimed")
		}
		check(-1, "group claimed")
		if e := m.point(m.memKey(2, []byte("ga1"))); e != nil {
			t.Fatalf("ga1 still a point entry after its group took it")
		}
		for step := range 3000 {
			k := []string{"a", "b", "c", "d"}[r.IntN(4)]
			var what string
			switch p := r.IntN(100); {
			case p < 35:
				v := string(rune('A' + r.IntN(26)))
				must(t, m.put(1, []byte(k), []byte(v), 0))
				model[k], what = v, "put "+k
			case p < 50:
				_, _, err := m.get(1, []byte(k), 0)
				must(t, err)
				what = "get " + k
			case p < 70:
				must(t, m.del(1, []byte(k), 0))
				delete(model, k)
				what = "del " + k
			case p < 80:
				_, err := m.listAdd(3, []byte(k), []byte("x"))
				must(t, err)
				lists[k]++
				what = "listAdd " + k
			case p < 88:
				_, err := m.listClear(3, []byte(k))
				must(t, err)
				delete(lists, k)
				what = "listClear " + k
			case p < 94 && track:
				// Remembering a list's entry, a point's, or neither.
				switch r.IntN(3) {
				case 0:
					m.point(m.memKey(3, []byte(k)))
				case 1:
					m.point(m.memKey(1, []byte(k)))
				}
				must(t, m.writeDirty(sp))
				what = "writeDirty"
			default:
				// A read of a list counter key as a point (remembered),
				// then the list cleared.
				m.point(m.memKey(3, []byte(k)))
				_, err := m.listClear(3, []byte(k))
				must(t, err)
				delete(lists, k)
				what = "point list, listClear " + k
			}
			check(step, what)
		}
	}
}
