package exec

// gateAction is what a task must do with a message offered to its inputGate.
type gateAction uint8

const (
	// gateProcess: process the message (a batch) now.
	gateProcess gateAction = iota
	// gateEnded: the message ended its channel; other channels go on.
	gateEnded
	// gateAllEnded: the message ended the last open channel: finish.
	gateAllEnded
	// gateQueued: the channel is held; the gate keeps the message until
	// Release hands it back. Its credit stays taken, so a held channel
	// backpressures its sender after ChannelBuffer messages.
	gateQueued
	// gateBarrier: a barrier was absorbed (its channel is now held until
	// the checkpoint is aligned); nothing else to do.
	gateBarrier
	// gateAligned: the barrier of checkpoint Aligning() has arrived on every
	// open channel: snapshot, forward the barrier, ack, then ReleaseAll.
	gateAligned
	// gateSubsumed: a barrier of a newer checkpoint arrived while an older
	// one was aligning: the older one is abandoned. The task must
	// ReleaseAll, re-offer what was queued, then re-offer this message.
	gateSubsumed
	// gateStale: a barrier of an abandoned or finished checkpoint; ignore it.
	gateStale
	// gateWatermark: a watermark or idle marker to hand to the task's
	// watermark valve now. On a held channel it is queued like data, so it
	// keeps its place behind the barrier.
	gateWatermark
)

// inputGate is the bookkeeping of a task's input channels: which ended,
// which are held, and the alignment of checkpoint barriers. It is a plain
// state machine (events in, decisions out, no goroutines or channels), tested
// with traces.
//
// Alignment (DESIGN.md, step 3): when barrier n arrives on a channel, that
// channel is held — what follows it belongs to checkpoint n+1 — while the
// others are processed normally. When barrier n has arrived on every channel
// that has not ended, the gate reports gateAligned; an ended channel counts
// as aligned, so a finished input never blocks a checkpoint.
type inputGate struct {
	ended  []bool
	held   []bool
	queued [][]message // per held channel, in arrival order
	open   int         // channels not yet ended

	aligning int64  // checkpoint being aligned; 0 if none
	seen     []bool // barrier `aligning` arrived on this channel
	nseen    int    // channels in seen that have not ended
	done     int64  // highest checkpoint aligned or abandoned
}

func newInputGate(n int) *inputGate {
	return &inputGate{ended: make([]bool, n), held: make([]bool, n), queued: make([][]message, n),
		seen: make([]bool, n), open: n}
}

// NumChannels returns the number of logical input channels.
func (g *inputGate) NumChannels() int { return len(g.ended) }

// AllEnded reports whether every channel has ended.
func (g *inputGate) AllEnded() bool { return g.open == 0 }

// Ended reports whether channel ch has ended.
func (g *inputGate) Ended(ch int) bool { return g.ended[ch] }

// Held reports whether channel ch is held.
func (g *inputGate) Held(ch int) bool { return g.held[ch] }

// Aligning returns the checkpoint whose barriers are being aligned, or 0.
func (g *inputGate) Aligning() int64 { return g.aligning }

// Offer is the arrival (or the release from hold) of message m.
func (g *inputGate) Offer(m message) gateAction {
	ch := int(m.ch)
	if g.held[ch] {
		g.queued[ch] = append(g.queued[ch], m)
		return gateQueued
	}
	switch m.kind {
	case msgEnd:
		if g.ended[ch] {
			panic("exec: end of input received twice on one channel")
		}
		g.ended[ch] = true
		g.open--
		if g.seen[ch] {
			g.nseen--
		}
		if g.open == 0 {
			return gateAllEnded
		}
		return gateEnded
	case msgBarrier:
		return g.barrier(ch, m.ckpt)
	case msgWatermark, msgIdle, msgActive:
		if g.ended[ch] {
			panic("exec: watermark received after end of input")
		}
		return gateWatermark
	default:
		if g.ended[ch] {
			panic("exec: data received after end of input")
		}
		return gateProcess
	}
}

func (g *inputGate) barrier(ch int, id int64) gateAction {
	switch {
	case id <= g.done || (g.aligning != 0 && id < g.aligning):
		return gateStale
	case g.aligning != 0 && id > g.aligning:
		return gateSubsumed
	}
	if g.aligning == 0 {
		g.aligning = id
	}
	if g.seen[ch] {
		panic("exec: two barriers of one checkpoint on one channel")
	}
	g.seen[ch] = true
	g.nseen++
	g.held[ch] = true
	if g.nseen == g.open {
		return gateAligned
	}
	return gateBarrier
}

// AlignedAfterEnd reports whether, after a channel ended, the checkpoint
// being aligned now has its barrier on every open channel (the task then
// snapshots as for gateAligned).
func (g *inputGate) AlignedAfterEnd() bool {
	return g.aligning != 0 && g.nseen == g.open
}

// Hold stops the consumption of channel ch: its messages are queued.
func (g *inputGate) Hold(ch int) { g.held[ch] = true }

// Release resumes channel ch and returns its queued messages in arrival
// order; the task must Offer each of them again, before any new message.
func (g *inputGate) Release(ch int) []message {
	g.held[ch] = false
	q := g.queued[ch]
	g.queued[ch] = nil
	return q
}

// ReleaseAll ends the current alignment (completed or abandoned) and returns
// the messages queued on every held channel, channel by channel in arrival
// order; the task must Offer each of them again before any new message.
func (g *inputGate) ReleaseAll() []message {
	if g.aligning > g.done {
		g.done = g.aligning
	}
	g.aligning = 0
	g.nseen = 0
	clear(g.seen)
	var out []message
	for ch := range g.held {
		if g.held[ch] {
			out = append(out, g.Release(ch)...)
		}
	}
	return out
}
