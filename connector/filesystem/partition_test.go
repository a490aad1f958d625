package filesystem

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// q10Table is Nexmark q10's sink table: (auction, price, dt, hm)
// partitioned by dt and hm, with the given options beside path and format.
func q10Table(dir, format string, kv ...string) *connector.Table {
	opts := map[string]string{"connector": "filesystem", "path": dir, "format": format}
	for i := 0; i+1 < len(kv); i += 2 {
		opts[kv[i]] = kv[i+1]
	}
	return &connector.Table{Name: "q10", Options: opts, PartitionBy: []int{2, 3},
		Schema: types.Schema{Columns: []types.Column{
			{Name: "auction", Type: types.BigInt}, {Name: "price", Type: types.BigInt},
			{Name: "dt", Type: types.Varchar}, {Name: "hm", Type: types.Varchar}}}}
}

func q10Batch(rows ...[4]string) *types.Batch {
	b := types.NewBatch(4, len(rows))
	for _, r := range rows {
		row := make([]types.Value, 4)
		for i, v := range r {
			switch {
			case v == "NULL":
			case i < 2:
				var n int64
				fmt.Sscan(v, &n)
				row[i] = types.BigIntValue(n)
			default:
				row[i] = types.StringValue(v)
			}
		}
		b.Append(types.Insert, row)
	}
	return b
}

