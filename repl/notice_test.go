package repl

import (
	"bytes"
	"strings"
	"testing"
)

// TestHeldNoticesKeepTheLatest: output held while a live table is shown is
// bounded, keeps the latest bytes, and says on the warning writer how much
// was dropped.
func TestHeldNoticesKeepTheLatest(t *testing.T) {
	var out, warn bytes.Buffer
	p := &promptState{warn: &warn}
	p.hold()
	line := strings.Repeat("x", 1023) + "\n"
	for range 2*maxHeldNotices/len(line) + 10 {
		p.keep(&out, nil, []byte(line))
	}
	p.keep(&out, nil, []byte("job 1 failed\n"))
	p.release()
	if !strings.HasSuffix(out.String(), "job 1 failed\n") {
		t.Fatalf("the latest line is not kept")
	}
	if out.Len() > maxHeldNotices {
		t.Fatalf("%d bytes printed, more than the %d held at most", out.Len(), maxHeldNotices)
	}
	if !strings.Contains(warn.String(), "were dropped") {
		t.Fatalf("no warning about the dropped output: %q", warn.String())
	}
	if p.held || len(p.pending) != 0 {
		t.Fatal("release did not reset the hold")
	}
}
