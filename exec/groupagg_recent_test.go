package exec

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// TestGroupAggRecentGroupsModel runs a random changelog through a GroupAgg
// keyed by two strings (NULL among them) whose groups come and go (a
// group whose rows are all retracted is removed and its number reused),
// with keys whose strings are sometimes the same bytes at another address,
// and compares the materialized output after every batch with the
// results a Go model computes: COUNT(*), SUM and COUNT(DISTINCT x) FILTER
// calls (3, and 70 in one family). It checks findGroup's memo of recent
// groups (a stale entry must not return a removed or reused group) and
// the DISTINCT families' counts.
func TestGroupAggRecentGroupsModel(t *testing.T) {
	seed := testseed.Seed(t)
	for _, nd := range []int{3, 70} {
		t.Run(fmt.Sprintf("distinct=%d", nd), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(nd)))
			checkRecentGroups(t, seed, r, nd)
		})
	}
}

// recentKey is a group key of the model.
type recentKey struct {
	ch, day string
	dayNull bool
}

func checkRecentGroups(t *testing.T, seed uint64, r *rand.Rand, nd int) {
	const (
		colCh, colDay, colV, colX = 0, 1, 2, 3
	)
	width := colX + nd
	calls := []AggCall{
		{Func: AggCountStar, Arg: -1, Type: types.BigInt},
		{Func: AggSum, Arg: colV, ArgType: types.BigInt, Type: types.BigInt},
	}
	for m := range nd {
		calls = append(calls, AggCall{Func: AggCount, Arg: colX + m, ArgType: types.BigInt, Type: types.BigInt, Distinct: true, DistinctArg: "x"})
	}
	op := NewGroupAgg([]int{colCh, colDay}, calls)().(*groupAggOp)
	if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "GroupAggregate", ID: "recent", StateBudget: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	if op.dv == nil {
		t.Fatal("the DISTINCT calls form no family")
	}
	channels := []string{"Google", "Apple", "channel-1", "channel-2", "channel-3", "channel-4"}
	days := []string{"2026-01-01", "2026-01-02"}
	// live holds the model's rows per group.
	live := map[recentKey][][]types.Value{}
	out := map[string]string{} // key -> the materialized row
	rec := &recorder{}
	row := make([]types.Value, width)
	removed := 0
	for step := range 400 {
		b := types.NewBatch(width, 64)
		for range 1 + r.IntN(40) {
			var keys []recentKey
			for k, rows := range live {
				if len(rows) > 0 {
					keys = append(keys, k)
				}
			}
			if len(keys) > 0 && r.IntN(100) < 45 {
				// Retract a live row.
				k := keys[r.IntN(len(keys))]
				rows := live[k]
				j := r.IntN(len(rows))
				b.Append(types.Delete, rows[j])
				rows[j] = rows[len(rows)-1]
				live[k] = rows[:len(rows)-1]
				if len(live[k]) == 0 {
					removed++
				}
				continue
			}
			clear(row)
			ch := channels[r.IntN(len(channels))]
			if r.IntN(3) == 0 {
				ch = strings.Clone(ch) // the same bytes at another address
			}
			row[colCh] = types.StringValue(ch)
			k := recentKey{ch: ch, dayNull: r.IntN(5) == 0}
			if !k.dayNull {
				k.day = days[r.IntN(len(days))]
				row[colDay] = types.StringValue(k.day)
			}
			v := int64(r.IntN(12))
			row[colV] = types.BigIntValue(v)
			for m := range nd {
				if r.IntN(3) > 0 {
					row[colX+m] = row[colV]
				}
			}
			kept := append([]types.Value(nil), row...)
			b.Append(types.Insert, kept)
			live[k] = append(live[k], kept)
		}
		processApplying(t, op, b, rec, out, func(rest string, _ []string) string { return rest }, fmt.Sprintf("seed %d step %d", seed, step))
		want := map[string]string{}
		for k, rows := range live {
			if len(rows) == 0 {
				continue
			}
			var sum int64
			res := make([]types.Value, 2, 2+2+nd)
			res[0] = types.StringValue(k.ch)
			if !k.dayNull {
				res[1] = types.StringValue(k.day)
			}
			for _, rw := range rows {
				sum += rw[colV].Int()
			}
			res = append(res, types.BigIntValue(int64(len(rows))), types.BigIntValue(sum))
			for m := range nd {
				seen := map[int64]bool{}
				for _, rw := range rows {
					if x := rw[colX+m]; !x.IsNull() {
						seen[x.Int()] = true
					}
				}
				res = append(res, types.BigIntValue(int64(len(seen))))
			}
			s := types.FormatRow(types.Insert, res)
			_, rest, _ := strings.Cut(s, "[")
			fields := strings.Split(strings.TrimSuffix(rest, "]"), ", ")
			want[fields[0]+"|"+fields[1]] = rest
		}
		if len(want) != len(out) {
			t.Fatalf("seed %d step %d: %d groups out, want %d", seed, step, len(out), len(want))
		}
		for k, w := range want {
			if out[k] != w {
				t.Fatalf("seed %d step %d: group %s: got %q want %q", seed, step, k, out[k], w)
			}
		}
	}
	if removed < 50 {
		t.Fatalf("seed %d: only %d groups were removed; the test needs groups to come and go", seed, removed)
	}
	t.Logf("seed %d: %d groups removed", seed, removed)
}

