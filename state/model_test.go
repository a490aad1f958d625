package state

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the randomized model test (0: from the clock)")

const maxPar = 32 // key groups in the model test (small, so that groups hold several keys)

// modelKey is a key of the test's universe: an integer (encoded as INT or
// BIGINT at random: both must reach the same state) or a string.
type modelKey struct {
	isInt bool
	i     int64
	s     string
}

func (m modelKey) encode(r *rand.Rand) []byte {
	if m.isInt {
		if r.IntN(2) == 0 {
			return AppendValue(nil, types.IntValue(m.i))
		}
		return AppendValue(nil, types.BigIntValue(m.i))
	}
	return AppendValue(nil, types.StringValue(m.s))
}

type timerID struct {
	d   TimeDomain
	ts  int64
	key modelKey
	ns  string
}

func cmpTimer(a, b timerID) int {
	return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.d, b.d), cmp.Compare(fmt.Sprint(a.key), fmt.Sprint(b.key)), cmp.Compare(a.ns, b.ns))
}

// model is the plain Go answer.
type model struct {
	v      map[modelKey]int64
	m      map[modelKey]map[string]int64
	s      map[modelKey]map[int64]string
	l      map[modelKey][]int64
	timers map[timerID]bool
	last   map[modelKey]int64 // last write (TTL)
	ttl    int64
	now    int64
	wm     int64
}

func newModel(ttl int64) *model {
	return &model{v: map[modelKey]int64{}, m: map[modelKey]map[string]int64{}, s: map[modelKey]map[int64]string{},
		l: map[modelKey][]int64{}, timers: map[timerID]bool{}, last: map[modelKey]int64{}, ttl: ttl, wm: -1 << 63}
}

func (md *model) clone() *model {
	c := *md
	c.v = maps.Clone(md.v)
	c.m = map[modelKey]map[string]int64{}
	for k, x := range md.m {
		c.m[k] = maps.Clone(x)
	}
	c.s = map[modelKey]map[int64]string{}
	for k, x := range md.s {
		c.s[k] = maps.Clone(x)
	}
	c.l = map[modelKey][]int64{}
	for k, x := range md.l {
		c.l[k] = slices.Clone(x)
	}
	c.timers = maps.Clone(md.timers)
	c.last = maps.Clone(md.last)
	return &c
}

func (md *model) expired(k modelKey) bool {
	last, ok := md.last[k]
	return md.ttl > 0 && ok && last+md.ttl <= md.now
}

func (md *model) clearKey(k modelKey) {
	delete(md.v, k)
	delete(md.m, k)
	delete(md.s, k)
	delete(md.l, k)
}

// touch is a write to k's state.
func (md *model) touch(k modelKey) {
	if md.ttl == 0 {
		return
	}
	if md.expired(k) {
		md.clearKey(k)
	}
	md.last[k] = md.now
}

// visible returns whether reads of k see its state.
func (md *model) visible(k modelKey) bool { return !md.expired(k) }

// subtask is one subtask of the system under test.
type subtask struct {
	k     *Keyed
	store *statestore.Store
	v     *ValueState[int64]
	m     *MapState[string, int64]
	s     *SortedMapState[int64, string]
	sd    *SortedMapState[int64, string]  // the same content, descending codec
	sb    *SortedMapState[[]byte, []byte] // the same content, encoded: view codecs (Around's fast path)
	l     *ListState[int64]
}

type variant struct {
	name       string
	pebble     bool
	cacheBytes int64
	ttl        time.Duration
	// treeAt, when positive, is the size beyond which the memory
	// backend's groups use a B-tree (small: both forms are exercised).
	treeAt int
	// keys, when positive, limits the steps to the first keys keys: the
	// same map entries are then put, removed and put again between two
	// checkpoints (a stored entry's deletion kept until it is written).
	keys int
}

