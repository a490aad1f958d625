package session

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// This file runs temporal joins end to end (files through the planner
// and the runtime to the print sink) at parallelism 1, 2 and 4 and
// compares the output with answers computed here in Go.

type tjOrder struct {
	id, k, ts int64
	nullK     bool
}

type tjRate struct {
	op       byte // 'c', 'u' (the new row of an update), 'd'
	k, rate  int64
	ts       int64
	inBefore bool // an update's old row, not a version
}

// writeTemporalInputs writes orders (id, k INT, ts; in time order) as CSV
// and a versioned changelog of rates (k BIGINT, rate, ts; out of order by
// up to 2 s, within its 3 s watermark delay) as debezium-json and as CSV
// (the versions as inserts).
func writeTemporalInputs(t *testing.T, seed uint64) (orders []tjOrder, rates []tjRate, opath, dbzPath, csvPath string) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 14))
	dir := t.TempDir()
	var ob strings.Builder
	clock := int64(10_000)
	for id := range int64(300) {
		clock += int64(r.IntN(3000))
		o := tjOrder{id: id, k: int64(r.IntN(6)), ts: clock}
		if r.IntN(20) == 0 {
			o.nullK = true
			fmt.Fprintf(&ob, "%d,,%s\n", id, tsText(o.ts))
		} else {
			fmt.Fprintf(&ob, "%d,%d,%s\n", id, o.k, tsText(o.ts))
		}
		orders = append(orders, o)
	}
	var db, cb strings.Builder
	live := map[int64]tjRate{}
	obj := func(x tjRate) string {
		return fmt.Sprintf(`{"k":%d,"rate":%d,"ts":"%s"}`, x.k, x.rate, tsText(x.ts))
	}
	clock = 0
	for i := range 200 {
		clock += int64(r.IntN(4000))
		x := tjRate{k: int64(r.IntN(7)), rate: int64(i), ts: max(clock-int64(r.IntN(2000)), 0)}
		old, ok := live[x.k]
		switch {
		case ok && r.IntN(5) == 0:
			x.op, x.rate = 'd', old.rate
			fmt.Fprintf(&db, `{"before":%s,"after":null,"op":"d"}`+"\n", obj(x))
			delete(live, x.k)
		case ok:
			x.op = 'u'
			fmt.Fprintf(&db, `{"before":%s,"after":%s,"op":"u"}`+"\n", obj(old), obj(x))
			live[x.k] = x
		default:
			x.op = 'c'
			fmt.Fprintf(&db, `{"before":null,"after":%s,"op":"c"}`+"\n", obj(x))
			live[x.k] = x
		}
		if x.op != 'd' {
			fmt.Fprintf(&cb, "%d,%d,%s\n", x.k, x.rate, tsText(x.ts))
		}
		rates = append(rates, x)
	}
	opath, dbzPath, csvPath = filepath.Join(dir, "orders.csv"), filepath.Join(dir, "rates.json"), filepath.Join(dir, "rates.csv")
	for p, s := range map[string]string{opath: ob.String(), dbzPath: db.String(), csvPath: cb.String()} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return orders, rates, opath, dbzPath, csvPath
}

// temporalAnswer is each order with the rate valid at its time: the
// latest rates event of its key at or before it (the later one in the
// file on equal times), none if that is a delete (or withDeletes is false
// and it is skipped); with minRate, a version whose rate is not above it
// does not match. LEFT pads orders without a match.
func temporalAnswer(orders []tjOrder, rates []tjRate, left, withDeletes bool, minRate int64) map[string]int {
	want := map[string]int{}
	for _, o := range orders {
		var match *tjRate
		if !o.nullK {
			best := int64(-1)
			for i, x := range rates {
				if x.k != o.k || x.ts > o.ts || x.ts < best || (x.op == 'd' && !withDeletes) {
					continue
				}
				best, match = x.ts, &rates[i]
			}
		}
		if match != nil && (match.op == 'd' || match.rate <= minRate) {
			match = nil
		}
		k := fmt.Sprint(o.k)
		if o.nullK {
			k = "<NULL>"
		}
		switch {
		case match != nil:
			want[row(fmt.Sprint(o.id), k, tsText(o.ts), fmt.Sprint(match.rate), tsText(match.ts))]++
		case left:
			want[row(fmt.Sprint(o.id), k, tsText(o.ts), "<NULL>", "<NULL>")]++
		}
	}
	return want
}

func TestTemporalJoinMatchesAnswer(t *testing.T) {
	orders, rates, opath, dbzPath, csvPath := writeTemporalInputs(t, 21)
	ddl := fmt.Sprintf(`
CREATE TABLE orders (id BIGINT, k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE rates (k BIGINT, rate BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '3' SECOND, PRIMARY KEY (k) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE rates_csv (k BIGINT, rate BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '3' SECOND, PRIMARY KEY (k) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE out (id BIGINT, k INT, ots TIMESTAMP(3), rate BIGINT, rts TIMESTAMP(3)) WITH ('connector' = 'print');
`, opath, dbzPath, csvPath)
	cases := []struct {
		name, query string
		want        map[string]int
	}{
		{"inner changelog", "SELECT o.id, o.k, o.ts, r.rate, r.ts FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.k = r.k",
			temporalAnswer(orders, rates, false, true, -1)},
		{"left changelog residual", "SELECT o.id, o.k, o.ts, r.rate, r.ts FROM orders AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON r.k = o.k AND r.rate > 50",
			temporalAnswer(orders, rates, true, true, 50)},
		{"left inserts", "SELECT o.id, o.k, o.ts, r.rate, r.ts FROM orders o LEFT JOIN rates_csv FOR SYSTEM_TIME AS OF o.ts r ON o.k = r.k",
			temporalAnswer(orders, rates, true, false, -1)},
	}
	for _, par := range []int{1, 2, 4} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/p%d", c.name, par), func(t *testing.T) {
				src := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) + ddl + "INSERT INTO out " + c.query + ";\n"
				outText := runScript(t, src)
				forPrintLines(t, outText, func(kind, _ string) {
					if kind != "+I" {
						t.Fatalf("temporal join emitted %s; want inserts only", kind)
					}
				})
				got := applyChangelog(t, outText)
				if !slices.Equal(sortedRows(got), sortedRows(c.want)) {
					t.Fatalf("got %d rows, want %d\n got: %v\nwant: %v", len(sortedRows(got)), len(sortedRows(c.want)), head(sortedRows(got)), head(sortedRows(c.want)))
				}
			})
		}
	}
}