// TestGroupAggRecentGroupsManyKeys runs more string keys than findGroup's
// memo has entries (so entries are overwritten, and a group found through
// a stale entry would count a row into another key) through a COUNT(*)
// GroupAgg, with retractions that remove groups (their numbers reused),
// and compares the materialized output after every batch with counts
// computed in Go. It also checks the memo's size: the large one for a
// string key (also when the first key is NULL), the small one for
// integer keys.
func TestGroupAggRecentGroupsManyKeys(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 32768))
	calls := []AggCall{{Func: AggCountStar, Arg: -1, Type: types.BigInt}}
	op := NewGroupAgg([]int{0, 1}, calls)().(*groupAggOp)
	if err := op.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "GroupAggregate", ID: "many", StateBudget: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	const nKeys = 3 * recentGroupsString / 2
	names := make([]string, nKeys)
	for i := range names {
		names[i] = fmt.Sprintf("channel-%d", i)
	}
	live := map[int][][]types.Value{} // key number -> its live rows
	out := map[string]string{}        // "channel|day" -> the materialized row
	rec := &recorder{}
	for step := range 60 {
		b := types.NewBatch(2, 2048)
		for range 2048 {
			if step == 0 && b.Len() == 0 {
				// A first key without a string: the memo starts small.
				b.Append(types.Insert, []types.Value{{}, {}})
				live[-1] = append(live[-1], []types.Value{{}, {}})
				continue
			}
			k := r.IntN(nKeys)
			if r.IntN(4) == 0 {
				k = r.IntN(8) // hot keys
			}
			if rows := live[k]; len(rows) > 0 && r.IntN(100) < 40 {
				b.Append(types.Delete, rows[len(rows)-1])
				live[k] = rows[:len(rows)-1]
				continue
			}
			row := []types.Value{types.StringValue(names[k]), types.StringValue("2026-12-03")}
			b.Append(types.Insert, row)
			live[k] = append(live[k], row)
		}
		processApplying(t, op, b, rec, out, func(_ string, fields []string) string { return fields[2] }, fmt.Sprintf("seed %d step %d", seed, step))
		n := 0
		for k, rows := range live {
			if len(rows) == 0 {
				continue
			}
			n++
			key := "<NULL>|<NULL>"
			if k >= 0 {
				key = names[k] + "|2026-12-03"
			}
			if got, want := out[key], fmt.Sprint(len(rows)); got != want {
				t.Fatalf("seed %d step %d: group %s counts %q; want %s", seed, step, key, got, want)
			}
		}
		if n != len(out) {
			t.Fatalf("seed %d step %d: %d groups out; want %d", seed, step, len(out), n)
		}
	}
	if len(op.recent) != recentGroupsString {
		t.Errorf("string keys: memo of %d entries; want %d", len(op.recent), recentGroupsString)
	}
	ints := NewGroupAgg([]int{0, 1}, calls)().(*groupAggOp)
	if err := ints.Open(&OpContext{Parallelism: 1, MaxParallelism: 128, Name: "GroupAggregate", ID: "ints", StateBudget: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	b := types.NewBatch(2, 1)
	b.Append(types.Insert, []types.Value{types.BigIntValue(1), types.BigIntValue(2)})
	if err := ints.Process(0, b, &recorder{}); err != nil {
		t.Fatal(err)
	}
	if len(ints.recent) != recentGroups {
		t.Errorf("integer keys: memo of %d entries; want %d", len(ints.recent), recentGroups)
	}
}

// processApplying runs batch b through op (its pending changes emitted)
// into rec, and applies rec's rows to out, a result row per key of the
// two first columns: +I/+U set the key's value(rest, fields), -U/-D must
// retract exactly the value the key holds, then delete it. at names the
// step in failures.
func processApplying(t *testing.T, op *groupAggOp, b *types.Batch, rec *recorder, out map[string]string, value func(rest string, fields []string) string, at string) {
	t.Helper()
	rec.rows = rec.rows[:0]
	if err := op.Process(0, b, rec); err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	if err := op.emitPending(); err != nil {
		t.Fatal(err)
	}
	for _, s := range rec.rows {
		kind, rest, _ := strings.Cut(s, "[")
		fields := strings.Split(strings.TrimSuffix(rest, "]"), ", ")
		key, v := fields[0]+"|"+fields[1], value(rest, fields)
		switch kind {
		case "+I", "+U":
			out[key] = v
		case "-U", "-D":
			if out[key] != v {
				t.Fatalf("%s: %s retracts %q, the output holds %q", at, s, v, out[key])
			}
			delete(out, key)
		}
	}
}
