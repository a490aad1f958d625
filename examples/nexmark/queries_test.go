package nexmark_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/ncruces/go-sqlite3/driver" // SQLite, pure Go: the batch answers

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/session"
	"github.com/weir-sql/weir/udf"
)

// This test runs the Nexmark queries of this folder (q*.sql over ddl.sql)
// with Weir on a small bounded event count, at parallelism 1 and 4, into
// changelog files, and compares the final result (the changelog applied)
// with the query's batch equivalent: the same events, written to files by
// Weir, loaded into SQLite and queried there (windows as GROUP BY on window
// starts computed from the event times), or, where SQLite is awkward, a
// computation in Go here. Bounded input fires every window at its end, so
// the streaming answer equals the batch one. The events are 1 ms apart
// (1,000 a second), so no two have the same time.

var numEvents = flag.Int("nexmark.events", defaultEvents, "events per query of the Nexmark batch check")

// pending are the queries Weir cannot run yet, with what they need: their
// run is expected to fail, and the case is skipped with the error.
var pending = map[string]string{}

// unchecked are runnable queries whose result the batch check cannot
// predict, and why.
var unchecked = map[string]string{}

// query is the batch answer of one query.
type query struct {
	// sql is the batch equivalent over the SQLite tables person, auction,
	// bid (times as epoch milliseconds: dt, expires) and side_input.
	sql string
	// goAnswer computes the answer in Go instead (rows of canonical values).
	goAnswer func(ev *events) [][]string
	// project, if set, compares only these columns of Weir's rows (the
	// batch answer has exactly them): for rankings whose rows are
	// ambiguous under ties, only the deterministic columns.
	project []int
	// partitioned: the query writes a partitioned filesystem sink; its rows
	// are read back with the values of their partition folders
	// (name=value/...) appended, in folder order.
	partitioned bool
	// reduce, if set, turns Weir's final rows into what the batch answer
	// predicts, for a query whose rows depend on the run (q12's
	// processing-time windows), checking what it can of each row.
	reduce func(t *testing.T, rows []string) []string
}

const (
	day    = `strftime('%Y-%m-%d', dt / 1000, 'unixepoch')`
	minute = `strftime('%H:%M', dt / 1000, 'unixepoch')`
	// euro is 0.908 * price as DECIMAL(23, 3), exactly.
	euro   = `printf('%d.%03d', price * 908 / 1000, price * 908 % 1000)`
	ranked = `COUNT(*), SUM(price < 10000), SUM(price >= 10000 AND price < 1000000), SUM(price >= 1000000)`
	// hop lists each bid's HOP windows (slide 2 s, size 10 s) by start.
	hop = `(SELECT b.*, (dt - dt % 2000) - k.k * 2000 AS ws FROM bid b, (SELECT 0 AS k UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4) k)`
)

var distincts = func() string {
	var parts []string
	for _, col := range []string{"bidder", "auction"} {
		parts = append(parts, "COUNT(DISTINCT "+col+")")
		for _, cond := range []string{"price < 10000", "price >= 10000 AND price < 1000000", "price >= 1000000"} {
			parts = append(parts, "COUNT(DISTINCT CASE WHEN "+cond+" THEN "+col+" END)")
		}
	}
	return strings.Join(parts, ", ")
}()

