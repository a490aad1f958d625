package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Inspect returns a human-readable report of the checkpoint or savepoint in
// folder path, for `weir checkpoints inspect`, showing source positions as
// hex (InspectWith can describe them). Its status verifies every state file
// (checksums included). Key counts are "about": they are estimated from
// sstable properties, in which a key overwritten since the last compaction
// counts more than once. A folder whose _metadata is readable but whose
// state files are damaged is still reported, with its status; a folder
// without readable _metadata is an error.
func Inspect(fsys FS, path string) (string, error) {
	return InspectWith(fsys, path, InspectOptions{})
}

// InspectOptions adds to what Inspect shows.
type InspectOptions struct {
	// DescribePosition, if set, returns what a source position means for
	// the connector that wrote it (ok false: the connector is unknown,
	// and the position is shown as hex). Checkpoints before format
	// version 3 do not record the connector; their positions are hex.
	DescribePosition func(connector string, pos []byte) (text string, ok bool, err error)
}

// InspectWith is Inspect with source positions described as opts says.
func InspectWith(fsys FS, path string, opts InspectOptions) (string, error) {
	m, err := readMetadata(fsys, path)
	if err != nil {
		return "", err
	}
	status := "valid"
	if err := verifyState(fsys, path, m, true); err != nil {
		status = err.Error()
	} else if err := readSinkData(fsys, path, m, true); err != nil {
		status = err.Error()
	} else if m.FormatVersion < 2 && !hasChecksums(m) && len(m.Operators) > 0 {
		status = "valid (format version 1: state files checked by size only, no checksums)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d of job %q\n", m.Kind, m.CheckpointID, m.Job)
	fmt.Fprintf(&b, "  folder:          %s\n", filepath.Base(path))
	fmt.Fprintf(&b, "  status:          %s\n", status)
	fmt.Fprintf(&b, "  time:            %s\n", m.Timestamp.UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "  format version:  %d\n", m.FormatVersion)
	fmt.Fprintf(&b, "  max parallelism: %d\n", m.MaxParallelism)
	if m.PlanFingerprint != "" {
		fmt.Fprintf(&b, "  plan:            %s\n", m.PlanFingerprint)
	}
	if len(m.Statements) > 0 {
		fmt.Fprintf(&b, "  statements:\n")
		for i, st := range m.Statements {
			prefix := fmt.Sprintf("    %d: ", i+1)
			for k, line := range strings.Split(strings.TrimRight(st, "\n"), "\n") {
				if k == 1 {
					prefix = strings.Repeat(" ", len(prefix))
				}
				fmt.Fprintf(&b, "%s%s\n", prefix, line)
			}
		}
	} else if m.Query != "" {
		fmt.Fprintf(&b, "  query:\n")
		for _, line := range strings.Split(strings.TrimRight(m.Query, "\n"), "\n") {
			fmt.Fprintf(&b, "    %s\n", line)
		}
	}
	writeSources(&b, m, opts)
	if len(m.Operators) > 0 {
		fmt.Fprintf(&b, "operators:\n")
	}
	var totalBytes, totalKeys int64
	for _, op := range m.Operators {
		fmt.Fprintf(&b, "  %s", op.ID)
		if op.Name != "" {
			fmt.Fprintf(&b, "  %s", op.Name)
		}
		fmt.Fprintf(&b, "  parallelism %d\n", op.Parallelism)
		if what := operatorContext(m, op); what != "" {
			fmt.Fprintf(&b, "    %s\n", what)
		}
		for _, st := range op.Subtasks {
			if st.Finished {
				fmt.Fprintf(&b, "    subtask %d  finished (its inputs had ended): no state\n", st.Subtask)
				continue
			}
			ssts := 0
			for _, f := range st.Files {
				if strings.HasSuffix(f.Name, ".sst") {
					ssts++
				}
			}
			fmt.Fprintf(&b, "    subtask %d  %s  %s  about %d keys  %d files (%d sst)\n",
				st.Subtask, st.Dir, formatBytes(st.StateBytes), st.Keys, len(st.Files), ssts)
			totalBytes += st.StateBytes
			totalKeys += st.Keys
		}
	}
	if len(m.Operators) > 0 {
		fmt.Fprintf(&b, "  total  %s  about %d keys\n", formatBytes(totalBytes), totalKeys)
	}
	if len(m.Sinks) > 0 {
		fmt.Fprintf(&b, "sinks:\n")
		for _, s := range m.Sinks {
			if len(s.Transaction) > 64 {
				fmt.Fprintf(&b, "  %s[%d]  transaction of %s\n", s.Sink, s.Subtask, formatBytes(int64(len(s.Transaction))))
			} else {
				fmt.Fprintf(&b, "  %s[%d]  transaction %s\n", s.Sink, s.Subtask, formatOpaque(s.Transaction))
			}
		}
	}
	if len(m.Extra) > 0 {
		fmt.Fprintf(&b, "extra:\n")
		keys := make([]string, 0, len(m.Extra))
		for k := range m.Extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s = %s\n", k, m.Extra[k])
		}
	}
	return b.String(), nil
}

