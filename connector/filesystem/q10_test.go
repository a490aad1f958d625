package filesystem

import (
	"errors"
	"fmt"
	"github.com/weir-sql/weir/internal/testseed"
	"math"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// refCSVField is an independent RFC 4180 field: quoted (quotes doubled)
// when s holds the delimiter, the quote or a line break, or is the null
// literal.
func refCSVField(s string, delim, quote byte, null string, hasNull bool) string {
	q := string(quote)
	if (hasNull && s == null) || strings.IndexByte(s, delim) >= 0 || strings.IndexByte(s, quote) >= 0 ||
		strings.ContainsAny(s, "\n\r") {
		return q + strings.ReplaceAll(s, q, q+q) + q
	}
	return s
}

// TestCSVTextQuoting writes random strings (of every length up to 72, so
// that a byte that needs quotes falls in every place of an 8-byte word
// and of the tail) under several delimiters and quotes and compares each
// field with refCSVField.
func TestCSVTextQuoting(t *testing.T) {
	seed := int64(testseed.Seed(t))
	r := rand.New(rand.NewSource(seed))
	formats := []format{
		{delim: ',', quote: '"'},
		{delim: '|', quote: '"'},
		{delim: '\t', quote: '\''},
		{delim: ';', quote: '"', nullLiteral: "NA", hasNullLiteral: true},
		{delim: '~', quote: '`'},
	}
	const plain = "abcxyzABCXYZ019 .-_/:é"
	const special = ",\"|\t';~`\n\r\x00\x7f\xff"
	for _, f := range formats {
		f.name = formatCSV
		e := newCSVEncoder(f, []types.Column{{Name: "s", Type: types.Varchar}})
		for range 20000 {
			n := r.Intn(73)
			b := make([]byte, 0, n)
			for len(b) < n {
				if r.Intn(30) == 0 {
					b = append(b, special[r.Intn(len(special))])
				} else {
					b = append(b, plain[r.Intn(len(plain))])
				}
			}
			s := string(b)
			if f.hasNullLiteral && r.Intn(50) == 0 {
				s = f.nullLiteral
			}
			want := refCSVField(s, f.delim, f.quote, f.nullLiteral, f.hasNullLiteral)
			// After other bytes, as in a record.
			got := e.field([]byte("x"), types.StringValue(s))
			if string(got) != "x"+want {
				t.Fatalf("seed %d: delim %q quote %q: %q written as %q, want %q", seed, f.delim, f.quote, s, got[1:], want)
			}
		}
	}
}

// q10Row is one input row of q10's sink and its partition folder.
type q10Row struct {
	auction, bidder, price, ts int64
	extra                      string
	folder                     string
}

// q10Rows returns n rows in time order, with one in 8 a late row (up to
// two minutes back), so that partitions interleave within batches; extras
// hold bytes that need quotes.
func q10Rows(r *rand.Rand, n int) []q10Row {
	ts := time.Date(2026, 12, 1, 23, 57, 30, 0, time.UTC).UnixMilli()
	out := make([]q10Row, n)
	for i := range out {
		ts += int64(r.Intn(120))
		at := ts
		if r.Intn(8) == 0 {
			at -= int64(r.Intn(120_000))
		}
		b := make([]byte, r.Intn(30))
		for j := range b {
			b[j] = "abcdefgh, \"\n"[r.Intn(12)]
		}
		tm := time.UnixMilli(at).UTC()
		out[i] = q10Row{auction: r.Int63n(1e6), bidder: r.Int63n(1e9) - 5e8, price: r.Int63n(1e8), ts: at, extra: string(b),
			folder: "dt=" + tm.Format("2006-01-02") + "/hm=" + strings.ReplaceAll(tm.Format("15:04"), ":", "%3A")}
	}
	return out
}

// line is row's CSV record, formatted independently of the encoder.
func (q q10Row) line() string {
	return strconv.FormatInt(q.auction, 10) + "," + strconv.FormatInt(q.bidder, 10) + "," + strconv.FormatInt(q.price, 10) + "," +
		time.UnixMilli(q.ts).UTC().Format("2006-01-02 15:04:05.000") + "," + refCSVField(q.extra, ',', '"', "", false) + "\n"
}

// q10Input returns rows as a batch of q10's sink table.
func q10Input(rows []q10Row) *types.Batch {
	b := types.NewBatch(7, len(rows))
	for _, q := range rows {
		tm := time.UnixMilli(q.ts).UTC()
		b.Append(types.Insert, []types.Value{types.BigIntValue(q.auction), types.BigIntValue(q.bidder),
			types.BigIntValue(q.price), types.TimestampValue(q.ts), types.StringValue(q.extra),
			types.StringValue(tm.Format("2006-01-02")), types.StringValue(tm.Format("15:04"))})
	}
	return b
}

// committedParts returns, per partition folder under dir, its final part
// files' names sorted by subtask and part number, and fails on an
// in-progress file.
func committedParts(t *testing.T, dir string) map[string][]string {
	t.Helper()
	type part struct {
		name       string
		subtask, n int
	}
	byDir := map[string][]part{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := filepath.Base(rel)
		if strings.HasSuffix(name, ".inprogress") {
			return fmt.Errorf("in-progress file %s left", rel)
		}
		var s, n int
		var c int64
		if _, err := fmt.Sscanf(name, "part-%d-%d-%d.csv", &s, &c, &n); err != nil {
			return nil // the success file, the lock
		}
		d := filepath.ToSlash(filepath.Dir(rel))
		byDir[d] = append(byDir[d], part{name: rel, subtask: s, n: n})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for d, ps := range byDir {
		sort.Slice(ps, func(i, j int) bool {
			if ps[i].subtask != ps[j].subtask {
				return ps[i].subtask < ps[j].subtask
			}
			return ps[i].n < ps[j].n
		})
		for _, p := range ps {
			out[d] = append(out[d], p.name)
		}
	}
	return out
}

// TestPartitionedSinkFiles writes q10's rows, partitions interleaved
// within batches, through one writer with small, random file sizes and
// checkpoints, and checks each partition folder byte for byte: its part
// files in creation order hold the partition's records in input order,
// each file is within the size limit but for its last write, and the
// folder has its success file.
func TestPartitionedSinkFiles(t *testing.T) {
	seed := int64(testseed.Seed(t))
	r := rand.New(rand.NewSource(seed))
	for round := range 4 {
		dir := t.TempDir()
		size := 200 + r.Intn(8000)
		tab := q10BidTable(dir)
		tab.Options["sink.rolling-policy.file-size"] = fmt.Sprintf("%db", size)
		s, err := NewSink(tab, connector.Env{})
		mustOK(t, err)
		smallWriteback(t, r, s.(*Sink))
		w, err := s.Open(0, 1)
		mustOK(t, err)
		tw := w.(connector.TransactionalWriter)
		rows := q10Rows(r, 3000)
		want := map[string]string{}
		maxRow := 0
		for _, q := range rows {
			want[q.folder] += q.line()
			maxRow = max(maxRow, len(q.line()))
		}
		ckpt := int64(0)
		for rest := rows; len(rest) > 0; {
			n := min(len(rest), 1+r.Intn(200))
			mustOK(t, w.Write(q10Input(rest[:n])))
			rest = rest[n:]
			if r.Intn(5) == 0 {
				ckpt++
				txn, err := tw.PreCommit(ckpt)
				mustOK(t, err)
				mustOK(t, tw.Commit(txn))
			}
		}
		mustOK(t, w.Close())
		got := committedParts(t, dir)
		if len(got) != len(want) {
			t.Fatalf("seed %d round %d: %d partition folders, want %d", seed, round, len(got), len(want))
		}
		for d, text := range want {
			var all []byte
			for _, name := range got[d] {
				b, err := os.ReadFile(filepath.Join(dir, name))
				mustOK(t, err)
				if len(b) == 0 {
					t.Fatalf("seed %d round %d: %s is empty", seed, round, name)
				}
				// A file is rolled once a Write takes it to the size; a
				// Write adds at most 200 records.
				if len(b) >= size+200*maxRow {
					t.Fatalf("seed %d round %d: %s has %d bytes, limit %d", seed, round, name, len(b), size)
				}
				all = append(all, b...)
			}
			if string(all) != text {
				t.Fatalf("seed %d round %d: folder %s holds\n%q\nwant\n%q", seed, round, d, all, text)
			}
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(d), "_SUCCESS")); err != nil {
				t.Fatalf("seed %d round %d: folder %s: %v", seed, round, d, err)
			}
		}
	}
}

