package state

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortedChunkTies checks the order of sortedChunk's entries against a
// Go sort of the same keys, for keys that share their first 9 bytes in
// runs of every length around tieInsertMax (a DISTINCT entry's family and
// value, then a group key of varying length), keys shorter than 9 bytes
// whose zero padding ties with longer keys' zero bytes, and key groups
// big enough for the radix sort (sortTies) and small ones (compareEnts).
func TestSortedChunkTies(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	cases := []struct {
		name     string
		keys     int // entries
		kgs      int // key groups they are spread over
		maxRun   int // the most entries that share one lead
		shortPct int // percent of keys shorter than 9 bytes
	}{
		{"radix, runs of 2", 4000, 2, 2, 0},
		{"radix, runs to 12", 4000, 2, tieInsertMax, 0},
		{"radix, runs to 40", 6000, 3, 40, 0},
		{"radix, short keys", 4000, 1, 20, 20},
		{"few per group", 600, 64, 8, 10},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(ci)))
			own := &keysOwner{}
			seen := map[string]bool{}
			for len(own.keys) < c.keys {
				lead := make([]byte, 9)
				lead[0] = byte(r.IntN(3))
				binary.BigEndian.PutUint64(lead[1:], uint64(r.Int64N(1<<20))<<r.IntN(40))
				if r.IntN(100) < c.shortPct {
					// A short key and longer ones padded like it.
					n := 1 + r.IntN(8)
					for i := n; i < 9; i++ {
						lead[i] = 0
					}
					for _, k := range [][]byte{lead[:n], lead[:9], append(slices.Clone(lead[:n]), 0), append(slices.Clone(lead), 0, 0, 1)} {
						if !seen[string(k)] {
							seen[string(k)] = true
							own.keys = append(own.keys, slices.Clone(k))
						}
					}
					continue
				}
				run := 1 + r.IntN(c.maxRun)
				for range run {
					gk := make([]byte, r.IntN(12))
					for i := range gk {
						gk[i] = byte(r.IntN(4)) // many shared bytes
					}
					k := append(slices.Clone(lead), gk...)
					if !seen[string(k)] {
						seen[string(k)] = true
						own.keys = append(own.keys, k)
					}
				}
			}
			rec, err := NewRecords(RecordOptions{Name: "ties.v1", OperatorID: "op", Budget: 64 << 20, RecordBytes: 40, Exclusive: true}, own)
			if err != nil {
				t.Fatal(err)
			}
			rec.sp = nil // kept in memory; chunks is called directly
			kgOf := make([]int, len(own.keys))
			for i := range own.keys {
				kgOf[i] = r.IntN(c.kgs)
				rec.setKG(int32(i), kgOf[i])
			}
			type kv struct {
				kg  int
				key []byte
				rec byte
			}
			var want, got []kv
			for i, k := range own.keys {
				want = append(want, kv{kgOf[i], append(slices.Clone(rec.prefix), k...), byte(i)})
			}
			slices.SortFunc(want, func(a, b kv) int {
				if a.kg != b.kg {
					return a.kg - b.kg
				}
				return bytes.Compare(a.key, b.key)
			})
			err = rec.chunks(rec.live, false, func(slots []int32, first, end int) error {
				ents, fixed, err := rec.sortedChunk(slots, first, end)
				if err != nil {
					return err
				}
				for i := range ents {
					k, v := rec.entry(ents, i, fixed)
					got = append(got, kv{int(ents[i].kg), slices.Clone(k), v[2]})
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d entries, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].kg != want[i].kg || !bytes.Equal(got[i].key, want[i].key) || got[i].rec != want[i].rec {
					t.Fatalf("entry %d: key group %d key %x record %d, want %d %x %d", i, got[i].kg, got[i].key, got[i].rec, want[i].kg, want[i].key, want[i].rec)
				}
			}
		})
	}
}
