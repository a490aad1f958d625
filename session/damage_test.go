package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/types"
)

// copyTree copies the files and folders under src to dst (real copies: no
// hard links, so damaging one copy leaves the others).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// largestSST returns the largest sstable of checkpoint folder chk.
func largestSST(t *testing.T, chk string) string {
	t.Helper()
	ssts, _ := filepath.Glob(filepath.Join(chk, "op-*", "*.sst"))
	best, size := "", int64(-1)
	for _, p := range ssts {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	if best == "" {
		t.Fatalf("%s has no sstable", chk)
	}
	return best
}

func manifestOf(t *testing.T, chk string) string {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(chk, "op-*", "MANIFEST-*"))
	if len(ms) == 0 {
		t.Fatalf("%s has no MANIFEST", chk)
	}
	return ms[0]
}

// rewriteFile replaces path by a new file (breaking hard links) with data.
func rewriteFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func flipMiddleByte(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x20
	rewriteFile(t, path, data)
}

// damageScript is the keyed sum of the damage tests (n rows over keys
// keys, at parallelism 2, three checkpoints retained) with its folders
// under dir.
func damageScript(dir string, n, keys int) string {
	s := strings.Replace(keyedSumScript(dir, n, keys, 2), "'state.checkpoints.num-retained' = '2'", "'state.checkpoints.num-retained' = '3'", 1)
	return strings.Replace(s, "'rows-per-second' = '150000'", "'rows-per-second' = '60000'", 1)
}

// runUntilCheckpoint runs the damage tests' job named job under dir until
// checkpoint stopAt completes, then stops it; it returns what the job
// printed and its storage with the latest checkpoint.
func runUntilCheckpoint(t *testing.T, dir, job string, n, keys, stopAt int) (string, *checkpoint.Storage, *checkpoint.Checkpoint) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	stderr := &watchWriter{onLine: func(l string) {
		if strings.HasPrefix(l, fmt.Sprintf("weir: checkpoint %d complete", stopAt)) {
			cancel()
		}
	}}
	if err := New(connector.Env{Stdout: &out, Stderr: stderr}).RunScript(ctx, damageScript(dir, n, keys), RunOptions{JobName: job}); err != nil {
		t.Fatalf("first run: %v\n%s", err, stderr.String())
	}
	st, err := checkpoint.NewStorage(checkpoint.OSFS{}, dir, job)
	if err != nil {
		t.Fatal(err)
	}
	latest, _, err := st.Latest()
	if err != nil {
		t.Fatalf("after the first run: %v\n%s", err, stderr.String())
	}
	return out.String(), st, latest
}

