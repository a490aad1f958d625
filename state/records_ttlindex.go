package state

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// The expiry index of the records only the store holds (with a TTL).
//
// A record in memory expires through the in-memory heap (Expire). A
// record that a Spill dropped from memory, or that a restore left in the
// store, has an index entry instead, in its key group and in the store:
// Name+ttlIndexSuffix | write time (8 bytes, sign bit flipped) | key,
// whose value is how many parts the store holds of it (4 bytes, for a
// PartedSource's record when known). The entries are ordered by write
// time within each key group, so sweepStored, at each Snapshot, finds the
// expired ones with one range scan from the start of each key group's
// index that may hold a due entry (tmin), and deletes them with their
// records: the cost is in the records that expire, never a scan of the
// state, and the memory one int64 per key group owned. The entries move
// with their key groups on a restore at another parallelism, as the
// records do.
//
// A record loaded into memory (Load, a restore scan) has its entry
// deleted: its expiry is the heap's again, and a sweep must never delete
// the stored copy of a record in memory (a PartedSource's record, changed
// since, writes back only its changed parts). Spill writes the entries of
// the records it drops, at their write time in memory, which is the one
// the store holds. A sweep checks each due entry against the stored
// record (its write time must be the entry's), so an entry that outlived
// its record is only deleted.

// idxKey appends the index key of the record of key written at at.
func (r *Records) idxKey(dst []byte, at int64, key []byte) []byte {
	dst = append(dst, r.tprefix...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(at)^(1<<63))
	return append(dst, key...)
}

// idxMayHold reports whether key group kg's index may hold an entry
// written at at.
func (r *Records) idxMayHold(kg int, at int64) bool {
	return r.tmin != nil && at >= r.tmin[kg-r.first]
}

// noteIdx lowers key group kg's bound of its index entries' write times
// to at.
func (r *Records) noteIdx(kg int, at int64) {
	if r.tmin == nil {
		r.tmin = make([]int64, r.last-r.first+1)
		for i := range r.tmin {
			r.tmin[i] = math.MaxInt64
		}
	}
	r.tmin[kg-r.first] = min(r.tmin[kg-r.first], at)
}

// putIdx writes the index entry of a record of key group kg that only the
// store holds: written at at, with parts parts stored (0: unknown). The
// key is r.tk from its prefix on.
func (r *Records) putIdx(kg int, at int64, parts int32) error {
	var v [4]byte
	val := v[:0]
	if parts > 0 {
		binary.BigEndian.PutUint32(v[:], uint32(parts))
		val = v[:]
	}
	r.noteIdx(kg, at)
	return r.sp.PutThrough(kg, r.tk, val)
}

// unindex deletes the index entry of the record of key written at at
// (key group kg), if there may be one: the record is in memory now, or
// gone.
func (r *Records) unindex(kg int, at int64, key []byte) error {
	if !r.idxMayHold(kg, at) {
		return nil
	}
	r.tk = r.idxKey(r.tk[:0], at, key)
	return r.sp.DeleteUncached(kg, r.tk)
}

// indexDropped writes the index entries of the records in memory, which
// Spill is about to drop (a Snapshot just wrote them): a chunk of key
// groups at a time (chunks), each chunk's entries sorted, so that they go
// to the store as one ascending write-through run (an ingested sstable),
// after the snapshot's run of records.
func (r *Records) indexDropped() error {
	if err := r.sp.CommitThrough(); err != nil {
		return fmt.Errorf("state %s: %w", r.opts.Name, err)
	}
	err := r.chunks(r.live, false, func(slots []int32, _, _ int) error {
		r.unidx, r.unb = r.unidx[:0], r.unb[:0]
		for _, slot := range slots {
			if int(slot) >= len(r.wt) || r.wt[slot] < 0 {
				continue
			}
			off := len(r.unb)
			r.unb = r.src.AppendRecordKey(r.unb, slot)
			e := sweepEnt{at: r.wt[slot], kg: int32(r.kgs[slot]), off: int32(off), n: int32(len(r.unb) - off)}
			if r.parted != nil {
				e.parts = r.stored[slot]
			}
			r.unidx = append(r.unidx, e)
		}
		slices.SortFunc(r.unidx, func(a, b sweepEnt) int {
			if c := cmp.Compare(a.kg, b.kg); c != 0 {
				return c
			}
			if c := cmp.Compare(a.at, b.at); c != 0 {
				return c
			}
			return bytes.Compare(r.unb[a.off:a.off+a.n], r.unb[b.off:b.off+b.n])
		})
		for _, e := range r.unidx {
			r.tk = r.idxKey(r.tk[:0], e.at, r.unb[e.off:e.off+e.n])
			if err := r.putIdx(int(e.kg), e.at, e.parts); err != nil {
				return err
			}
		}
		return nil
	})
	r.unidx, r.unb = r.unidx[:0], r.unb[:0]
	if cap(r.unb) > trimMin {
		r.unidx, r.unb = nil, nil
	}
	if err != nil {
		return fmt.Errorf("state %s: %w", r.opts.Name, err)
	}
	return nil
}