// hasChecksums reports whether m records state file checksums.
func hasChecksums(m *Metadata) bool {
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			for _, f := range st.Files {
				if f.CRC32C != "" {
					return true
				}
			}
		}
	}
	return false
}

// FormatList renders List's result as a table, for `weir checkpoints list`.
func FormatList(infos []Info) string {
	if len(infos) == 0 {
		return "no checkpoints\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-24s %-10s %s\n", "ID", "TIME", "KIND", "STATUS")
	for _, i := range infos {
		t, kind, status := "-", "-", "valid"
		if !i.Time.IsZero() {
			t = i.Time.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		if i.Kind != "" {
			kind = string(i.Kind)
		}
		if i.Reason != nil {
			status = i.Reason.Error()
			// The path is noise in a table whose rows are already named.
			status = strings.TrimPrefix(status, "load "+i.Path+": ")
			if i.Unreadable() && !errors.Is(i.Reason, ErrNewerCheckpoint) {
				status = "unreadable: " + status
			}
		}
		fmt.Fprintf(&b, "%-8d %-24s %-10s %s\n", i.ID, t, kind, status)
	}
	return b.String()
}

// formatOpaque shows opaque bytes as a quoted string when printable, else
// as hex.
func formatOpaque(p []byte) string {
	printable := true
	for _, r := range string(p) {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			printable = false
			break
		}
	}
	if printable {
		return fmt.Sprintf("%q", p)
	}
	return fmt.Sprintf("0x%x", p)
}

// formatBytes renders a size with a binary unit.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n)/unit, "KiB"
	for _, next := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, u = v/unit, next
	}
	return fmt.Sprintf("%.1f %s", v, u)
}

// writeSources writes the sources section: per source (its table and
// connector when recorded) each subtask's position, described by the
// connector when opts can, else as hex, with a last line "(ended: …)" when the subtask
// had read its input to the end (SourcePosition.Ended).
func writeSources(b *strings.Builder, m *Metadata, opts InspectOptions) {
	if len(m.Sources) == 0 {
		return
	}
	fmt.Fprintf(b, "sources:\n")
	last := ""
	for _, s := range m.Sources {
		if s.Table == "" && s.Connector == "" {
			// Before format version 3: the position's meaning is unknown.
			fmt.Fprintf(b, "  %s[%d]  position %s\n", s.Source, s.Subtask, formatOpaque(s.Position))
			continue // before format version 3: never ended (version 6)
		}
		if s.Source != last {
			fmt.Fprintf(b, "  %s ('connector' = '%s')  id %s\n", s.Table, s.Connector, s.Source)
			last = s.Source
		}
		text := "position " + formatOpaque(s.Position)
		if opts.DescribePosition != nil {
			desc, ok, err := opts.DescribePosition(s.Connector, s.Position)
			switch {
			case err != nil:
				text += fmt.Sprintf(" (cannot be read as a %s position: %v)", s.Connector, err)
			case ok:
				text = desc
			}
		}
		if s.Ended {
			// A line of its own, after the connector's words (which may
			// take a line per split).
			text += "\n(ended: reads nothing after a restore)"
		}
		prefix := fmt.Sprintf("    [%d] ", s.Subtask)
		for k, line := range strings.Split(text, "\n") {
			if k == 1 {
				prefix = strings.Repeat(" ", len(prefix))
			}
			fmt.Fprintf(b, "%s%s\n", prefix, line)
		}
	}
}

// operatorContext says which statement an operator belongs to and which
// sinks it feeds, as far as the metadata records it ("" before format
// version 3): "statement 2 (feeds out): INSERT INTO out SELECT …".
func operatorContext(m *Metadata, op OperatorState) string {
	var b strings.Builder
	if op.Statement > 0 {
		fmt.Fprintf(&b, "statement %d", op.Statement)
	}
	if len(op.Sinks) > 0 {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "(feeds %s)", strings.Join(op.Sinks, ", "))
	}
	if n := op.Statement; n > 0 && n <= len(m.Statements) {
		fmt.Fprintf(&b, ": %s", abbreviate(m.Statements[n-1], 72))
	}
	return b.String()
}

