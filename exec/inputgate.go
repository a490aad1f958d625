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
)

// inputGate is the bookkeeping of a task's input channels: which ended and
// which are held. It is a plain state machine (events in, decisions out, no
// goroutines or channels) so that barrier alignment can be added to it and
// tested with traces.
type inputGate struct {
	ended  []bool
	held   []bool
	queued [][]message // per held channel, in arrival order
	open   int         // channels not yet ended
}

func newInputGate(n int) *inputGate {
	return &inputGate{ended: make([]bool, n), held: make([]bool, n), queued: make([][]message, n), open: n}
}

// NumChannels returns the number of logical input channels.
func (g *inputGate) NumChannels() int { return len(g.ended) }

// AllEnded reports whether every channel has ended.
func (g *inputGate) AllEnded() bool { return g.open == 0 }

// Ended reports whether channel ch has ended.
func (g *inputGate) Ended(ch int) bool { return g.ended[ch] }

// Held reports whether channel ch is held.
func (g *inputGate) Held(ch int) bool { return g.held[ch] }

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
		if g.open == 0 {
			return gateAllEnded
		}
		return gateEnded
	default:
		if g.ended[ch] {
			panic("exec: data received after end of input")
		}
		return gateProcess
	}
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