// tree lists the files under dir as "relative/path: contents" (contents
// of part files sorted by line), sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		sort.Strings(lines)
		out = append(out, filepath.ToSlash(rel)+": "+strings.Join(lines, "|"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func checkTree(t *testing.T, dir string, want ...string) {
	t.Helper()
	got := tree(t, dir)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("files:\ngot\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestPartitionedSinkLayout writes rows into partition folders (values
// escaped as Flink escapes them, NULL as the default partition name), the
// partition columns left out of the files, commits them, and reads the
// folder back with the source, which restores the partition columns.
func TestPartitionedSinkLayout(t *testing.T) {
	for _, format := range []string{"csv", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			s, err := NewSink(q10Table(dir, format), connector.Env{})
			mustOK(t, err)
			w, err := s.Open(0, 1)
			mustOK(t, err)
			in := [][4]string{
				{"1", "10", "2026-01-01", "10:00"},
				{"2", "20", "2026-01-01", "10:01"},
				{"3", "30", "2026-01-01", "10:00"},
				{"4", "40", "NULL", "a/b=c%"},
			}
			mustOK(t, w.Write(q10Batch(in...)))
			tw := w.(connector.TransactionalWriter)
			txn, err := tw.PreCommit(1)
			mustOK(t, err)
			mustOK(t, tw.Commit(txn))
			mustOK(t, w.Write(q10Batch([4]string{"5", "50", "2026-01-01", "10:01"})))
			mustOK(t, w.Close())
			row := func(a, p int) string {
				if format == "csv" {
					return fmt.Sprintf("%d,%d", a, p)
				}
				return fmt.Sprintf(`{"auction":%d,"price":%d}`, a, p)
			}
			ext := map[string]string{"csv": "csv", "json": "json"}[format]
			checkTree(t, dir,
				"dt=2026-01-01/hm=10%3A00/part-0-1-0."+ext+": "+row(1, 10)+"|"+row(3, 30),
				"dt=2026-01-01/hm=10%3A01/part-0-1-1."+ext+": "+row(2, 20),
				"dt=__DEFAULT_PARTITION__/hm=a%2Fb%3Dc%25/part-0-1-2."+ext+": "+row(4, 40),
				"dt=2026-01-01/hm=10%3A01/part-0-2-3."+ext+": "+row(5, 50),
			)
			// Read back: the partition columns come from the folders.
			src, err := NewSource(q10Table(dir, format), connector.Env{})
			mustOK(t, err)
			r, err := src.Open(0, 1)
			mustOK(t, err)
			b := types.NewBatch(4, 16)
			for {
				err := r.Next(context.Background(), b, 16)
				if err == io.EOF {
					break
				}
				mustOK(t, err)
			}
			var got, want []string
			for i := range b.Len() {
				got = append(got, types.FormatRow(b.Kinds[i], b.Row(i)))
			}
			in = append(in, [4]string{"5", "50", "2026-01-01", "10:01"})
			inB := q10Batch(in...)
			for i := range inB.Len() {
				want = append(want, types.FormatRow(inB.Kinds[i], inB.Row(i)))
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("read back:\ngot  %v\nwant %v", got, want)
			}
		})
	}
}

// TestPartitionCommitPartitionTime commits a partition (its success
// file) at the first checkpoint at which the watermark is past the
// partition's time ('$dt $hm:00') plus the delay, and the rest when the
// input ends.
func TestPartitionCommitPartitionTime(t *testing.T) {
	dir := t.TempDir()
	s, err := NewSink(q10Table(dir, "csv", "sink.partition-commit.trigger", "partition-time", "sink.partition-commit.delay", "1 min",
		"sink.partition-commit.policy.kind", "success-file", "partition.time-extractor.timestamp-pattern", "$dt $hm:00"), connector.Env{})
	mustOK(t, err)
	w, err := s.Open(0, 1)
	mustOK(t, err)
	tw := w.(*Writer)
	mustOK(t, w.Write(q10Batch([4]string{"1", "1", "2026-01-01", "10:00"}, [4]string{"2", "2", "2026-01-01", "10:01"}, [4]string{"3", "3", "2026-01-01", "10:02"})))
	at := func(s string) int64 {
		tm, err := time.Parse("2006-01-02 15:04:05", s)
		mustOK(t, err)
		return tm.UnixMilli()
	}
	success := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "*", "*", "_SUCCESS"))
		var out []string
		for _, p := range m {
			rel, _ := filepath.Rel(dir, filepath.Dir(p))
			out = append(out, filepath.ToSlash(rel))
		}
		sort.Strings(out)
		return out
	}
	step := func(id int64, wm string, want ...string) {
		t.Helper()
		if wm != "" {
			mustOK(t, tw.Watermark(at(wm)))
		}
		txn, err := tw.PreCommit(id)
		mustOK(t, err)
		mustOK(t, tw.Commit(txn))
		if got := success(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("checkpoint %d, watermark %s: success files in %v, want %v", id, wm, got, want)
		}
	}
	step(1, "", nil...)
	step(2, "2026-01-01 10:01:00", nil...) // 10:00 + 1 min is not below the watermark
	mustOK(t, tw.Watermark(at("2026-01-01 10:01:00")+1))
	step(4, "", "dt=2026-01-01/hm=10%3A00")
	// A late row into a committed partition: it is committed again later.
	mustOK(t, w.Write(q10Batch([4]string{"4", "4", "2026-01-01", "10:00"})))
	step(5, "2026-01-01 10:02:30", "dt=2026-01-01/hm=10%3A00", "dt=2026-01-01/hm=10%3A01")
	mustOK(t, w.Close()) // the end of the input commits the rest
	if got := success(); len(got) != 3 {
		t.Fatalf("after close: success files in %v, want all 3 partitions", got)
	}
}

// TestPartitionCommitProcessTime commits a partition once it was first
// written the delay ago, at a checkpoint (delay 0: the first one).
func TestPartitionCommitProcessTime(t *testing.T) {
	for _, delay := range []string{"0 s", "1 h"} {
		t.Run(delay, func(t *testing.T) {
			dir := t.TempDir()
			s, err := NewSink(q10Table(dir, "csv", "sink.partition-commit.delay", delay, "sink.partition-commit.policy.kind", "success-file"), connector.Env{})
			mustOK(t, err)
			now := time.Unix(1_800_000_000, 0)
			s.(*Sink).now = func() time.Time { return now }
			w, err := s.Open(0, 1)
			mustOK(t, err)
			tw := w.(*Writer)
			mustOK(t, w.Write(q10Batch([4]string{"1", "1", "d", "h"})))
			marker := filepath.Join(dir, "dt=d", "hm=h", "_SUCCESS")
			commit := func(id int64) bool {
				txn, err := tw.PreCommit(id)
				mustOK(t, err)
				mustOK(t, tw.Commit(txn))
				_, err = os.Stat(marker)
				return err == nil
			}
			if got, want := commit(1), delay == "0 s"; got != want {
				t.Fatalf("after the first checkpoint: committed %v, want %v", got, want)
			}
			now = now.Add(time.Hour)
			if !commit(2) {
				t.Fatal("not committed after the delay")
			}
		})
	}
}

