package checkpoint

import (
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files under testdata/")

// fakeStateFiles is the content of a fake Pebble snapshot folder.
var fakeStateFiles = map[string]string{
	"MANIFEST-000001": "manifest",
	"OPTIONS-000003":  "[Options]\n",
	"000004.sst":      "sstable four",
	"000005.sst":      "sstable five!",
}

// writeFakeState writes a fake Pebble snapshot into dir (which it creates).
func writeFakeState(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range fakeStateFiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// testMeta is the metadata of a checkpoint with two subtasks of "agg".
func testMeta(id int64) Metadata {
	return Metadata{
		Query:           "SELECT parity, SUM(n) FROM t GROUP BY parity",
		PlanFingerprint: "9f2c41d0",
		Timestamp:       time.Date(2026, 1, 2, 3, 4, int(id), 0, time.UTC),
		MaxParallelism:  128,
		Operators: []OperatorState{{
			ID: "agg", Name: "GroupAggregate", Parallelism: 2,
			Subtasks: []SubtaskState{
				{Subtask: 0, Dir: SubtaskDirName("agg", 0), Keys: 10 * id},
				{Subtask: 1, Dir: SubtaskDirName("agg", 1), Keys: 10*id + 1},
			},
		}},
		Sources: []SourcePosition{{Source: "s1", Subtask: 0, Position: []byte(fmt.Sprint(id))}},
	}
}

// writeCheckpoint writes a complete checkpoint id with fake state through fsys.
func writeCheckpoint(t *testing.T, st *Storage, id int64) *Checkpoint {
	t.Helper()
	p, err := st.Begin(id)
	if err != nil {
		t.Fatal(err)
	}
	for sub := 0; sub < 2; sub++ {
		writeFakeState(t, p.SubtaskDir("agg", sub))
	}
	c, err := p.Complete(testMeta(id))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newStorage(t *testing.T, fsys FS) (*Storage, string) {
	t.Helper()
	root := t.TempDir()
	st, err := NewStorage(fsys, root, "job")
	if err != nil {
		t.Fatal(err)
	}
	return st, root
}

func TestCompleteAndLoad(t *testing.T) {
	st, _ := newStorage(t, OSFS{})
	c := writeCheckpoint(t, st, 1)
	if c.Meta.Job != "job" || c.Meta.CheckpointID != 1 || c.Meta.Kind != KindCheckpoint || c.Meta.FormatVersion != FormatVersion {
		t.Errorf("completed metadata not filled in: %+v", c.Meta)
	}
	if got := len(c.Meta.Operators[0].Subtasks[0].Files); got != len(fakeStateFiles) {
		t.Errorf("file list has %d files, want %d", got, len(fakeStateFiles))
	}
	loaded, err := Load(OSFS{}, c.Path)
	if err != nil {
		t.Fatal(err)
	}
	dir, ok := loaded.SubtaskDir("agg", 1)
	if !ok || dir != filepath.Join(c.Path, "op-agg-1") {
		t.Errorf("SubtaskDir = %q, %v", dir, ok)
	}
	if _, ok := loaded.SubtaskDir("agg", 2); ok {
		t.Error("SubtaskDir of a missing subtask: want false")
	}
	if _, err := st.Begin(1); err == nil {
		t.Error("Begin of an existing id: want error")
	}
	// Complete refuses to write metadata whose state is missing.
	p, err := st.Begin(2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(testMeta(2)); err == nil {
		t.Error("Complete without state folders: want error")
	}
	if _, err := os.Stat(filepath.Join(p.Path(), MetadataFile)); !os.IsNotExist(err) {
		t.Errorf("failed Complete left _metadata: %v", err)
	}
	if err := p.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.Path()); !os.IsNotExist(err) {
		t.Errorf("Abort left the folder: %v", err)
	}
}

// damage breaks checkpoint folder p in one way.
type damage struct {
	name   string
	apply  func(t *testing.T, p string)
	reason error
	text   string
}

var damages = []damage{
	{"no metadata", func(t *testing.T, p string) { must(t, os.Remove(filepath.Join(p, MetadataFile))) },
		ErrIncompleteCheckpoint, "no _metadata"},
	{"truncated metadata", func(t *testing.T, p string) {
		f := filepath.Join(p, MetadataFile)
		data, err := os.ReadFile(f)
		must(t, err)
		must(t, os.WriteFile(f, data[:len(data)*2/3], 0o644))
	}, ErrCorruptCheckpoint, "truncated"},
	{"bit flip", func(t *testing.T, p string) {
		f := filepath.Join(p, MetadataFile)
		data, err := os.ReadFile(f)
		must(t, err)
		data[len(data)/2] ^= 0x10
		must(t, os.WriteFile(f, data, 0o644))
	}, ErrCorruptCheckpoint, "checksum"},
	{"deleted sst", func(t *testing.T, p string) { must(t, os.Remove(filepath.Join(p, "op-agg-1", "000005.sst"))) },
		ErrCorruptCheckpoint, "missing file 000005.sst"},
	{"short sst", func(t *testing.T, p string) {
		must(t, os.WriteFile(filepath.Join(p, "op-agg-0", "000004.sst"), []byte("x"), 0o644))
	}, ErrCorruptCheckpoint, "000004.sst is 1 bytes"},
	{"missing subtask folder", func(t *testing.T, p string) { must(t, os.RemoveAll(filepath.Join(p, "op-agg-0"))) },
		ErrCorruptCheckpoint, "state folder"},
	{"empty metadata", func(t *testing.T, p string) { must(t, os.WriteFile(filepath.Join(p, MetadataFile), nil, 0o644)) },
		ErrCorruptCheckpoint, "no header line"},
	{"flipped sst byte", func(t *testing.T, p string) { flipByte(t, filepath.Join(p, "op-agg-1", "000005.sst")) },
		ErrCorruptCheckpoint, "file 000005.sst is damaged: its crc32c is"},
	{"flipped MANIFEST byte", func(t *testing.T, p string) { flipByte(t, filepath.Join(p, "op-agg-0", "MANIFEST-000001")) },
		ErrCorruptCheckpoint, "file MANIFEST-000001 is damaged"},
	{"deleted MANIFEST", func(t *testing.T, p string) { must(t, os.Remove(filepath.Join(p, "op-agg-0", "MANIFEST-000001"))) },
		ErrCorruptCheckpoint, "missing file MANIFEST-000001"},
}

// flipByte flips one bit in the middle of file path, keeping its size. The
// file is rewritten (not changed in place), so hard links elsewhere keep
// the good content.
func flipByte(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	data[len(data)/2] ^= 0x08
	must(t, os.Remove(path))
	must(t, os.WriteFile(path, data, 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestLatestSkipsDamaged(t *testing.T) {
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			st, _ := newStorage(t, OSFS{})
			writeCheckpoint(t, st, 1)
			writeCheckpoint(t, st, 2)
			bad := writeCheckpoint(t, st, 3)
			d.apply(t, bad.Path)
			c, skipped, err := st.Latest()
			if err != nil {
				t.Fatal(err)
			}
			if c.Meta.CheckpointID != 2 {
				t.Errorf("Latest = %d, want 2", c.Meta.CheckpointID)
			}
			if len(skipped) != 1 || skipped[0].ID != 3 {
				t.Fatalf("skipped %+v, want checkpoint 3", skipped)
			}
			if r := skipped[0].Reason; !errors.Is(r, d.reason) || !strings.Contains(r.Error(), d.text) {
				t.Errorf("reason %v, want %v mentioning %q", r, d.reason, d.text)
			}
			if _, err := Load(OSFS{}, bad.Path); !errors.Is(err, d.reason) {
				t.Errorf("Load of damaged: %v, want %v", err, d.reason)
			}
		})
	}
}

func TestLatestNone(t *testing.T) {
	st, _ := newStorage(t, OSFS{})
	if _, _, err := st.Latest(); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("Latest of empty storage: %v, want ErrNoCheckpoint", err)
	}
	p, err := st.Begin(7)
	must(t, err)
	_, skipped, err := st.Latest()
	if !errors.Is(err, ErrNoCheckpoint) || len(skipped) != 1 || skipped[0].ID != 7 {
		t.Errorf("Latest with only an incomplete one: %v, skipped %+v", err, skipped)
	}
	_ = p
}

// TestCompleteCrashAtEveryStep crashes the process at every mutating
// filesystem operation of Complete and checks that what is left is either
// the complete new checkpoint or no _metadata at all, with Latest falling
// back to the previous checkpoint.
func TestCompleteCrashAtEveryStep(t *testing.T) {
	// Count Complete's mutating operations once.
	probe := NewFaultFS(OSFS{})
	pst, _ := newStorage(t, probe)
	pp, err := pst.Begin(1)
	must(t, err)
	writeFakeState(t, pp.SubtaskDir("agg", 0))
	writeFakeState(t, pp.SubtaskDir("agg", 1))
	before := mutatingOps(probe)
	_, err = pp.Complete(testMeta(1))
	must(t, err)
	steps := mutatingOps(probe) - before
	if steps < 4 {
		t.Fatalf("Complete did only %d mutating operations", steps)
	}

	for k := 0; k <= steps; k++ {
		t.Run(fmt.Sprintf("crash after %d", k), func(t *testing.T) {
			ffs := NewFaultFS(OSFS{})
			st, root := newStorage(t, ffs)
			writeCheckpoint(t, st, 1)
			p, err := st.Begin(2)
			must(t, err)
			writeFakeState(t, p.SubtaskDir("agg", 0))
			writeFakeState(t, p.SubtaskDir("agg", 1))
			ffs.CrashAfter(k)
			_, cerr := p.Complete(testMeta(2))
			crashed := ffs.Fired() == 1
			if k < steps && (!crashed || cerr == nil) {
				t.Fatalf("crash point %d of %d did not fire (fired %d, err %v)", k, steps, ffs.Fired(), cerr)
			}
			// Restart: a fresh process looks at the disk.
			st2, err := NewStorage(OSFS{}, root, "job")
			must(t, err)
			c, skipped, err := st2.Latest()
			must(t, err)
			_, metaErr := os.Stat(filepath.Join(p.Path(), MetadataFile))
			switch {
			case metaErr == nil:
				if c.Meta.CheckpointID != 2 {
					t.Errorf("_metadata of 2 exists but Latest = %d (skipped %+v)", c.Meta.CheckpointID, skipped)
				}
			case os.IsNotExist(metaErr):
				if c.Meta.CheckpointID != 1 || len(skipped) != 1 || !errors.Is(skipped[0].Reason, ErrIncompleteCheckpoint) {
					t.Errorf("no _metadata: Latest = %d, skipped %+v; want 1 and 2 incomplete", c.Meta.CheckpointID, skipped)
				}
			default:
				t.Fatal(metaErr)
			}
			// Retention after the restart cleans nothing it must keep.
			must(t, st2.Retain(1))
			c2, _, err := st2.Latest()
			must(t, err)
			if c2.Meta.CheckpointID != c.Meta.CheckpointID {
				t.Errorf("after Retain, Latest = %d, want %d", c2.Meta.CheckpointID, c.Meta.CheckpointID)
			}
		})
	}
}

func mutatingOps(f *FaultFS) int {
	n := 0
	for op := Op(0); op < numOps; op++ {
		if op.mutating() {
			n += f.Count(op)
		}
	}
	return n
}

func TestCompleteFaults(t *testing.T) {
	cases := []struct {
		op  Op
		err error
	}{
		{OpWrite, ErrDiskFull},
		{OpSync, errors.New("EIO")},
		{OpRename, errors.New("rename refused")},
		{OpCreate, os.ErrPermission},
	}
	for _, c := range cases {
		t.Run(c.op.String(), func(t *testing.T) {
			ffs := NewFaultFS(OSFS{})
			st, _ := newStorage(t, ffs)
			writeCheckpoint(t, st, 1)
			p, err := st.Begin(2)
			must(t, err)
			writeFakeState(t, p.SubtaskDir("agg", 0))
			writeFakeState(t, p.SubtaskDir("agg", 1))
			ffs.FailNth(c.op, ffs.Count(c.op)+1, c.err)
			_, err = p.Complete(testMeta(2))
			if !errors.Is(err, c.err) {
				t.Fatalf("Complete: %v, want %v", err, c.err)
			}
			if ffs.Fired() != 1 {
				t.Fatalf("fired %d faults, want 1", ffs.Fired())
			}
			entries, err := os.ReadDir(p.Path())
			must(t, err)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), MetadataFile) {
					t.Errorf("failed Complete left %s", e.Name())
				}
			}
			c1, _, err := st.Latest()
			must(t, err)
			if c1.Meta.CheckpointID != 1 {
				t.Errorf("Latest = %d, want 1", c1.Meta.CheckpointID)
			}
		})
	}
}

