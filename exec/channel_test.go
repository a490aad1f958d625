package exec

import (
	"context"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestLinkCredits checks credit-based flow control on one logical channel:
// the sender gets ChannelBuffer messages in, then blocks until the receiver
// has processed one, and processed batches come back for reuse.
func TestLinkCredits(t *testing.T) {
	const buffer = 2
	blocked := make(chan struct{}, 1)
	j := &Job{opts: Options{creditWaitHook: func() { blocked <- struct{}{} }}}
	inbox := make(chan message, buffer)
	l := newLink(inbox, 3, 1, buffer)
	ctx := context.Background()
	var sent []*types.Batch
	for range buffer {
		b := l.getBatch(4)
		sent = append(sent, b)
		if err := l.send(ctx, j, message{batch: b, ch: l.ch}); err != nil {
			t.Fatal(err)
		}
	}
	if len(blocked) != 0 || j.inFlight.Load() != buffer {
		t.Fatalf("sender blocked early, or %d in flight", j.inFlight.Load())
	}
	done := make(chan error)
	go func() { done <- l.send(ctx, j, message{ch: l.ch, kind: msgEnd}) }()
	<-blocked // the third message waits for a credit
	m := <-inbox
	if m.ch != 3 || m.batch != sent[0] {
		t.Fatalf("got message %+v", m)
	}
	l.release(j, m)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b := l.getBatch(4); b != sent[0] {
		t.Error("a processed batch was not recycled")
	}
	if j.maxInFlight.Load() != buffer {
		t.Errorf("max in flight %d, want %d", j.maxInFlight.Load(), buffer)
	}
	// A cancelled sender gives up instead of blocking.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	j.opts.creditWaitHook = nil
	if err := l.send(cctx, j, message{ch: l.ch}); err == nil {
		t.Error("send on a full channel with a cancelled context succeeded")
	}
}
