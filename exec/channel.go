package exec

import (
	"context"

	"github.com/weir-sql/weir/types"
)

// msgKind says what a message on a logical channel carries.
type msgKind uint8

const (
	// msgData carries a batch of rows.
	msgData msgKind = iota
	// msgEnd says the logical channel has no more input.
	msgEnd
	// msgBarrier is checkpoint barrier ckpt: everything before it on the
	// channel belongs to checkpoint ckpt, everything after to the next.
	msgBarrier
	// msgWatermark is watermark wm: no row that follows it on the channel
	// has an event time below wm (rows that do are late).
	msgWatermark
	// msgIdle says the sender has no data for now: the receiver leaves the
	// channel out of its watermark until data or a watermark comes on it.
	msgIdle
	// msgActive says the sender, idle before, is active again: the
	// receiver counts the channel in its watermark again (with the
	// watermark it had), even if no row follows at once.
	msgActive
)

// message is what travels on a task's inbox: a batch or a control message,
// tagged with the logical channel (index into the receiver's inputs) it
// belongs to. Control messages travel in-band between batches.
type message struct {
	batch *types.Batch // msgData only
	ckpt  int64        // msgBarrier only: the checkpoint id
	wm    int64        // msgWatermark only: the watermark (ms since the epoch)
	ch    int32
	kind  msgKind
	// stopped, for msgEnd, says that the channel's input did not end: a
	// source upstream was stopped (Job.Stop, a stop with savepoint), so
	// more of it may come after a restore.
	stopped bool
}

// link is one logical channel from an upstream subtask to a downstream
// subtask. Flow control is credit based: the sender takes a credit (a slot
// of credits) before sending a message, and the receiver gives it back once
// it has processed the message, so at most cap(credits) messages of this
// channel are in flight or held by the receiver. Processed batches are
// returned to the sender through free, so the steady state allocates no
// batches.
type link struct {
	inbox   chan<- message
	credits chan struct{}
	free    chan *types.Batch
	ch      int32 // index of this channel at the receiver
	width   int   // row width of the batches
}

func newLink(inbox chan<- message, ch, width, buffer int) *link {
	return &link{
		inbox:   inbox,
		credits: make(chan struct{}, buffer),
		free:    make(chan *types.Batch, buffer+1),
		ch:      int32(ch),
		width:   width,
	}
}

// getBatch returns an empty batch for this channel, recycled if one is free.
func (l *link) getBatch(capacity int) *types.Batch {
	select {
	case b := <-l.free:
		return b
	default:
		return types.NewBatch(l.width, capacity)
	}
}

// send takes a credit (blocking while the receiver is behind) and delivers m.
func (l *link) send(ctx context.Context, j *Job, m message) error {
	select {
	case l.credits <- struct{}{}:
	default:
		if h := j.opts.creditWaitHook; h != nil {
			h()
		}
		select {
		case l.credits <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	j.batchSent()
	// The inbox has room for every credit of every channel into it, so
	// this does not block; ctx is checked for safety only.
	select {
	case l.inbox <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release is called by the receiver when it has processed m: the batch goes
// back to the sender's free list and the credit is returned.
func (l *link) release(j *Job, m message) {
	if m.batch != nil {
		m.batch.Reset()
		select {
		case l.free <- m.batch:
		default:
		}
	}
	j.batchDone() // before the credit is given back, so the count stays bounded
	<-l.credits
}