func TestRetain(t *testing.T) {
	st, _ := newStorage(t, OSFS{})
	inc0, err := st.Begin(0) // incomplete, older than every complete one
	must(t, err)
	for id := int64(1); id <= 5; id++ {
		writeCheckpoint(t, st, id)
	}
	bad := writeCheckpoint(t, st, 6)
	must(t, os.Remove(filepath.Join(bad.Path, "op-agg-0", "000004.sst"))) // corrupt
	writeCheckpoint(t, st, 7)
	inc8, err := st.Begin(8) // in progress, newer than every complete one
	must(t, err)

	must(t, st.Retain(2))
	infos, err := st.List()
	must(t, err)
	var ids []string
	for _, i := range infos {
		ids = append(ids, fmt.Sprintf("%d:%v", i.ID, i.Valid()))
	}
	if got := strings.Join(ids, " "); got != "5:true 7:true 8:false" {
		t.Errorf("after Retain(2): %s, want 5:true 7:true 8:false", got)
	}
	for _, p := range []string{inc0.Path(), bad.Path} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s not removed", p)
		}
	}
	if _, err := os.Stat(inc8.Path()); err != nil {
		t.Errorf("in-progress checkpoint removed: %v", err)
	}
	if err := st.Retain(0); err == nil {
		t.Error("Retain(0): want error")
	}
}

