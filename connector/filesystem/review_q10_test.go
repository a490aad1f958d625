package filesystem

import (
	"math"
	"math/big"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/internal/testseed"
	"github.com/weir-sql/weir/types"
)

// refDecimal is a DECIMAL's text computed here: the unscaled digits with a
// point before the last scale of them (at least one digit before it).
func refDecimal(unscaled int64, scale int) string {
	u := new(big.Int).SetInt64(unscaled)
	neg := u.Sign() < 0
	digits := new(big.Int).Abs(u).String()
	if scale > 0 {
		for len(digits) <= scale {
			digits = "0" + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// TestCSVFieldKindsEdges writes rows through appendRow and encode (the
// inline kind cases) under several formats and compares each record with
// one built here: integers at every power-of-ten edge and the int64 ends,
// negative ones, timestamps before 1970 with every millisecond digit,
// DECIMALs, text with non-ASCII bytes and a quoted byte at either end of
// an 8-byte word, NULL (empty and a null literal). Randomized: prints its
// seed.
func TestCSVFieldKindsEdges(t *testing.T) {
	seed := int64(testseed.Seed(t))
	r := rand.New(rand.NewSource(seed))
	loc, err := time.LoadLocation("America/St_Johns")
	if err != nil {
		loc = time.FixedZone("x", -3*3600-1800)
	}
	const layout = "2006-01-02 15:04:05.000"
	var ints []int64
	for p := uint64(1); ; p *= 10 {
		for _, d := range []uint64{p - 1, p, p + 1} {
			if d <= math.MaxInt64 {
				ints = append(ints, int64(d), -int64(d))
			}
		}
		if p > math.MaxUint64/10 {
			break
		}
	}
	ints = append(ints, math.MaxInt64, math.MinInt64, math.MinInt64+1, math.MaxInt64-1)
	cols := []types.Column{
		{Name: "i", Type: types.BigInt}, {Name: "s", Type: types.Varchar}, {Name: "ts", Type: types.Timestamp},
		{Name: "ltz", Type: types.Type{Kind: types.KindTimestampLTZ}}, {Name: "d", Type: types.Decimal(18, 4)},
		{Name: "j", Type: types.Type{Kind: types.KindInt}},
	}
	formats := []format{
		{delim: ',', quote: '"'},
		{delim: ';', quote: '\'', nullLiteral: "\\N", hasNullLiteral: true},
		{delim: '\t', quote: '"', nullLiteral: "ñ", hasNullLiteral: true},
		{delim: '|', quote: '`'},
		{delim: 0x7f, quote: '"'},
	}
	const plain = "abcXYZ09 .-_/:é漢\xc3\xa9"
	for _, f := range formats {
		f.name, f.loc = formatCSV, loc
		e := newCSVEncoder(f, cols)
		special := string([]byte{f.delim, f.quote, '\n', '\r'})
		for it := range 4000 {
			iv := ints[it%len(ints)]
			if r.Intn(2) == 0 {
				iv = r.Int63() >> r.Intn(63)
				if r.Intn(2) == 0 {
					iv = -iv
				}
			}
			n := r.Intn(40)
			b := make([]byte, 0, n)
			for len(b) < n {
				b = append(b, plain[r.Intn(len(plain))])
			}
			if n > 0 && r.Intn(3) == 0 {
				// A quoted byte at a word's end or the text's ends.
				at := []int{0, n - 1, min(7, n-1), min(8, n-1), n / 2}[r.Intn(5)]
				b[at] = special[r.Intn(len(special))]
			}
			s := string(b)
			if f.hasNullLiteral && r.Intn(30) == 0 {
				s = f.nullLiteral
			}
			ms := r.Int63n(200*365*86_400_000) - 100*365*86_400_000 // 1870 to 2070
			if r.Intn(4) == 0 {
				ms = -r.Int63n(3000) // the millisecond digits either side of 1970
			}
			unscaled := r.Int63() >> r.Intn(63)
			if r.Intn(2) == 0 {
				unscaled = -unscaled
			}
			j := int64(int32(r.Uint32()))
			row := []types.Value{types.BigIntValue(iv), types.StringValue(s), types.TimestampValue(ms),
				types.TimestampLTZValue(ms), types.DecimalValue(unscaled, 4), types.IntValue(j)}
			texts := []string{strconv.FormatInt(iv, 10), refCSVField(s, f.delim, f.quote, f.nullLiteral, f.hasNullLiteral),
				time.UnixMilli(ms).UTC().Format(layout), time.UnixMilli(ms).In(loc).Format(layout), refDecimal(unscaled, 4),
				strconv.FormatInt(j, 10)}
			for c := range row {
				if r.Intn(8) == 0 {
					row[c], texts[c] = types.NullValue(), f.nullLiteral
				}
			}
			delim := string(f.delim)
			pick := r.Perm(len(row))[:1+r.Intn(len(row))]
			var want []string
			for _, c := range pick {
				want = append(want, texts[c])
			}
			room := make([]byte, 1, 1+r.Intn(16))
			room[0] = 'x'
			if got, w := string(e.appendRow(room, row, pick)), "x"+strings.Join(want, delim)+"\n"; got != w {
				t.Fatalf("seed %d: delim %q: columns %v of %v: %q, want %q", seed, f.delim, pick, row, got, w)
			}
			bt := types.NewBatch(len(row), 1)
			bt.Append(types.Insert, row)
			got, err := e.encode([]byte("x"), bt)
			if err != nil {
				t.Fatal(err)
			}
			if w := "x" + strings.Join(texts, delim) + "\n"; string(got) != w {
				t.Fatalf("seed %d: delim %q: encode %v: %q, want %q", seed, f.delim, row, got, w)
			}
		}
	}
}

// TestPartitionRoutingSharedAddresses writes rows whose partition strings
// are cuts of one string: values of different partitions share their
// first byte's address (only their lengths differ), and equal values are
// sometimes the same string and sometimes a copy at another address. Rows
// of a partition come in runs, interleaved within batches. Each folder
// must hold exactly its rows in input order (computed here). Randomized:
// prints its seed.
func TestPartitionRoutingSharedAddresses(t *testing.T) {
	seed := int64(testseed.Seed(t))
	r := rand.New(rand.NewSource(seed))
	base := strings.Clone("abcdefgh")
	qbase := strings.Clone("12345")
	for round := range 3 {
		dir := t.TempDir()
		tab := &connector.Table{Name: "routed", PartitionBy: []int{2, 3},
			Options: map[string]string{"connector": "filesystem", "path": dir, "format": "csv"},
			Schema: types.Schema{Columns: []types.Column{
				{Name: "id", Type: types.BigInt}, {Name: "txt", Type: types.Varchar},
				{Name: "p", Type: types.Varchar}, {Name: "q", Type: types.Varchar}}}}
		s, err := NewSink(tab, connector.Env{})
		mustOK(t, err)
		w, err := s.Open(0, 1)
		mustOK(t, err)
		tw := w.(connector.TransactionalWriter)
		type row struct {
			id   int64
			txt  string
			p, q string
		}
		var rows []row
		for len(rows) < 4000 {
			p := base[:1+r.Intn(len(base))]
			q := qbase[:1+r.Intn(len(qbase))]
			for range 1 + r.Intn(12) {
				pp, qq := p, q
				if r.Intn(6) == 0 {
					pp = strings.Clone(p) // equal bytes, another address
				}
				if r.Intn(6) == 0 {
					qq = strings.Clone(q)
				}
				rows = append(rows, row{id: int64(len(rows)) - 1000, txt: strconv.Itoa(r.Intn(1000)), p: pp, q: qq})
			}
		}
		want := map[string]string{}
		for _, x := range rows {
			d := "p=" + x.p + "/q=" + x.q
			want[d] += strconv.FormatInt(x.id, 10) + "," + x.txt + "\n"
		}
		ckpt := int64(0)
		for rest := rows; len(rest) > 0; {
			n := min(len(rest), 1+r.Intn(300))
			b := types.NewBatch(4, n)
			for _, x := range rest[:n] {
				b.Append(types.Insert, []types.Value{types.BigIntValue(x.id), types.StringValue(x.txt),
					types.StringValue(x.p), types.StringValue(x.q)})
			}
			mustOK(t, w.Write(b))
			rest = rest[n:]
			if r.Intn(4) == 0 || len(rest) == 0 {
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
				all = append(all, b...)
			}
			if string(all) != text {
				t.Fatalf("seed %d round %d: folder %s holds\n%q\nwant\n%q", seed, round, d, all, text)
			}
		}
	}
}

// TestPartitionRoutingSharedAddressesKillRestore is
// TestPartitionRoutingSharedAddresses with kills at random points (before
// or after a checkpoint completes, with or without Abort), each restored
// from the last completed checkpoint at a random parallelism, the input
// replayed from its position: every folder must hold each of its records
// exactly once (compared sorted, with the records computed here).
// Randomized: prints its seed.
func TestPartitionRoutingSharedAddressesKillRestore(t *testing.T) {
	seed := int64(testseed.Seed(t))
	r := rand.New(rand.NewSource(seed))
	base := strings.Clone("abcdefgh")
	qbase := strings.Clone("12345")
	type row struct {
		id   int64
		p, q string
	}
	input := func(rows []row) *types.Batch {
		b := types.NewBatch(4, len(rows))
		for _, x := range rows {
			b.Append(types.Insert, []types.Value{types.BigIntValue(x.id), types.StringValue("t" + strconv.FormatInt(x.id%7, 10)),
				types.StringValue(x.p), types.StringValue(x.q)})
		}
		return b
	}
	restarts := 0
	for round := range 4 {
		dir := t.TempDir()
		var rows []row
		for len(rows) < 2500 {
			p := base[:1+r.Intn(len(base))]
			q := qbase[:1+r.Intn(len(qbase))]
			for range 1 + r.Intn(12) {
				pp, qq := p, q
				if r.Intn(6) == 0 {
					pp = strings.Clone(p)
				}
				if r.Intn(6) == 0 {
					qq = strings.Clone(q)
				}
				rows = append(rows, row{id: int64(len(rows)), p: pp, q: qq})
			}
		}
		type checkpoint struct {
			id   int64
			pos  int
			txns [][]byte
		}
		restored := checkpoint{}
		for {
			tab := &connector.Table{Name: "routed", PartitionBy: []int{2, 3},
				Options: map[string]string{"connector": "filesystem", "path": dir, "format": "csv",
					"sink.rolling-policy.file-size": strconv.Itoa(100+r.Intn(4000)) + "b"},
				Schema: types.Schema{Columns: []types.Column{
					{Name: "id", Type: types.BigInt}, {Name: "txt", Type: types.Varchar},
					{Name: "p", Type: types.Varchar}, {Name: "q", Type: types.Varchar}}}}
			sk, err := NewSink(tab, connector.Env{})
			mustOK(t, err)
			s := sk.(*Sink)
			smallWriteback(t, r, s)
			mustOK(t, s.Recover(restored.txns))
			par := 1 + r.Intn(3)
			ws := make([]*Writer, par)
			for k := range ws {
				ws[k] = openWriter(t, s, k, par)
			}
			pos, id := restored.pos, restored.id
			killed := false
			for pos < len(rows) && !killed {
				n := min(len(rows)-pos, 1+r.Intn(200))
				mustOK(t, ws[r.Intn(par)].Write(input(rows[pos:pos+n])))
				pos += n
				switch r.Intn(10) {
				case 0, 1, 2:
					id++
					var txns [][]byte
					for _, w := range ws {
						txns = append(txns, mustTxn(t)(w.PreCommit(id)))
					}
					if r.Intn(4) == 0 {
						killed = true
						break
					}
					restored = checkpoint{id: id, pos: pos, txns: txns}
					for _, txn := range txns {
						if r.Intn(3) != 0 {
							mustOK(t, ws[r.Intn(par)].Commit(txn))
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
		for _, x := range rows {
			d := "p=" + x.p + "/q=" + x.q
			want[d] = append(want[d], strconv.FormatInt(x.id, 10)+",t"+strconv.FormatInt(x.id%7, 10))
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
			recs := strings.Split(strings.TrimSuffix(string(all), "\n"), "\n")
			slices.Sort(recs)
			slices.Sort(lines)
			if !slices.Equal(recs, lines) {
				t.Fatalf("seed %d round %d: folder %s: %d records, want %d (or they differ)", seed, round, d, len(recs), len(lines))
			}
		}
	}
	t.Logf("%d restarts", restarts)
}
