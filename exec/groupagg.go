package exec

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/weir-sql/weir/state"
	"github.com/weir-sql/weir/types"
)

// groupAggOp is a hash aggregation over a changelog (see NewGroupAgg). Groups
// are numbered; the map from encoded key to number is the only per-group
// allocation, and accumulators keep their state in typed slices indexed by
// group number. Results are emitted once per input batch, or with mini-batch
// on (Options.MiniBatch) once per mini-batch: changes accumulate over several
// input batches and are emitted when the task flushes (its input is idle,
// FlushInterval passed, a barrier comes, the input ends) or when
// batchRows rows are pending or enough groups are touched (emitDue), so
// a hot key yields one update per mini-batch rather than one per input
// batch.
type groupAggOp struct {
	keys  []int
	calls []AggCall
	accs  []accumulator
	args  []int // argument column per accumulator; -1 for none
	name  string
	// insertOnly: the input has no retractions (NewGroupAggOverInserts).
	insertOnly bool
	// pairedUpdates: the input's updates come as -U/+U pairs, which
	// leave a group's row count alone (NewFinalGroupAgg).
	pairedUpdates bool

	maxPar  int             // key groups
	st      *state.Records  // the groups' state: in memory, or over a store with checkpoints
	dv      *distinctValues // the DISTINCT calls' values, shared by family (groupagg_distinct.go); nil without
	noShare bool            // tests: no families, each DISTINCT call keeps its own sets (the layout before version 4)
	conv    []int32         // groups loaded from an older layout whose DISTINCT sets became entries: to write again

	groups  map[string]int32
	ints    *state.IntTable // groups of a single integer-stored key (fast path)
	intKey  int             // the key column when there is exactly one, else -1
	keyStr  []string        // per group: its encoded key (state.AppendValue) in groups ("" when in ints); grown only for such groups
	heads   []groupHead     // per group: what every row and every emit reads, in one place
	keyVals []types.Value   // per group not in ints: len(keys) key values; grown only for such groups
	keyOne  [1]types.Value  // groupKey's result for a group in ints
	touched []int32         // groups touched since the last emit, in order
	before  []types.Value   // per touched group: len(calls) results as last emitted
	free    []int32         // numbers of removed groups, for reuse

	keyBuf  []byte
	recent  []recentGroup // groups by the identity of their key values (findGroup, sized by recentSize); checked by sameKey
	loadRow []types.Value // LoadRecord's row of key values
	gis     []int32       // per row of the batch in Process: its group, or -1
	scratch []types.Value
	out     *types.Batch
	maxCol  int

	partial   bool   // the global phase: the input is partial rows (NewGlobalGroupAgg)
	scratchGi int32  // partial: a group outside the index that partials are loaded into; -1 until made
	partBuf   []byte // partial: a partial row's accumulators' state

	miniBatch   bool    // hold changes across batches (bufferingOperator)
	batchRows   int     // with miniBatch: the input rows whose changes it holds at most (emitDue)
	pendingRows int     // input rows since the last emit
	lastOut     Emitter // the emitter of the last Process call, for emitPending
}

// bytesPerGroup estimates the memory one group costs, for the state budget:
// the group's head (row count, flags, an integer key), the accumulators'
// typed state, and the index entry (the int table's slots or a Go map's,
// which average about half full, with the key's values and bytes).
func (g *groupAggOp) bytesPerGroup() int64 {
	const valueBytes = int64(unsafe.Sizeof(types.Value{}))
	n := int64(unsafe.Sizeof(groupHead{}) + 4) // head, changed list
	for _, acc := range g.accs {
		n += accBytes(acc)
	}
	if g.dv != nil {
		n += 4 // distinctValues.perGroup
	}
	if g.intKey >= 0 {
		return n + 40 // the int table's entry (the typed key is in the head)
	}
	// Key values, map[string]int32 entry, the key string in keyStr and its bytes.
	return n + valueBytes*int64(len(g.keys)) + 56 + 16 + 10*int64(len(g.keys))
}

// miniBatchRows bounds the input rows whose changes are held before they
// are emitted.
const miniBatchRows = 1 << 15