func TestSavepoint(t *testing.T) {
	st, root := newStorage(t, OSFS{})
	c := writeCheckpoint(t, st, 3)
	dst := filepath.Join(root, "savepoints", "sp-1")
	sp, err := Savepoint(OSFS{}, c, dst)
	must(t, err)
	if sp.Meta.Kind != KindSavepoint || sp.Meta.Extra["savepoint.source"] != c.Path {
		t.Errorf("savepoint metadata %+v", sp.Meta)
	}
	a, err := os.Stat(filepath.Join(c.Path, "op-agg-0", "000004.sst"))
	must(t, err)
	b, err := os.Stat(filepath.Join(dst, "op-agg-0", "000004.sst"))
	must(t, err)
	if os.SameFile(a, b) {
		t.Error("savepoint sstable is a hard link, want a copy")
	}
	// Self-contained: it loads after the checkpoint is gone and is moved.
	must(t, os.RemoveAll(st.Dir()))
	moved := filepath.Join(root, "moved")
	must(t, os.Rename(dst, moved))
	l, err := Load(OSFS{}, moved)
	must(t, err)
	if l.Meta.CheckpointID != 3 || l.Meta.Kind != KindSavepoint {
		t.Errorf("loaded %+v", l.Meta)
	}
	if _, err := Savepoint(OSFS{}, c, moved); err == nil {
		t.Error("savepoint into an existing folder: want error")
	}
	// A disk-full copy leaves nothing behind.
	ffs := NewFaultFS(OSFS{})
	ffs.FailNth(OpWrite, 2, ErrDiskFull)
	dst2 := filepath.Join(root, "sp-2")
	if _, err := Savepoint(ffs, l, dst2); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("Savepoint on a full disk: %v", err)
	}
	if _, err := os.Stat(dst2); !os.IsNotExist(err) {
		t.Errorf("failed savepoint left %s", dst2)
	}
}