func TestModel(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (go test ./state -run TestModel -seed %d)", seed, seed)
	steps := 3000
	if testing.Short() || raceEnabled {
		steps = 1200
	}
	variants := []variant{
		{name: "memory"},
		{name: "memory-ttl", ttl: 40 * time.Millisecond},
		{name: "memory-group-trees", treeAt: 3},
		{name: "pebble", pebble: true, cacheBytes: 64 << 20},
		{name: "pebble-group-trees", pebble: true, cacheBytes: 64 << 20, treeAt: 3},
		{name: "pebble-few-keys", pebble: true, cacheBytes: 64 << 20, keys: 3},
		{name: "pebble-few-keys-group-trees", pebble: true, cacheBytes: 64 << 20, keys: 3, treeAt: 3},
		{name: "pebble-small-cache", pebble: true, cacheBytes: 4 << 10},
		{name: "pebble-small-cache-ttl", pebble: true, cacheBytes: 2 << 10, ttl: 40 * time.Millisecond},
	}
	for i, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			runModel(t, v, seed+uint64(i), steps)
		})
	}
}

type harness struct {
	t    *testing.T
	v    variant
	r    *rand.Rand
	dir  string
	gen  int
	subs []*subtask
	md   *model
	keys []modelKey
	byEn map[string]modelKey
	// the last checkpoint
	ckDirs []string
	ckPar  int
	ckMd   *model
	ck     int
	// counts for the log
	restores, rescales, fired int
}

func runModel(t *testing.T, v variant, seed uint64, steps int) {
	h := &harness{t: t, v: v, r: rand.New(rand.NewPCG(seed, 7)), dir: t.TempDir(), md: newModel(v.ttl.Milliseconds()), byEn: map[string]modelKey{}}
	for i := range 70 {
		h.keys = append(h.keys, modelKey{isInt: true, i: int64(i*7919%1000 - 500)})
	}
	for _, s := range []string{"", "a", "a\x00", "a\x00b", "ab", "b", "\xff", "\x00", "zz", "long key with spaces"} {
		h.keys = append(h.keys, modelKey{s: s})
	}
	for i := range 20 {
		h.keys = append(h.keys, modelKey{s: fmt.Sprintf("k%d", i)})
	}
	for _, k := range h.keys {
		h.byEn[string(k.encode(h.r))] = k
	}
	h.open(1+h.r.IntN(3), nil)
	defer h.closeAll()
	h.advanceProc(0)
	for step := range steps {
		h.step(step)
	}
	h.verifyAll("end")
	if !v.pebble {
		t.Logf("%d steps, %d timers fired", steps, h.fired)
		return
	}
	h.checkpoint()
	var keys int64
	for _, st := range h.subs {
		info, err := st.store.Snapshot(filepath.Join(h.dir, "final", fmt.Sprint(len(h.subs), st.k.first)))
		must(t, err)
		keys += info.Keys
	}
	t.Logf("%d steps, %d checkpoints, %d restores (%d at another parallelism), %d timers fired; at the end %d entries in state (at least %d bytes in the cache), budget %d bytes per subtask",
		steps, h.ck, h.restores, h.rescales, h.fired, keys, keys*100, v.cacheBytes)
	if v.cacheBytes < 64<<10 && v.ttl == 0 && keys*100 < 4*v.cacheBytes {
		t.Errorf("the state (%d entries) is not much larger than the cache budget (%d bytes)", keys, v.cacheBytes)
	}
}

func (h *harness) closeAll() {
	for _, s := range h.subs {
		if s.store != nil {
			if err := s.store.Close(); err != nil {
				h.t.Error(err)
			}
		}
	}
	h.subs = nil
}

