package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestChecksumsRecorded: Complete records every state file's CRC-32C, and
// Load verifies it, so a flipped byte that keeps the size is caught.
func TestChecksumsRecorded(t *testing.T) {
	st, _ := newStorage(t, OSFS{})
	c := writeCheckpoint(t, st, 1)
	for _, sub := range c.Meta.Operators[0].Subtasks {
		for _, f := range sub.Files {
			data, err := os.ReadFile(filepath.Join(c.Path, sub.Dir, f.Name))
			must(t, err)
			sum, _, err := fileCRC(OSFS{}, filepath.Join(c.Path, sub.Dir, f.Name))
			must(t, err)
			if f.CRC32C == "" || f.CRC32C != FormatCRC32C(sum) || int64(len(data)) != f.Size {
				t.Errorf("%s/%s: recorded %q (%d bytes), file has %08x (%d bytes)", sub.Dir, f.Name, f.CRC32C, f.Size, sum, len(data))
			}
		}
	}
}

// TestOldCheckpointsWithoutChecksumsLoad: a format version 1 checkpoint,
// whose files have no checksums, still loads (checked by size) and says so
// in inspect.
func TestOldCheckpointsWithoutChecksumsLoad(t *testing.T) {
	st, _ := newStorage(t, OSFS{})
	c := writeCheckpoint(t, st, 1)
	m := c.Meta
	m.FormatVersion = 1
	for i := range m.Operators[0].Subtasks {
		files := append([]FileInfo(nil), m.Operators[0].Subtasks[i].Files...)
		for j := range files {
			files[j].CRC32C = ""
		}
		m.Operators[0].Subtasks[i].Files = files
	}
	data, err := EncodeMetadata(&m)
	must(t, err)
	if strings.Contains(string(data), "crc32c") {
		t.Fatal("version 1 metadata holds checksums")
	}
	must(t, os.WriteFile(filepath.Join(c.Path, MetadataFile), data, 0o644))
	l, _, err := st.Latest()
	must(t, err)
	if l.Meta.CheckpointID != 1 || l.Meta.FormatVersion != 1 {
		t.Errorf("Latest = %+v", l.Meta)
	}
	report, err := Inspect(OSFS{}, c.Path)
	must(t, err)
	if !strings.Contains(report, "status:          valid (format version 1") {
		t.Errorf("inspect of a version 1 checkpoint:\n%s", report)
	}
	// A savepoint of it gets checksums.
	sp, err := Savepoint(OSFS{}, l, filepath.Join(t.TempDir(), "sp"))
	must(t, err)
	if sp.Meta.FormatVersion != FormatVersion || sp.Meta.Operators[0].Subtasks[0].Files[0].CRC32C == "" {
		t.Errorf("savepoint of a version 1 checkpoint: %+v", sp.Meta.Operators[0].Subtasks[0])
	}
}

// TestListMarksUnreadable: a checkpoint folder that cannot be read is
// listed with why, the others are still listed, and retention leaves it.
func TestListMarksUnreadable(t *testing.T) {
	ffs := NewFaultFS(OSFS{})
	st, _ := newStorage(t, ffs)
	for id := int64(1); id <= 3; id++ {
		writeCheckpoint(t, st, id)
	}
	// The next ReadFile is chk-1's _metadata, the one after chk-2's.
	ffs.FailNth(OpReadFile, ffs.Count(OpReadFile)+2, syscall.EACCES)
	infos, err := st.List()
	if err != nil {
		t.Fatalf("List stopped at an unreadable folder: %v", err)
	}
	if len(infos) != 3 || !infos[0].Valid() || !infos[2].Valid() || !infos[1].Unreadable() {
		t.Fatalf("List = %+v, want 1 and 3 valid, 2 unreadable", infos)
	}
	out := FormatList(infos)
	if !strings.Contains(out, "unreadable: ") || !strings.Contains(out, "permission denied") {
		t.Errorf("list does not say why 2 is unreadable:\n%s", out)
	}
	// Retention (keep 1) with chk-2 unreadable deletes chk-1 only.
	ffs.FailNth(OpReadFile, ffs.Count(OpReadFile)+2, syscall.EACCES)
	must(t, st.Retain(1))
	for id, want := range map[string]bool{"chk-1": false, "chk-2": true, "chk-3": true} {
		_, err := os.Stat(filepath.Join(st.Dir(), id))
		if got := err == nil; got != want {
			t.Errorf("after Retain(1): %s exists = %v, want %v", id, got, want)
		}
	}
}

// TestSavepointChecksums: a savepoint records the checksums of its copies,
// refuses to copy a file that no longer matches the checkpoint, and a
// damaged savepoint does not load.
func TestSavepointChecksums(t *testing.T) {
	st, root := newStorage(t, OSFS{})
	c := writeCheckpoint(t, st, 1)
	sp, err := Savepoint(OSFS{}, c, filepath.Join(root, "sp-1"))
	must(t, err)
	for _, sub := range sp.Meta.Operators[0].Subtasks {
		for _, f := range sub.Files {
			sum, _, err := fileCRC(OSFS{}, filepath.Join(sp.Path, sub.Dir, f.Name))
			must(t, err)
			if f.CRC32C != FormatCRC32C(sum) {
				t.Errorf("savepoint %s/%s: recorded %q, file has %08x", sub.Dir, f.Name, f.CRC32C, sum)
			}
		}
	}
	flipByte(t, filepath.Join(sp.Path, "op-agg-1", "000004.sst"))
	if _, err := Load(OSFS{}, sp.Path); !errors.Is(err, ErrCorruptCheckpoint) || !strings.Contains(err.Error(), "000004.sst is damaged") {
		t.Errorf("Load of a damaged savepoint: %v", err)
	}
	flipByte(t, filepath.Join(c.Path, "op-agg-0", "000005.sst"))
	dst := filepath.Join(root, "sp-2")
	if _, err := Savepoint(OSFS{}, c, dst); !errors.Is(err, ErrCorruptCheckpoint) || !strings.Contains(err.Error(), "000005.sst") {
		t.Errorf("Savepoint of a damaged checkpoint: %v", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("failed savepoint left %s", dst)
	}
}
