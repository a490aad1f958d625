package filesystem

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/internal/testseed"
)

// partFolder is what a partitioned sink's folder shows readers: the
// sorted data lines of the final part files by partition folder, the
// partitions with a success file, and the in-progress files left.
type partFolder struct {
	rows       map[string][]string
	success    []string
	inProgress []string
}

func readPartFolder(t *testing.T, dir string) partFolder {
	t.Helper()
	f := partFolder{rows: map[string][]string{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		switch name := d.Name(); {
		case name == "_SUCCESS":
			f.success = append(f.success, rel)
		case strings.HasSuffix(name, ".inprogress"):
			f.inProgress = append(f.inProgress, rel+"/"+name)
		case strings.HasPrefix(name, "part-"):
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if l != "" {
					f.rows[rel] = append(f.rows[rel], l)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.rows {
		slices.Sort(r)
	}
	slices.Sort(f.success)
	return f
}

func (f partFolder) String() string {
	var parts []string
	for d, r := range f.rows {
		parts = append(parts, fmt.Sprintf("%s: %d rows", d, len(r)))
	}
	slices.Sort(parts)
	return fmt.Sprintf("rows {%s} success %v in progress %v", strings.Join(parts, ", "), f.success, f.inProgress)
}

// TestEndPartitionedRandom: an earlier run committed rows into some
// partitions (with success files); then a job without checkpoints, 2 to 4
// sink subtasks, writes random rows into random partitions (old and new,
// shared by subtasks, rolling small files), and one rename of its end's
// commits fails, anywhere. The folder must then be exactly what the
// earlier run left (computed here: its rows and its success files), with
// nothing in progress; the rerun adds exactly the job's rows and a
// success file for every partition either run wrote.
func TestEndPartitionedRandom(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 23))
	for round := range 15 {
		what := fmt.Sprintf("seed %d round %d", seed, round)
		dir := t.TempDir()
		tbl := q10Table(dir, "csv", "sink.partition-commit.delay", "0 s", "sink.partition-commit.policy.kind", "success-file",
			"sink.rolling-policy.file-size", fmt.Sprintf("%db", 8+r.IntN(40)))
		next := 0
		// rows returns n random rows for each of p subtasks, and adds
		// them to want by partition folder.
		rows := func(p, n, parts int, want map[string][]string) [][][4]string {
			out := make([][][4]string, p)
			for k := range out {
				for range n {
					hm := fmt.Sprint(r.IntN(parts))
					id := next
					next++
					out[k] = append(out[k], [4]string{fmt.Sprint(id), fmt.Sprint(id * 7), "d", hm})
					want["dt=d/hm="+hm] = append(want["dt=d/hm="+hm], fmt.Sprintf("%d,%d", id, id*7))
				}
			}
			return out
		}
		run := func(fault bool, rows [][][4]string) error {
			t.Helper()
			sk, err := NewSink(tbl, connector.Env{})
			mustOK(t, err)
			s := sk.(*Sink)
			renames, failAt := 0, 0
			renameFault(s, &renames, &failAt)
			mustOK(t, s.Recover(nil))
			ws := make([]*Writer, len(rows))
			for k := range rows {
				ws[k] = openWriter(t, s, k, len(rows))
			}
			for k := range rows {
				for i := 0; i < len(rows[k]); {
					j := min(len(rows[k]), i+1+r.IntN(6))
					mustOK(t, ws[k].Write(q10Batch(rows[k][i:j]...)))
					i = j
				}
			}
			if fault {
				files := len(readPartFolder(t, dir).inProgress)
				failAt = 1 + r.IntN(files)
			}
			return endJob(t, ws)
		}
		earlier := map[string][]string{}
		mustOK(t, run(false, rows(1+r.IntN(2), 1+r.IntN(8), 4, earlier)))
		before := readPartFolder(t, dir)
		check := func(got partFolder, want map[string][]string, when string) {
			t.Helper()
			var success []string
			for d, rs := range want {
				slices.Sort(rs)
				if !slices.Equal(got.rows[d], rs) {
					t.Fatalf("%s: %s partition %s holds %d rows, want %d\n%s", what, when, d, len(got.rows[d]), len(rs), got)
				}
				success = append(success, d)
			}
			slices.Sort(success)
			if len(got.rows) != len(want) || !slices.Equal(got.success, success) || len(got.inProgress) > 0 {
				t.Fatalf("%s: %s the folder holds %s; want rows in %v, success files in them", what, when, got, success)
			}
		}
		check(before, earlier, "after the earlier run")
		both := map[string][]string{}
		for d, rs := range earlier {
			both[d] = slices.Clone(rs)
		}
		job := rows(2+r.IntN(3), 1+r.IntN(25), 8, both)
		if err := run(true, job); !errors.Is(err, errRenameFailed) {
			t.Fatalf("%s: the end returned %v, want the rename failure", what, err)
		}
		check(readPartFolder(t, dir), earlier, "after the failed job")
		if err := run(false, job); err != nil {
			t.Fatalf("%s: rerun: %v", what, err)
		}
		check(readPartFolder(t, dir), both, "after the rerun")
	}
}