var queries = map[string]query{
	"q0": {sql: `SELECT auction, bidder, price, dt, extra FROM bid`},
	"q1": {sql: `SELECT auction, bidder, ` + euro + `, dt, extra FROM bid`},
	"q2": {sql: `SELECT auction, price FROM bid WHERE auction % 123 = 0`},
	"q3": {sql: `SELECT P.name, P.city, P.state, A.id FROM auction A JOIN person P ON A.seller = P.id
		WHERE A.category = 10 AND P.state IN ('OR', 'ID', 'CA')`},
	// AVG of a BIGINT is a BIGINT (the quotient truncated), as in Flink.
	"q4": {sql: `SELECT category, SUM(final) / COUNT(final) FROM (
		SELECT MAX(B.price) AS final, A.category FROM auction A JOIN bid B ON A.id = B.auction
		WHERE B.dt BETWEEN A.dt AND A.expires GROUP BY A.id, A.category) GROUP BY category`},
	"q5": {sql: `WITH c AS (SELECT auction, ws, COUNT(*) AS num FROM ` + hop + ` GROUP BY auction, ws),
		m AS (SELECT ws, MAX(num) AS maxn FROM c GROUP BY ws)
		SELECT c.auction, c.num FROM c JOIN m ON c.ws = m.ws AND c.num >= m.maxn`},
	"q7": {sql: `WITH m AS (SELECT MAX(price) AS maxprice, dt - dt % 10000 + 10000 AS we FROM bid GROUP BY dt - dt % 10000)
		SELECT B.auction, B.price, B.bidder, B.dt, B.extra FROM bid B JOIN m ON B.price = m.maxprice
		WHERE B.dt BETWEEN m.we - 10000 AND m.we`},
	"q8": {sql: `SELECT P.id, P.name, P.ws FROM (SELECT DISTINCT id, name, dt - dt % 10000 AS ws FROM person) P
		JOIN (SELECT DISTINCT seller, dt - dt % 10000 AS ws FROM auction) A ON P.id = A.seller AND P.ws = A.ws`},
	"q9": {sql: `SELECT id, itemName, description, initialBid, reserve, dt, expires, seller, category, extra,
		auction, bidder, price, bdt, bextra FROM (
		SELECT A.*, B.auction, B.bidder, B.price, B.dt AS bdt, B.extra AS bextra,
		ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.dt ASC) AS rn
		FROM auction A JOIN bid B ON A.id = B.auction WHERE B.dt BETWEEN A.dt AND A.expires) WHERE rn = 1`},
	"q11": {goAnswer: sessions},
	// q12's windows are of processing time: which window a bid falls in
	// depends on the wall clock, but every bid is counted in exactly one
	// 10 s window of its bidder, so the counts per bidder, summed over the
	// windows, are the bids per bidder.
	"q12": {sql: `SELECT bidder, COUNT(*) FROM bid GROUP BY bidder`, reduce: sumWindowCounts},
	// The final state of q6's changelog: per closed auction its highest
	// bid, and per such row the average of its seller's last 11 by bid
	// time (AVG of BIGINT truncates). Equal highest bids of one auction at
	// different times would make the answer ambiguous; the generated data
	// has none at the tested count.
	"q6": {sql: `SELECT seller, SUM(price) OVER w / COUNT(*) OVER w FROM (
		SELECT * FROM (SELECT A.id, A.seller, B.price, B.dt,
			ROW_NUMBER() OVER (PARTITION BY A.id, A.seller ORDER BY B.price DESC) AS rn
			FROM auction A JOIN bid B ON A.id = B.auction WHERE B.dt BETWEEN A.dt AND A.expires) WHERE rn = 1)
		WINDOW w AS (PARTITION BY seller ORDER BY dt ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)`},
	"q10": {sql: `SELECT auction, bidder, price, dt, extra, ` + day + `, ` + minute + ` FROM bid`, partitioned: true},
	"q13": {sql: `SELECT B.auction, B.bidder, B.price, B.dt, S.value FROM bid B JOIN side_input S ON B.auction % 10000 = S.key`},
	"q14": {sql: `SELECT auction, bidder, ` + euro + `,
		CASE WHEN h >= 8 AND h <= 18 THEN 'dayTime' WHEN h <= 6 OR h >= 20 THEN 'nightTime' ELSE 'otherTime' END,
		dt, extra, length(extra) - length(replace(extra, 'c', ''))
		FROM (SELECT *, CAST(strftime('%H', dt / 1000, 'unixepoch') AS INTEGER) AS h FROM bid)
		WHERE price * 908 > 1000000000 AND price * 908 < 50000000000`},
	"q15": {sql: `SELECT ` + day + `, ` + ranked + `, ` + distincts + ` FROM bid GROUP BY ` + day},
	"q16": {sql: `SELECT channel, ` + day + `, MAX(` + minute + `), ` + ranked + `, ` + distincts + ` FROM bid GROUP BY channel, ` + day},
	"q17": {sql: `SELECT auction, ` + day + `, ` + ranked + `, MIN(price), MAX(price), SUM(price) / COUNT(price), SUM(price)
		FROM bid GROUP BY auction, ` + day},
	"q18": {sql: `SELECT auction, bidder, price, channel, url, dt, extra FROM (
		SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY dt DESC) AS rn FROM bid) WHERE rn = 1`},
	// Bids of equal price may take either rank: compare auction, price and
	// rank, which ties do not change.
	"q19": {sql: `SELECT auction, price, rn FROM (
		SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bid) WHERE rn <= 10`,
		project: []int{0, 2, 7}},
	"q20": {sql: `SELECT B.auction, B.bidder, B.price, B.channel, B.url, B.dt, B.extra, A.itemName, A.description,
		A.initialBid, A.reserve, A.dt, A.expires, A.seller, A.category, A.extra
		FROM bid B JOIN auction A ON B.auction = A.id WHERE A.category = 10`},
	"q21": {goAnswer: channelIDs},
	"q22": {goAnswer: urlDirs},
	"q23": {sql: `SELECT B.bidder, B.price, B.channel, B.url, B.extra, P.id, P.name, P.emailAddress, P.creditCard,
		P.city, P.state, P.extra, A.itemName, A.description, A.initialBid, A.reserve, A.dt, A.expires, A.seller,
		A.category, A.extra FROM bid B JOIN person P ON P.id = B.bidder JOIN auction A ON A.seller = B.bidder`},
}