// miniBatchGroups bounds the groups whose changes are held before they are
// emitted, when keys rarely repeat. Emitting reads each touched group again
// (its key, results and last results); with many distinct keys, emitting
// while those groups are still in the CPU cache is faster than holding them
// for miniBatchRows rows, and holding more distinct keys saves no output
// rows. When keys do repeat (emitDue), the changes are held for up to
// miniBatchMaxGroups groups.
const miniBatchGroups = 2048

// miniBatchMaxGroups bounds the groups whose changes are held when their
// keys repeat. Nexmark q16 (4 hot channels, 10,000 cold ones, new
// bidders' DISTINCT counts for each): past 2048 groups, half of the rows
// still fell on groups already touched; holding them to 32768 rows halved
// the output rows (0.87 to 0.48 a row) and cut the operator's CPU by about
// a sixth (BenchmarkGroupAggDistinctFilter).
const miniBatchMaxGroups = 16384

// miniBatchMaxValues bounds the last results held for the touched groups
// (groups times calls) when their keys repeat.
const miniBatchMaxValues = 1 << 18

var _ Operator = (*groupAggOp)(nil)

// groupHead holds a group's small, hot fields together, so that processing
// a row or emitting a change for a group reads one cache line for them
// rather than one per field (it matters with many keys in random order).
type groupHead struct {
	count   int64      // rows accumulated
	keyInt  int64      // the key's int64, for a group in ints (one key column)
	keyKind types.Kind // the key's kind, for a group in ints
	inInts  bool       // registered in ints
	stored  bool       // loaded from the store: its DISTINCT entries may be there
	emitted bool       // a result row is out (and not deleted)
	dirty   bool       // touched since the last emit
}

func newGroupAggOp(keys []int, calls []AggCall) *groupAggOp {
	return &groupAggOp{keys: keys, calls: calls}
}

// Open implements Operator.
func (g *groupAggOp) Open(ctx *OpContext) error {
	g.name = ctx.Name
	g.maxPar = ctx.MaxParallelism
	if g.maxPar <= 0 {
		g.maxPar = types.DefaultMaxParallelism
	}
	g.maxCol = -1
	for _, k := range g.keys {
		if k < 0 {
			return fmt.Errorf("group key column %d", k)
		}
		g.maxCol = max(g.maxCol, k)
	}
	if err := g.newAccumulators(); err != nil {
		return err
	}
	g.args = make([]int, len(g.calls))
	for i, c := range g.calls {
		g.args[i] = c.Arg
		if c.Func == AggCountStar {
			g.args[i] = -1
		}
		g.maxCol = max(g.maxCol, g.args[i])
	}
	if g.partial {
		// The calls' arguments are in the partials' accumulator states.
		for i := range g.args {
			g.args[i] = -1
		}
		g.maxCol = len(g.keys) + PartialGroupCols - 1
	}
	g.scratchGi = -1
	g.resetGroupIndex()
	g.intKey = -1
	if len(g.keys) == 1 {
		g.intKey = g.keys[0]
	}
	g.scratch = make([]types.Value, len(g.calls))
	g.loadRow = make([]types.Value, g.maxCol+1)
	g.out = types.NewBatch(len(g.keys)+len(g.calls), 256)
	if err := g.newDistinctValues(ctx); err != nil {
		return err
	}
	return g.newRecords(ctx)
}