// TestPartitionCommitSurvivesRestore: a partition written before a
// checkpoint but not ready to commit is in the checkpoint's transaction;
// after a crash, the restored job commits it when the watermark passes.
func TestPartitionCommitSurvivesRestore(t *testing.T) {
	dir := t.TempDir()
	tbl := q10Table(dir, "csv", "sink.partition-commit.trigger", "partition-time", "sink.partition-commit.policy.kind", "success-file",
		"partition.time-extractor.timestamp-pattern", "$dt $hm:00")
	s, err := NewSink(tbl, connector.Env{})
	mustOK(t, err)
	w, err := s.Open(0, 1)
	mustOK(t, err)
	mustOK(t, w.Write(q10Batch([4]string{"1", "1", "2026-01-01", "10:00"})))
	txn, err := w.(connector.TransactionalWriter).PreCommit(1)
	mustOK(t, err)
	mustOK(t, w.Write(q10Batch([4]string{"2", "2", "2026-01-01", "10:05"}))) // after the checkpoint: lost
	mustOK(t, w.(connector.TransactionalWriter).Abort())

	s2, err := NewSink(tbl, connector.Env{})
	mustOK(t, err)
	mustOK(t, s2.(connector.TransactionalSink).Recover([][]byte{txn}))
	checkTree(t, dir, "dt=2026-01-01/hm=10%3A00/part-0-1-0.csv: 1,1")
	w2, err := s2.Open(0, 1)
	mustOK(t, err)
	mustOK(t, w2.(*Writer).Watermark(time.Date(2026, 1, 1, 10, 0, 1, 0, time.UTC).UnixMilli()))
	txn2, err := w2.(connector.TransactionalWriter).PreCommit(2)
	mustOK(t, err)
	mustOK(t, w2.(connector.TransactionalWriter).Commit(txn2))
	checkTree(t, dir, "dt=2026-01-01/hm=10%3A00/part-0-1-0.csv: 1,1", "dt=2026-01-01/hm=10%3A00/_SUCCESS: ")
}

func TestPartitionedSinkOptionErrors(t *testing.T) {
	cases := []struct {
		kv   []string
		want string
	}{
		{[]string{"sink.partition-commit.trigger", "event-time"}, "'sink.partition-commit.trigger'"},
		{[]string{"sink.partition-commit.delay", "soon"}, "'sink.partition-commit.delay'"},
		{[]string{"sink.partition-commit.policy.kind", "metastore"}, "'metastore' is not supported"},
		{[]string{"sink.partition-commit.trigger", "partition-time"}, "needs 'sink.partition-commit.policy.kind' = 'success-file'"},
		{[]string{"partition.time-extractor.timestamp-pattern", "$day $hm"}, "$day is not a partition column (dt, hm)"},
		{[]string{"partition.time-extractor.timestamp-formatter", "yyyy-MM-dd'T'HH"}, "only yyyy, MM, dd, HH, mm and ss"},
		{[]string{"sink.partition-commit.watermark-time-zone", "Mars/Base"}, "'sink.partition-commit.watermark-time-zone'"},
		{[]string{"format", "debezium-json"}, "cannot be written as 'debezium-json'"},
	}
	for _, c := range cases {
		_, err := NewSink(q10Table(t.TempDir(), "csv", c.kv...), connector.Env{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.kv, err, c.want)
		}
	}
	// The commit options of an unpartitioned table are unknown options.
	tbl := q10Table(t.TempDir(), "csv", "sink.partition-commit.delay", "1 min")
	tbl.PartitionBy = nil
	if _, err := NewSink(tbl, connector.Env{}); err == nil || !strings.Contains(err.Error(), "sink.partition-commit.delay") {
		t.Errorf("unpartitioned table with a commit option: %v", err)
	}
	// A folder that lacks a partition column's name=value.
	dir := t.TempDir()
	mustOK(t, os.MkdirAll(filepath.Join(dir, "dt=x"), 0o755))
	mustOK(t, os.WriteFile(filepath.Join(dir, "dt=x", "f.csv"), []byte("1,2\n"), 0o644))
	if _, err := NewSource(q10Table(dir, "csv"), connector.Env{}); err == nil || !strings.Contains(err.Error(), "no hm=<value>") {
		t.Errorf("source over a folder without hm=: %v", err)
	}
}

