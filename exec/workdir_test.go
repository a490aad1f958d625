package exec

import (
	"os"
	"path/filepath"
	"testing"
)

// A run restarted in the same process gets a working folder of its own: a
// store abandoned by the run before (a Pebble that broke off may still
// write its files) can never be reopened, or written into, by the next.
func TestPrepareCheckpointingRunFolder(t *testing.T) {
	dir := t.TempDir()
	c := testCheckpointing(t, dir, "job", nil, 0)
	g := &JobGraph{Name: "job"}
	_, first, err := prepareCheckpointing(g, c)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(first) != c.WorkDir {
		t.Fatalf("run folder %s is not in the working folder %s", first, c.WorkDir)
	}
	// What an abandoned store of the first run left.
	left := filepath.Join(first, "op-0", "000001.log")
	if err := os.MkdirAll(filepath.Dir(left), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(left, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, second, err := prepareCheckpointing(g, c)
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatalf("the restarted run reuses the folder %s", first)
	}
	if fi, err := os.Stat(second); err != nil || !fi.IsDir() {
		t.Fatalf("run folder %s: %v", second, err)
	}
	if entries, _ := os.ReadDir(second); len(entries) != 0 {
		t.Fatalf("new run folder %s is not empty: %v", second, entries)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Fatalf("the earlier run's folder %s is still there (%v)", first, err)
	}
}