// Process implements Operator. It works on the batch a step at a time
// (find every row's group, then count the rows, then update each
// accumulator) rather than a row at a time: with many keys each step's
// memory accesses miss the CPU cache, and the misses of independent rows
// overlap only when the loop over the rows is short.
func (g *groupAggOp) Process(_ int, b *types.Batch, out Emitter) error {
	if g.maxCol >= b.Width {
		return fmt.Errorf("column %d out of range of input width %d", g.maxCol, b.Width)
	}
	if g.partial {
		if err := g.mergePartials(b); err != nil {
			return err
		}
		return g.afterBatch(b, out)
	}
	n := b.Len()
	gis := slices.Grow(g.gis[:0], n)[:n]
	g.gis = gis
	if k := g.intKey; k >= 0 {
		for i := range gis {
			gis[i] = -1
			if v := &b.Vals[i*b.Width+k]; state.IntStored(v.Kind()) {
				if gi, ok := g.ints.Get(v.Int()); ok {
					gis[i] = gi
				}
			}
		}
	} else {
		for i := range gis {
			gis[i] = -1
		}
	}
	for i := range gis {
		if gis[i] >= 0 {
			continue
		}
		gi, ok, err := g.findGroup(b.Row(i), b.Kinds[i].IsRetraction())
		if err != nil {
			return err
		}
		if ok {
			gis[i] = gi
		}
	}
	first := len(g.touched)
	if g.pairedUpdates {
		g.countPaired(gis, b)
	} else {
		g.count(gis, b)
	}
	g.recordBefore(first)
	for a, acc := range g.accs {
		acc.update(gis, b, g.args[a])
	}
	if g.dv != nil {
		if err := g.dv.update(gis, b); err != nil {
			return err
		}
	}
	return g.afterBatch(b, out)
}

// count counts the batch's rows into their groups (gis), touching each
// group at its first change since the last emit, and sets gis[i] to -1 for
// a retraction whose group has no rows (nothing to retract). The loop is
// written out (touch's work inline, no pairedUpdates cases) as this is
// where each row first reads its group's head: with many keys nearly every
// row misses the cache here, and the fewer instructions an iteration has,
// the more rows' misses the CPU overlaps.
func (g *groupAggOp) count(gis []int32, b *types.Batch) {
	heads, touched, st := g.heads, g.touched, g.st
	for i, gi := range gis {
		if gi < 0 {
			continue
		}
		h := &heads[gi]
		if !h.dirty {
			h.dirty = true
			touched = append(touched, gi)
			st.Changed(gi)
		}
		switch {
		case !b.Kinds[i].IsRetraction():
			h.count++
		case h.count > 0:
			h.count--
		default:
			gis[i] = -1 // nothing to retract
		}
	}
	g.touched = touched
}

// countPaired is count for input whose updates come as -U/+U pairs
// (pairedUpdates), which leave a group's row count as it was.
func (g *groupAggOp) countPaired(gis []int32, b *types.Batch) {
	for i, gi := range gis {
		if gi < 0 {
			continue
		}
		h := &g.heads[gi]
		if !h.dirty {
			g.touch(gi)
		}
		switch k := b.Kinds[i]; {
		case k == types.UpdateAfter:
			// Its -U left the count as it was (a group the -U did
			// not find counts from this row).
			h.count = max(h.count, 1)
		case k == types.UpdateBefore && h.count > 0:
		case !k.IsRetraction():
			h.count++
		case h.count > 0:
			h.count--
		default:
			gis[i] = -1 // nothing to retract
		}
	}
}

// afterBatch emits the changes unless mini-batch holds them, and spills
// when over budget.
func (g *groupAggOp) afterBatch(b *types.Batch, out Emitter) error {
	g.lastOut = out
	g.pendingRows += b.Len()
	if g.emitDue() {
		if err := g.emitChanges(out); err != nil {
			return err
		}
	}
	return g.maybeSpill()
}

// emitDue reports whether the held changes are to be emitted after a
// batch: always without mini-batch; with it, at batchRows pending rows
// (miniBatchRows, or 'table.exec.mini-batch.size'), or at miniBatchGroups
// touched groups unless at least a quarter of the pending rows fell on
// groups already touched (each such row saves an output row), and then at
// miniBatchMaxGroups (fewer for many calls).
func (g *groupAggOp) emitDue() bool {
	n := len(g.touched)
	switch {
	case !g.miniBatch || g.pendingRows >= g.batchRows:
		return true
	case n < miniBatchGroups:
		return false
	case n >= max(miniBatchGroups, min(miniBatchMaxGroups, miniBatchMaxValues/max(len(g.accs), 1))):
		return true
	}
	return 4*(g.pendingRows-n) < g.pendingRows
}