// TestPartitionedKillRestore kills q10's partitioned sink at random points
// (before or after a checkpoint completes, with or without Abort), restores
// it from the last completed checkpoint at a random parallelism and
// replays the input from that checkpoint's position; at the end each
// partition folder holds every record exactly once (compared, sorted, with
// the independently formatted records) and no in-progress file.
func TestPartitionedKillRestore(t *testing.T) {
	seed := int64(testseed.Seed(t))
	r := rand.New(rand.NewSource(seed))
	restarts := 0
	for round := range 5 {
		dir := t.TempDir()
		rows := q10Rows(r, 2000)
		type checkpoint struct {
			id   int64
			pos  int
			txns [][]byte
		}
		restored := checkpoint{}
		for {
			tab := q10BidTable(dir)
			tab.Options["sink.rolling-policy.file-size"] = fmt.Sprintf("%db", 200+r.Intn(8000))
			sk, err := NewSink(tab, connector.Env{})
			mustOK(t, err)
			s := sk.(*Sink)
			smallWriteback(t, r, s)
			mustOK(t, s.Recover(restored.txns))
			p := 1 + r.Intn(3)
			ws := make([]*Writer, p)
			for k := range ws {
				ws[k] = openWriter(t, s, k, p)
			}
			pos, id := restored.pos, restored.id
			killed := false
			for pos < len(rows) && !killed {
				n := min(len(rows)-pos, 1+r.Intn(150))
				mustOK(t, ws[r.Intn(p)].Write(q10Input(rows[pos:pos+n])))
				pos += n
				switch r.Intn(10) {
				case 0, 1, 2: // a checkpoint
					id++
					var txns [][]byte
					for _, w := range ws {
						txns = append(txns, mustTxn(t)(w.PreCommit(id)))
					}
					if r.Intn(4) == 0 {
						killed = true // before the checkpoint completes
						break
					}
					restored = checkpoint{id: id, pos: pos, txns: txns}
					for _, txn := range txns {
						if r.Intn(3) != 0 { // else its commit comes late or never
							mustOK(t, ws[r.Intn(p)].Commit(txn))
						}
					}
				case 3:
					killed = true
				}
			}
			if !killed {
				for _, w := range ws {
					mustOK(t, w.Close())
				}
				break
			}
			restarts++
			if r.Intn(2) == 0 {
				for _, w := range ws {
					mustOK(t, w.Abort())
				}
			}
		}
		want := map[string][]string{}
		for _, q := range rows {
			want[q.folder] = append(want[q.folder], q.line())
		}
		got := committedParts(t, dir)
		if len(got) != len(want) {
			t.Fatalf("seed %d round %d: %d partition folders, want %d", seed, round, len(got), len(want))
		}
		for d, lines := range want {
			var all []byte
			for _, name := range got[d] {
				b, err := os.ReadFile(filepath.Join(dir, name))
				mustOK(t, err)
				all = append(all, b...)
			}
			// Records may hold line breaks (quoted): split by the
			// independent records, not by lines.
			gotRecs := splitRecords(string(all))
			slices.Sort(gotRecs)
			slices.Sort(lines)
			if !slices.Equal(gotRecs, lines) {
				t.Fatalf("seed %d round %d: folder %s: %d records, want %d (or they differ)", seed, round, d, len(gotRecs), len(lines))
			}
		}
	}
	if restarts < 10 {
		t.Errorf("seed %d: only %d restarts: the test does not test much", seed, restarts)
	}
}

