package repl

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/weir-sql/weir/types"
)

// resultView shows a running query's result. The query loop calls begin,
// then update and tick as changes arrive, then finish (or abort on failure).
type resultView interface {
	begin()
	// update applies the changes that arrived (b may be nil or empty).
	update(b *types.Batch) error
	// tick is called at most ten times a second to refresh the display.
	tick(elapsed time.Duration, checkpoint string)
	// finish shows the final result; stopped says the user stopped it.
	finish(elapsed time.Duration, stopped bool)
	abort()
}

// newView picks the view for the result mode in effect:
//
//   - table (interactive default): a table redrawn in place as it changes;
//   - changelog: each change as it arrives, with its op column;
//   - tableau (scripts): the final table once for a bounded query, each
//     change as it arrives (like changelog) for an unbounded one.
func (sh *Shell) newView(s types.Schema, bounded bool) resultView {
	switch sh.resultMode() {
	case ModeTable:
		return &liveTable{out: sh.opts.Out, schema: s, m: NewMaterializer(s.Len()), width: sh.width, height: sh.term.height, notices: sh.term.notices}
	case ModeChangelog:
		return &changeStream{out: sh.opts.Out, schema: s, width: sh.width()}
	}
	if bounded {
		return &finalTable{out: sh.opts.Out, schema: s, m: NewMaterializer(s.Len()), width: sh.width()}
	}
	return &changeStream{out: sh.opts.Out, schema: s, width: sh.width()}
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2f seconds", d.Seconds()) }

// summary is the line under a final table.
func summary(rows int, elapsed time.Duration, stopped bool) string {
	how := seconds(elapsed)
	if stopped {
		how += ", stopped"
	}
	if rows == 0 {
		return fmt.Sprintf("Empty set (%s)\n", how)
	}
	return fmt.Sprintf("%d %s in set (%s)\n", rows, plural(rows, "row"), how)
}

// finalTable collects the result and prints it once at the end.
type finalTable struct {
	out    io.Writer
	schema types.Schema
	m      *Materializer
	width  int
}

func (v *finalTable) begin()                      {}
func (v *finalTable) update(b *types.Batch) error { return applyAll(v.m, b) }
func (v *finalTable) tick(time.Duration, string)  {}
func (v *finalTable) abort()                      {}
func (v *finalTable) finish(elapsed time.Duration, stopped bool) {
	if v.m.Len() > 0 {
		io.WriteString(v.out, renderTable(v.schema, v.m, v.width, -1))
	}
	io.WriteString(v.out, summary(v.m.Len(), elapsed, stopped))
}

func applyAll(m *Materializer, b *types.Batch) error {
	if b == nil {
		return nil
	}
	return m.ApplyBatch(b)
}

// changeStream prints each change as a table row with an op column.
type changeStream struct {
	out     io.Writer
	schema  types.Schema
	width   int
	f       *tableFormat
	n       int64
	buf     []byte
	scratch []string
}

func (v *changeStream) begin() {
	v.f = changelogFormat(v.schema, v.width)
	v.out.Write(v.f.appendHeader(nil))
}

func (v *changeStream) update(b *types.Batch) error {
	if b == nil || b.Len() == 0 {
		return nil
	}
	v.buf = v.buf[:0]
	for i := range b.Len() {
		v.buf, v.scratch = appendChange(v.buf, v.f, b.Kinds[i], b.Row(i), v.scratch)
	}
	v.n += int64(b.Len())
	_, err := v.out.Write(v.buf)
	return err
}

func (v *changeStream) tick(time.Duration, string) {}
func (v *changeStream) abort()                     { v.out.Write(v.f.appendBorder(nil)) }
func (v *changeStream) finish(elapsed time.Duration, stopped bool) {
	v.out.Write(v.f.appendBorder(nil))
	how := seconds(elapsed)
	if stopped {
		how += ", stopped"
	}
	fmt.Fprintf(v.out, "Received %d %s (%s)\n", v.n, plural(int(v.n), "change"), how)
}

// liveTable keeps the result table on screen while the query runs, under a
// footer with the row count and update rate, and redraws it in place on
// the terminal's alternate screen (as top and less do): the redraws never
// reach the scrollback, however tall the table. When the query ends the
// main screen comes back and the final table is printed there once.
type liveTable struct {
	out     io.Writer
	schema  types.Schema
	m       *Materializer
	width   func() int
	height  func() int
	notices *promptState // background output, held while the table is shown; may be nil

	onAlt       bool // the alternate screen is shown
	lastChanges int64
	lastTick    time.Duration
	rate        float64
	buf         []byte
}

// Terminal control sequences of the live table.
const (
	enterAltScreen = "\x1b[?1049h\x1b[H\x1b[2J" // alternate screen, cleared
	leaveAltScreen = "\x1b[?1049l"              // back to the main screen and its cursor
	eraseToEOL     = "\x1b[K"
	eraseBelow     = "\x1b[J"
	cursorHome     = "\x1b[H"
)

func (v *liveTable) begin() {
	if v.notices != nil {
		v.notices.hold()
	}
	io.WriteString(v.out, enterAltScreen)
	v.onAlt = true
}

func (v *liveTable) update(b *types.Batch) error { return applyAll(v.m, b) }

func (v *liveTable) tick(elapsed time.Duration, checkpoint string) {
	if dt := elapsed - v.lastTick; dt >= time.Second/2 {
		v.rate = float64(v.m.Changes()-v.lastChanges) / dt.Seconds()
		v.lastChanges, v.lastTick = v.m.Changes(), elapsed
	}
	// The table, its borders, the line of rows not shown and the footer
	// fit in the screen with a line to spare, so nothing scrolls.
	maxRows := max(v.height()-7, 1)
	width := v.width()
	footer := fmt.Sprintf("%d %s · %.0f updates/s · %s", v.m.Len(), plural(v.m.Len(), "row"), v.rate, elapsed.Round(100*time.Millisecond))
	if checkpoint != "" {
		footer += " · last checkpoint: " + checkpoint
	}
	footer += " · q or Ctrl-C stops"
	if n := len([]rune(footer)); n > width-1 {
		footer = string(appendCell(nil, footer, width-1, false))
	}
	text := renderTable(v.schema, v.m, width, maxRows) + footer + "\n"
	// Draw over the previous drawing from the top left, clearing the rest
	// of each line and what is below, so the screen does not flicker.
	v.buf = append(v.buf[:0], cursorHome...)
	for line := range strings.Lines(text) {
		v.buf = append(v.buf, strings.TrimSuffix(line, "\n")...)
		v.buf = append(v.buf, eraseToEOL+"\r\n"...)
	}
	v.buf = append(v.buf, eraseBelow...)
	v.out.Write(v.buf)
}

// leave returns to the main screen and prints the background output
// that came meanwhile.
func (v *liveTable) leave() {
	if v.onAlt {
		io.WriteString(v.out, leaveAltScreen)
		v.onAlt = false
		if v.notices != nil {
			v.notices.release()
		}
	}
}

func (v *liveTable) abort() { v.leave() }

func (v *liveTable) finish(elapsed time.Duration, stopped bool) {
	v.leave()
	if v.m.Len() > 0 {
		io.WriteString(v.out, renderTable(v.schema, v.m, v.width(), -1))
	}
	io.WriteString(v.out, summary(v.m.Len(), elapsed, stopped))
}
