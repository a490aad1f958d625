package state

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// TimeDomain says which clock a timer follows.
type TimeDomain uint8

// The time domains.
const (
	// EventTime timers fire when the watermark reaches them.
	EventTime TimeDomain = iota
	// ProcessingTime timers fire when the processing time reaches them.
	ProcessingTime
)

func (d TimeDomain) String() string {
	if d == EventTime {
		return "event time"
	}
	return "processing time"
}

// Timer indexes: the two domains, and the processing-time timers of TTL,
// which the operator never sees.
const (
	idxEvent = iota
	idxProc
	idxTTL
	numIndexes
)

var timerNames = [numIndexes]string{"_timer/e", "_timer/p", "_timer/ttl"}

// Timer is a timer that fires. Key and Namespace are valid during the
// callback only.
type Timer struct {
	Domain    TimeDomain
	Timestamp int64
	// Key is the timer's key, which is the current key during the callback.
	Key []byte
	// Namespace is what the timer was registered with (e.g. a window).
	Namespace []byte
}

// timerIndex stores the timers of one domain in state, so that they are
// snapshotted and rescaled with their key group. Each timer is one entry
//
//	len(name) | name | timestamp (8 bytes, big-endian, sign bit flipped) | key | namespace
//
// whose value is len(key) (uvarint), so a key group's timers iterate in
// timestamp order. heads holds, per owned key group, a lower bound of its
// earliest timer (math.MaxInt64: none; math.MinInt64: unknown, as after a
// restore), so that a watermark that passes no timer reads nothing.
type timerIndex struct {
	prefix []byte
	heads  []int64
}

func newTimerIndex(name string, groups int, persisted bool) *timerIndex {
	t := &timerIndex{prefix: namePrefix(name), heads: make([]int64, groups)}
	h := int64(math.MaxInt64)
	if persisted {
		h = math.MinInt64
	}
	for i := range t.heads {
		t.heads[i] = h
	}
	return t
}

// timerKey builds the timer's entry key for the current key in k.tb.
func (k *Keyed) timerKey(t *timerIndex, ts int64, ns []byte) []byte {
	b := append(k.tb[:0], t.prefix...)
	b = binary.BigEndian.AppendUint64(b, uint64(ts)^signBit)
	b = append(b, k.cur...)
	k.tb = append(b, ns...)
	return k.tb
}

func domainIndex(d TimeDomain) (int, error) {
	switch d {
	case EventTime:
		return idxEvent, nil
	case ProcessingTime:
		return idxProc, nil
	}
	return 0, fmt.Errorf("state: unknown time domain %d", d)
}

// RegisterTimer registers a timer for the current key at ts in domain d,
// with a namespace (nil for none; copied). Registering the same timer twice
// leaves one. A timer fires once, in the first AdvanceWatermark (or
// AdvanceProcessingTime) whose time is >= ts, also when registered for a
// time already passed.
func (k *Keyed) RegisterTimer(d TimeDomain, ts int64, ns []byte) error {
	i, err := domainIndex(d)
	if err != nil {
		return err
	}
	return k.registerTimer(k.timers[i], ts, ns)
}

func (k *Keyed) registerTimer(t *timerIndex, ts int64, ns []byte) error {
	key := k.timerKey(t, ts, ns)
	var lb [binary.MaxVarintLen64]byte
	if err := k.put(k.kg, key, binary.AppendUvarint(lb[:0], uint64(len(k.cur))), globalIndex); err != nil {
		return err
	}
	h := &t.heads[k.kg-k.first]
	*h = min(*h, ts)
	if f := &k.firing; f.active == t && ts <= f.bound {
		// Registered by a callback for a time this round fires: it fires
		// in this round, in order (see fireUpTo).
		f.push(k.kg, key, len(k.cur))
	}
	return nil
}

// DeleteTimer removes the current key's timer at ts with namespace ns in
// domain d, if there is one.
func (k *Keyed) DeleteTimer(d TimeDomain, ts int64, ns []byte) error {
	i, err := domainIndex(d)
	if err != nil {
		return err
	}
	return k.del(k.kg, k.timerKey(k.timers[i], ts, ns), globalIndex)
}

// Watermark returns the last watermark passed to AdvanceWatermark
// (math.MinInt64 before the first).
func (k *Keyed) Watermark() int64 { return k.wm }

// ProcessingTime returns the last time passed to AdvanceProcessingTime.
func (k *Keyed) ProcessingTime() int64 { return k.now }

// AdvanceWatermark fires, in timestamp order, every event-time timer with
// timestamp <= wm in the owned key groups, including timers that fire
// registers for such times. Before each call of fire the timer's key is the
// current key, and the timer is deleted; fire may use every state handle
// and register or delete timers. Timers with equal timestamps fire in no
// particular order. The runtime calls it between batches.
func (k *Keyed) AdvanceWatermark(wm int64, fire func(Timer) error) error {
	k.wm = max(k.wm, wm)
	return k.fireUpTo(k.timers[idxEvent], EventTime, wm, fire)
}

