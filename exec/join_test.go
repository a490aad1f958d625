package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// This file tests the regular join operator against a batch join computed
// here: random changelogs on both inputs (inserts, updates as -U/+U pairs,
// deletes, duplicate rows, NULL keys) go through the operator in random
// interleavings; the applied output must equal the join of the applied
// inputs, for every join type and state layout, and every retraction the
// operator emits must take back a row it emitted before.

// Rows are (k INT, id BIGINT, v BIGINT): k the join key (NULL now and
// then), id unique per live row on a side with a unique key.

// collectEmitter applies what the operator emits to a multiset.
type collectEmitter struct {
	t    *testing.T
	rows map[string]int
}

func (c *collectEmitter) Emit(b *types.Batch) error {
	for i := range b.Len() {
		key := rowKey(b.Row(i))
		switch b.Kinds[i] {
		case types.Insert, types.UpdateAfter:
			c.rows[key]++
		default:
			if c.rows[key] <= 0 {
				return fmt.Errorf("retraction %s of a row not emitted", types.FormatRow(b.Kinds[i], b.Row(i)))
			}
			c.rows[key]--
			if c.rows[key] == 0 {
				delete(c.rows, key)
			}
		}
	}
	return nil
}

// rowKey returns fmt.Sprint(row), "[v1 v2 ...]" with each value's String,
// without fmt's reflection: the key of collectEmitter's rows and of the
// batch answers compared with them (other tests build theirs with
// fmt.Sprint; TestRowKeyIsSprint checks that the two agree).
func rowKey(row []types.Value) string {
	buf := make([]byte, 0, 16*len(row)+2)
	buf = append(buf, '[')
	for i, v := range row {
		if i > 0 {
			buf = append(buf, ' ')
		}
		buf = v.AppendText(buf)
	}
	return string(append(buf, ']'))
}

// TestRowKeyIsSprint checks rowKey against fmt.Sprint over values of
// every kind the join tests use, NULL and the empty row included.
func TestRowKeyIsSprint(t *testing.T) {
	rows := [][]types.Value{
		{},
		{{}},
		{types.IntValue(-3), types.BigIntValue(1 << 40), {}},
		{types.StringValue("a b"), types.DoubleValue(1.5), types.BoolValue(true), types.TimestampValue(1700000000123)},
	}
	for _, r := range rows {
		if got, want := rowKey(r), fmt.Sprint(r); got != want {
			t.Errorf("rowKey %q, fmt.Sprint %q", got, want)
		}
	}
}

// changelogGen generates a valid changelog of one side.
type changelogGen struct {
	r      *rand.Rand
	live   [][]types.Value
	nextID int64
	keys   int
	hot    int  // if > 0, half the keys drawn are among the first hot
	unique bool // ids unique among live rows (else duplicates of whole rows happen)
	// keyUnique keeps the join key unique among live rows (a side whose
	// unique key is the join key): NULL keys, then, only as new rows.
	keyUnique bool
	// scale, if > 1, multiplies the keys drawn (sparse keys).
	scale int64
	// keyRows counts the live rows of each non-NULL key, so that freeKey
	// need not scan live.
	keyRows map[int64]int
}

// track adds n (1 or -1) to the live rows of row's key.
func (g *changelogGen) track(row []types.Value, n int) {
	if row[0].IsNull() {
		return
	}
	if g.keyRows == nil {
		g.keyRows = map[int64]int{}
	}
	if g.keyRows[row[0].Int()] += n; g.keyRows[row[0].Int()] == 0 {
		delete(g.keyRows, row[0].Int())
	}
}

// freeKey returns a key no live row has, or false.
func (g *changelogGen) freeKey() (types.Value, bool) {
	k := g.key()
	if k.IsNull() {
		return k, true
	}
	return k, g.keyRows[k.Int()] == 0
}

func (g *changelogGen) key() types.Value {
	if g.r.IntN(10) == 0 {
		return types.Value{}
	}
	n := g.keys
	if g.hot > 0 && g.r.IntN(2) == 0 {
		n = g.hot
	}
	return types.IntValue(int64(g.r.IntN(n)) * max(g.scale, 1))
}