func TestListAndInspectGolden(t *testing.T) {
	st, _ := newStorage(t, OSFS{})
	writeCheckpoint(t, st, 1)
	c2 := writeCheckpoint(t, st, 2)
	for i, d := range damages[:4] {
		c := writeCheckpoint(t, st, int64(3+i))
		d.apply(t, c.Path)
	}
	_, err := st.Begin(7)
	must(t, err)

	full := sampleMetadata()
	full.Job = ""
	p, err := st.Begin(8)
	must(t, err)
	for _, op := range full.Operators {
		for _, sub := range op.Subtasks {
			writeFakeState(t, filepath.Join(p.Path(), sub.Dir))
		}
	}
	for i := range full.Operators[0].Subtasks {
		full.Operators[0].Subtasks[i].Files = nil
		full.Operators[0].Subtasks[i].StateBytes = 0
	}
	c8, err := p.Complete(full)
	must(t, err)
	c9 := writeCheckpoint(t, st, 9)
	flipByte(t, filepath.Join(c9.Path, "op-agg-0", "000004.sst"))
	infos, err := st.List()
	must(t, err)
	checkGolden(t, "list.golden", FormatList(infos))
	var out strings.Builder
	for _, path := range []string{c2.Path, c8.Path} {
		report, err := Inspect(OSFS{}, path)
		must(t, err)
		out.WriteString(report)
		out.WriteString("\n")
	}
	// A damaged one is still inspected, with its status.
	for _, chk := range []string{"chk-6", "chk-9"} {
		report, err := Inspect(OSFS{}, filepath.Join(st.Dir(), chk))
		must(t, err)
		out.WriteString(report)
	}
	checkGolden(t, "inspect.golden", out.String())
	if _, err := Inspect(OSFS{}, filepath.Join(st.Dir(), "chk-7")); !errors.Is(err, ErrIncompleteCheckpoint) {
		t.Errorf("Inspect of incomplete: %v", err)
	}
}

