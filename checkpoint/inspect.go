package checkpoint

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Inspect returns a human-readable report of the checkpoint or savepoint in
// folder path, for `weir checkpoints inspect`. Its status verifies every
// state file (checksums included). Key counts are "about": they are
// estimated from sstable properties, in which a key overwritten since the
// last compaction counts more than once. A folder whose _metadata is
// readable but whose state files are damaged is still reported, with its
// status; a folder without readable _metadata is an error.
func Inspect(fsys FS, path string) (string, error) {
	m, err := readMetadata(fsys, path)
	if err != nil {
		return "", err
	}
	status := "valid"
	if err := verifyState(fsys, path, m, true); err != nil {
		status = err.Error()
	} else if !hasChecksums(m) && len(m.Operators) > 0 {
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
	if m.Query != "" {
		fmt.Fprintf(&b, "  query:\n")
		for _, line := range strings.Split(strings.TrimRight(m.Query, "\n"), "\n") {
			fmt.Fprintf(&b, "    %s\n", line)
		}
	}
	if len(m.Sources) > 0 {
		fmt.Fprintf(&b, "sources:\n")
		for _, s := range m.Sources {
			fmt.Fprintf(&b, "  %s[%d]  position %s\n", s.Source, s.Subtask, formatOpaque(s.Position))
		}
	}
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
		for _, st := range op.Subtasks {
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
			fmt.Fprintf(&b, "  %s[%d]  transaction %s\n", s.Sink, s.Subtask, formatOpaque(s.Transaction))
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
			if i.Unreadable() {
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
