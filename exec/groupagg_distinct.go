package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// Shared DISTINCT values of a GroupAgg.
//
// The DISTINCT calls of a GroupAgg over one integer argument x (x itself,
// or x under FILTER: the planner's CASE WHEN cond THEN x END, which is x
// or NULL on every row; AggCall.DistinctArg names x) form a family. A
// family keeps, per group, one entry per distinct value of x with a count
// per call of the family (how many of the group's rows gave the call that
// value), where each call would keep a set of its own: COUNT(DISTINCT
// bidder) and its three FILTER variants probe one table per row, not four.
// A call's inner accumulator (the COUNT) sees a value when its count
// becomes 1 and loses it when it returns to 0, and lives with the group.
//
// The entries are records of their own (state.Records, distinctStateName),
// beside the groups, not parts of the group's record: a checkpoint writes
// the entries that changed, a spill drops them and a row loads back the
// one entry it needs (a lookup in the store), so a group with many
// distinct values never moves whole. An entry's key is the family's
// number, the value (8 bytes, order-preserving) and its group's key (so
// that a snapshot's sort of the entries mostly compares the first 9
// bytes: group keys tend to share long prefixes); it is stored in its
// group's key group, so that a restore at another parallelism moves it
// with its group. The budget counts each entry at its real size (a fixed one: the
// value, the group, the counts and the index slot).
//
// With a state TTL an entry expires like any record, when its value was
// not seen for the TTL, as Flink's distinct MapState entries do: the
// group's COUNT keeps it (no output for an expiry), and the value counts
// again when it comes back. A group expires no earlier than its entries
// (every entry written writes its group).
//
// Over insert-only input (NewGroupAggOverInserts) the entries are
// presence-only, as Flink's distinct maps are when the aggregate consumes
// no retractions: a count only tells whether the call saw the value, so
// an entry changes, and the next checkpoint writes it, only when a call
// sees its value for the first time (without a TTL; with one every
// sighting restamps the entry, as before), and it is stored as a mask of
// the calls that saw it (distinctPresenceVersion). The counts in memory
// still grow, but a stored count (of an entry loaded from a record of
// version 1) may lag behind them. So the mode is stored: such an entry
// refuses to load into a GroupAgg whose input retracts, and so does its
// group's record (groupPresenceVersion), which a row of the group always
// rewrites: a GroupAgg whose input retracts never uses a lagging count.
// Records of version 1 (exact counts) load into either.

// distinctStateName is the name of the GroupAgg's DISTINCT entries.
const distinctStateName = "distinct.v1"

// distinctRecordVersion leads every stored entry with counts: the
// version, the number of counts and each count (uvarint).
const distinctRecordVersion = 1

// distinctPresenceVersion leads every stored entry of a presence-only
// GroupAgg: the version, the number of calls n and a mask of the calls
// that saw the value, (n+7)/8 bytes, call m at bit m%8 of byte m/8.
const distinctPresenceVersion = 2

// distinctFamily is the DISTINCT calls over one integer argument.
type distinctFamily struct {
	id    uint8
	kind  types.Kind
	calls []int         // indices of the calls in g.calls
	args  []int         // their argument columns
	inner []accumulator // their inner accumulators (shareDistinct)
	index state.PairTable
}

// sharedDistinctAcc stands for a call of a family among the GroupAgg's
// accumulators: the family updates it, and the group's record holds only
// inner's state.
type sharedDistinctAcc struct {
	inner accumulator
}

func (a *sharedDistinctAcc) grow()                                    { a.inner.grow() }
func (a *sharedDistinctAcc) reset(g int32)                            { a.inner.reset(g) }
func (a *sharedDistinctAcc) add(g int32, v types.Value)               { a.inner.add(g, v) }
func (a *sharedDistinctAcc) retract(g int32, v types.Value)           { a.inner.retract(g, v) }
func (a *sharedDistinctAcc) update([]int32, *types.Batch, int)        {} // distinctValues.update
func (a *sharedDistinctAcc) result(g int32) types.Value               { return a.inner.result(g) }
func (a *sharedDistinctAcc) save(g int32, dst []byte) []byte          { return a.inner.save(g, dst) }
func (a *sharedDistinctAcc) merge(dst, src int32)                     { a.inner.merge(dst, src) }
func (a *sharedDistinctAcc) load(g int32, src []byte) ([]byte, error) { return a.inner.load(g, src) }