// TestRestoreSkipsDamagedStateFiles damages one state file of the newest
// checkpoint in four ways (a flipped byte in an sstable, a flipped byte in
// a MANIFEST, a truncated sstable, a deleted MANIFEST). The damage must be
// reported naming the file, the restore must fall back to the previous
// checkpoint (no panic, no failing restarts), and the final state must
// equal the batch answer. `weir checkpoints list` and `inspect` must call
// the damaged checkpoint damaged.
func TestRestoreSkipsDamagedStateFiles(t *testing.T) {
	const n, keys = 100000, 300
	first := filepath.Join(t.TempDir(), "first")
	script := func(dir string) string { return damageScript(dir, n, keys) }
	out1, st, latest := runUntilCheckpoint(t, first, "damaged", n, keys, 4)
	infos, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	var prev int64 = -1
	for _, in := range infos {
		if in.Valid() && in.ID < latest.Meta.CheckpointID {
			prev = in.ID
		}
	}
	if prev < 0 {
		t.Fatalf("want two valid checkpoints, have %v", infos)
	}
	want := keyedSumAnswer(n, keys)
	cases := []struct {
		name   string
		damage func(t *testing.T, chk string) string // returns the damaged file's name
		reason string
	}{
		{"flipped sstable byte", func(t *testing.T, chk string) string {
			p := largestSST(t, chk)
			flipMiddleByte(t, p)
			return filepath.Base(p)
		}, "is damaged: its crc32c is"},
		{"flipped MANIFEST byte", func(t *testing.T, chk string) string {
			p := manifestOf(t, chk)
			flipMiddleByte(t, p)
			return filepath.Base(p)
		}, "is damaged: its crc32c is"},
		{"truncated sstable", func(t *testing.T, chk string) string {
			p := largestSST(t, chk)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rewriteFile(t, p, data[:len(data)/2])
			return filepath.Base(p)
		}, "bytes, expected"},
		{"deleted MANIFEST", func(t *testing.T, chk string) string {
			p := manifestOf(t, chk)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			return filepath.Base(p)
		}, "missing file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ckpts")
			copyTree(t, filepath.Join(first, "damaged"), filepath.Join(dir, "damaged"))
			chk := filepath.Join(dir, "damaged", fmt.Sprintf("chk-%d", latest.Meta.CheckpointID))
			file := tc.damage(t, chk)

			// list and inspect see the damage, naming the file.
			cst, err := checkpoint.NewStorage(checkpoint.OSFS{}, dir, "damaged")
			if err != nil {
				t.Fatal(err)
			}
			infos, err := cst.List()
			if err != nil {
				t.Fatal(err)
			}
			listed := checkpoint.FormatList(infos)
			if !strings.Contains(listed, file) || !strings.Contains(listed, tc.reason) {
				t.Errorf("checkpoints list does not report %s (%s):\n%s", file, tc.reason, listed)
			}
			report, err := checkpoint.Inspect(checkpoint.OSFS{}, chk)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(report, "status:          valid") {
				t.Errorf("inspect calls the damaged checkpoint valid:\n%s", report)
			}

			var out2 bytes.Buffer
			stderr2 := &watchWriter{}
			err = New(connector.Env{Stdout: &out2, Stderr: stderr2}).RunScript(context.Background(), script(dir), RunOptions{JobName: "damaged", Restore: RestoreLatest})
			log := stderr2.String()
			if err != nil {
				t.Fatalf("restore run: %v\n%s", err, log)
			}
			for _, w := range []string{
				fmt.Sprintf("skipping checkpoint %d", latest.Meta.CheckpointID),
				file,
				fmt.Sprintf("restoring checkpoint %d", prev),
			} {
				if !strings.Contains(log, w) {
					t.Errorf("stderr does not say %q:\n%s", w, log)
				}
			}
			if strings.Contains(log, "restarting") || strings.Contains(log, "panic") {
				t.Errorf("the restore failed before it fell back:\n%s", log)
			}
			got := upsertByKey(t, out1+out2.String())
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("final state differs from the batch answer (%d rows, want %d)", len(got), len(want))
			}
		})
	}
}

// TestRestoreFallsBackWhenStateUnreadable damages an sstable of the newest
// checkpoint in a way its _metadata cannot show (the checkpoint carries no
// checksums, as those of format version 1 do not): the damage surfaces only
// when the state store reads the file. The run must skip that checkpoint
// for the one before it, without going through the restart strategy, and
// end with the batch answer.
func TestRestoreFallsBackWhenStateUnreadable(t *testing.T) {
	const n, keys = 100000, 300
	first := t.TempDir()
	out1, st, latest := runUntilCheckpoint(t, first, "unreadable", n, keys, 3)
	// Damage the largest sstable and drop every checksum from _metadata,
	// so that only the state store can notice.
	// The fallback goes to the newest valid checkpoint before the latest
	// one, which need not be latest-1 (a checkpoint may have been in flight
	// when the first run was cancelled).
	infos, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	previous := int64(-1)
	for _, info := range infos {
		if info.Valid() && info.ID < latest.Meta.CheckpointID && info.ID > previous {
			previous = info.ID
		}
	}
	if previous < 0 {
		t.Fatalf("no valid checkpoint before %d to fall back to", latest.Meta.CheckpointID)
	}
	flipMiddleByte(t, largestSST(t, latest.Path))
	meta := latest.Meta
	for i := range meta.Operators {
		for j := range meta.Operators[i].Subtasks {
			for k := range meta.Operators[i].Subtasks[j].Files {
				meta.Operators[i].Subtasks[j].Files[k].CRC32C = ""
			}
		}
	}
	meta.FormatVersion = 1
	data, err := checkpoint.EncodeMetadata(&meta)
	if err != nil {
		t.Fatal(err)
	}
	rewriteFile(t, filepath.Join(latest.Path, "_metadata"), data)
	if again, _, err := st.Latest(); err != nil || again.Meta.CheckpointID != latest.Meta.CheckpointID {
		t.Fatalf("the damage is visible before the state is read (%v): the test needs it hidden", err)
	}

	var out2 bytes.Buffer
	stderr2 := &watchWriter{}
	err = New(connector.Env{Stdout: &out2, Stderr: stderr2}).RunScript(context.Background(), damageScript(first, n, keys), RunOptions{JobName: "unreadable", Restore: RestoreLatest})
	log := stderr2.String()
	if err != nil {
		t.Fatalf("restore run: %v\n%s", err, log)
	}
	for _, w := range []string{
		fmt.Sprintf("restoring checkpoint %d", latest.Meta.CheckpointID),
		fmt.Sprintf("checkpoint %d cannot be restored", latest.Meta.CheckpointID),
		fmt.Sprintf("skipping checkpoint %d: its state could not be restored", latest.Meta.CheckpointID),
		fmt.Sprintf("restoring checkpoint %d", previous),
	} {
		if !strings.Contains(log, w) {
			t.Errorf("stderr does not say %q:\n%s", w, log)
		}
	}
	if strings.Contains(log, "restarting") || strings.Contains(log, "panic") {
		t.Errorf("the fallback went through the restart strategy:\n%s", log)
	}
	got := upsertByKey(t, out1+out2.String())
	if want := keyedSumAnswer(n, keys); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("final state differs from the batch answer (%d rows, want %d)", len(got), len(want))
	}
}