// TestQueriesMatchBatch is the Nexmark batch check (see the top of the file).
func TestQueriesMatchBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("the Nexmark batch check runs every query twice")
	}
	ddl := setEvents(t, *numEvents)
	// The reference's form: one table with ROW columns and the views over
	// it, which the planner reads by pushing event_type = n and the
	// fields read into the source; it must give the same answers.
	rowDDL := setEventsOf(t, "ddl_gen.sql", *numEvents) + setEventsOf(t, "ddl_views.sql", *numEvents)
	dir := t.TempDir()
	ev := generate(t, ddl, dir)
	db := load(t, ev)
	t.Logf("%d events: %d people, %d auctions, %d bids", *numEvents, len(ev.person), len(ev.auction), len(ev.bid))

	files, err := filepath.Glob("q*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(files, func(i, j int) bool { return queryNumber(files[i]) < queryNumber(files[j]) })
	for _, f := range files {
		name := strings.TrimSuffix(f, ".sql")
		t.Run(name, func(t *testing.T) {
			q, hasBatch := queries[name]
			var want []string
			if hasBatch {
				want = batchAnswer(t, db, ev, q)
			}
			for _, run := range []struct {
				name, ddl string
				par       int
			}{{"p1", ddl, 1}, {"p4", ddl, 4}, {"row-p2", rowDDL, 2}} {
				t.Run(run.name, func(t *testing.T) {
					out := filepath.Join(dir, name+"-"+run.name)
					err := runQuery(run.ddl, f, out, run.par)
					if need, ok := pending[name]; ok {
						if err == nil {
							t.Fatalf("%s runs now (it needed %s): give it a batch answer and take it off the pending list", name, need)
						}
						t.Skipf("needs %s: %v", need, err)
					}
					if err != nil {
						t.Fatalf("run: %v", err)
					}
					if why, ok := unchecked[name]; ok {
						t.Skipf("runs; result not checked: %s", why)
					}
					if !hasBatch {
						t.Fatalf("%s has no batch answer", name)
					}
					var got []string
					if q.partitioned {
						got = readPartitioned(t, out)
					} else {
						got = readChangelog(t, out, q.project)
					}
					if q.reduce != nil {
						got = q.reduce(t, got)
					}
					compare(t, got, want)
				})
			}
		})
	}
}

