package filesystem

import (
	"fmt"
	"strings"
)

// DescribePosition says what a reader's position (from Position) means:
// the subtask, the file it reads (its path relative to the source folder)
// with the byte offset and line of the next record, how many of its files
// it has finished, and the later files an earlier run at another
// parallelism had started or finished.
func DescribePosition(pos []byte) (string, error) {
	p, err := decodeFilePosition(pos)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if p.version >= positionV2 {
		// The subtask reads files subtask, subtask+p, ...: those before
		// the current one are finished.
		done := 0
		if p.file > p.subtask {
			done = (p.file - p.subtask + p.parallelism - 1) / p.parallelism
		}
		fmt.Fprintf(&b, "subtask %d of %d: ", p.subtask, p.parallelism)
		if p.name == "" {
			fmt.Fprintf(&b, "finished: all its files read (%d %s)", done, plural(done, "file", "files"))
		} else {
			fmt.Fprintf(&b, "file %q: next record at %s; %d earlier %s finished", p.name, describeStart(p.at), done, plural(done, "file", "files"))
		}
	} else if p.name == "" {
		b.WriteString("all its files finished")
	} else {
		fmt.Fprintf(&b, "file %q: next record at %s; the files before it finished", p.name, describeStart(p.at))
	}
	for _, l := range p.later {
		if l.start.done {
			fmt.Fprintf(&b, "\nthen file %q: finished by an earlier run", l.name)
		} else {
			fmt.Fprintf(&b, "\nthen file %q: next record at %s (where an earlier run left it)", l.name, describeStart(l.start))
		}
	}
	return b.String(), nil
}

// describeStart says where the next record of a file is.
func describeStart(st fileStart) string {
	s := fmt.Sprintf("byte offset %d", st.offset)
	if st.line > 0 {
		s += fmt.Sprintf(" (line %d)", st.line)
	}
	if st.emitted > 0 {
		s += fmt.Sprintf(", %d %s of that record already read", st.emitted, plural(st.emitted, "row", "rows"))
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
