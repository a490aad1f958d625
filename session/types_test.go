package session

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// TestGroupByDecimalAndDateWithRestore groups by a DECIMAL and a DATE key,
// with DECIMAL SUM, MAX and AVG, checkpoints every few milliseconds and an
// injected failure, so the job restores the keys and accumulators from a
// checkpoint; the final rows must equal the answer computed here in
// integers.
func TestGroupByDecimalAndDateWithRestore(t *testing.T) {
	const n = 30000
	script := fmt.Sprintf(`
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
CREATE TABLE ev (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '0', 'fields.id.end' = '%d', 'rows-per-second' = '150000');
CREATE TABLE sums (g STRING, s DECIMAL(38, 6), m DECIMAL(15, 6), a DECIMAL(38, 6), c BIGINT) WITH ('connector' = 'print');
INSERT INTO sums
SELECT CONCAT(CAST(k AS STRING), '/', CAST(d AS STRING)), s, m, a, c FROM (
  SELECT k, d, SUM(v) AS s, MAX(v) AS m, AVG(v) AS a, COUNT(*) AS c FROM (
    SELECT CAST(id %% 50 AS DECIMAL(6, 2)) * 0.25 AS k,
      CAST(CASE id %% 3 WHEN 0 THEN '2026-01-01' WHEN 1 THEN '2026-02-28' ELSE '1999-12-31' END AS DATE) AS d,
      CAST(id AS DECIMAL(12, 3)) * 0.125 AS v
    FROM ev) GROUP BY k, d);
`, t.TempDir(), n-1)
	hook, err := ParseFaults("K4@5=error", "")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	s := New(connector.Env{Stdout: &stdout, Stderr: &stderr})
	if err := s.RunScript(context.Background(), script, RunOptions{JobName: "types", Exec: exec.Options{BatchSize: 128, Fault: hook}}); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "weir: restoring checkpoint") {
		t.Fatalf("the job did not restore a checkpoint:\n%s", stderr.String())
	}
	// The answer, in millionths (scale 6).
	type agg struct{ sum, max, cnt int64 }
	groups := map[string]*agg{}
	dates := []string{"2026-01-01", "2026-02-28", "1999-12-31"}
	micro := func(u int64) string { return fmt.Sprintf("%d.%06d", u/1_000_000, u%1_000_000) }
	for id := int64(0); id < n; id++ {
		k := id % 50 * 25 // hundredths
		key := fmt.Sprintf("%d.%04d/%s", k/100, k%100*100, dates[id%3])
		g := groups[key]
		if g == nil {
			g = &agg{}
			groups[key] = g
		}
		v := id * 125_000 // id × 0.125 in millionths
		g.sum += v
		g.max = max(g.max, v)
		g.cnt++
	}
	var want []string
	for key, g := range groups {
		avg := (2*g.sum + g.cnt) / (2 * g.cnt) // HALF_UP, positive
		want = append(want, fmt.Sprintf("[%s, %s, %s, %s, %d]", key, micro(g.sum), micro(g.max), micro(avg), g.cnt))
	}
	sort.Strings(want)
	got := upsertByKey(t, stdout.String())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("final rows differ: %d rows, want %d\nfirst got %v\nfirst want %v", len(got), len(want), head(got), head(want))
	}
}