func queryNumber(file string) int {
	var n int
	fmt.Sscanf(strings.TrimPrefix(file, "q"), "%d", &n)
	return n
}

var eventsOption = regexp.MustCompile(`'events\.num' = '\d+'`)

// setEvents returns ddl.sql with its event count set to n.
func setEvents(t *testing.T, n int) string { return setEventsOf(t, "ddl.sql", n) }

// setEventsOf returns the file with its event count (if any) set to n.
func setEventsOf(t *testing.T, file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ddl := eventsOption.ReplaceAllString(string(b), fmt.Sprintf("'events.num' = '%d'", n))
	if ddl == string(b) && n != 100000 && eventsOption.Match(b) {
		t.Fatalf("%s: the 'events.num' option was not set", file)
	}
	return ddl
}

// newSession returns a session with count_char registered as cmd/weir
// registers it, writing job output to stderr.
func newSession(stdout, stderr io.Writer) *session.Session {
	s := session.New(connector.Env{Stdout: stdout, Stderr: stderr})
	s.Functions = udf.NewRegistry()
	f := udf.Func2(udf.CountChar)
	s.Functions.MustRegister("count_char", "", f)
	s.Functions.MustRegister("com.github.nexmark.flink.udf.CountChar", "", f)
	return s
}

// runQuery runs the query file f over ddl at parallelism par, with its
// blackhole sink replaced by a changelog file sink writing to out.
func runQuery(ddl, f, out string, par int) error {
	b, err := os.ReadFile(f)
	if err != nil {
		return err
	}
	src := strings.ReplaceAll(string(b), "'connector' = 'blackhole'",
		fmt.Sprintf("'connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json'", out))
	// A query's own filesystem sink (q10's, partitioned, insert-only)
	// writes to out, as JSON lines.
	if fsSinkPath.MatchString(src) {
		src = fsSinkPath.ReplaceAllString(src, fmt.Sprintf("'path' = '%s'", out))
		src = strings.ReplaceAll(src, "'format' = 'csv'", "'format' = 'json'")
	}
	if abs, err := filepath.Abs("side_input.csv"); err == nil {
		src = strings.ReplaceAll(src, "'examples/nexmark/side_input.csv'", "'"+abs+"'")
	}
	var stderr bytes.Buffer
	s := newSession(io.Discard, &stderr)
	if err := s.InitScript(fmt.Sprintf("SET 'parallelism.default' = '%d';\n", par) + ddl); err != nil {
		return fmt.Errorf("ddl: %w", err)
	}
	if err := s.RunScript(context.Background(), src, session.RunOptions{JobName: f, Quiet: true}); err != nil {
		return fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return nil
}

// events are the generated events, as canonical values by column (times
// as epoch milliseconds).
type events struct {
	person, auction, bid [][]string
	side                 [][]string
}

var (
	personCols  = []string{"id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra"}
	auctionCols = []string{"id", "itemName", "description", "initialBid", "reserve", "dateTime", "expires", "seller", "category", "extra"}
	bidCols     = []string{"auction", "bidder", "price", "channel", "url", "dateTime", "extra"}
)

// generate writes the events of ddl's three tables to JSON files with
// Weir and reads them back.
func generate(t *testing.T, ddl, dir string) *events {
	t.Helper()
	var src strings.Builder
	src.WriteString("SET 'parallelism.default' = '2';\n" + ddl)
	decl := map[string]string{
		"person":  "id BIGINT, name STRING, emailAddress STRING, creditCard STRING, city STRING, state STRING, `dateTime` TIMESTAMP(3), extra STRING",
		"auction": "id BIGINT, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT, `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra STRING",
		"bid":     "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, `dateTime` TIMESTAMP(3), extra STRING",
	}
	for _, k := range []string{"person", "auction", "bid"} {
		fmt.Fprintf(&src, "CREATE TABLE %s_out (%s) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n",
			k, decl[k], filepath.Join(dir, "events", k))
		fmt.Fprintf(&src, "INSERT INTO %s_out SELECT * FROM %s;\n", k, k)
	}
	var stderr bytes.Buffer
	s := newSession(io.Discard, &stderr)
	if err := s.RunScript(context.Background(), src.String(), session.RunOptions{JobName: "events", Quiet: true}); err != nil {
		t.Fatalf("generating the events: %v\n%s", err, stderr.String())
	}
	ev := &events{
		person:  readRows(t, filepath.Join(dir, "events", "person"), personCols),
		auction: readRows(t, filepath.Join(dir, "events", "auction"), auctionCols),
		bid:     readRows(t, filepath.Join(dir, "events", "bid"), bidCols),
	}
	side, err := os.ReadFile("side_input.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(side)), "\n") {
		k, v, _ := strings.Cut(line, ",")
		ev.side = append(ev.side, []string{k, v})
	}
	return ev
}

// readRows reads the JSON lines of the files in folder as rows of cols.
func readRows(t *testing.T, folder string, cols []string) [][]string {
	t.Helper()
	var rows [][]string
	forLines(t, folder, func(line []byte) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: %v", folder, err)
		}
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = canonical(t, m[c])
		}
		rows = append(rows, row)
	})
	return rows
}