func TestPartitionPathEscaping(t *testing.T) {
	for _, s := range []string{"", "plain", "10:00", "a/b", "%41", "x=y?*#'\"\\{[]^\x01\x7f", "é"} {
		esc := string(appendEscaped(nil, []byte(s)))
		if strings.ContainsAny(esc, "/:=") {
			t.Errorf("%q escaped as %q", s, esc)
		}
		back, err := unescape(esc)
		if err != nil || back != s {
			t.Errorf("%q: escaped %q, back %q, %v", s, esc, back, err)
		}
	}
	if _, err := unescape("a%4"); err == nil {
		t.Error("a%4: no error")
	}
}

// TestFileMetadataColumns reads 'file.path' and 'file.name' metadata
// columns beside the data (and the partition column) of each file, and
// writes a table with a VIRTUAL 'file.path' column: the column is not in
// the files.
func TestFileMetadataColumns(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, os.MkdirAll(filepath.Join(dir, "k=a"), 0o755))
	mustOK(t, os.MkdirAll(filepath.Join(dir, "k=b"), 0o755))
	mustOK(t, os.WriteFile(filepath.Join(dir, "k=a", "f1.csv"), []byte("1\n2\n"), 0o644))
	mustOK(t, os.WriteFile(filepath.Join(dir, "k=b", "f2.csv"), []byte("3\n"), 0o644))
	tbl := &connector.Table{Name: "t", Options: map[string]string{"connector": "filesystem", "path": dir, "format": "csv"},
		PartitionBy: []int{2},
		Metadata:    []connector.MetadataColumn{{Column: 0, Key: metaFileName, Virtual: true}, {Column: 3, Key: metaFilePath, Virtual: true}},
		Schema: types.Schema{Columns: []types.Column{{Name: "name", Type: types.Varchar}, {Name: "v", Type: types.BigInt},
			{Name: "k", Type: types.Varchar}, {Name: "path", Type: types.Varchar}}}}
	src, err := NewSource(tbl, connector.Env{})
	mustOK(t, err)
	r, err := src.Open(0, 1)
	mustOK(t, err)
	b := types.NewBatch(4, 16)
	for err := error(nil); err != io.EOF; {
		err = r.Next(context.Background(), b, 16)
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
	}
	var got []string
	for i := range b.Len() {
		got = append(got, types.FormatRow(b.Kinds[i], b.Row(i)))
	}
	p1, p2 := filepath.Join(dir, "k=a", "f1.csv"), filepath.Join(dir, "k=b", "f2.csv")
	want := []string{"+I[f1.csv, 1, a, " + p1 + "]", "+I[f1.csv, 2, a, " + p1 + "]", "+I[f2.csv, 3, b, " + p2 + "]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows:\ngot  %v\nwant %v", got, want)
	}

	// The sink: the virtual column's values (NULL, as the planner fills
	// them) are not written.
	out := t.TempDir()
	sinkTbl := &connector.Table{Name: "o", Options: map[string]string{"connector": "filesystem", "path": out, "format": "json"},
		Metadata: []connector.MetadataColumn{{Column: 1, Key: metaFilePath, Virtual: true}},
		Schema:   types.Schema{Columns: []types.Column{{Name: "v", Type: types.BigInt}, {Name: "path", Type: types.Varchar}}}}
	s, err := NewSink(sinkTbl, connector.Env{})
	mustOK(t, err)
	w, err := s.Open(0, 1)
	mustOK(t, err)
	in := types.NewBatch(2, 2)
	in.Append(types.Insert, []types.Value{types.BigIntValue(7), types.NullValue()})
	mustOK(t, w.Write(in))
	mustOK(t, w.Close())
	checkTree(t, out, `part-0-1-0.json: {"v":7}`)
}