// distinctValues holds the entries of a GroupAgg's families, numbered by
// slot, and is their state.RecordSource.
type distinctValues struct {
	g     *groupAggOp
	fams  []*distinctFamily
	st    *state.Records
	width int // counts per entry: the most calls of a family
	// presence: the input is insert-only, the entries presence-only (a
	// count past 1 changes nothing stored); restamp: they have a TTL, so
	// every sighting still marks the entry changed.
	presence, restamp bool

	// The entries by slot, in pages of distinctPageLen: a new page
	// neither copies the others nor doubles the memory of them all, as
	// growing one slice per field did (q16 spent 5% of its CPU copying).
	pages    []*distinctPage
	n        int32         // slots made, in use or free
	over     map[int]int64 // per slot*width+call whose count passed countCap: the excess
	free     []int32
	perGroup []int32 // per group: its entries in memory

	// update's window of rows: their indices, values, groups and the
	// values as integers; touched keeps PairTable.Touch's reads.
	wrows   []int32
	wvals   []types.Value
	wgis    []int32
	wkeys   []int64
	touched int32

	loadGi int32            // the group whose entry Load reads; -1: find it by key
	byKey  map[string]int32 // groups by key, while a restore loads entries
	key    []byte
}

var _ state.RecordSource = (*distinctValues)(nil)

// distinctPageBits is log2 of the entries a page holds.
const distinctPageBits = 12

// distinctPageLen is the number of entries a page holds.
const distinctPageLen = 1 << distinctPageBits

// distinctPage holds the entries of distinctPageLen consecutive slots.
type distinctPage struct {
	vals   [distinctPageLen]int64 // the value
	gis    [distinctPageLen]int32 // the group; -1 for a free slot
	fam    [distinctPageLen]uint8 // the family
	counts []int32                // width counts a slot, one per call of the family (countCap at most; the rest in over)
}

// page returns the page of slot and slot's index in it.
func (d *distinctValues) page(slot int32) (*distinctPage, int) {
	return d.pages[slot>>distinctPageBits], int(slot & (distinctPageLen - 1))
}

// counts returns the width counts of slot.
func (d *distinctValues) counts(slot int32) []int32 {
	p, i := d.page(slot)
	return p.counts[i*d.width:][:d.width]
}

// gi returns the group of slot (-1: free).
func (d *distinctValues) gi(slot int32) int32 {
	p, i := d.page(slot)
	return p.gis[i]
}

// entryBytes estimates the memory of one entry: its value, group, family,
// counts, an index slot (16 bytes at up to three quarters full) and
// Records' bookkeeping.
func (d *distinctValues) entryBytes() int64 {
	return 8 + 4 + 1 + 4*int64(d.width) + 24 + 4
}

// countCap is the most an entry's count holds in counts; a count past it
// keeps the excess in distinctValues.over (a value in more than 2^31 of a
// group's rows: a country in a day's events). Tests lower it.
var countCap int32 = math.MaxInt32

// inc adds one to count c (at index i of counts) and reports whether it
// was 0.
func (d *distinctValues) inc(c *int32, i int) bool {
	if *c == countCap {
		if d.over == nil {
			d.over = make(map[int]int64)
		}
		d.over[i]++
		return false
	}
	*c++
	return *c == 1
}

// dec takes one from count c (> 0, at index i of counts) and reports
// whether it reached 0.
func (d *distinctValues) dec(c *int32, i int) bool {
	if *c == countCap && len(d.over) > 0 {
		if x, ok := d.over[i]; ok {
			if x == 1 {
				delete(d.over, i)
			} else {
				d.over[i] = x - 1
			}
			return false
		}
	}
	*c--
	return *c == 0
}

// count returns count m of slot, with its excess.
func (d *distinctValues) count(slot int32, m int) int64 {
	c := int64(d.counts(slot)[m])
	if i := int(slot)*d.width + m; c == int64(countCap) && len(d.over) > 0 {
		c += d.over[i]
	}
	return c
}