// forLines calls fn with each line of the part files in folder.
func forLines(t *testing.T, folder string, fn func([]byte)) {
	t.Helper()
	entries, err := os.ReadDir(folder)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		f, err := os.Open(filepath.Join(folder, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			fn(sc.Bytes())
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

const tsLayout = "2006-01-02 15:04:05.000"

// canonical renders a JSON value as the test compares it: numbers as
// written, strings as they are except timestamps (as epoch
// milliseconds), null as NULL.
func canonical(t *testing.T, raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "NULL"
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("bad JSON string %s: %v", raw, err)
		}
		if len(s) == len(tsLayout) {
			if ts, err := time.Parse(tsLayout, s); err == nil {
				return fmt.Sprint(ts.UnixMilli())
			}
		}
		return s
	}
	return string(raw)
}

// load creates the SQLite tables of the events.
func load(t *testing.T, ev *events) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "nexmark.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	schema := []string{
		`CREATE TABLE person (id INTEGER, name TEXT, emailAddress TEXT, creditCard TEXT, city TEXT, state TEXT, dt INTEGER, extra TEXT)`,
		`CREATE TABLE auction (id INTEGER, itemName TEXT, description TEXT, initialBid INTEGER, reserve INTEGER, dt INTEGER, expires INTEGER, seller INTEGER, category INTEGER, extra TEXT)`,
		`CREATE TABLE bid (auction INTEGER, bidder INTEGER, price INTEGER, channel TEXT, url TEXT, dt INTEGER, extra TEXT)`,
		`CREATE TABLE side_input (key INTEGER, value TEXT)`,
	}
	for _, s := range schema {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range []struct {
		name string
		rows [][]string
	}{{"person", ev.person}, {"auction", ev.auction}, {"bid", ev.bid}, {"side_input", ev.side}} {
		if len(tab.rows) == 0 {
			t.Fatalf("no %s events", tab.name)
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(tab.rows[0])), ", ")
		st, err := tx.Prepare("INSERT INTO " + tab.name + " VALUES (" + marks + ")")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range tab.rows {
			args := make([]any, len(r))
			for i, v := range r {
				args[i] = v
				if v == "NULL" {
					args[i] = nil
				}
			}
			if _, err := st.Exec(args...); err != nil {
				t.Fatal(err)
			}
		}
		st.Close()
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`CREATE INDEX bid_auction ON bid (auction)`, `CREATE INDEX bid_bidder ON bid (bidder)`,
		`CREATE INDEX person_id ON person (id)`, `CREATE INDEX auction_id ON auction (id)`,
		`CREATE INDEX auction_seller ON auction (seller)`, `CREATE INDEX side_key ON side_input (key)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// batchAnswer returns the sorted rows of q's batch answer.
func batchAnswer(t *testing.T, db *sql.DB, ev *events, q query) []string {
	t.Helper()
	if q.goAnswer != nil {
		var out []string
		for _, r := range q.goAnswer(ev) {
			out = append(out, strings.Join(r, " | "))
		}
		sort.Strings(out)
		return out
	}
	rows, err := db.Query(q.sql)
	if err != nil {
		t.Fatalf("SQLite: %v\n%s", err, q.sql)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				parts[i] = "NULL"
			case []byte:
				parts[i] = string(v)
			default:
				parts[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(parts, " | "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

var fsSinkPath = regexp.MustCompile(`'path' = '/tmp/weir-nexmark/[^']*'`)

