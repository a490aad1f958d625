package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/weir-sql/weir/statestore"
)

// TestRetainKeepsSharedFilesOfRealSnapshots takes checkpoints of a real
// state store (whose snapshots share sstables by hard link), deletes the
// older ones with Retain, and restores the newest.
func TestRetainKeepsSharedFilesOfRealSnapshots(t *testing.T) {
	st, root := newStorage(t, OSFS{})
	s, err := statestore.Open(filepath.Join(root, "work"), statestore.Options{CacheBytes: 256 << 10})
	must(t, err)
	defer s.Close()
	tb, err := s.Table("agg", "sum")
	must(t, err)
	const n = 5000
	put := func(i, gen int) {
		must(t, tb.Put(i%128, []byte(fmt.Sprintf("k%05d", i)), []byte(fmt.Sprintf("v%d-%d", i, gen))))
	}
	for i := 0; i < n; i++ {
		put(i, 1)
	}
	var shared bool
	for id := int64(1); id <= 2; id++ {
		if id > 1 {
			for i := 0; i < 50; i++ {
				put(i, int(id))
			}
		}
		p, err := st.Begin(id)
		must(t, err)
		dir := p.SubtaskDir("agg", 0)
		info, err := s.Snapshot(dir)
		must(t, err)
		files := make([]FileInfo, len(info.Files))
		for i, f := range info.Files {
			files[i] = FileInfo{Name: f.Name, Size: f.Size}
		}
		_, err = p.Complete(Metadata{
			MaxParallelism: 128,
			Operators: []OperatorState{{ID: "agg", Parallelism: 1, Subtasks: []SubtaskState{{
				Subtask: 0, Dir: SubtaskDirName("agg", 0), StateBytes: info.Bytes, Keys: info.Keys, Files: files,
			}}}},
		})
		must(t, err)
		if id == 2 {
			// Checkpoint 2 shares at least one sstable with checkpoint 1.
			for _, f := range files {
				a, err1 := os.Stat(filepath.Join(st.Dir(), "chk-1", "op-agg-0", f.Name))
				b, err2 := os.Stat(filepath.Join(dir, f.Name))
				if err1 == nil && err2 == nil && os.SameFile(a, b) {
					shared = true
				}
			}
		}
	}
	if !shared {
		t.Fatal("checkpoints 1 and 2 share no sstable; the test proves nothing")
	}
	must(t, st.Retain(1))
	c, skipped, err := st.Latest()
	must(t, err)
	if c.Meta.CheckpointID != 2 || len(skipped) != 0 {
		t.Fatalf("Latest = %d, skipped %v", c.Meta.CheckpointID, skipped)
	}
	if _, err := os.Stat(filepath.Join(st.Dir(), "chk-1")); !os.IsNotExist(err) {
		t.Fatal("chk-1 not deleted")
	}
	dir, ok := c.SubtaskDir("agg", 0)
	if !ok {
		t.Fatal("no state for agg/0")
	}
	r, err := statestore.Restore(dir, filepath.Join(root, "restored"), statestore.Options{})
	must(t, err)
	defer r.Close()
	rt, err := r.Table("agg", "sum")
	must(t, err)
	for i := 0; i < n; i++ {
		gen := 1
		if i < 50 {
			gen = 2
		}
		v, ok, err := rt.Get(i%128, []byte(fmt.Sprintf("k%05d", i)))
		must(t, err)
		if want := fmt.Sprintf("v%d-%d", i, gen); !ok || string(v) != want {
			t.Fatalf("key %d: %q,%v want %q", i, v, ok, want)
		}
	}
	// A savepoint of it restores too, after the checkpoints are gone.
	sp, err := Savepoint(OSFS{}, c, filepath.Join(root, "sp"))
	must(t, err)
	must(t, os.RemoveAll(st.Dir()))
	spDir, _ := sp.SubtaskDir("agg", 0)
	r2, err := statestore.Restore(spDir, filepath.Join(root, "restored2"), statestore.Options{})
	must(t, err)
	defer r2.Close()
	rt2, err := r2.Table("agg", "sum")
	must(t, err)
	if v, ok, err := rt2.Get(7, []byte("k00007")); err != nil || !ok || string(v) != "v7-2" {
		t.Errorf("savepoint restore: %q %v %v", v, ok, err)
	}
}