// setCount sets count m of slot.
func (d *distinctValues) setCount(slot int32, m int, c int64) {
	if c > int64(countCap) {
		if d.over == nil {
			d.over = make(map[int]int64)
		}
		d.over[int(slot)*d.width+m] = c - int64(countCap)
		c = int64(countCap)
	}
	d.counts(slot)[m] = int32(c)
}

// newFamilies replaces the integer DISTINCT calls among g.accs by
// sharedDistinctAcc and groups them into families (nil when there are
// none, and for the global phase, whose input is partial states).
func (g *groupAggOp) newFamilies() []*distinctFamily {
	if g.partial || g.noShare {
		return nil
	}
	var fams []*distinctFamily
	byArg := map[string]*distinctFamily{}
	for i, c := range g.calls {
		if !c.Distinct || c.Arg < 0 || !c.ArgType.Kind.IsInteger() {
			continue
		}
		key := c.DistinctArg
		if key == "" {
			key = "$" + strconv.Itoa(c.Arg)
		}
		key += "|" + strconv.Itoa(int(c.ArgType.Kind))
		f := byArg[key]
		if f != nil && len(f.calls) == 255 {
			continue // an entry's record counts its calls in a byte
		}
		if f == nil {
			if len(fams) == 256 {
				continue // keeps a set of its own
			}
			f = &distinctFamily{id: uint8(len(fams)), kind: c.ArgType.Kind}
			byArg[key] = f
			fams = append(fams, f)
		}
		f.calls = append(f.calls, i)
		f.args = append(f.args, c.Arg)
	}
	return fams
}

// shareDistinct makes the accumulators of the families' calls
// sharedDistinctAcc, over the inner accumulator of each.
func (g *groupAggOp) shareDistinct() {
	if g.dv == nil {
		return
	}
	for _, f := range g.dv.fams {
		f.inner = f.inner[:0]
		for _, i := range f.calls {
			if d, ok := g.accs[i].(*intDistinctAcc); ok {
				g.accs[i] = &sharedDistinctAcc{inner: d.inner}
			}
			f.inner = append(f.inner, g.accs[i].(*sharedDistinctAcc).inner)
		}
	}
}

// newDistinctValues makes the GroupAgg's DISTINCT entries and their
// Records, if it has families.
func (g *groupAggOp) newDistinctValues(ctx *OpContext) error {
	fams := g.newFamilies()
	if len(fams) == 0 {
		return nil
	}
	d := &distinctValues{g: g, fams: fams, loadGi: -1, presence: g.insertOnly, restamp: ctx.StateTTL > 0}
	for _, f := range fams {
		d.width = max(d.width, len(f.calls))
	}
	st, err := state.NewRecords(state.RecordOptions{
		Name:           distinctStateName,
		OperatorID:     ctx.ID,
		MaxParallelism: g.maxPar,
		Subtask:        ctx.Subtask,
		Parallelism:    ctx.Parallelism,
		Budget:         ctx.StateBudget,
		RecordBytes:    d.entryBytes(),
		TTL:            ctx.StateTTL,
	}, d)
	if err != nil {
		return err
	}
	d.st = st
	g.dv = d
	g.shareDistinct()
	return nil
}

// attach gives the entries the store; a restore's entries are loaded by
// loadRestored once the groups are.
func (d *distinctValues) attach(store *statestore.Store, restored bool) error {
	if restored {
		return d.st.AttachDeferred(store)
	}
	return d.st.Attach(store, false)
}

// loadRestored loads the restored entries while they fit in the budget
// (what the groups leave of it), when every group is in memory; otherwise
// they stay in the store, looked up as rows come (Records notes their
// keys, so that a value never stored costs no lookup).
func (d *distinctValues) loadRestored() error {
	g := d.g
	if g.st.Backed() {
		// Some groups are not in memory: their entries cannot be.
		return d.st.IndexRestored()
	}
	free := make(map[int32]bool, len(g.free))
	for _, gi := range g.free {
		free[gi] = true
	}
	d.byKey = make(map[string]int32, len(g.heads))
	for gi := range int32(len(g.heads)) {
		if !free[gi] {
			d.byKey[string(g.AppendRecordKey(nil, gi))] = gi
		}
	}
	defer func() { d.byKey = nil }()
	d.st.SetExtraBytes(g.st.MemoryBytes())
	return d.st.LoadRestored()
}