// firstIdx sets key group kg's bound of its index entries from the store
// (a restore): the write time of its first entry, if any.
func (r *Records) firstIdx(kg int) error {
	n := len(r.tprefix)
	var at int64
	found := false
	err := r.sp.Scan(kg, r.tprefix, prefixEnd(nil, r.tprefix), false, func(k, _ []byte) (bool, error) {
		if len(k) < n+8 {
			return false, fmt.Errorf("TTL index key %x too short", k)
		}
		at, found = int64(binary.BigEndian.Uint64(k[n:])^(1<<63)), true
		return false, nil
	})
	if err != nil {
		return err
	}
	if found {
		r.noteIdx(kg, at)
	} else if r.tmin != nil {
		r.tmin[kg-r.first] = math.MaxInt64
	}
	return nil
}

// queueIdx notes, during a restore scan of key group kg, an index entry to
// write (a record left in the store: parts 0) or to delete (a record
// loaded into memory, or expired: parts -1), done by applyIdx after the
// scan.
func (r *Records) queueIdx(kg int, at int64, key []byte, del bool) {
	if del && !r.idxMayHold(kg, at) {
		return
	}
	e := sweepEnt{at: at, kg: int32(kg), off: int32(len(r.unb)), n: int32(len(key))}
	if del {
		e.parts = -1
	}
	r.unb = append(r.unb, key...)
	r.unidx = append(r.unidx, e)
}

// applyIdx writes and deletes the index entries queueIdx noted.
func (r *Records) applyIdx() error {
	for _, e := range r.unidx {
		key := r.unb[e.off : e.off+e.n]
		var err error
		if e.parts < 0 {
			err = r.unindex(int(e.kg), e.at, key)
		} else {
			r.tk = r.idxKey(r.tk[:0], e.at, key)
			err = r.putIdx(int(e.kg), e.at, 0)
		}
		if err != nil {
			return err
		}
	}
	r.unidx, r.unb = r.unidx[:0], r.unb[:0]
	return nil
}

// sweepStored deletes the records that only the store holds and whose TTL
// has passed at the current time, with their parts, deltas and index
// entries: a range scan of the due index entries of each key group that
// may hold some, sweepBatch entries at a time.
func (r *Records) sweepStored() error {
	if r.tmin == nil || !r.clockSet {
		return nil
	}
	due := r.now - r.ttl // written at or before: expired
	n := len(r.tprefix)
	end := prefixEnd(nil, r.tprefix)
	for {
		r.sweep, r.swb = r.sweep[:0], r.swb[:0]
		full := false
		for i, lo := range r.tmin {
			if lo > due {
				continue
			}
			kg := r.first + i
			next := int64(math.MaxInt64)
			err := r.sp.Scan(kg, r.tprefix, end, false, func(k, v []byte) (bool, error) {
				if len(k) < n+8 {
					return false, fmt.Errorf("TTL index key %x too short", k)
				}
				at := int64(binary.BigEndian.Uint64(k[n:]) ^ (1 << 63))
				if at > due || len(r.sweep) >= sweepBatch {
					next = at
					return false, nil
				}
				e := sweepEnt{at: at, kg: int32(kg), off: int32(len(r.swb)), n: int32(len(k) - n - 8)}
				if len(v) == 4 {
					e.parts = int32(binary.BigEndian.Uint32(v))
				}
				r.swb = append(r.swb, k[n+8:]...)
				r.sweep = append(r.sweep, e)
				return true, nil
			})
			if err != nil {
				return fmt.Errorf("state %s: TTL sweep: %w", r.opts.Name, err)
			}
			r.tmin[i] = next
			if len(r.sweep) >= sweepBatch {
				full = true
				break
			}
		}
		for _, e := range r.sweep {
			if err := r.expireStored(e, r.swb[e.off:e.off+e.n]); err != nil {
				return fmt.Errorf("state %s: TTL sweep: %w", r.opts.Name, err)
			}
		}
		if !full {
			break
		}
	}
	if cap(r.swb) > trimMin {
		r.sweep, r.swb = nil, nil
	}
	return nil
}

// expireStored deletes the due index entry e of key and, if the store
// holds key's record with e's write time, the record with its parts and
// deltas.
func (r *Records) expireStored(e sweepEnt, key []byte) error {
	kg := int(e.kg)
	r.tk = r.idxKey(r.tk[:0], e.at, key)
	if err := r.sp.DeleteUncached(kg, r.tk); err != nil {
		return err
	}
	r.key = append(append(r.key[:0], r.prefix...), key...)
	val, ok, err := r.sp.Get(kg, r.key)
	if err != nil || !ok {
		return err
	}
	if at, _, timed := splitRecTime(val); !timed || at != e.at {
		return nil // rewritten since: not this entry's record
	}
	return r.deleteStored(kg, r.key, e.parts)
}
