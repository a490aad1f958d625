package filesystem

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
)

// TestFailedCloseLeavesNoSuccessFile: an earlier run committed partition
// hm=0 (its row 0 and success file). A job without checkpoints then
// writes hm=0, a, b and c of a sink with a success file; its Close renames
// the part files, then writes the partitions' success files in order, and
// the one of b fails (its name is taken by a folder). The job failed and
// Close renamed its part files back: no partition may now hold a success
// file that this Close wrote, or a reader waiting for it reads the
// partition as complete while its rows are not there (they come with the
// rerun); hm=0 keeps the one of the earlier run (its row 0 is there).
func TestFailedCloseLeavesNoSuccessFile(t *testing.T) {
	dir := t.TempDir()
	tbl := q10Table(dir, "csv", "sink.partition-commit.delay", "0 s", "sink.partition-commit.policy.kind", "success-file")
	// folder lists the visible files under dir (no in-progress ones), a
	// part file as "<partition>/part", sorted.
	folder := func() []string {
		var out []string
		for _, f := range tree(t, dir) {
			path, rows, _ := strings.Cut(f, ":")
			switch base := filepath.Base(path); {
			case strings.HasPrefix(base, "."):
				continue
			case strings.HasPrefix(base, "part-"):
				path = filepath.Dir(path) + "/part"
			}
			out = append(out, path+":"+rows)
		}
		slices.Sort(out)
		return out
	}
	run := func(closeOK bool, rows ...[4]string) {
		t.Helper()
		s, err := NewSink(tbl, connector.Env{})
		mustOK(t, err)
		mustOK(t, s.(*Sink).Recover(nil))
		w, err := s.Open(0, 1)
		mustOK(t, err)
		mustOK(t, w.Write(q10Batch(rows...)))
		if err := w.Close(); (err == nil) != closeOK {
			t.Fatalf("Close returned %v, want success %v", err, closeOK)
		}
	}
	run(true, [4]string{"0", "0", "d", "0"})
	before := folder()
	rows := [][4]string{{"4", "4", "d", "0"}, {"1", "1", "d", "a"}, {"2", "2", "d", "b"}, {"3", "3", "d", "c"}}
	// The success file of partition b cannot be written.
	mustOK(t, os.MkdirAll(filepath.Join(dir, "dt=d", "hm=b", "_SUCCESS"), 0o755))
	run(false, rows...)
	if got := folder(); !slices.Equal(got, before) {
		t.Fatalf("after the failed Close the folder holds\n  %s\nwant what the earlier run left\n  %s", strings.Join(got, "\n  "), strings.Join(before, "\n  "))
	}
	// The rerun (the disk repaired) commits every row once and every
	// partition.
	mustOK(t, os.Remove(filepath.Join(dir, "dt=d", "hm=b", "_SUCCESS")))
	run(true, rows...)
	want := []string{
		"dt=d/hm=0/_SUCCESS: ", "dt=d/hm=0/part: 0,0", "dt=d/hm=0/part: 4,4",
		"dt=d/hm=a/_SUCCESS: ", "dt=d/hm=a/part: 1,1",
		"dt=d/hm=b/_SUCCESS: ", "dt=d/hm=b/part: 2,2",
		"dt=d/hm=c/_SUCCESS: ", "dt=d/hm=c/part: 3,3",
	}
	if got := folder(); !slices.Equal(got, want) {
		t.Fatalf("after the rerun the folder holds\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