// distinctWindow is how many rows update looks up at a time: the table
// slots of a window's rows are read first (PairTable.Touch), so that their
// cache misses overlap, and are still in the cache when the rows are
// counted.
const distinctWindow = 128

// update counts column values of b's rows into their groups' entries, a
// family at a time: per row, the value of the family's first call that
// is not NULL (the calls' values are one value or NULL), then a count for
// each call whose argument is not NULL.
func (d *distinctValues) update(gis []int32, b *types.Batch) error {
	w := b.Width
	for _, f := range d.fams {
		for lo := 0; lo < len(gis); lo += distinctWindow {
			rows, vals, groups, keys := d.wrows[:0], d.wvals[:0], d.wgis[:0], d.wkeys[:0]
			for i := lo; i < min(lo+distinctWindow, len(gis)); i++ {
				gi := gis[i]
				if gi < 0 {
					continue
				}
				row := b.Vals[i*w : (i+1)*w]
				for _, a := range f.args {
					if x := row[a]; !x.IsNull() {
						rows, vals = append(rows, int32(i)), append(vals, x)
						groups, keys = append(groups, gi), append(keys, x.Int())
						break
					}
				}
			}
			d.wrows, d.wvals, d.wgis, d.wkeys = rows, vals, groups, keys
			d.touched += f.index.Touch(groups, keys)
			for k, i := range rows {
				if err := d.count1(f, groups[k], vals[k], b.Vals[int(i)*w:(int(i)+1)*w], b.Kinds[i].IsRetraction()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// count1 counts value v of family f in one row of group gi: a count for
// each call whose argument is not NULL in row. A presence-only entry is
// changed only when a call sees its value for the first time (or it has a
// TTL to restamp).
func (d *distinctValues) count1(f *distinctFamily, gi int32, v types.Value, row []types.Value, retract bool) error {
	if retract && d.presence {
		return fmt.Errorf("%s: a retraction into an aggregate over insert-only input", d.g.name)
	}
	slot, ok, err := d.find(f, gi, v.Int(), !retract)
	if err != nil {
		return err
	}
	if !ok {
		return nil // a value never added: nothing to retract
	}
	at := int(slot) * d.width
	cs := d.counts(slot)[:len(f.calls)]
	live, seen := false, false
	for m, a := range f.args {
		if row[a].IsNull() {
			live = live || cs[m] > 0
			continue
		}
		switch {
		case !retract:
			if d.inc(&cs[m], at+m) {
				f.inner[m].add(gi, v)
				seen = true
			}
		case cs[m] > 0:
			if d.dec(&cs[m], at+m) {
				f.inner[m].retract(gi, v)
			}
		}
		live = live || cs[m] > 0
	}
	if !live {
		return d.remove(slot)
	}
	if seen || !d.presence || d.restamp {
		d.st.Changed(slot)
	}
	return nil
}

// find returns the slot of group gi's entry for value n of family f: in
// memory, loaded from the store, or (create) new.
func (d *distinctValues) find(f *distinctFamily, gi int32, n int64, create bool) (int32, bool, error) {
	if slot, ok := f.index.Get(gi, n); ok {
		return slot, true, nil
	}
	g := d.g
	if d.st.Backed() && g.heads[gi].stored {
		d.key = d.appendKey(d.key[:0], gi, f.id, n)
		d.loadGi = gi
		slot, ok, err := d.st.LoadInKeyGroup(g.st.KeyGroupOf(gi), d.key)
		d.loadGi = -1
		if err != nil || ok {
			if err != nil {
				err = fmt.Errorf("state of %s: %w", g.name, err)
			}
			return slot, ok, err
		}
	}
	if !create {
		return 0, false, nil
	}
	slot := d.newEntry(f, gi, n)
	d.st.AddedInKeyGroup(slot, g.st.KeyGroupOf(gi))
	return slot, true, nil
}

// newEntry makes an entry, with zero counts, and indexes it.
func (d *distinctValues) newEntry(f *distinctFamily, gi int32, n int64) int32 {
	var slot int32
	if k := len(d.free); k > 0 {
		slot = d.free[k-1]
		d.free = d.free[:k-1]
	} else {
		slot = d.n
		d.n++
		if int(slot>>distinctPageBits) == len(d.pages) {
			d.pages = append(d.pages, &distinctPage{counts: make([]int32, distinctPageLen*d.width)})
		}
	}
	p, i := d.page(slot)
	p.vals[i], p.gis[i], p.fam[i] = n, gi, f.id
	clear(p.counts[i*d.width:][:d.width]) // a page kept by DropRecords holds old counts
	f.index.Put(gi, n, slot)
	for int(gi) >= len(d.perGroup) {
		d.perGroup = append(d.perGroup, 0)
	}
	d.perGroup[gi]++
	return slot
}

// remove forgets entry slot, in memory and in the store.
func (d *distinctValues) remove(slot int32) error {
	if err := d.st.Removed(slot); err != nil {
		return fmt.Errorf("state of %s: %w", d.g.name, err)
	}
	d.forget(slot)
	return nil
}

// forget drops entry slot from memory.
func (d *distinctValues) forget(slot int32) {
	p, i := d.page(slot)
	gi := p.gis[i]
	d.fams[p.fam[i]].index.Del(gi, p.vals[i])
	d.perGroup[gi]--
	p.gis[i] = -1
	clear(p.counts[i*d.width:][:d.width])
	if len(d.over) > 0 {
		for m := range d.width {
			delete(d.over, int(slot)*d.width+m)
		}
	}
	d.free = append(d.free, slot)
}

// removeGroup removes the entries of group gi left in memory (its rows
// are gone; what is left are values whose retraction did not come); a scan,
// but rare.
func (d *distinctValues) removeGroup(gi int32) error {
	if int(gi) >= len(d.perGroup) || d.perGroup[gi] == 0 {
		return nil
	}
	for slot := range d.n {
		if d.gi(slot) == gi {
			if err := d.remove(slot); err != nil {
				return err
			}
		}
	}
	return nil
}

// expire is the entries' state.Records Expire callback.
func (d *distinctValues) expire(slot int32) error { return d.remove(slot) }

// appendKey appends the key of group gi's entry for value n of family
// fam: fam, n (8 bytes, order-preserving) and the group's key.
func (d *distinctValues) appendKey(dst []byte, gi int32, fam uint8, n int64) []byte {
	dst = append(dst, fam)
	dst = binary.BigEndian.AppendUint64(dst, uint64(n)^(1<<63))
	return d.g.AppendRecordKey(dst, gi)
}

// AppendRecordKey implements state.RecordSource.
func (d *distinctValues) AppendRecordKey(dst []byte, slot int32) []byte {
	p, i := d.page(slot)
	return d.appendKey(dst, p.gis[i], p.fam[i], p.vals[i])
}

// AppendRecord implements state.RecordSource: the version, the number of
// counts and each count; presence-only, the version, the number of calls
// and the mask of those that saw the value.
func (d *distinctValues) AppendRecord(dst []byte, slot int32) []byte {
	p, i := d.page(slot)
	n := len(d.fams[p.fam[i]].calls)
	if d.presence {
		dst = append(dst, distinctPresenceVersion, byte(n))
		cs := d.counts(slot)[:n]
		// A byte per 8 calls, bit m%8 for call m (a checkpoint writes
		// millions of these: one range loop without shifts to check).
		for lo := 0; lo < n; lo += 8 {
			var b byte
			for m, c := range cs[lo:min(lo+8, n)] {
				if c > 0 {
					b |= 1 << (m & 7)
				}
			}
			dst = append(dst, b)
		}
		return dst
	}
	dst = append(dst, distinctRecordVersion, byte(n))
	for m := range n {
		dst = binary.AppendUvarint(dst, uint64(d.count(slot, m)))
	}
	return dst
}

// LoadRecord implements state.RecordSource.
func (d *distinctValues) LoadRecord(key, rec []byte) (int32, error) {
	if len(key) < 9 {
		return 0, errors.New("DISTINCT entry key too short")
	}
	id, n, gk := key[0], int64(binary.BigEndian.Uint64(key[1:9])^(1<<63)), key[9:]
	if int(id) >= len(d.fams) {
		return 0, fmt.Errorf("DISTINCT entry of family %d; the query has %d", id, len(d.fams))
	}
	f := d.fams[id]
	gi := d.loadGi
	if gi < 0 {
		var ok bool
		if gi, ok = d.byKey[string(gk)]; !ok {
			return 0, fmt.Errorf("DISTINCT entry of group %x, not in the state", gk)
		}
	}
	if len(rec) < 2 || (rec[0] != distinctRecordVersion && rec[0] != distinctPresenceVersion) {
		return 0, errors.New("DISTINCT entry of unknown version")
	}
	if rec[0] == distinctPresenceVersion && !d.presence {
		return 0, errPresenceOnly
	}
	if int(rec[1]) != len(f.calls) {
		return 0, fmt.Errorf("DISTINCT entry with %d counts for %d calls", rec[1], len(f.calls))
	}
	if _, ok := f.index.Get(gi, n); ok {
		return 0, errors.New("DISTINCT entry stored twice")
	}
	var cs [256]int64
	var live bool
	var err error
	if rec[0] == distinctPresenceVersion {
		live, err = readPresence(rec[2:], cs[:len(f.calls)])
	} else {
		live, err = readCounts(rec[2:], cs[:len(f.calls)])
	}
	if err != nil || !live {
		return 0, errBadState
	}
	slot := d.newEntry(f, gi, n)
	for m := range f.calls {
		d.setCount(slot, m, cs[m])
	}
	return slot, nil
}

// errPresenceOnly refuses presence-only DISTINCT state to a GroupAgg whose
// input retracts, which needs every value's count.
var errPresenceOnly = errors.New("the state's COUNT(DISTINCT ...) values were written by an aggregate over " +
	"insert-only input, which keeps no counts; this aggregate's input has retractions and cannot restore them " +
	"(start it without this checkpoint)")

// readCounts reads the counts of an entry of version 1 into cs and
// reports whether one is not 0.
func readCounts(src []byte, cs []int64) (bool, error) {
	live := false
	for m := range cs {
		c, r, err := readUvarint(src)
		if err != nil || c > 1<<62 {
			return false, errBadState
		}
		cs[m], src = int64(c), r
		live = live || c > 0
	}
	if len(src) != 0 {
		return false, errBadState
	}
	return live, nil
}

// readPresence reads the mask of a presence-only entry into cs (1 for a
// call that saw the value) and reports whether one did.
func readPresence(src []byte, cs []int64) (bool, error) {
	n := len(cs)
	if len(src) != (n+7)/8 {
		return false, errBadState
	}
	if n%8 != 0 && src[len(src)-1]>>(n%8) != 0 {
		return false, errBadState // a bit past the calls
	}
	live := false
	for m := range cs {
		cs[m] = int64(src[m/8] >> (m % 8) & 1)
		live = live || cs[m] > 0
	}
	return live, nil
}

// DropRecords implements state.RecordSource: every entry was written to
// the store (Spill).
func (d *distinctValues) DropRecords() {
	for _, f := range d.fams {
		f.index.Reset()
	}
	d.n = 0 // the pages stay, for the entries loaded back
	clear(d.over)
	d.free, d.perGroup = d.free[:0], d.perGroup[:0]
}

// convert reads the old layout of a family call's state (group records
// before version 4: the call's own set, as distinctAcc saves it, then its
// inner accumulator's state) of group gi, of key, into the entries, and
// returns the rest of src.
func (d *distinctValues) convert(gi int32, key []byte, call int, src []byte) ([]byte, error) {
	var f *distinctFamily
	m := -1
	for _, ff := range d.fams {
		for j, c := range ff.calls {
			if c == call {
				f, m = ff, j
			}
		}
	}
	if f == nil {
		return nil, errors.New("DISTINCT call of no family")
	}
	kg := state.KeyGroup(key, d.g.maxPar)
	rest, err := eachDistinctEntry(src, func(_ []byte, v types.Value, c int64) error {
		if !v.Kind().IsInteger() || c <= 0 {
			return errBadState
		}
		slot, ok := f.index.Get(gi, v.Int())
		if !ok {
			slot = d.newEntry(f, gi, v.Int())
			d.st.AddedInKeyGroup(slot, kg)
		}
		d.setCount(slot, m, c)
		d.st.Changed(slot)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f.inner[m].load(gi, rest)
}