// TestInspectDescribesGolden: a checkpoint of format version 3 shows its
// statements, each source's table and connector with positions as the
// connector's describer reads them (hex for a connector without one, and
// with the describer's error for a position it cannot read), and per
// operator its statement and sinks; the same checkpoint written in format
// version 2, without those fields, is still inspected (positions in hex).
func TestInspectDescribesGolden(t *testing.T) {
	st, _ := newStorage(t, OSFS{})
	p, err := st.Begin(10)
	must(t, err)
	m := testMeta(10)
	m.Statements = []string{
		"INSERT INTO evens SELECT parity, SUM(n)\n  FROM t GROUP BY parity;",
		"INSERT INTO copy SELECT n, parity, 'a rather long literal to be cut short in the operator line' FROM t;",
	}
	m.Sources = []SourcePosition{
		{Source: "s1", Table: "t", Connector: "seq", Subtask: 0, Position: []byte("7"), Ended: true},
		{Source: "s1", Table: "t", Connector: "seq", Subtask: 1, Position: []byte("x")},
		{Source: "s2", Table: "k", Connector: "kafka", Subtask: 0, Position: []byte{0, 1, 2}},
	}
	m.Operators[0].Statement, m.Operators[0].Sinks = 1, []string{"evens"}
	m.Operators = append(m.Operators, OperatorState{ID: "calc", Name: "Calc(select=[n, parity])", Parallelism: 1,
		Statement: 2, Sinks: []string{"copy", "audit"}})
	for sub := 0; sub < 2; sub++ {
		writeFakeState(t, p.SubtaskDir("agg", sub))
	}
	c, err := p.Complete(m)
	must(t, err)
	// The describer of the fake "seq" connector: a decimal row count.
	describe := func(connector string, pos []byte) (string, bool, error) {
		if connector != "seq" {
			return "", false, nil
		}
		n, err := strconv.Atoi(string(pos))
		if err != nil {
			return "", false, fmt.Errorf("not a row count: %q", pos)
		}
		return fmt.Sprintf("%d rows read\nnext row %d", n, n+1), true, nil
	}
	var out strings.Builder
	report, err := InspectWith(OSFS{}, c.Path, InspectOptions{DescribePosition: describe})
	must(t, err)
	out.WriteString(report + "\n")

	// The same in format version 2, which knew neither statements nor
	// connectors.
	old := c.Meta
	old.FormatVersion, old.Statements = 2, nil
	old.Operators = slices.Clone(old.Operators)
	old.Sources = slices.Clone(old.Sources)
	for i := range old.Operators {
		old.Operators[i].Statement, old.Operators[i].Sinks = 0, nil
	}
	for i := range old.Sources {
		old.Sources[i].Table, old.Sources[i].Connector = "", ""
	}
	data, err := EncodeMetadata(&old)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(c.Path, MetadataFile), data, 0o644))
	report, err = InspectWith(OSFS{}, c.Path, InspectOptions{DescribePosition: describe})
	must(t, err)
	out.WriteString(report)
	checkGolden(t, "inspect_describe.golden", out.String())
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *rewrite {
		must(t, os.MkdirAll("testdata", 0o755))
		must(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -rewrite and review the diff):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestLatestStopsAtNewer: a checkpoint whose _metadata is intact but of a
// format version newer than this build's is reported as written by a newer
// Weir, and Latest stops there instead of falling back to the older one
// (which would replay into the sinks what the newer build had committed);
// retention and the cleanup of a crashed run leave it alone. A header
// that claims a newer version over a body failing its checksum is corrupt.
func TestLatestStopsAtNewer(t *testing.T) {
	// newer rewrites the _metadata in path as a newer build would write
	// it: the next format version, with a field this build does not know;
	// damage then changes one byte of the body after the checksum.
	newer := func(t *testing.T, path string, damage bool) {
		t.Helper()
		f := filepath.Join(path, MetadataFile)
		data, err := os.ReadFile(f)
		must(t, err)
		m, err := DecodeMetadata(data)
		must(t, err)
		m.FormatVersion = FormatVersion + 1
		enc, err := EncodeMetadata(m)
		must(t, err)
		nl := strings.IndexByte(string(enc), '\n')
		body := []byte(strings.Replace(string(enc[nl+1:]), "{", "{\n  \"state_version\": 2,", 1))
		header := fmt.Sprintf("%s %d %08x %d\n", metadataMagic, m.FormatVersion, crc32.Checksum(body, castagnoli), len(body))
		if damage {
			body[len(body)/2] ^= 1
		}
		must(t, os.WriteFile(f, append([]byte(header), body...), 0o644))
	}

	st, _ := newStorage(t, OSFS{})
	writeCheckpoint(t, st, 1)
	c2 := writeCheckpoint(t, st, 2)
	newer(t, c2.Path, false)
	c, _, err := st.Latest()
	if !errors.Is(err, ErrNewerCheckpoint) || errors.Is(err, ErrCorruptCheckpoint) || c != nil {
		t.Fatalf("Latest = %v, %v; want no checkpoint and ErrNewerCheckpoint", c, err)
	}
	if want := fmt.Sprintf("format version %d, this build reads 1..%d", FormatVersion+1, FormatVersion); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	must(t, st.Retain(1))
	if _, err := st.DiscardIncompleteAfter(1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(c2.Path, MetadataFile)); err != nil {
		t.Fatalf("the newer checkpoint was removed: %v", err)
	}
	infos, err := st.List()
	must(t, err)
	if len(infos) != 2 || infos[1].Valid() || !errors.Is(infos[1].Reason, ErrNewerCheckpoint) {
		t.Fatalf("List = %+v, want checkpoint 2 listed as newer", infos)
	}

	st2, _ := newStorage(t, OSFS{})
	writeCheckpoint(t, st2, 1)
	c2 = writeCheckpoint(t, st2, 2)
	newer(t, c2.Path, true)
	c, skipped, err := st2.Latest()
	if err != nil || c.Meta.CheckpointID != 1 || len(skipped) != 1 || !errors.Is(skipped[0].Reason, ErrCorruptCheckpoint) {
		t.Fatalf("Latest over a damaged newer header = %v, skipped %+v, %v; want checkpoint 1, 2 skipped as corrupt", c, skipped, err)
	}
}