// TestPartitionTimeMismatch: a partition whose values do not make a time
// with the pattern fails the write that creates it, naming the partition.
func TestPartitionTimeMismatch(t *testing.T) {
	s, err := NewSink(q10Table(t.TempDir(), "csv", "sink.partition-commit.trigger", "partition-time",
		"sink.partition-commit.policy.kind", "success-file", "partition.time-extractor.timestamp-pattern", "$dt $hm:00"), connector.Env{})
	mustOK(t, err)
	w, err := s.Open(0, 1)
	mustOK(t, err)
	err = w.Write(q10Batch([4]string{"1", "1", "2026-01-01", "noon"}))
	if err == nil || !strings.Contains(err.Error(), `partition dt=2026-01-01/hm=noon: time "2026-01-01 noon:00" does not match`) {
		t.Fatalf("got %v", err)
	}
}

// TestPartitionRoutingRuns writes random rows in runs of equal and
// changing partition values (NULL and the empty string among them, which share the
// default folder) and checks each row's folder against the one its values
// name, computed here.
func TestPartitionRoutingRuns(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	s, err := NewSink(q10Table(dir, "csv"), connector.Env{})
	mustOK(t, err)
	w, err := s.Open(0, 1)
	mustOK(t, err)
	dts := []string{"2026-01-01", "2026-01-02", "NULL", ""}
	hms := []string{"10:00", "10:01", "NULL"}
	folder := func(name, v string) string {
		if v == "NULL" || v == "" {
			return name + "=__DEFAULT_PARTITION__"
		}
		return name + "=" + strings.ReplaceAll(v, ":", "%3A")
	}
	want := map[string][]string{}
	var rows [][4]string
	dt, hm := dts[0], hms[0]
	for i := range 500 {
		if r.Intn(5) == 0 {
			dt = dts[r.Intn(len(dts))]
		}
		if r.Intn(4) == 0 {
			hm = hms[r.Intn(len(hms))]
		}
		rows = append(rows, [4]string{fmt.Sprint(i), fmt.Sprint(i * 10), dt, hm})
		f := folder("dt", dt) + "/" + folder("hm", hm)
		want[f] = append(want[f], fmt.Sprintf("%d,%d", i, i*10))
	}
	for len(rows) > 0 {
		n := min(len(rows), 1+r.Intn(100))
		mustOK(t, w.Write(q10Batch(rows[:n]...)))
		rows = rows[n:]
	}
	mustOK(t, w.Close())
	got := map[string][]string{}
	for _, f := range tree(t, dir) {
		path, lines, _ := strings.Cut(f, ": ")
		if strings.HasPrefix(filepath.Base(path), "part-") {
			d := filepath.ToSlash(filepath.Dir(path))
			got[d] = append(got[d], strings.Split(lines, "|")...)
		}
	}
	for d := range want {
		sort.Strings(want[d])
		sort.Strings(got[d])
		if strings.Join(got[d], " ") != strings.Join(want[d], " ") {
			t.Fatalf("seed %d: folder %s:\ngot  %v\nwant %v", seed, d, got[d], want[d])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("seed %d: folders %d, want %d", seed, len(got), len(want))
	}
}