// findGroup returns the group of row's key, creating it for an addition
// (or loading it from the state store) if it is not in memory. It reports
// false for a retraction that finds no group: there is nothing to retract.
func (g *groupAggOp) findGroup(row []types.Value, retract bool) (int32, bool, error) {
	inInts := g.intKey >= 0 && state.IntStored(row[g.intKey].Kind())
	if inInts {
		if gi, ok := g.ints.Get(row[g.intKey].Int()); ok {
			return gi, true, nil
		}
	} else {
		if g.recent == nil {
			g.recent = make([]recentGroup, g.recentSize(row))
		}
		at, tag := g.recentAt(row)
		if e := g.recent[at]; e.tag == tag && g.sameKey(e.gi, row) {
			return e.gi, true, nil
		}
		if len(g.recent) < recentGroupsString && g.recentSize(row) == recentGroupsString {
			// The first key had no string (NULL): the memo grows, empty.
			g.recent = make([]recentGroup, recentGroupsString)
			at, tag = g.recentAt(row)
		}
		g.keyBuf = g.appendRowKey(g.keyBuf[:0], row)
		gi, ok := g.groups[string(g.keyBuf)]
		if !ok {
			var err error
			if gi, ok, err = g.missing(row, retract, false); err != nil || !ok {
				return gi, ok, err
			}
		}
		g.recent[at] = recentGroup{tag: tag, gi: gi}
		return gi, true, nil
	}
	return g.missing(row, retract, inInts)
}

// recentGroups and recentGroupsString are the numbers of entries of
// groupAggOp.recent (powers of two): 32 KiB, and 256 KiB for a key with
// a string (VARCHAR) value. Nexmark q16's keys (channel, day) are 4 hot
// channels and 10,000 cold ones: in 4,096 entries the cold ones evicted
// each other.
const (
	recentGroups       = 4096
	recentGroupsString = 32768
)

// recentSize is the number of entries of recent for a GroupAgg whose
// keys are like row's: recentGroupsString if a key value is a string.
func (g *groupAggOp) recentSize(row []types.Value) int {
	for _, k := range g.keys {
		if row[k].Kind() == types.KindVarchar {
			return recentGroupsString
		}
	}
	return recentGroups
}

// recentGroup is an entry of groupAggOp.recent: a group and a tag of its
// key's identity.
type recentGroup struct {
	tag uint32
	gi  int32
}

// recentAt returns the entry of recent for row's key and the key's tag,
// from the identity of its values (identityHash). Only sameKey decides a
// hit.
func (g *groupAggOp) recentAt(row []types.Value) (int, uint32) {
	h := identityHash(row, g.keys)
	return int(h & uint64(len(g.recent)-1)), uint32(h >> 32)
}

// sameKey reports whether gi is a group in groups (not in ints) whose key
// values are row's key values, value for value of the same kind (equal
// strings compare without reading their bytes when they share them).
// Identical values encode alike, so such a group is the one groups holds
// for row's key. A removed group has no keyStr.
func (g *groupAggOp) sameKey(gi int32, row []types.Value) bool {
	nk := len(g.keys)
	if int(gi) >= len(g.keyStr) || g.keyStr[gi] == "" || int(gi+1)*nk > len(g.keyVals) {
		return false
	}
	kv := g.keyVals[int(gi)*nk : int(gi+1)*nk]
	for i, k := range g.keys {
		if !types.Identical(kv[i], row[k]) {
			return false
		}
	}
	return true
}

// appendRowKey appends the encoding of row's key (state.AppendValue of each
// key column) to dst.
func (g *groupAggOp) appendRowKey(dst []byte, row []types.Value) []byte {
	for _, k := range g.keys {
		dst = state.AppendValue(dst, row[k])
	}
	return dst
}

// register enters new group gi, of the key values in row, in the group
// index. encoded is the key's encoding, used for a key not in ints.
func (g *groupAggOp) register(gi int32, row []types.Value, encoded []byte) {
	if g.heads[gi].inInts {
		g.ints.Put(row[g.intKey].Int(), gi)
		return
	}
	key := string(encoded)
	g.groups[key] = gi
	for int(gi) >= len(g.keyStr) {
		g.keyStr = append(g.keyStr, "") // only groups keyed by string need one
	}
	g.keyStr[gi] = key
}

// touch records the first change to group gi since the last emit.
func (g *groupAggOp) touch(gi int32) {
	g.heads[gi].dirty = true
	g.touched = append(g.touched, gi)
	g.st.Changed(gi)
}