// AdvanceProcessingTime sets the processing time (milliseconds) and fires,
// as AdvanceWatermark does, every processing-time timer with timestamp <=
// now. With a TTL it then expires the state of keys idle for the TTL, by
// timers of their own (no scan of the state).
func (k *Keyed) AdvanceProcessingTime(now int64, fire func(Timer) error) error {
	k.now = max(k.now, now)
	k.ttl.checked, k.ttl.touched = false, false
	if err := k.fireUpTo(k.timers[idxProc], ProcessingTime, k.now, fire); err != nil {
		return err
	}
	if k.ttl.ms > 0 {
		return k.fireUpTo(k.timers[idxTTL], ProcessingTime, k.now, func(Timer) error { return k.expire() })
	}
	return nil
}

// NextTimer returns a lower bound of the earliest timer of domain d (none
// when ok is false): the time at which the runtime should next call
// AdvanceProcessingTime. The TTL's timers count as processing-time timers.
func (k *Keyed) NextTimer(d TimeDomain) (ts int64, ok bool, err error) {
	i, err := domainIndex(d)
	if err != nil {
		return 0, false, err
	}
	ts, err = k.nextTimer(k.timers[i])
	if err == nil && d == ProcessingTime && k.ttl.ms > 0 {
		var t2 int64
		t2, err = k.nextTimer(k.timers[idxTTL])
		ts = min(ts, t2)
	}
	return ts, ts != math.MaxInt64, err
}

func (k *Keyed) nextTimer(t *timerIndex) (int64, error) {
	next := int64(math.MaxInt64)
	for i, h := range t.heads {
		if h == math.MinInt64 {
			var err error
			if h, err = k.firstTimer(t, k.first+i, math.MinInt64); err != nil {
				return 0, err
			}
			t.heads[i] = h
		}
		next = min(next, h)
	}
	return next, nil
}

// firstTimer returns the earliest timestamp >= from of key group kg's
// timers, or math.MaxInt64.
func (k *Keyed) firstTimer(t *timerIndex, kg int, from int64) (int64, error) {
	f := &k.firing
	lower := binary.BigEndian.AppendUint64(append(f.flo[:0], t.prefix...), uint64(from)^signBit)
	f.flo = lower
	f.fhi = prefixEnd(f.fhi, t.prefix)
	ts := int64(math.MaxInt64)
	err := k.scan(kg, lower, f.fhi, globalIndex, false, func(key, _ []byte) (bool, error) {
		var err error
		ts, err = timerTS(t, key)
		return false, err
	})
	return ts, err
}

func timerTS(t *timerIndex, key []byte) (int64, error) {
	if len(key) < len(t.prefix)+8 {
		return 0, fmt.Errorf("state: timer entry %x too short", key)
	}
	return int64(binary.BigEndian.Uint64(key[len(t.prefix):]) ^ signBit), nil
}

// firingBuf holds the timers collected by one round of fireUpTo.
type firingBuf struct {
	c        chunk
	kgs      []int
	order    []int
	lo, hi   []byte // the bounds of a round's scan of a key group
	flo, fhi []byte // firstTimer's bounds
	// active is the index being fired, bound the latest timestamp this
	// round fires; extra holds the due timers callbacks registered in it
	// this round (a min-heap by entry key, their bytes in xbuf).
	active *timerIndex
	bound  int64
	extra  []extraTimer
	xbuf   []byte
}

// extraTimer is a timer registered during a round of fireUpTo.
type extraTimer struct {
	kg     int
	k0, k1 int // its entry key in xbuf
	keyLen int
}

func (f *firingBuf) xkey(e extraTimer) []byte { return f.xbuf[e.k0:e.k1] }

func (f *firingBuf) xless(a, b extraTimer) bool {
	if c := bytes.Compare(f.xkey(a), f.xkey(b)); c != 0 {
		return c < 0
	}
	return a.kg < b.kg
}

// extraFirst reports whether the top of extra comes before read timer i.
func (f *firingBuf) extraFirst(i int) bool {
	e := f.extra[0]
	if c := bytes.Compare(f.xkey(e), f.c.key(i)); c != 0 {
		return c < 0
	}
	return e.kg < f.kgs[i]
}

func (f *firingBuf) push(kg int, key []byte, keyLen int) {
	k0 := len(f.xbuf)
	f.xbuf = append(f.xbuf, key...)
	f.extra = append(f.extra, extraTimer{kg: kg, k0: k0, k1: len(f.xbuf), keyLen: keyLen})
	for i := len(f.extra) - 1; i > 0; {
		p := (i - 1) / 2
		if !f.xless(f.extra[i], f.extra[p]) {
			break
		}
		f.extra[i], f.extra[p] = f.extra[p], f.extra[i]
		i = p
	}
}

