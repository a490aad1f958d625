package state

import (
	"encoding/binary"
	"fmt"
)

// ttlName is the internal value state that holds each key's last write
// time when a TTL is set.
const ttlName = "_ttl"

// ttlState is the state TTL (table.exec.state.ttl): the state of a key not
// written for ms milliseconds of processing time expires.
//
// The data model: a key's last write time (processing time, ms) is an
// internal value state, and each key with one has exactly one TTL timer
// (processing time, in an index of its own). The first write registers it
// at write time + TTL; when it fires, the key's state is cleared if it was
// not written since (and the last write time with it), or the timer is
// registered again at the last write + TTL. So expiry costs one timer per
// idle key and never a scan of the state; both live in the key's key group,
// so they are snapshotted and rescaled with it. Reads of a key whose TTL has
// passed but whose timer has not fired yet see no state (Flink's
// NeverReturnExpired), and a write to it first clears the old state.
type ttlState struct {
	ms      int64
	prefix  []byte
	checked bool // expired holds for the current key and time
	expired bool
	touched bool // the current key's write time is now
	buf     [8]byte
}

// lastWrite returns the current key's last write time.
func (k *Keyed) lastWrite() (int64, bool, error) {
	b, ok, err := k.be.get(k.kg, k.stateKey(k.ttl.prefix, nil), pointIndex)
	if err != nil || !ok {
		return 0, false, err
	}
	if len(b) != 8 {
		return 0, false, fmt.Errorf("state: TTL entry of %d bytes", len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), true, nil
}

// expired reports whether the current key's state has expired (and is
// waiting for its timer to clear it).
func (k *Keyed) expired() (bool, error) {
	if k.ttl.checked {
		return k.ttl.expired, nil
	}
	last, ok, err := k.lastWrite()
	if err != nil {
		return false, err
	}
	k.ttl.expired = ok && last+k.ttl.ms <= k.now
	k.ttl.checked = true
	return k.ttl.expired, nil
}

// touch records a write to the current key's state.
func (k *Keyed) touch() error {
	if k.ttl.touched {
		return nil
	}
	last, ok, err := k.lastWrite()
	if err != nil {
		return err
	}
	if ok && last+k.ttl.ms <= k.now {
		// Expired, its timer not yet fired: the write starts afresh. The
		// pending timer finds the new write time and registers again.
		if err := k.clearAll(); err != nil {
			return err
		}
	}
	binary.BigEndian.PutUint64(k.ttl.buf[:], uint64(k.now))
	if err := k.put(k.kg, k.stateKey(k.ttl.prefix, nil), k.ttl.buf[:], pointIndex); err != nil {
		return err
	}
	if !ok {
		if err := k.registerTimer(k.timers[idxTTL], k.now+k.ttl.ms, nil); err != nil {
			return err
		}
	}
	k.ttl.touched, k.ttl.checked, k.ttl.expired = true, true, false
	return nil
}

// expire handles the current key's TTL timer.
func (k *Keyed) expire() error {
	last, ok, err := k.lastWrite()
	if err != nil || !ok {
		return err
	}
	if last+k.ttl.ms > k.now {
		return k.registerTimer(k.timers[idxTTL], last+k.ttl.ms, nil)
	}
	if err := k.clearAll(); err != nil {
		return err
	}
	return k.del(k.kg, k.stateKey(k.ttl.prefix, nil), pointIndex)
}