// open creates par subtasks, restored from the snapshots in from (nil: empty).
func (h *harness) open(par int, from []string) {
	t := h.t
	h.gen++
	h.subs = nil
	for i := range par {
		opts := Options{OperatorID: "op1", MaxParallelism: maxPar, Subtask: i, Parallelism: par, TTL: h.v.ttl}
		st := &subtask{}
		var err error
		if h.v.pebble {
			sopts := statestore.Options{CacheBytes: h.v.cacheBytes, MaxParallelism: maxPar, MemTableBytes: 1 << 20}
			work := filepath.Join(h.dir, fmt.Sprintf("work-%d-%d", h.gen, i))
			switch {
			case from == nil:
				st.store, err = statestore.Open(work, sopts)
			case len(from) == par:
				st.store, err = statestore.Restore(from[i], work, sopts)
			default:
				first, last := KeyGroupRange(i, par, maxPar)
				st.store, err = statestore.RestoreKeyGroups(from, work, first, last, sopts)
			}
			if err != nil {
				t.Fatal(err)
			}
			st.k, err = Open(st.store, opts)
		} else {
			st.k, err = NewMemory(opts)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.v.treeAt > 0 {
			setTreeAt(st.k, h.v.treeAt)
		}
		st.v, err = NewValueState(st.k, "v", Int64{})
		must(t, err)
		st.m, err = NewMapState(st.k, "m", String{}, Int64{})
		must(t, err)
		st.s, err = NewSortedMapState(st.k, "s", Int64{}, String{})
		must(t, err)
		st.sd, err = NewSortedMapState(st.k, "sd", Desc[int64](Int64{}), String{})
		must(t, err)
		st.sb, err = NewSortedMapState(st.k, "sb", Codec[[]byte](BytesView{}), Codec[[]byte](BytesView{}))
		must(t, err)
		st.l, err = NewListState(st.k, "l", Int64{})
		must(t, err)
		h.subs = append(h.subs, st)
	}
}

// setTreeAt sets the group size beyond which k's memory backend orders a
// group in a B-tree.
func setTreeAt(k *Keyed, n int) {
	switch be := k.be.(type) {
	case *memBackend:
		be.treeAt = n
	case *hybridBackend:
		if be.mem != nil {
			be.mem.treeAt = n
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// use makes key the current key of its subtask and returns the subtask.
func (h *harness) use(key modelKey) *subtask {
	enc := key.encode(h.r)
	kg := KeyGroup(enc, maxPar)
	st := h.subs[types.SubtaskForKeyGroup(kg, len(h.subs), maxPar)]
	must(h.t, st.k.SetCurrentKey(enc))
	return st
}

func (h *harness) step(step int) {
	t, r, md := h.t, h.r, h.md
	nk := len(h.keys)
	if h.v.keys > 0 {
		nk = h.v.keys
	}
	key := h.keys[r.IntN(nk)]
	mk := fmt.Sprintf("m%d", r.IntN(8))
	if r.IntN(5) == 0 {
		mk += "\x00"
	}
	sk := int64(r.IntN(41) - 20)
	switch op := r.IntN(100); {
	case op < 12:
		st := h.use(key)
		n := r.Int64N(1000) - 500
		must(t, st.v.Update(n))
		md.touch(key)
		md.v[key] = n
	case op < 14:
		must(t, h.use(key).v.Clear())
		delete(md.v, key)
	case op < 24:
		st := h.use(key)
		n := r.Int64N(1000)
		must(t, st.m.Put(mk, n))
		md.touch(key)
		if md.m[key] == nil {
			md.m[key] = map[string]int64{}
		}
		md.m[key][mk] = n
	case op < 28:
		must(t, h.use(key).m.Remove(mk))
		md.touch(key)
		delete(md.m[key], mk)
	case op < 38:
		st := h.use(key)
		val := fmt.Sprintf("x%d", r.IntN(100))
		must(t, st.s.Put(sk, val))
		must(t, st.sd.Put(sk, val))
		must(t, st.sb.Put(Int64{}.Append(nil, sk), []byte(val)))
		md.touch(key)
		if md.s[key] == nil {
			md.s[key] = map[int64]string{}
		}
		md.s[key][sk] = val
	case op < 42:
		st := h.use(key)
		must(t, st.s.Remove(sk))
		must(t, st.sd.Remove(sk))
		must(t, st.sb.Remove(Int64{}.Append(nil, sk)))
		md.touch(key)
		delete(md.s[key], sk)
	case op < 52:
		n := r.Int64N(100)
		must(t, h.use(key).l.Add(n))
		md.touch(key)
		md.l[key] = append(md.l[key], n)
	case op < 54:
		vs := make([]int64, r.IntN(4))
		for i := range vs {
			vs[i] = r.Int64N(100)
		}
		must(t, h.use(key).l.Update(vs))
		delete(md.l, key)
		if len(vs) > 0 {
			md.touch(key)
			md.l[key] = vs
		}
	case op < 55:
		st := h.use(key)
		must(t, st.l.Clear())
		must(t, st.m.Clear())
		delete(md.l, key)
		delete(md.m, key)
	case op < 63:
		d := TimeDomain(r.IntN(2))
		base := md.wm
		if d == ProcessingTime || base < 0 {
			base = max(md.now, 0)
		}
		ts := base + r.Int64N(120) - 10
		ns := []string{"", "w1", "w2"}[r.IntN(3)]
		must(t, h.use(key).k.RegisterTimer(d, ts, []byte(ns)))
		md.timers[timerID{d, ts, key, ns}] = true
	case op < 66:
		// Delete an existing timer (or a missing one).
		var id timerID
		if len(md.timers) > 0 && r.IntN(4) > 0 {
			ids := slices.SortedFunc(maps.Keys(md.timers), cmpTimer)
			id = ids[r.IntN(len(ids))]
		} else {
			id = timerID{TimeDomain(r.IntN(2)), r.Int64N(100), key, ""}
		}
		must(t, h.use(id.key).k.DeleteTimer(id.d, id.ts, []byte(id.ns)))
		delete(md.timers, id)
	case op < 70:
		h.advanceWatermark(max(md.wm, 0) + r.Int64N(60))
	case op < 74:
		h.advanceProc(md.now + r.Int64N(30))
	case op < 92:
		h.verifyKey(key, fmt.Sprintf("step %d", step))
	case op < 93 && h.v.pebble:
		h.checkpoint()
	case op < 94 && h.v.pebble && h.ckDirs != nil:
		h.restore()
	}
}

// onTimer is the test operator's timer callback, applied to both sides.
func (h *harness) onTimer(st *subtask, fired *[]timerID) func(Timer) error {
	return func(tm Timer) error {
		key, ok := h.byEn[string(tm.Key)]
		if !ok {
			return fmt.Errorf("timer for unknown key %x", tm.Key)
		}
		if !bytes.Equal(st.k.CurrentKey(), tm.Key) {
			return fmt.Errorf("current key %x during the timer of %x", st.k.CurrentKey(), tm.Key)
		}
		*fired = append(*fired, timerID{tm.Domain, tm.Timestamp, key, string(tm.Namespace)})
		n, _, err := st.v.Value()
		if err != nil {
			return err
		}
		if err := st.v.Update(n + 1); err != nil {
			return err
		}
		if tm.Domain == EventTime && string(tm.Namespace) == "w1" {
			return st.k.RegisterTimer(EventTime, tm.Timestamp+3, []byte("w2"))
		}
		return nil
	}
}

// modelFire fires the model's due timers of domain d, with onTimer's
// effects, and returns them.
func (h *harness) modelFire(d TimeDomain, upTo int64) []timerID {
	md := h.md
	var fired []timerID
	for {
		var due []timerID
		for id := range md.timers {
			if id.d == d && id.ts <= upTo {
				due = append(due, id)
			}
		}
		if len(due) == 0 {
			return fired
		}
		slices.SortFunc(due, cmpTimer)
		id := due[0]
		delete(md.timers, id)
		fired = append(fired, id)
		n := int64(0)
		if md.visible(id.key) {
			n = md.v[id.key]
		}
		md.touch(id.key)
		md.v[id.key] = n + 1
		if d == EventTime && id.ns == "w1" {
			md.timers[timerID{EventTime, id.ts + 3, id.key, "w2"}] = true
		}
	}
}

// checkOrder checks that one subtask fired its timers in timestamp order.
func (h *harness) checkOrder(what string, got []timerID) {
	h.t.Helper()
	for i := 1; i < len(got); i++ {
		if got[i].ts < got[i-1].ts {
			h.t.Fatalf("%s: timers fired out of order: %v after %v", what, got[i], got[i-1])
		}
	}
}

func (h *harness) checkFired(what string, got, want []timerID) {
	h.t.Helper()
	slices.SortFunc(got, cmpTimer)
	slices.SortFunc(want, cmpTimer)
	if !slices.Equal(got, want) {
		h.t.Fatalf("%s: fired %v, want %v", what, got, want)
	}
}

func (h *harness) advanceWatermark(wm int64) {
	want := h.modelFire(EventTime, wm)
	h.md.wm = wm
	var got []timerID
	for _, st := range h.subs {
		var mine []timerID
		must(h.t, st.k.AdvanceWatermark(wm, h.onTimer(st, &mine)))
		h.checkOrder(fmt.Sprintf("watermark %d", wm), mine)
		got = append(got, mine...)
	}
	h.checkFired(fmt.Sprintf("watermark %d", wm), got, want)
	h.fired += len(got)
}

func (h *harness) advanceProc(now int64) {
	md := h.md
	md.now = now
	want := h.modelFire(ProcessingTime, now)
	var expired []modelKey
	for k := range md.last {
		if md.expired(k) {
			expired = append(expired, k)
		}
	}
	for _, k := range expired {
		md.clearKey(k)
		delete(md.last, k)
	}
	var got []timerID
	for _, st := range h.subs {
		var mine []timerID
		must(h.t, st.k.AdvanceProcessingTime(now, h.onTimer(st, &mine)))
		h.checkOrder(fmt.Sprintf("processing time %d", now), mine)
		got = append(got, mine...)
	}
	h.checkFired(fmt.Sprintf("processing time %d", now), got, want)
	h.fired += len(got)
	// Expired keys hold no entries at all (their timers removed them).
	for _, k := range expired {
		st := h.use(k)
		for _, name := range []string{"v", "m", "s", "sd", "l", ttlName} {
			n := 0
			p := st.k.stateKey(namePrefix(name), nil)
			idx := globalIndex
			if name == "m" || name == "s" || name == "sd" {
				idx = index(len(p)) // a map's group
			}
			must(h.t, st.k.scan(st.k.kg, p, prefixEnd(nil, p), idx, false, func(_, _ []byte) (bool, error) { n++; return true, nil }))
			if n > 0 {
				h.t.Fatalf("processing time %d: expired key %v still has %d entries in %s", now, k, n, name)
			}
		}
	}
}

func (h *harness) checkpoint() {
	h.ck++
	var dirs []string
	for i, st := range h.subs {
		dir := filepath.Join(h.dir, fmt.Sprintf("chk-%d", h.ck), fmt.Sprintf("op-%d", i))
		if _, err := st.store.Snapshot(dir); err != nil {
			h.t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	h.ckDirs, h.ckPar, h.ckMd = dirs, len(h.subs), h.md.clone()
}

func (h *harness) restore() {
	h.closeAll()
	par := 1 + h.r.IntN(4)
	h.restores++
	if par != h.ckPar {
		h.rescales++
	}
	h.md = h.ckMd.clone()
	h.open(par, h.ckDirs)
	// The runtime gives a restored operator the time again.
	h.advanceProc(h.md.now)
	h.verifyAll(fmt.Sprintf("restore of checkpoint %d (parallelism %d) at %d", h.ck, h.ckPar, par))
}

func (h *harness) verifyAll(what string) {
	for _, k := range h.keys {
		h.verifyKey(k, what)
	}
	// Every timer is still there, once.
	var got []timerID
	for _, st := range h.subs {
		for _, d := range []TimeDomain{EventTime, ProcessingTime} {
			got = append(got, h.storedTimers(st, d)...)
		}
	}
	want := slices.Collect(maps.Keys(h.md.timers))
	h.checkFired(what+": stored timers", got, want)
	for _, d := range []TimeDomain{EventTime, ProcessingTime} {
		next := make(map[*subtask]int64)
		for id := range h.md.timers {
			if id.d == d {
				st := h.use(id.key)
				if n, ok := next[st]; !ok || id.ts < n {
					next[st] = id.ts
				}
			}
		}
		for _, st := range h.subs {
			ts, ok, err := st.k.NextTimer(d)
			must(h.t, err)
			if n, has := next[st]; has && (!ok || ts > n) {
				h.t.Fatalf("%s: next %v timer of a subtask %d,%v: not a lower bound of %d", what, d, ts, ok, n)
			}
		}
	}
}

// storedTimers lists the timers st holds in state.
func (h *harness) storedTimers(st *subtask, d TimeDomain) []timerID {
	idx := st.k.timers[d]
	var out []timerID
	for kg := st.k.first; kg <= st.k.last; kg++ {
		must(h.t, st.k.scan(kg, idx.prefix, prefixEnd(nil, idx.prefix), globalIndex, false, func(key, val []byte) (bool, error) {
			ts, err := timerTS(idx, key)
			if err != nil {
				return false, err
			}
			rest := key[len(idx.prefix)+8:]
			kl := int(val[0])
			mk, ok := h.byEn[string(rest[:kl])]
			if !ok {
				return false, fmt.Errorf("timer of unknown key %x", rest[:kl])
			}
			out = append(out, timerID{d, ts, mk, string(rest[kl:])})
			return true, nil
		}))
	}
	return out
}

func (h *harness) verifyKey(key modelKey, what string) {
	t, md := h.t, h.md
	st := h.use(key)
	vis := md.visible(key)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: key %v: %s", what, key, fmt.Sprintf(format, args...))
	}
	got, ok, err := st.v.Value()
	must(t, err)
	want, wok := md.v[key]
	if !vis {
		want, wok = 0, false
	}
	if ok != wok || got != want {
		fail("value %d,%v want %d,%v", got, ok, want, wok)
	}
	// map
	wantM := map[string]int64{}
	if vis {
		maps.Copy(wantM, md.m[key])
	}
	gotM := map[string]int64{}
	var order []string
	must(t, st.m.All(func(k string, v int64) (bool, error) { gotM[k] = v; order = append(order, k); return true, nil }))
	if !maps.Equal(gotM, wantM) {
		fail("map %v want %v", gotM, wantM)
	}
	if !slices.IsSorted(order) {
		fail("map iterates out of order: %q", order)
	}
	for k, v := range wantM {
		g, ok, err := st.m.Get(k)
		must(t, err)
		if !ok || g != v {
			fail("map get %q = %d,%v want %d", k, g, ok, v)
		}
	}
	if empty, err := st.m.IsEmpty(); err != nil || empty != (len(wantM) == 0) {
		fail("map empty %v (%v), want %v", empty, err, len(wantM) == 0)
	}
	// sorted
	var wantS []int64
	if vis {
		wantS = slices.Sorted(maps.Keys(md.s[key]))
	}
	var gotS, gotSD, gotDesc []int64
	must(t, st.s.Ascend(func(k int64, v string) (bool, error) {
		if v != md.s[key][k] {
			fail("sorted %d = %q want %q", k, v, md.s[key][k])
		}
		gotS = append(gotS, k)
		return true, nil
	}))
	must(t, st.sd.Ascend(func(k int64, _ string) (bool, error) { gotSD = append(gotSD, k); return true, nil }))
	must(t, st.s.Descend(func(k int64, _ string) (bool, error) { gotDesc = append(gotDesc, k); return true, nil }))
	rev := slices.Clone(wantS)
	slices.Reverse(rev)
	if !slices.Equal(gotS, wantS) || !slices.Equal(gotSD, rev) || !slices.Equal(gotDesc, rev) {
		fail("sorted %v, desc codec %v, descending %v; want %v", gotS, gotSD, gotDesc, wantS)
	}
	lo, hi := int64(h.r.IntN(41)-20), int64(h.r.IntN(41)-20)
	var gotR, wantR []int64
	must(t, st.s.Range(lo, hi, func(k int64, _ string) (bool, error) { gotR = append(gotR, k); return true, nil }))
	for _, k := range wantS {
		if k >= lo && k < hi {
			wantR = append(wantR, k)
		}
	}
	if !slices.Equal(gotR, wantR) {
		fail("range [%d, %d) %v want %v", lo, hi, gotR, wantR)
	}
	var gotF, wantF, gotB, wantB []int64
	must(t, st.s.AscendFrom(lo, func(k int64, _ string) (bool, error) { gotF = append(gotF, k); return true, nil }))
	must(t, st.s.DescendBelow(hi, func(k int64, _ string) (bool, error) { gotB = append(gotB, k); return true, nil }))
	for i, k := range wantS {
		if k >= lo {
			wantF = append(wantF, k)
		}
		if k := rev[i]; k < hi {
			wantB = append(wantB, k)
		}
	}
	if !slices.Equal(gotF, wantF) || !slices.Equal(gotB, wantB) {
		fail("from %d %v want %v; below %d %v want %v", lo, gotF, wantF, hi, gotB, wantB)
	}
	// Around, both ways from one key, each side stopped after a random
	// number of entries (-1: never), values checked.
	at := int64(h.r.IntN(45) - 22)
	nb, nf := h.r.IntN(6)-1, h.r.IntN(6)-1
	var gotAB, gotAF, wantAB, wantAF []int64
	take := func(got *[]int64, n int) func(int64, string) (bool, error) {
		return func(k int64, v string) (bool, error) {
			if v != md.s[key][k] {
				fail("around %d: %d = %q want %q", at, k, v, md.s[key][k])
			}
			*got = append(*got, k)
			return n < 0 || len(*got) < n, nil
		}
	}
	must(t, st.s.Around(at, take(&gotAB, nb), take(&gotAF, nf)))
	for i, k := range wantS {
		if k >= at && (nf < 0 || len(wantAF) < max(nf, 1)) {
			wantAF = append(wantAF, k)
		}
		if k := rev[i]; k < at && (nb < 0 || len(wantAB) < max(nb, 1)) {
			wantAB = append(wantAB, k)
		}
	}
	if !slices.Equal(gotAB, wantAB) || !slices.Equal(gotAF, wantAF) {
		fail("around %d (stop after %d, %d): below %v want %v; from %v want %v", at, nb, nf, gotAB, wantAB, gotAF, wantAF)
	}
	// The same through view codecs: the stored bytes as they are.
	var gotVB, gotVF []int64
	takeView := func(got *[]int64, n int) func([]byte, []byte) (bool, error) {
		return func(mk, v []byte) (bool, error) {
			k, err := Int64{}.Decode(mk)
			if err != nil {
				return false, err
			}
			if string(v) != md.s[key][k] {
				fail("around %d, view codecs: %d = %q want %q", at, k, v, md.s[key][k])
			}
			*got = append(*got, k)
			return n < 0 || len(*got) < n, nil
		}
	}
	must(t, st.sb.Around(Int64{}.Append(nil, at), takeView(&gotVB, nb), takeView(&gotVF, nf)))
	if !slices.Equal(gotVB, wantAB) || !slices.Equal(gotVF, wantAF) {
		fail("around %d (stop after %d, %d), view codecs: below %v want %v; from %v want %v", at, nb, nf, gotVB, wantAB, gotVF, wantAF)
	}
	// The descending codec: below is then the larger keys, descending.
	var gotDB, gotDF, wantDB, wantDF []int64
	must(t, st.sd.Around(at, func(k int64, _ string) (bool, error) { gotDB = append(gotDB, k); return true, nil },
		func(k int64, _ string) (bool, error) { gotDF = append(gotDF, k); return true, nil }))
	for i, k := range wantS {
		if k > at {
			wantDB = append(wantDB, k)
		}
		if k := rev[i]; k <= at {
			wantDF = append(wantDF, k)
		}
	}
	if !slices.Equal(gotDB, wantDB) || !slices.Equal(gotDF, wantDF) {
		fail("around %d, descending codec: below %v want %v; from %v want %v", at, gotDB, wantDB, gotDF, wantDF)
	}
	fk, _, fok, err := st.s.First()
	must(t, err)
	lk, _, lok, err := st.s.Last()
	must(t, err)
	if fok != (len(wantS) > 0) || lok != fok || (fok && (fk != wantS[0] || lk != wantS[len(wantS)-1])) {
		fail("first %d,%v last %d,%v; want %v", fk, fok, lk, lok, wantS)
	}
	// list
	var gotL []int64
	must(t, st.l.Get(func(v int64) (bool, error) { gotL = append(gotL, v); return true, nil }))
	var wantL []int64
	if vis {
		wantL = md.l[key]
	}
	if !slices.Equal(gotL, wantL) {
		fail("list %v want %v", gotL, wantL)
	}
}