// readPartitioned reads a partitioned sink's folder of JSON lines: each
// leaf folder's rows followed by the values of the folder names on its
// path, unescaped (dt=2026-01-01/hm=00%3A05 appends 2026-01-01 and 00:05).
func readPartitioned(t *testing.T, folder string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(folder, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == folder {
			return err
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.IsDir() {
				return nil // not a leaf
			}
		}
		rel, err := filepath.Rel(folder, path)
		if err != nil {
			return err
		}
		var vals []string
		for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
			_, v, ok := strings.Cut(part, "=")
			if !ok {
				return fmt.Errorf("partition folder %s: %q is not name=value", rel, part)
			}
			// Folder names escape characters such as ':' as %XX, as Flink's do.
			if v, err = url.PathUnescape(v); err != nil {
				return fmt.Errorf("partition folder %s: %w", rel, err)
			}
			vals = append(vals, v)
		}
		suffix := " | " + strings.Join(vals, " | ")
		forLines(t, path, func(line []byte) {
			out = append(out, orderedRow(t, line, nil)+suffix)
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// sumWindowCounts checks that each of q12's rows (bidder, count, window
// start, window end, times in epoch ms) is a 10 s window aligned on 10 s
// with a positive count, and returns per bidder the sum of its counts,
// sorted.
func sumWindowCounts(t *testing.T, rows []string) []string {
	t.Helper()
	sums := map[string]int64{}
	for _, r := range rows {
		f := strings.Split(r, " | ")
		if len(f) != 4 {
			t.Fatalf("q12 row %q: want 4 columns", r)
		}
		n, err1 := strconv.ParseInt(f[1], 10, 64)
		start, err2 := strconv.ParseInt(f[2], 10, 64)
		end, err3 := strconv.ParseInt(f[3], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatalf("q12 row %q: %v", r, err)
		}
		if n <= 0 || end-start != 10_000 || start%10_000 != 0 {
			t.Errorf("q12 row %q: not a count over a 10 s window aligned on 10 s", r)
		}
		sums[f[0]] += n
	}
	out := make([]string, 0, len(sums))
	for bidder, n := range sums {
		out = append(out, fmt.Sprintf("%s | %d", bidder, n))
	}
	sort.Strings(out)
	return out
}

// readChangelog applies the Debezium-JSON changelog in folder and returns
// the final rows, sorted (only the columns of project, if set).
func readChangelog(t *testing.T, folder string, project []int) []string {
	t.Helper()
	count := map[string]int{}
	forLines(t, folder, func(line []byte) {
		var rec struct {
			Before, After json.RawMessage
			Op            string
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("%s: %v: %s", folder, err, line)
		}
		switch rec.Op {
		case "c", "r":
			count[orderedRow(t, rec.After, project)]++
		case "u":
			count[orderedRow(t, rec.Before, project)]--
			count[orderedRow(t, rec.After, project)]++
		case "d":
			count[orderedRow(t, rec.Before, project)]--
		default:
			t.Fatalf("%s: unknown op %q", folder, rec.Op)
		}
	})
	var out []string
	for r, n := range count {
		if n < 0 {
			t.Errorf("row retracted more often than inserted (%d): %s", n, r)
		}
		for range n {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// orderedRow renders a JSON object's values in the order of its keys.
func orderedRow(t *testing.T, obj json.RawMessage, project []int) string {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", obj)
	}
	var vals []string
	for dec.More() {
		if _, err := dec.Token(); err != nil { // the key
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		vals = append(vals, canonical(t, v))
	}
	if project != nil {
		p := make([]string, len(project))
		for i, c := range project {
			p[i] = vals[c]
		}
		vals = p
	}
	return strings.Join(vals, " | ")
}

// compare reports the differences between got and want (sorted rows).
func compare(t *testing.T, got, want []string) {
	t.Helper()
	if len(want) == 0 {
		t.Log("the batch answer is empty at this event count: the check shows little")
	}
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		t.Logf("%d rows match", len(got))
		return
	}
	missing, extra := diff(want, got), diff(got, want)
	t.Errorf("%d rows, batch answer %d rows; %d missing, %d extra", len(got), len(want), len(missing), len(extra))
	for i, r := range missing {
		if i == 5 {
			break
		}
		t.Errorf("missing: %s", r)
	}
	for i, r := range extra {
		if i == 5 {
			break
		}
		t.Errorf("extra:   %s", r)
	}
}

// diff returns the rows of a not in b (as multisets).
func diff(a, b []string) []string {
	n := map[string]int{}
	for _, r := range b {
		n[r]++
	}
	var out []string
	for _, r := range a {
		if n[r] > 0 {
			n[r]--
			continue
		}
		out = append(out, r)
	}
	return out
}

// Bid columns by position in events.bid.
const (
	bAuction = iota
	bBidder
	bPrice
	bChannel
	bURL
	bDateTime
	bExtra
)

// sessions is q11: per bidder, sessions of bids at most 10 s apart (a bid
// exactly 10 s after the previous one still joins its session, as Flink's
// windows that touch merge), with the count, the first bid's time and the
// last bid's time + 10 s.
func sessions(ev *events) [][]string {
	const gap = 10000
	times := map[string][]int64{}
	for _, b := range ev.bid {
		var ms int64
		fmt.Sscan(b[bDateTime], &ms)
		times[b[bBidder]] = append(times[b[bBidder]], ms)
	}
	var out [][]string
	for bidder, ts := range times {
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		start, n := 0, 0
		for i, ms := range ts {
			if i > 0 && ms > ts[i-1]+gap {
				out = append(out, []string{bidder, fmt.Sprint(i - start), fmt.Sprint(ts[start]), fmt.Sprint(ts[i-1] + gap)})
				start = i
			}
			n = i
		}
		out = append(out, []string{bidder, fmt.Sprint(n + 1 - start), fmt.Sprint(ts[start]), fmt.Sprint(ts[n] + gap)})
	}
	return out
}

// channelIDs is q21: the channel's id from its name, or else the value of
// the URL's channel_id parameter (at the start of the URL or after an &);
// bids with neither are dropped.
func channelIDs(ev *events) [][]string {
	known := map[string]string{"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}
	var out [][]string
	for _, b := range ev.bid {
		url := b[bURL]
		param, found := "", false
		if rest, ok := strings.CutPrefix(url, "channel_id="); ok {
			param, found = rest, true
		} else if i := strings.Index(url, "&channel_id="); i >= 0 {
			param, found = url[i+len("&channel_id="):], true
		}
		if found {
			param, _, _ = strings.Cut(param, "&")
		}
		id, isKnown := known[strings.ToLower(b[bChannel])]
		if !isKnown {
			if !found {
				continue
			}
			id = param
		}
		out = append(out, []string{b[bAuction], b[bBidder], b[bPrice], b[bChannel], id})
	}
	return out
}

// urlDirs is q22: the pieces 3, 4 and 5 of the URL split at '/' (NULL
// beyond the last).
func urlDirs(ev *events) [][]string {
	var out [][]string
	for _, b := range ev.bid {
		parts := strings.Split(b[bURL], "/")
		row := []string{b[bAuction], b[bBidder], b[bPrice], b[bChannel]}
		for i := 3; i <= 5; i++ {
			if i < len(parts) {
				row = append(row, parts[i])
			} else {
				row = append(row, "NULL")
			}
		}
		out = append(out, row)
	}
	return out
}
