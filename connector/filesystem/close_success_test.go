package filesystem

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
)

// TestFailedCloseLeavesNoSuccessFile: a job without checkpoints writes
// three partitions of a sink with a success file; its Close renames the
// part files, then writes the partitions' success files in order, and the
// second fails (its name is taken by a folder). The job failed and Close
// renamed its part files back: no partition may now hold a success file
// that this Close wrote, or a reader waiting for it reads the partition
// as complete while its rows are not there (they come with the rerun).
func TestFailedCloseLeavesNoSuccessFile(t *testing.T) {
	dir := t.TempDir()
	tbl := q10Table(dir, "csv", "sink.partition-commit.delay", "0 s", "sink.partition-commit.policy.kind", "success-file")
	s, err := NewSink(tbl, connector.Env{})
	mustOK(t, err)
	mustOK(t, s.(*Sink).Recover(nil))
	w, err := s.Open(0, 1)
	mustOK(t, err)
	mustOK(t, w.Write(q10Batch(
		[4]string{"1", "1", "d", "a"},
		[4]string{"2", "2", "d", "b"},
		[4]string{"3", "3", "d", "c"})))
	// The success file of the second partition cannot be written.
	mustOK(t, os.MkdirAll(filepath.Join(dir, "dt=d", "hm=b", "_SUCCESS"), 0o755))
	if err := w.Close(); err == nil {
		t.Fatal("Close succeeded, want the success file's failure")
	}
	for _, f := range tree(t, dir) {
		name := filepath.Base(strings.SplitN(f, ":", 2)[0])
		if name == "_SUCCESS" {
			t.Errorf("after the failed Close a partition holds a success file: %s", f)
		}
		if strings.HasPrefix(name, "part-") {
			t.Errorf("after the failed Close the part file %s is final", f)
		}
	}
	// The rerun (from scratch, the disk repaired) commits every row once
	// and every partition.
	mustOK(t, os.Remove(filepath.Join(dir, "dt=d", "hm=b", "_SUCCESS")))
	s2, err := NewSink(tbl, connector.Env{})
	mustOK(t, err)
	committed, err := s2.(*Sink).Committed()
	mustOK(t, err)
	if committed != 0 {
		t.Fatalf("after the failed Close the folder holds output of checkpoint %d: a rerun is refused", committed)
	}
	mustOK(t, s2.(*Sink).Recover(nil))
	w2, err := s2.Open(0, 1)
	mustOK(t, err)
	mustOK(t, w2.Write(q10Batch(
		[4]string{"1", "1", "d", "a"},
		[4]string{"2", "2", "d", "b"},
		[4]string{"3", "3", "d", "c"})))
	mustOK(t, w2.Close())
	var got []string
	for _, f := range tree(t, dir) {
		path, rows, _ := strings.Cut(f, ":")
		if strings.HasPrefix(filepath.Base(path), "part-") {
			path = filepath.Dir(path) + "/part"
		}
		got = append(got, path+":"+rows)
	}
	want := []string{
		"dt=d/hm=a/_SUCCESS: ", "dt=d/hm=a/part: 1,1",
		"dt=d/hm=b/_SUCCESS: ", "dt=d/hm=b/part: 2,2",
		"dt=d/hm=c/_SUCCESS: ", "dt=d/hm=c/part: 3,3",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after the rerun the folder holds\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