// recordBefore keeps, for the groups touched from touched[first] on, their
// results as last emitted, which are their current results (every change
// is emitted), before the batch changes them. Keeping them per touched
// group, in order, rather than per group makes the emit read them
// sequentially; taking them for all the batch's new groups in one loop
// lets the cache misses on the accumulators' state overlap.
func (g *groupAggOp) recordBefore(first int) {
	na := len(g.accs)
	added := g.touched[first:]
	g.before = slices.Grow(g.before, len(added)*na)[:len(g.touched)*na]
	for a, acc := range g.accs {
		for j, gi := range added {
			v := types.Value{}
			if g.heads[gi].emitted {
				v = acc.result(gi)
			}
			g.before[(first+j)*na+a] = v
		}
	}
}

// enableMiniBatch implements bufferingOperator.
func (g *groupAggOp) enableMiniBatch(size int) {
	g.miniBatch = true
	g.batchRows = miniBatchRows
	if size > 0 {
		g.batchRows = size
	}
}

// hasPending implements bufferingOperator.
func (g *groupAggOp) hasPending() bool { return len(g.touched) > 0 }

// emitPending implements bufferingOperator: it emits the changes of the
// groups touched since the last emit.
func (g *groupAggOp) emitPending() error {
	if len(g.touched) == 0 || g.lastOut == nil {
		return nil
	}
	return g.emitChanges(g.lastOut)
}

// missing handles a row whose group is not in memory: it loads the group
// from the state store if the operator is backed by one, or else starts a
// new group for an addition. It reports false when a retraction finds no
// group (nothing to retract). For a key not in ints, g.keyBuf holds its
// encoding.
func (g *groupAggOp) missing(row []types.Value, retract, inInts bool) (int32, bool, error) {
	if g.st.Backed() {
		if inInts {
			g.keyBuf = g.appendRowKey(g.keyBuf[:0], row)
		}
		gi, ok, err := g.st.Load(g.keyBuf)
		if err == nil {
			g.rewriteConverted()
		}
		if err != nil || ok {
			if err != nil {
				err = fmt.Errorf("state of %s: %w", g.name, err)
			}
			return gi, ok, err
		}
	}
	if retract {
		return 0, false, nil
	}
	gi := g.newGroup(row)
	g.register(gi, row, g.keyBuf)
	if inInts {
		v := row[g.intKey]
		g.st.AddedInt(gi, v.Kind(), v.Int())
	} else {
		g.st.AddedKey(gi, g.keyBuf)
	}
	return gi, true, nil
}

// newAccumulators (re)creates the accumulators, holding no groups.
func (g *groupAggOp) newAccumulators() error {
	g.accs = make([]accumulator, len(g.calls))
	for i, c := range g.calls {
		acc, err := newAccumulator(c)
		if err != nil {
			return err
		}
		if g.insertOnly {
			setInsertOnly(acc)
		}
		g.accs[i] = acc
	}
	return nil
}

func (g *groupAggOp) resetGroupIndex() {
	g.groups = make(map[string]int32)
	g.ints = state.NewIntTable()
}

// dropGroups forgets every in-memory group (after they were written to the
// state store).
func (g *groupAggOp) dropGroups() {
	g.resetGroupIndex()
	g.keyStr, g.heads, g.keyVals = g.keyStr[:0], g.heads[:0], g.keyVals[:0]
	g.free = g.free[:0]
	g.scratchGi = -1
	// Cannot fail: the calls were accepted when the operator opened.
	_ = g.newAccumulators()
	if g.dv != nil {
		g.dv.DropRecords()
		g.shareDistinct()
	}
}