// next appends one change (two rows for an update) to b.
func (g *changelogGen) next(b *types.Batch) {
	p := g.r.IntN(10)
	if g.keyUnique && (p < 5 || len(g.live) == 0) {
		k, ok := g.freeKey()
		if !ok && len(g.live) > 0 {
			p = 5 // an update instead
		} else if ok {
			g.nextID++
			row := []types.Value{k, types.BigIntValue(g.nextID), types.BigIntValue(int64(g.r.IntN(5)))}
			g.live = append(g.live, row)
			g.track(row, 1)
			b.Append(types.Insert, row)
			return
		}
	}
	switch {
	case p < 5 || len(g.live) == 0:
		var row []types.Value
		if !g.unique && len(g.live) > 0 && g.r.IntN(4) == 0 {
			row = slices.Clone(g.live[g.r.IntN(len(g.live))]) // a duplicate
		} else {
			g.nextID++
			row = []types.Value{g.key(), types.BigIntValue(g.nextID), types.BigIntValue(int64(g.r.IntN(5)))}
		}
		g.live = append(g.live, row)
		g.track(row, 1)
		b.Append(types.Insert, row)
	case p < 8:
		i := g.r.IntN(len(g.live))
		old := g.live[i]
		nw := slices.Clone(old)
		nw[2] = types.BigIntValue(int64(g.r.IntN(5)))
		if g.r.IntN(3) == 0 && !g.keyUnique {
			nw[0] = g.key()
		}
		g.live[i] = nw
		g.track(old, -1)
		g.track(nw, 1)
		b.Append(types.UpdateBefore, old)
		b.Append(types.UpdateAfter, nw)
	default:
		i := g.r.IntN(len(g.live))
		b.Append(types.Delete, g.live[i])
		g.track(g.live[i], -1)
		g.live = slices.Delete(g.live, i, i+1)
	}
}

// batchJoin joins the live rows of both sides on k (NULL never matches)
// with the residual l.v <= r.v when residual is set.
func batchJoin(typ JoinType, left, right [][]types.Value, residual bool) map[string]int {
	out := map[string]int{}
	batchJoinEach(typ, left, right, residual, func(row []types.Value) { out[rowKey(row)]++ })
	return out
}

// batchJoinEach calls add with each row of batchJoin.
func batchJoinEach(typ JoinType, left, right [][]types.Value, residual bool, add func([]types.Value)) {
	null := []types.Value{{}, {}, {}}
	byKey := indexByKey(right)
	rightMatched := make([]bool, len(right))
	for _, l := range left {
		n := 0
		if !l[0].IsNull() {
			for _, j := range byKey[l[0].Int()] {
				if r := right[j]; !residual || l[2].Int() <= r[2].Int() {
					add(append(slices.Clone(l), r...))
					rightMatched[j] = true
					n++
				}
			}
		}
		if n == 0 && (typ == LeftOuterJoin || typ == FullOuterJoin) {
			add(append(slices.Clone(l), null...))
		}
	}
	if typ == RightOuterJoin || typ == FullOuterJoin {
		for j, r := range right {
			if !rightMatched[j] {
				add(append(slices.Clone(null), r...))
			}
		}
	}
}

// indexByKey indexes rows by their non-NULL k (column 0): the indexes of
// the rows of each key, in order. The batch answers look a row's matches
// up in it rather than comparing it with every row of the other side,
// which under -race took most of the randomized join tests' time.
func indexByKey(rows [][]types.Value) map[int64][]int {
	m := map[int64][]int{}
	for j, r := range rows {
		if !r[0].IsNull() {
			m[r[0].Int()] = append(m[r[0].Int()], j)
		}
	}
	return m
}

func TestJoinRandomChangelogs(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	kinds := []types.Kind{types.KindInt, types.KindBigInt, types.KindBigInt}
	layouts := []struct {
		layout JoinLayout
		uk     []int
	}{{NoUniqueKey, nil}, {HasUniqueKey, []int{1}}, {JoinKeyContainsUniqueKey, nil}}
	for _, typ := range []JoinType{InnerJoin, LeftOuterJoin, RightOuterJoin, FullOuterJoin} {
		for li, ll := range layouts {
			for ri, rl := range layouts {
				for _, residual := range []bool{false, true} {
					name := fmt.Sprintf("type%d/left%v/right%v/residual=%v", typ, ll.layout, rl.layout, residual)
					t.Run(name, func(t *testing.T) {
						s := seed + uint64(typ)*1000 + uint64(li*100+ri*10)
						if residual {
							s++
						}
						runRandomJoin(t, s, typ, JoinSide{Keys: []int{0}, Kinds: kinds, Layout: ll.layout, UniqueKey: ll.uk},
							JoinSide{Keys: []int{0}, Kinds: kinds, Layout: rl.layout, UniqueKey: rl.uk}, residual)
					})
				}
			}
		}
	}
}

