package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
)

// writeChk writes checkpoint id of job "job" under dir, with a fake state
// folder for one operator subtask.
func writeChk(t *testing.T, st *checkpoint.Storage, id int64) string {
	t.Helper()
	p, err := st.Begin(id)
	if err != nil {
		t.Fatal(err)
	}
	sub := p.SubtaskDir("agg", 0)
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"MANIFEST-000001": "manifest", "OPTIONS-000002": "[Options]", "000004.sst": strings.Repeat("sstable ", 64)} {
		if err := os.WriteFile(filepath.Join(sub, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta := checkpoint.Metadata{Operators: []checkpoint.OperatorState{{ID: "agg", Parallelism: 1,
		Subtasks: []checkpoint.SubtaskState{{Subtask: 0, Dir: checkpoint.SubtaskDirName("agg", 0), Keys: 40000}}}}}
	c, err := p.Complete(meta)
	if err != nil {
		t.Fatal(err)
	}
	return c.Path
}

// TestCheckpointsListAndInspectDamage: `weir checkpoints list` reports a
// checkpoint whose sstable has a flipped byte as damaged, naming the file,
// lists the others around a folder it cannot read (marked with why), and
// `inspect` shows the damage in the status and key counts as "about".
func TestCheckpointsListAndInspectDamage(t *testing.T) {
	dir := t.TempDir()
	st, err := checkpoint.NewStorage(checkpoint.OSFS{}, dir, "job")
	if err != nil {
		t.Fatal(err)
	}
	writeChk(t, st, 1)
	chk2 := writeChk(t, st, 2)
	chk3 := writeChk(t, st, 3)
	writeChk(t, st, 4)
	// chk-2: one byte of its sstable flipped (same size).
	sst := filepath.Join(chk2, checkpoint.SubtaskDirName("agg", 0), "000004.sst")
	data, err := os.ReadFile(sst)
	if err != nil {
		t.Fatal(err)
	}
	data[100] ^= 1
	if err := os.WriteFile(sst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// chk-3: its _metadata cannot be read (a folder in its place).
	meta := filepath.Join(chk3, checkpoint.MetadataFile)
	if err := os.Remove(meta); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(meta, 0o755); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	if code := checkpoints([]string{"list", st.Dir()}, connector.Env{Stdout: &out, Stderr: &errOut}); code != 0 {
		t.Fatalf("checkpoints list: exit %d\n%s", code, errOut.String())
	}
	rows := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		f := strings.Fields(l)
		rows[f[0]] = strings.Join(f[3:], " ")
	}
	if len(rows) != 4 || rows["1"] != "valid" || rows["4"] != "valid" {
		t.Errorf("list:\n%s", out.String())
	}
	if r := rows["2"]; !strings.Contains(r, "000004.sst is damaged") {
		t.Errorf("list says of chk-2 %q, want the damaged file named\n%s", r, out.String())
	}
	if r := rows["3"]; !strings.HasPrefix(r, "unreadable: ") {
		t.Errorf("list says of chk-3 %q, want unreadable and why\n%s", r, out.String())
	}

	out.Reset()
	if code := checkpoints([]string{"inspect", chk2}, connector.Env{Stdout: &out, Stderr: &errOut}); code != 0 {
		t.Fatalf("checkpoints inspect: exit %d\n%s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "status:          corrupt checkpoint") || !strings.Contains(out.String(), "000004.sst is damaged") {
		t.Errorf("inspect of a damaged checkpoint:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "about 40000 keys") {
		t.Errorf("inspect does not say the key count is an estimate:\n%s", out.String())
	}
}