// abbreviate returns s on one line, its spaces collapsed, cut with "…"
// after max runes.
func abbreviate(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// FolderKind tells what a folder given to `weir checkpoints` holds.
type FolderKind int

// Kinds of folder.
const (
	// FolderUnknown: none of the others (empty, or something else).
	FolderUnknown FolderKind = iota
	// FolderSnapshot: one checkpoint or savepoint (it has _metadata, or
	// is named chk-<n>).
	FolderSnapshot
	// FolderJob: a job's checkpoint folder (<state.checkpoints.dir>/<job>),
	// with chk-<n> folders, or the lock or working folder of a run.
	FolderJob
	// FolderRoot: state.checkpoints.dir, whose folders are jobs'.
	FolderRoot
)

// jobMarkers are what a run leaves in its job's folder besides chk-<n>.
var jobMarkers = []string{".lock", "_work"}

// Classify tells whether path is a checkpoint or savepoint, a job's
// checkpoint folder, or the folder of all jobs (state.checkpoints.dir).
func Classify(fsys FS, path string) (FolderKind, error) {
	if _, ok := parseChkDir(filepath.Base(path)); ok {
		return FolderSnapshot, nil
	}
	if _, err := fsys.Stat(filepath.Join(path, MetadataFile)); err == nil {
		return FolderSnapshot, nil
	}
	entries, err := fsys.ReadDir(path)
	if err != nil {
		return FolderUnknown, fmt.Errorf("read %s: %w", path, err)
	}
	if isJobDir(entries) {
		return FolderJob, nil
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub, err := fsys.ReadDir(filepath.Join(path, e.Name()))
		if err == nil && isJobDir(sub) {
			return FolderRoot, nil
		}
	}
	return FolderUnknown, nil
}

// isJobDir reports whether a folder's entries are those of a job's
// checkpoint folder.
func isJobDir(entries []fs.DirEntry) bool {
	for _, e := range entries {
		if _, ok := parseChkDir(e.Name()); ok && e.IsDir() {
			return true
		}
		if slices.Contains(jobMarkers, e.Name()) {
			return true
		}
	}
	return false
}

// JobInfo summarizes the checkpoints of one job, for listing
// state.checkpoints.dir.
type JobInfo struct {
	Name string
	Path string
	// Checkpoints is the number of chk-<n> folders (valid or not).
	Checkpoints int
	// Latest is the newest valid checkpoint (every state file verified),
	// nil if there is none.
	Latest *Checkpoint
	// Err is why the job's folder could not be read; the other fields
	// are then partial.
	Err error
}

// ListJobs summarizes every job's checkpoint folder under root
// (state.checkpoints.dir), by name. Folders that are not a job's are left
// out; a job whose folder cannot be read is listed with Err.
func ListJobs(fsys FS, root string) ([]JobInfo, error) {
	entries, err := fsys.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list jobs in %s: %w", root, err)
	}
	var jobs []JobInfo
	for _, e := range entries {
		if !e.IsDir() || checkRelDir(e.Name()) != nil {
			continue
		}
		dir := filepath.Join(root, e.Name())
		sub, err := fsys.ReadDir(dir)
		if err != nil {
			jobs = append(jobs, JobInfo{Name: e.Name(), Path: dir, Err: err})
			continue
		}
		if !isJobDir(sub) {
			continue
		}
		st, err := NewStorage(fsys, root, e.Name())
		if err != nil {
			continue
		}
		j := JobInfo{Name: e.Name(), Path: dir}
		ids, err := st.checkpointDirs()
		j.Checkpoints = len(ids)
		if err == nil {
			j.Latest, _, err = st.Latest()
			if errors.Is(err, ErrNoCheckpoint) {
				err = nil
			}
		}
		j.Err = err
		jobs = append(jobs, j)
	}
	slices.SortFunc(jobs, func(a, b JobInfo) int { return strings.Compare(a.Name, b.Name) })
	return jobs, nil
}

// FormatJobs renders ListJobs's result as a table: per job the number of
// checkpoint folders and the newest valid checkpoint with its time.
func FormatJobs(jobs []JobInfo) string {
	if len(jobs) == 0 {
		return "no jobs\n"
	}
	width := len("JOB")
	for _, j := range jobs {
		width = max(width, len(j.Name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %-11s  %-12s  %s\n", width, "JOB", "CHECKPOINTS", "LATEST VALID", "TIME")
	for _, j := range jobs {
		latest, t := "none", "-"
		if j.Latest != nil {
			latest = filepath.Base(j.Latest.Path)
			t = j.Latest.Meta.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		if j.Err != nil {
			latest, t = "unreadable:", j.Err.Error()
		}
		fmt.Fprintf(&b, "%-*s  %-11d  %-12s  %s\n", width, j.Name, j.Checkpoints, latest, t)
	}
	return b.String()
}