func runRandomJoin(t *testing.T, seed uint64, typ JoinType, left, right JoinSide, residual bool) {
	r := rand.New(rand.NewPCG(seed, 14))
	spec := JoinSpec{Type: typ, Left: left, Right: right}
	if residual {
		c, err := expr.NewCompare("<=", expr.NewColumn(2, types.BigInt, "lv"), expr.NewColumn(5, types.BigInt, "rv"))
		if err != nil {
			t.Fatal(err)
		}
		spec.Residual = c
	}
	op := NewJoin(spec)().(*joinOp)
	if err := op.Open(&OpContext{MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	gens := [2]*changelogGen{
		{r: r, keys: 6, unique: left.Layout != NoUniqueKey, keyUnique: left.Layout == JoinKeyContainsUniqueKey},
		{r: r, keys: 6, unique: right.Layout != NoUniqueKey, keyUnique: right.Layout == JoinKeyContainsUniqueKey},
	}
	out := &collectEmitter{t: t, rows: map[string]int{}}
	b := types.NewBatch(3, 16)
	for step := range 400 {
		side := r.IntN(2)
		b.Reset()
		for range 1 + r.IntN(4) {
			gens[side].next(b)
		}
		if err := op.Process(side, b, out); err != nil {
			t.Fatalf("seed %d, step %d: %v", seed, step, err)
		}
		if step%50 == 49 || step == 399 {
			want := batchJoin(typ, gens[0].live, gens[1].live, residual)
			if !equalMultiset(out.rows, want) {
				t.Fatalf("seed %d, step %d: output\n%v\nwant\n%v", seed, step, keysOf(out.rows), keysOf(want))
			}
		}
	}
}

func equalMultiset(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, n := range a {
		if b[k] != n {
			return false
		}
	}
	return true
}

func keysOf(m map[string]int) []string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s x%d", k, n))
	}
	sort.Strings(out)
	return out
}

// TestJoinStateTTL checks that table.exec.state.ttl bounds a join's state:
// a right row whose key was not written for longer than the TTL is gone,
// so a left row that comes after that finds no match (as in Flink); within
// the TTL it does.
func TestJoinStateTTL(t *testing.T) {
	kinds := []types.Kind{types.KindInt, types.KindBigInt, types.KindBigInt}
	for _, wait := range []int64{500, 1500} {
		op := NewJoin(JoinSpec{Type: InnerJoin,
			Left:  JoinSide{Keys: []int{0}, Kinds: kinds},
			Right: JoinSide{Keys: []int{0}, Kinds: kinds}})().(*joinOp)
		if err := op.Open(&OpContext{MaxParallelism: 128, StateTTL: time.Second}); err != nil {
			t.Fatal(err)
		}
		out := &collectEmitter{t: t, rows: map[string]int{}}
		fire := func(ms int64) {
			if err := op.advanceTime(ms); err != nil {
				t.Fatal(err)
			}
		}
		b := types.NewBatch(3, 1)
		fire(10_000)
		b.Append(types.Insert, []types.Value{types.IntValue(1), types.BigIntValue(1), types.BigIntValue(1)})
		if err := op.Process(1, b, out); err != nil {
			t.Fatal(err)
		}
		fire(10_000 + wait)
		b.Reset()
		b.Append(types.Insert, []types.Value{types.IntValue(1), types.BigIntValue(2), types.BigIntValue(2)})
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		want := 1
		if wait > 1000 {
			want = 0
		}
		if len(out.rows) != want {
			t.Fatalf("after %d ms with a TTL of 1 s: %d joined rows, want %d", wait, len(out.rows), want)
		}
	}
}