// permanentSource fails every read with an error that wraps
// connector.ErrPermanent, as a file truncated under a checkpoint does.
type permanentSource struct{}

func (permanentSource) Bounded() bool { return false }
func (permanentSource) Open(int, int) (connector.SourceReader, error) {
	return permanentReader{}, nil
}

// positionless is the position part of a test reader that has none to
// restore.
type positionless struct{}

func (positionless) Position() ([]byte, error) { return nil, nil }
func (positionless) Seek([]byte) error         { return nil }
func (positionless) Close() error              { return nil }

type permanentReader struct{ positionless }

func (permanentReader) Next(context.Context, *types.Batch, int) error {
	return fmt.Errorf("input.csv was read up to byte offset 6, but its size is now 4 bytes: %w", connector.ErrPermanent)
}

// TestPermanentFailureIsNotRestarted: a job that fails with an error that a
// restart cannot cure fails at once, although its restart strategy allows
// restarts, and says why.
func TestPermanentFailureIsNotRestarted(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	s := New(connector.Env{Stdout: io.Discard, Stderr: &stderr})
	s.Connectors.RegisterSource("permanent", func(*connector.Table, connector.Env) (connector.Source, error) {
		return permanentSource{}, nil
	})
	script := fmt.Sprintf(`SET 'execution.checkpointing.interval' = '1 min';
SET 'state.checkpoints.dir' = '%s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1 ms';
CREATE TABLE src (n BIGINT) WITH ('connector' = 'permanent');
CREATE TABLE out (n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT n FROM src;`, filepath.Join(dir, "ckpts"))
	err := s.RunScript(context.Background(), script, RunOptions{JobName: "perm"})
	if !errors.Is(err, connector.ErrPermanent) || !strings.Contains(err.Error(), "a restart would fail the same way") {
		t.Fatalf("got %v, want the permanent failure", err)
	}
	if strings.Contains(stderr.String(), "restarting") {
		t.Fatalf("the job was restarted:\n%s", stderr.String())
	}
}