// TestJSONTypesEndToEnd reads random DECIMAL, DATE, TIME, BYTES, TINYINT
// rows from a JSON file and checks exact DECIMAL arithmetic, DATE and
// TIME comparison, BYTES and TRY_CAST output against answers computed
// here in integers.
func TestJSONTypesEndToEnd(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 9))
	const n = 500
	var file strings.Builder
	want := map[string]int{}
	cents := func(c int64) string {
		sign := ""
		if c < 0 {
			sign, c = "-", -c
		}
		return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
	}
	for id := 0; id < n; id++ {
		price := r.Int64N(2_000_000) - 1_000_000 // cents
		qty := r.Int64N(1000)
		day := 1 + r.IntN(28)
		sec := r.IntN(86400)
		small := r.Int64N(256) - 128
		sym := []string{"12", "x", "-7", "3000000000"}[r.IntN(4)]
		fmt.Fprintf(&file, `{"id":%d,"price":%s,"qty":%d,"d":"2026-02-%02d","tm":"%02d:%02d:%02d","b":"%s","small":%d,"sym":"%s"}`+"\n",
			id, cents(price), qty, day, sec/3600, sec/60%60, sec%60, base64.StdEncoding.EncodeToString([]byte(sym)), small, sym)
		// 0.908 * price: DECIMAL(3, 3) * DECIMAL(10, 2) = DECIMAL(13, 5), exact.
		fee := price * 908 // in 1e-5
		feeText := fmt.Sprintf("%d.%05d", fee/100000, abs64(fee%100000))
		if fee < 0 && fee > -100000 {
			feeText = "-" + feeText
		}
		try := "<NULL>"
		if sym == "12" || sym == "-7" {
			try = sym
		}
		row := fmt.Sprintf("+I[%d, %s, %s, %t, %t, x'%x', %d, %s]", id, cents(price*qty), feeText,
			day >= 15, sec < 12*3600, sym, small*2, try)
		want[row]++
	}
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runScript(t, fmt.Sprintf(`
CREATE TABLE src (id BIGINT, price DECIMAL(10, 2), qty INT, d DATE, tm TIME, b BYTES, small TINYINT, sym STRING)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE out (id BIGINT, notional DECIMAL(20, 2), fee DECIMAL(13, 5), late BOOLEAN, am BOOLEAN, b BYTES, s INT, t INT)
  WITH ('connector' = 'print');
INSERT INTO out SELECT id, price * qty, 0.908 * price, d >= DATE '2026-02-15', tm < TIME '12:00:00', b, small * 2, TRY_CAST(sym AS INT) FROM src;
`, path))
	got := map[string]int{}
	forPrintLines(t, out, func(kind, row string) { got[kind+row]++ })
	for row, c := range want {
		if got[row] != c {
			t.Fatalf("row %s: got %d times, want %d\noutput starts:\n%s", row, got[row], c, head(strings.Split(out, "\n")))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d distinct rows, want %d", len(got), len(want))
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestDecimalSumPastRange runs SUM and AVG of a DECIMAL(38, 0) column read
// from JSON, GROUP BY k and as a TUMBLE window, in one phase and with the
// two-phase mini-batch aggregation: per key, a sum of values near 2^126
// that passes 2^128 (which a 128-bit sum wraps into range) is NULL, one
// that comes back (negative values) is exact, and AVG is NULL where the
// mean does not fit DECIMAL(38, 6). The answers are worked out by hand.
func TestDecimalSumPastRange(t *testing.T) {
	const p126 = "85070591730234615865843651857942052864" // 2^126
	var file strings.Builder
	add := func(k int, v string) {
		fmt.Fprintf(&file, `{"k":%d,"v":"%s","ts":"2026-01-01 00:00:00.%03d"}`+"\n", k, v, file.Len()%1000)
	}
	for range 4 { // key 1: 2^128 + 5, NULL (128 bits: 5)
		add(1, p126)
	}
	add(1, "5")
	for range 4 { // key 2: 4 × 2^126 - 3 × 2^126 + 7 = 2^126 + 7
		add(2, p126)
	}
	for range 3 {
		add(2, "-"+p126)
	}
	add(2, "7")
	add(3, "12") // key 3: 12 - 2 = 10, AVG 5
	add(3, "-2")
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// AVG over 8 rows of key 2: (2^126 + 7) / 8 = 10633823966279326983230456482242756608.875,
	// beyond DECIMAL(38, 6) (32 integer digits): NULL.
	want := []string{"[1, <NULL>, <NULL>]", "[2, 85070591730234615865843651857942052871, <NULL>]", "[3, 10, 5.000000]"}
	for _, mode := range []struct{ name, set string }{
		{"one phase", ""},
		{"two phase", `SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '10ms';
SET 'table.exec.mini-batch.size' = '5';
SET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';`},
	} {
		t.Run(mode.name, func(t *testing.T) {
			out := runScript(t, fmt.Sprintf(`%s
CREATE TABLE src (k INT, v DECIMAL(38, 0), ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE g (k INT, s DECIMAL(38, 0), a DECIMAL(38, 6)) WITH ('connector' = 'print', 'print-identifier' = 'g');
CREATE TABLE w (k INT, s DECIMAL(38, 0), a DECIMAL(38, 6)) WITH ('connector' = 'print', 'print-identifier' = 'w');
EXECUTE STATEMENT SET BEGIN
INSERT INTO g SELECT k, SUM(v), AVG(v) FROM src GROUP BY k;
INSERT INTO w SELECT k, SUM(v), AVG(v) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' HOUR)) GROUP BY k, window_start, window_end;
END;
`, mode.set, path))
			// Each sink's lines, by the identifier before ':' or '>'.
			bySink := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				id := l[:strings.IndexAny(l, ":>")]
				bySink[id] += l + "\n"
			}
			for _, id := range []string{"g", "w"} {
				got := upsertByKey(t, bySink[id])
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("sink %s, final rows:\n%s\nwant:\n%s\noutput:\n%s", id, strings.Join(got, "\n"), strings.Join(want, "\n"), out)
				}
			}
		})
	}
}
