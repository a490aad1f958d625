package repl

import (
	"regexp"
	"strings"
	"testing"
)

// TestJobEndNotices runs two background INSERTs on a pseudo-terminal while
// the user types at the prompt: one that ends normally and one that fails
// (a division by zero at run time). Each ending is told on a line of its
// own above the prompt (the job's id, name, and the first line of the
// error), and the prompt is drawn again below with what was typed.
func TestJobEndNotices(t *testing.T) {
	p := startPTYShell(t, 40, 250)
	at := p.scr.waitFor(t, 0, Prompt)
	at = p.run(at,
		"SET 'parallelism.default' = '1';",
		"CREATE TABLE slow (n BIGINT) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '4', 'rows-per-second' = '8');",
		"CREATE TABLE sink (n BIGINT) WITH ('connector' = 'blackhole');",
		"SET 'pipeline.name' = 'good';",
		"INSERT INTO sink SELECT n FROM slow;")
	p.typeIn("SHOW")
	at = p.scr.waitFor(t, at, "finished.")
	at = p.scr.waitFor(t, at, "SHOW") // the prompt and the input drawn again
	p.typeIn("\x03")                  // cancel the line
	at = p.scr.waitFor(t, at, Prompt)
	at = p.run(at,
		"SET 'pipeline.name' = 'bad';",
		"INSERT INTO sink SELECT 10 / (n - 3) FROM slow;")
	p.typeIn("SEL")
	at = p.scr.waitFor(t, at, "failed: ")
	p.scr.waitFor(t, at, "SEL")
	lines := p.seen()
	done := regexp.MustCompile(`^\[INFO\] Job [0-9a-f]{8} \(good\) finished\.$`)
	failed := regexp.MustCompile(`^\[ERROR\] Job [0-9a-f]{8} \(bad\) failed: Source: .*division by zero$`)
	var nDone, nFailed int
	for _, l := range lines {
		switch {
		case done.MatchString(l):
			nDone++
		case failed.MatchString(l):
			nFailed++
		case strings.Contains(l, "finished.") || strings.Contains(l, "failed: "):
			t.Fatalf("a notice shares its line or lacks the id, name or error: %q; terminal:\n%s", l, strings.Join(lines, "\n"))
		}
	}
	if nDone != 1 || nFailed != 1 {
		t.Fatalf("%d notices of the finished job and %d of the failed one, want 1 and 1; terminal:\n%s", nDone, nFailed, strings.Join(lines, "\n"))
	}
	if last := lines[len(lines)-1]; last != Prompt+"SEL" {
		t.Fatalf("last line %q, want the prompt with the input %q; terminal:\n%s", last, Prompt+"SEL", strings.Join(lines, "\n"))
	}
	p.typeIn("\x03")
	p.quit()
}