// newGroup allocates a group for the key values in row and returns its
// number; the caller registers it in groups or ints.
func (g *groupAggOp) newGroup(row []types.Value) int32 {
	var gi int32
	if n := len(g.free); n > 0 {
		gi = g.free[n-1]
		g.free = g.free[:n-1]
		g.heads[gi] = groupHead{}
	} else {
		gi = int32(len(g.heads))
		g.heads = append(g.heads, groupHead{})
		for _, acc := range g.accs {
			acc.grow()
		}
	}
	if g.intKey >= 0 && state.IntStored(row[g.intKey].Kind()) {
		// Process registers it in ints: keep the key typed, not as a Value.
		h := &g.heads[gi]
		h.keyInt, h.keyKind, h.inInts = row[g.intKey].Int(), row[g.intKey].Kind(), true
	} else {
		nk := len(g.keys)
		for len(g.keyVals) < int(gi+1)*nk {
			g.keyVals = append(g.keyVals, types.Value{})
		}
		kv := g.keyVals[int(gi)*nk:]
		for i, k := range g.keys {
			kv[i] = row[k]
		}
	}
	return gi
}

// groupKey returns group gi's key values (for a group in ints, valid until
// the next call).
func (g *groupAggOp) groupKey(gi int32) []types.Value {
	if g.heads[gi].inInts {
		g.keyOne[0] = types.BigIntValue(g.heads[gi].keyInt).WithKind(g.heads[gi].keyKind)
		return g.keyOne[:]
	}
	nk := len(g.keys)
	return g.keyVals[int(gi)*nk : int(gi+1)*nk]
}

// removeGroup forgets group gi, whose row count reached zero.
func (g *groupAggOp) removeGroup(gi int32) error {
	if g.dv != nil {
		if err := g.dv.removeGroup(gi); err != nil {
			return err
		}
	}
	if err := g.st.Removed(gi); err != nil {
		return fmt.Errorf("state of %s: %w", g.name, err)
	}
	if g.heads[gi].inInts {
		g.ints.Del(g.heads[gi].keyInt) // one key column
		g.heads[gi].inInts = false
	} else {
		delete(g.groups, g.keyStr[gi])
		g.keyStr[gi] = ""
		clear(g.keyVals[int(gi)*len(g.keys) : int(gi+1)*len(g.keys)])
	}
	g.heads[gi].emitted = false
	for _, acc := range g.accs {
		acc.reset(gi)
	}
	g.free = append(g.free, gi)
	return nil
}

// emitChanges emits, for every group touched since the last emit, +I, -U/+U or -D
// as its result changed, and nothing if it did not.
func (g *groupAggOp) emitChanges(out Emitter) error {
	o := g.out
	o.Reset()
	na := len(g.calls)
	before, scratch := g.before, g.scratch
	for i, gi := range g.touched {
		h := &g.heads[gi] // removeGroup leaves heads where it is
		h.dirty = false
		keys := g.groupKey(gi)
		last := before[i*na : (i+1)*na : (i+1)*na]
		if h.count == 0 {
			if h.emitted {
				g.appendRow(o, types.Delete, keys, last)
			}
			if err := g.removeGroup(gi); err != nil {
				return err
			}
			continue
		}
		for a, acc := range g.accs {
			scratch[a] = acc.result(gi)
		}
		switch {
		case !h.emitted:
			g.appendRow(o, types.Insert, keys, scratch)
			h.emitted = true
		case !equalValues(last, scratch):
			g.appendRow(o, types.UpdateBefore, keys, last)
			g.appendRow(o, types.UpdateAfter, keys, scratch)
		}
	}
	g.touched = g.touched[:0]
	clear(g.before) // drop references to strings
	g.before = g.before[:0]
	g.pendingRows = 0
	if o.Len() == 0 {
		return nil
	}
	return out.Emit(o)
}

func (g *groupAggOp) appendRow(o *types.Batch, kind types.RowKind, keys, results []types.Value) {
	row := growRow(o, kind)
	for i, v := range keys {
		row[i] = v
	}
	row = row[len(keys):]
	for i, v := range results {
		row[i] = v
	}
}

func equalValues(a, b []types.Value) bool {
	for i := range a {
		if !types.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// Finish implements Operator: it emits the pending changes.
func (g *groupAggOp) Finish(out Emitter) error { return g.emitChanges(out) }

// Close implements Operator.
func (g *groupAggOp) Close() error {
	g.groups, g.ints = nil, nil
	g.accs = nil
	g.keyVals, g.before, g.keyStr, g.heads = nil, nil, nil, nil
	return nil
}