// smallWriteback makes s write its buffers, hint the kernel and sync in
// the background after a few bytes (each at random, or never), so that
// small tests take those paths.
func smallWriteback(t *testing.T, r *rand.Rand, s *Sink) {
	s.spillAt = 1 + r.Intn(2048)
	s.writeback = writeback{}
	if r.Intn(4) != 0 {
		s.writeback.hint = 1 + r.Int63n(4096)
	}
	if r.Intn(4) != 0 {
		s.writeback.sync = 1 + r.Int63n(4096)
	}
	t.Logf("spill at %d, writeback %+v", s.spillAt, s.writeback)
}

// errSyncFailed is the sync failure TestSyncFailure injects.
var errSyncFailed = errors.New("injected sync failure")

// TestSyncFailure fails one sync of a part file (in the background or
// not, at random) and checks that the failure surfaces, as an error of a
// Write, PreCommit or Close, before any transaction lists that file.
func TestSyncFailure(t *testing.T) {
	seed := int64(testseed.Seed(t))
	r := rand.New(rand.NewSource(seed))
	surfaced := 0
	for round := range 30 {
		dir := t.TempDir()
		tab := q10BidTable(dir)
		tab.Options["sink.rolling-policy.file-size"] = fmt.Sprintf("%db", 500+r.Intn(8000))
		sk, err := NewSink(tab, connector.Env{})
		mustOK(t, err)
		s := sk.(*Sink)
		smallWriteback(t, r, s)
		var mu sync.Mutex // the hook runs on background goroutines too
		calls, failAt, failed := 0, 1+r.Intn(40), ""
		s.writeback.fsync = func(f *os.File) error {
			mu.Lock()
			defer mu.Unlock()
			if calls++; calls == failAt {
				failed = filepath.Base(f.Name())
				return errSyncFailed
			}
			return f.Sync()
		}
		w := openWriter(t, s, 0, 1)
		failedFile := func() string {
			mu.Lock()
			defer mu.Unlock()
			return failed
		}
		rows := q10Rows(r, 3000)
		var werr error
		for ckpt := int64(1); len(rows) > 0 && werr == nil; {
			n := min(len(rows), 1+r.Intn(200))
			if werr = w.Write(q10Input(rows[:n])); werr != nil {
				break
			}
			rows = rows[n:]
			if r.Intn(4) != 0 {
				continue
			}
			txn, err := w.PreCommit(ckpt)
			if werr = err; err != nil {
				break
			}
			tr, err := decodeTransaction(txn)
			mustOK(t, err)
			for _, f := range tr.files {
				if ff := failedFile(); ff != "" && path.Base(f.tmp) == ff {
					t.Fatalf("seed %d round %d: checkpoint %d lists %s, whose sync failed", seed, round, ckpt, ff)
				}
			}
			mustOK(t, w.Commit(txn))
			ckpt++
		}
		if werr == nil {
			werr = w.Close()
		} else {
			mustOK(t, w.Abort())
		}
		if failedFile() == "" {
			if werr != nil {
				t.Fatalf("seed %d round %d: %v with no sync failed", seed, round, werr)
			}
			continue
		}
		if !errors.Is(werr, errSyncFailed) {
			t.Fatalf("seed %d round %d: sync of %s failed, the writer returned %v", seed, round, failedFile(), werr)
		}
		surfaced++
	}
	if surfaced < 10 {
		t.Errorf("seed %d: only %d rounds failed a sync: the test does not test much", seed, surfaced)
	}
}

// splitRecords splits CSV text into its records (each with its "\n"),
// minding quoted fields.
func splitRecords(text string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '"':
			quoted = !quoted
		case '\n':
			if !quoted {
				out = append(out, text[start:i+1])
				start = i + 1
			}
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// TestAppendInt compares appendInt with strconv.AppendInt on the edges
// (every power of ten and its neighbours, both signs, the extremes) and
// random values of every length.
func TestAppendInt(t *testing.T) {
	seed := int64(testseed.Seed(t))
	r := rand.New(rand.NewSource(seed))
	vals := []int64{0, 1, -1, 9, 10, 11, 99, 100, 101, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1}
	for p := int64(1); p <= math.MaxInt64/10; p *= 10 {
		for _, v := range []int64{p - 1, p, p + 1, 10*p - 1} {
			vals = append(vals, v, -v)
		}
	}
	for range 100000 {
		v := r.Int63() >> r.Intn(63)
		if r.Intn(2) == 0 {
			v = -v
		}
		vals = append(vals, v)
	}
	for _, v := range vals {
		if got, want := string(appendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Fatalf("seed %d: appendInt(%d) = %q, want %q", seed, v, got, want)
		}
	}
}