// TestFallbackStopsAtTheRestoredCheckpoint: a run resumed from a chosen
// checkpoint folder whose own first checkpoint turns out damaged when it
// restarts must not fall back to an older checkpoint of an earlier run
// left in the job's folder: it restores the chosen folder again. The final
// state equals the batch answer.
func TestFallbackStopsAtTheRestoredCheckpoint(t *testing.T) {
	const n, keys = 100000, 300
	dir := t.TempDir()
	out1, st, latest := runUntilCheckpoint(t, dir, "resumed", n, keys, 3)
	// Keep the latest checkpoint as a chosen folder, as a savepoint is.
	chosen := filepath.Join(t.TempDir(), "chosen")
	copyTree(t, latest.Path, chosen)
	chosenID := latest.Meta.CheckpointID

	// The resumed run fails right after its first checkpoint, which is then
	// found damaged; an earlier run's checkpoint is still in the folder.
	failed := false
	fault := func(point string) error {
		if point != exec.FaultBeforeRetain || failed {
			return nil
		}
		failed = true
		infos, err := st.List()
		if err != nil {
			return err
		}
		newest := infos[0]
		for _, in := range infos {
			if in.ID > newest.ID {
				newest = in
			}
		}
		if newest.ID <= chosenID {
			return fmt.Errorf("test: the run's first checkpoint is %d, want one after %d", newest.ID, chosenID)
		}
		rewriteFile(t, filepath.Join(newest.Path, "_metadata"), []byte("damaged"))
		return fmt.Errorf("test: fail after checkpoint %d", newest.ID)
	}
	var out2 bytes.Buffer
	stderr := &watchWriter{}
	err := New(connector.Env{Stdout: &out2, Stderr: stderr}).RunScript(context.Background(), damageScript(dir, n, keys),
		RunOptions{JobName: "resumed", Restore: chosen, Exec: exec.Options{Fault: fault}})
	log := stderr.String()
	if err != nil {
		t.Fatalf("resumed run: %v\n%s", err, log)
	}
	if !failed || !strings.Contains(log, "no checkpoint of this run can be restored: restoring "+chosen+" again") {
		t.Fatalf("the restart did not restore the chosen folder again:\n%s", log)
	}
	got := upsertByKey(t, out1+out2.String())
	if want := keyedSumAnswer(n, keys); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("final state differs from the batch answer (%d rows, want %d)", len(got), len(want))
	}
}

// TestRestoreLatestStopsAtNewer: when the newest checkpoint was written by
// a newer Weir (an intact _metadata of a newer format version), --restore
// latest stops with ErrNewerCheckpoint, naming the versions, instead of
// falling back to an older checkpoint (which would replay output the newer
// build committed), and leaves the folder in place.
func TestRestoreLatestStopsAtNewer(t *testing.T) {
	const n, keys = 100000, 300
	dir := t.TempDir()
	_, st, latest := runUntilCheckpoint(t, dir, "newer", n, keys, 2)
	infos, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(infos, func(i checkpoint.Info) bool { return i.Valid() && i.ID < latest.Meta.CheckpointID }) {
		t.Fatalf("no valid checkpoint before %d: the test needs one to fall back to", latest.Meta.CheckpointID)
	}
	meta := latest.Meta
	meta.FormatVersion = checkpoint.FormatVersion + 1
	data, err := checkpoint.EncodeMetadata(&meta)
	if err != nil {
		t.Fatal(err)
	}
	rewriteFile(t, filepath.Join(latest.Path, "_metadata"), data)

	var out bytes.Buffer
	stderr := &watchWriter{}
	err = New(connector.Env{Stdout: &out, Stderr: stderr}).RunScript(context.Background(), damageScript(dir, n, keys), RunOptions{JobName: "newer", Restore: RestoreLatest})
	log := stderr.String()
	if !errors.Is(err, checkpoint.ErrNewerCheckpoint) {
		t.Fatalf("restore run: err %v, want ErrNewerCheckpoint\n%s", err, log)
	}
	if want := fmt.Sprintf("format version %d, this build reads 1..%d", checkpoint.FormatVersion+1, checkpoint.FormatVersion); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if strings.Contains(log, "restoring checkpoint") || strings.Contains(log, "skipping checkpoint") || out.Len() > 0 {
		t.Errorf("the run went on past the newer checkpoint:\n%s\n%s", log, out.String())
	}
	if _, err := os.Stat(filepath.Join(latest.Path, "_metadata")); err != nil {
		t.Errorf("the newer checkpoint is gone: %v", err)
	}
	if _, _, err := st.Latest(); !errors.Is(err, checkpoint.ErrNewerCheckpoint) {
		t.Errorf("Latest after the run: %v, want ErrNewerCheckpoint", err)
	}
}
