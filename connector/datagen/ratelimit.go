package datagen

import (
	"context"
	"time"
)

// maxWait bounds how long Next waits for the token bucket, so that the
// caller gets control back promptly to handle checkpoints and cancellation.
const maxWait = 10 * time.Millisecond

// limiter is a token bucket: tokens accrue at rate per second up to burst,
// and each emitted row takes one.
type limiter struct {
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
	timer  *time.Timer
}

func newLimiter(rate float64) *limiter {
	burst := max(1, rate/50) // 20 ms worth of rows
	return &limiter{rate: rate, burst: burst, tokens: burst}
}

func (l *limiter) refill(now time.Time) {
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	}
	l.last = now
}

// take returns how many of want rows may be emitted now (possibly 0),
// waiting at most maxWait for the first token. It returns ctx's error if
// ctx is cancelled while waiting.
func (l *limiter) take(ctx context.Context, want int) (int, error) {
	l.refill(time.Now())
	if l.tokens < 1 {
		wait := time.Duration((1 - l.tokens) / l.rate * float64(time.Second))
		wait = min(max(wait, time.Millisecond), maxWait)
		if l.timer == nil {
			l.timer = time.NewTimer(wait)
		} else {
			l.timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			l.timer.Stop()
			return 0, ctx.Err()
		case <-l.timer.C:
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		l.refill(time.Now())
	}
	n := min(float64(want), l.tokens)
	if n < 1 {
		return 0, nil
	}
	l.tokens -= float64(int(n))
	return int(n), nil
}

// stop releases the timer.
func (l *limiter) stop() {
	if l.timer != nil {
		l.timer.Stop()
	}
}