func (f *firingBuf) pop() extraTimer {
	top := f.extra[0]
	n := len(f.extra) - 1
	f.extra[0] = f.extra[n]
	f.extra = f.extra[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && f.xless(f.extra[l], f.extra[m]) {
			m = l
		}
		if l+1 < n && f.xless(f.extra[l+1], f.extra[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		f.extra[i], f.extra[m] = f.extra[m], f.extra[i]
		i = m
	}
	return top
}

// timersPerGroup bounds the timers a round of fireUpTo reads from one key
// group.
const timersPerGroup = 1024

// fireUpTo fires the timers of t with timestamps <= upTo in rounds: each
// round reads up to timersPerGroup due timers of each key group whose head
// is due, and fires, in timestamp order, those not later than the earliest
// last-read timestamp of a key group that had more (the rest come in a
// later round, in order). When a callback registers a due timer earlier
// than the next one read, the round ends there, so timers fire in
// timestamp order also then.
func (k *Keyed) fireUpTo(t *timerIndex, d TimeDomain, upTo int64, fire func(Timer) error) error {
	f := &k.firing
	if f.active != nil {
		return fmt.Errorf("state: timers advanced from a timer callback")
	}
	defer func() { f.active = nil }()
	for {
		f.active = nil
		f.c.reset()
		f.kgs = f.kgs[:0]
		bound := int64(math.MaxInt64)
		if upTo == math.MaxInt64 {
			f.hi = prefixEnd(f.hi, t.prefix)
		} else {
			f.hi = binary.BigEndian.AppendUint64(append(f.hi[:0], t.prefix...), uint64(upTo+1)^signBit)
		}
		for i, h := range t.heads {
			if h > upTo {
				continue
			}
			kg := k.first + i
			before := len(f.c.ents)
			// Seek to the head, not the start of the index: in a store, the
			// timers fired before lie there as deletions not yet compacted,
			// and a scan from the start would step over all of them at
			// every watermark.
			f.lo = append(f.lo[:0], t.prefix...)
			if h != math.MinInt64 {
				f.lo = binary.BigEndian.AppendUint64(f.lo, uint64(h)^signBit)
			}
			if err := k.be.scan(kg, f.lo, f.hi, globalIndex, false, timersPerGroup, &f.c); err != nil {
				return err
			}
			n := len(f.c.ents) - before
			for range n {
				f.kgs = append(f.kgs, kg)
			}
			if n == timersPerGroup {
				last, err := timerTS(t, f.c.key(len(f.c.ents)-1))
				if err != nil {
					return err
				}
				bound = min(bound, last)
				t.heads[i] = last
				continue
			}
			// Every due timer of kg was read: its head is its first timer
			// after upTo (unless fire registers an earlier one).
			next := int64(math.MaxInt64)
			if upTo != math.MaxInt64 {
				var err error
				if next, err = k.firstTimer(t, kg, upTo+1); err != nil {
					return err
				}
			}
			t.heads[i] = next
		}
		n := len(f.c.ents)
		if n == 0 {
			return nil
		}
		f.order = f.order[:0]
		for i := range n {
			f.order = append(f.order, i)
		}
		slices.SortFunc(f.order, func(a, b int) int {
			if c := bytes.Compare(f.c.key(a), f.c.key(b)); c != 0 {
				return c
			}
			return cmp.Compare(f.kgs[a], f.kgs[b])
		})
		// Fire the read timers up to bound, merged with those the
		// callbacks register for times up to bound.
		f.active, f.bound = t, min(bound, upTo)
		f.extra, f.xbuf = f.extra[:0], f.xbuf[:0]
		for bi := 0; ; {
			var key []byte
			var kg, keyLen int
			switch {
			case len(f.extra) > 0 && (bi == len(f.order) || f.extraFirst(f.order[bi])):
				e := f.pop()
				key, kg, keyLen = f.xkey(e), e.kg, e.keyLen
			case bi < len(f.order):
				i := f.order[bi]
				bi++
				key, kg = f.c.key(i), f.kgs[i]
				kl, w := binary.Uvarint(f.c.val(i))
				if w <= 0 {
					return fmt.Errorf("state: malformed timer entry %x", key)
				}
				keyLen = int(kl)
			default:
				keyLen = -1
			}
			if keyLen < 0 {
				break
			}
			ts, err := timerTS(t, key)
			if err != nil {
				return err
			}
			if ts > bound {
				// Read but not fired this round: it stays, and its key
				// group's head must not pass it.
				h := &t.heads[kg-k.first]
				*h = min(*h, ts)
				continue
			}
			// An earlier callback may have deleted it, or it was read
			// and registered again.
			if _, ok, err := k.be.get(kg, key, globalIndex); err != nil {
				return err
			} else if !ok {
				continue
			}
			if err := k.del(kg, key, globalIndex); err != nil {
				return err
			}
			rest := key[len(t.prefix)+8:]
			if keyLen > len(rest) {
				return fmt.Errorf("state: malformed timer entry %x", key)
			}
			if err := k.SetCurrentKeyInGroup(rest[:keyLen], kg); err != nil {
				return err
			}
			if err := fire(Timer{Domain: d, Timestamp: ts, Key: k.cur, Namespace: rest[keyLen:]}); err != nil {
				return err
			}
		}
	}
}
