package state

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/weir-sql/weir/internal/minheap"
	"github.com/weir-sql/weir/statestore"
)

// DueSource is a RecordSource whose records have due times: per record
// and tag (0 to tags-1), an event time at which the operator must look at
// the record again (an interval join's rows of one input expiring). The
// operator keeps the due times of its in-memory records itself (in its own
// typed queue); RecordDues keeps them for the records that are not in
// memory.
type DueSource interface {
	RecordSource
	// RecordDues puts the due times of the in-memory record in slot into
	// dues (one per tag; math.MaxInt64: none).
	RecordDues(slot int32, dues []int64)
	// StoredDues puts the due times of a stored record (key and rec as
	// AppendRecordKey and AppendRecord wrote them) into dues.
	StoredDues(key, rec []byte, dues []int64) error
	// FindRecord returns the slot of key's record if it is in memory.
	FindRecord(key []byte) (int32, bool)
}

// RecordDues are the due times of a Records' records while they are out
// of memory: after a Spill (taken from the operator's in-memory records
// first) and after a restore that did not load them all (read from the
// stored records with one scan). Due hands the operator, in due order, the
// records whose time came, loaded back into memory; the operator's own
// queue covers the records it holds. An entry may be stale (its record was
// loaded, changed or removed since): Due skips a record that is gone, and
// the operator re-checks what is due on the record it gets.
type RecordDues struct {
	r    *Records
	src  DueSource
	tags int
	heap []spilledDue
	buf  []int64
	key  []byte
}

// spilledDue is a due time of a record out of memory, by its key.
type spilledDue struct {
	at  int64
	key string
	tag uint8
}

// Less orders the heap (minheap.Ordered).
func (e spilledDue) Less(o spilledDue) bool { return e.at < o.at }

// NewRecordDues returns the due times of r's records out of memory, with
// tags due times a record (1 to 255); src must be r's RecordSource.
func NewRecordDues(r *Records, src DueSource, tags int) (*RecordDues, error) {
	if tags < 1 || tags > 255 {
		return nil, fmt.Errorf("state: %d due times a record (1 to 255)", tags)
	}
	if r.src != RecordSource(src) {
		return nil, errors.New("state: record dues of another source than the records'")
	}
	return &RecordDues{r: r, src: src, tags: tags, buf: make([]int64, tags)}, nil
}

// Attach is Records.Attach; then, when the restored records did not all
// fit in memory, it reads the due times of those left in the store.
func (d *RecordDues) Attach(store *statestore.Store, restored bool) error {
	if err := d.r.Attach(store, restored); err != nil {
		return err
	}
	if !d.r.Backed() {
		return nil
	}
	r := d.r
	end := prefixEnd(nil, r.prefix)
	for kg := r.first; kg <= r.last; kg++ {
		err := r.sp.Scan(kg, r.prefix, end, false, func(k, v []byte) (bool, error) {
			key := k[len(r.prefix):]
			if _, ok := d.src.FindRecord(key); ok {
				return true, nil // in memory: the operator's
			}
			at, rec, timed := splitRecTime(v)
			if r.expiredAt(at, timed) {
				return true, nil // never loaded
			}
			if err := d.src.StoredDues(key, rec, d.buf); err != nil {
				return false, fmt.Errorf("record %x: %w", k, err)
			}
			d.push(key)
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("state %s: due times: %w", r.opts.Name, err)
		}
	}
	return nil
}

// push queues the due times in d.buf of the record of key.
func (d *RecordDues) push(key []byte) {
	var ks string
	for tag, at := range d.buf {
		if at == math.MaxInt64 {
			continue
		}
		if ks == "" {
			ks = string(key)
		}
		d.heap = minheap.Push(d.heap, spilledDue{at: at, key: ks, tag: uint8(tag)})
	}
}

// Spill is Records.Spill, keeping the due times of the records it drops
// from memory.
func (d *RecordDues) Spill() error {
	r := d.r
	if r.sp == nil {
		return nil
	}
	for w, word := range r.live {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			slot := int32(w<<6 | b)
			d.src.RecordDues(slot, d.buf)
			d.key = d.src.AppendRecordKey(d.key[:0], slot)
			d.push(d.key)
		}
	}
	return r.Spill()
}

// Len returns the number of due times kept.
func (d *RecordDues) Len() int { return len(d.heap) }

// Due calls fn, in due order, for each kept due time at or before wm with
// the slot of its record, loaded into memory unless it was there already;
// a record no longer stored is skipped.
func (d *RecordDues) Due(wm int64, fn func(slot int32, tag int) error) error {
	for len(d.heap) > 0 && d.heap[0].at <= wm {
		var e spilledDue
		e, d.heap = minheap.Pop(d.heap)
		key := []byte(e.key)
		s, ok := d.src.FindRecord(key)
		if !ok {
			var err error
			if s, ok, err = d.r.Load(key); err != nil {
				return err
			}
		}
		if !ok {
			continue
		}
		if err := fn(s, int(e.tag)); err != nil {
			return err
		}
	}
	return nil
}
