package datagen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/types"
)

var allTypes = []types.Column{
	{Name: "id", Type: types.BigInt},
	{Name: "i", Type: types.Int},
	{Name: "d", Type: types.Double},
	{Name: "s", Type: types.Varchar},
	{Name: "b", Type: types.Boolean},
	{Name: "ts", Type: types.Timestamp},
	{Name: "iv", Type: types.Interval},
}

var allTypesOpts = map[string]string{
	"connector":          "datagen",
	"rows-per-second":    "1000000000",
	"fields.id.kind":     "sequence",
	"fields.id.start":    "1",
	"fields.id.end":      "100",
	"fields.i.min":       "-5",
	"fields.i.max":       "5",
	"fields.s.length":    "20",
	"fields.b.null-rate": "0.3",
	"fields.ts.max-past": "60000",
}

var base = time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)

func mustSource(t testing.TB, cols []types.Column, opts map[string]string) *Source {
	t.Helper()
	s, err := newSource(connectortest.Table("g", cols, opts), base)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readAll(t *testing.T, s *Source, width, parallelism int) []string {
	t.Helper()
	per, err := connectortest.ReadAll(context.Background(), s, width, parallelism, 7)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, rows := range per {
		all = append(all, rows...)
	}
	return all
}

func TestParallelismDoesNotChangeRows(t *testing.T) {
	s := mustSource(t, allTypes, allTypesOpts)
	if !s.Bounded() {
		t.Fatal("a sequence field must bound the table")
	}
	one := readAll(t, s, len(allTypes), 1)
	if len(one) != 100 {
		t.Fatalf("got %d rows, want 100", len(one))
	}
	again := readAll(t, mustSource(t, allTypes, allTypesOpts), len(allTypes), 1)
	if !slices.Equal(one, again) {
		t.Fatal("two runs differ")
	}
	three := readAll(t, s, len(allTypes), 3)
	slices.Sort(one)
	slices.Sort(three)
	if !slices.Equal(one, three) {
		t.Fatalf("parallelism 3 differs from 1:\n%v\n%v", one[:3], three[:3])
	}
}

func TestValues(t *testing.T) {
	s := mustSource(t, allTypes, allTypesOpts)
	r, _ := s.Open(0, 1)
	b := types.NewBatch(len(allTypes), 100)
	if err := r.Next(context.Background(), b, 100); !errors.Is(err, io.EOF) {
		t.Fatalf("Next: %v, want io.EOF with the last rows", err)
	}
	nulls := 0
	for i := range b.Len() {
		row := b.Row(i)
		if row[0].Int() != int64(i+1) || row[0].Kind() != types.KindBigInt {
			t.Errorf("row %d: id %v", i, row[0])
		}
		if v := row[1].Int(); v < -5 || v > 5 || row[1].Kind() != types.KindInt {
			t.Errorf("row %d: i %v out of [-5, 5]", i, row[1])
		}
		if v := row[2].Float(); v < 0 || v >= 1 {
			t.Errorf("row %d: d %v out of [0, 1)", i, v)
		}
		if len(row[3].Str()) != 20 {
			t.Errorf("row %d: s %q is not 20 characters", i, row[3].Str())
		}
		if row[4].IsNull() {
			nulls++
		}
		if ms := row[5].Int(); ms > base.UnixMilli() || ms < base.UnixMilli()-60000 {
			t.Errorf("row %d: ts %v not within max-past", i, row[5])
		}
		if v := row[6].Int(); v < 0 || v > 86_400_000 || row[6].Kind() != types.KindInterval {
			t.Errorf("row %d: iv %v", i, row[6])
		}
	}
	if nulls < 10 || nulls > 50 {
		t.Errorf("%d NULLs in 100 rows with null-rate 0.3", nulls)
	}
}

func TestSeekReplays(t *testing.T) {
	s := mustSource(t, allTypes, allTypesOpts)
	ctx := context.Background()
	for _, cut := range []int{0, 1, 17, 33} {
		r, _ := s.Open(1, 3)
		if _, err := connectortest.Drain(ctx, r, len(allTypes), 5, cut); err != nil {
			t.Fatal(err)
		}
		pos, _ := r.Position()
		rest, err := connectortest.Drain(ctx, r, len(allTypes), 5, -1)
		if err != nil {
			t.Fatal(err)
		}
		// A new source built later (another base time) must replay the same rows.
		later, err := newSource(connectortest.Table("g", allTypes, allTypesOpts), base.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		r2, _ := later.Open(1, 3)
		if err := r2.Seek(pos); err != nil {
			t.Fatal(err)
		}
		replay, err := connectortest.Drain(ctx, r2, len(allTypes), 4, -1)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rest, replay) {
			t.Errorf("cut %d: replay differs:\n%v\n%v", cut, rest, replay)
		}
		// Global row n (id 1+n) belongs to subtask n % 3: subtask 1's
		// rows after the cut have ids 2+3*(cut+j), and i in [-5, 5].
		var ids []int64
		for _, row := range rest {
			f := rowFields(t, row, 3)
			id, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				t.Fatalf("row %q: id: %v", row, err)
			}
			if v, err := strconv.Atoi(f[1]); err != nil || v < -5 || v > 5 {
				t.Fatalf("row %q: i not in [-5, 5] (%v)", row, err)
			}
			ids = append(ids, id)
		}
		var want []int64
		for n := int64(1 + 3*cut); n < 100; n += 3 {
			want = append(want, 1+n)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("cut %d: ids after the cut %v, want %v", cut, ids, want)
		}
	}
	r, _ := s.Open(0, 3)
	pos, _ := r.Position()
	other, _ := s.Open(0, 2)
	if err := other.Seek(pos); err == nil || !strings.Contains(err.Error(), "subtask 0 of 3") {
		t.Errorf("Seek at another parallelism: %v", err)
	}
	if err := other.Seek([]byte{9}); !errors.Is(err, ErrBadPosition) {
		t.Errorf("Seek garbage: %v", err)
	}
}

func TestNumberOfRows(t *testing.T) {
	cols := []types.Column{{Name: "x", Type: types.Int}}
	tests := []struct {
		opts        map[string]string
		parallelism int
		want        int
	}{
		{map[string]string{"number-of-rows": "10"}, 4, 10},
		{map[string]string{"number-of-rows": "2"}, 4, 2},
		{map[string]string{"number-of-rows": "0"}, 1, 0},
		{map[string]string{"number-of-rows": "50", "fields.x.kind": "sequence", "fields.x.start": "5", "fields.x.end": "9"}, 2, 5},
	}
	for _, tc := range tests {
		tc.opts["rows-per-second"] = "1000000000"
		got := readAll(t, mustSource(t, cols, tc.opts), 1, tc.parallelism)
		if len(got) != tc.want {
			t.Errorf("%v at parallelism %d: %d rows, want %d", tc.opts, tc.parallelism, len(got), tc.want)
		}
	}
	unbounded := mustSource(t, cols, map[string]string{})
	if unbounded.Bounded() {
		t.Error("no number-of-rows and no sequence: want unbounded")
	}
}

func TestOptionErrors(t *testing.T) {
	cols := []types.Column{{Name: "n", Type: types.BigInt}, {Name: "s", Type: types.Varchar}, {Name: "k", Type: types.Int.Nullable()}}
	tests := []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"rows-per-secnd": "5"}, "unsupported option 'rows-per-secnd' (did you mean 'rows-per-second'?)"},
		{map[string]string{"fields.nope.kind": "random"}, "unsupported option 'fields.nope.kind'"},
		{map[string]string{"fields.s.min": "1"}, "unsupported option 'fields.s.min'"},
		{map[string]string{"fields.n.kind": "sequence", "fields.n.start": "1", "fields.n.end": "3", "fields.n.min": "1"}, "unsupported option 'fields.n.min'"},
		{map[string]string{"rows-per-second": "fast"}, "option 'rows-per-second': invalid value 'fast'"},
		{map[string]string{"rows-per-second": "0"}, "'rows-per-second': must be positive"},
		{map[string]string{"number-of-rows": "-1"}, "'number-of-rows': must not be negative"},
		{map[string]string{"fields.n.min": "9", "fields.n.max": "1"}, "min is greater than max"},
		{map[string]string{"fields.n.min": "x"}, "option 'fields.n.min': invalid value 'x'"},
		{map[string]string{"fields.k.max": "99999999999"}, "out of range for INT"},
		{map[string]string{"fields.n.kind": "sequence", "fields.n.start": "1"}, "option 'fields.n.end' is required for a sequence field"},
		{map[string]string{"fields.n.kind": "sequence", "fields.n.start": "5", "fields.n.end": "1"}, "start is greater than end"},
		{map[string]string{"fields.s.kind": "sequence", "fields.s.start": "1", "fields.s.end": "2"}, "'sequence' is not supported for type VARCHAR"},
		{map[string]string{"fields.s.kind": "sequential"}, "expected one of 'random', 'sequence'"},
		{map[string]string{"fields.s.null-rate": "2"}, "must be between 0 and 1"},
		{map[string]string{"fields.s.length": "-1"}, "'fields.s.length': must be between"},
	}
	for _, tc := range tests {
		_, err := NewSource(connectortest.Table("g", cols, tc.opts), connector.Env{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to contain %q", tc.opts, err, tc.want)
		}
	}
}

func TestRateLimitReturnsPromptly(t *testing.T) {
	s := mustSource(t, []types.Column{{Name: "x", Type: types.Int}}, map[string]string{"rows-per-second": "1"})
	r, _ := s.Open(0, 1)
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	b := types.NewBatch(1, 100)
	for range 5 {
		if err := r.Next(ctx, b, 100); err != nil {
			t.Fatal(err)
		}
	}
	// One row per second: five calls that each wait at most ~10 ms cannot
	// have earned more than the initial token and perhaps one more.
	if b.Len() < 1 || b.Len() > 2 {
		t.Errorf("%d rows from 5 throttled calls", b.Len())
	}
	cancel()
	if err := r.Next(ctx, b, 100); !errors.Is(err, context.Canceled) {
		t.Errorf("Next after cancel: %v", err)
	}
}

func BenchmarkDatagen(b *testing.B) {
	cols := []types.Column{{Name: "id", Type: types.BigInt}, {Name: "x", Type: types.Int}, {Name: "d", Type: types.Double}, {Name: "ts", Type: types.Timestamp}}
	s := mustSource(b, cols, map[string]string{"rows-per-second": "1000000000000"})
	r, _ := s.Open(0, 1)
	batch := types.NewBatch(len(cols), 1024)
	ctx := context.Background()
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		batch.Reset()
		if err := r.Next(ctx, batch, 1024); err != nil {
			b.Fatal(err)
		}
		rows += batch.Len()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// cancelledWhileWaiting is a context that reports no error on the first
// check and is cancelled from then on, so that Next reaches its wait.
type cancelledWhileWaiting struct {
	context.Context
	checks int
}

func (c *cancelledWhileWaiting) Done() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

func (c *cancelledWhileWaiting) Err() error {
	c.checks++
	if c.checks == 1 {
		return nil
	}
	return context.Canceled
}

func TestCancelDuringWait(t *testing.T) {
	s := mustSource(t, []types.Column{{Name: "x", Type: types.Int}}, map[string]string{"rows-per-second": "1"})
	r, _ := s.Open(0, 1)
	defer r.Close()
	b := types.NewBatch(1, 10)
	if err := r.Next(context.Background(), b, 10); err != nil || b.Len() != 1 {
		t.Fatalf("first Next: %v, %d rows (want the one initial token)", err, b.Len())
	}
	ctx := &cancelledWhileWaiting{Context: context.Background()}
	if err := r.Next(ctx, b, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("Next cancelled while throttled: %v", err)
	}
	if ctx.checks < 2 {
		t.Error("Next did not wait on the context")
	}
}

// TestTimestampsMove checks that random timestamps follow the rows: row i
// is due at base + i*1000/rows-per-second, and its timestamp lies within
// max-past before that (with max-past 0, exactly that), so an event-time
// query over datagen sees time pass.
func TestTimestampsMove(t *testing.T) {
	cols := []types.Column{{Name: "ts", Type: types.Timestamp}}
	for _, tc := range []struct {
		rps, maxPast int64
	}{{1000, 0}, {300, 0}, {2000, 5000}} {
		opts := map[string]string{"rows-per-second": fmt.Sprint(tc.rps), "number-of-rows": "5000", "fields.ts.max-past": fmt.Sprint(tc.maxPast)}
		s := mustSource(t, cols, opts)
		// at parallelism 2, so each subtask's rows are the odd or even ones
		got := map[int64]int64{}
		for sub := range 2 {
			r, err := s.Open(sub, 2)
			if err != nil {
				t.Fatal(err)
			}
			r.(*Reader).lim = newLimiter(1e12) // no pacing in the test
			b := types.NewBatch(1, 5000)
			for {
				err := r.Next(context.Background(), b, 5000)
				if err != nil && !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				if errors.Is(err, io.EOF) {
					break
				}
			}
			for k := range b.Len() {
				got[int64(sub)+2*int64(k)] = b.Row(k)[0].Int()
			}
		}
		if len(got) != 5000 {
			t.Fatalf("%d rows, want 5000", len(got))
		}
		minTS, maxTS := int64(math.MaxInt64), int64(math.MinInt64)
		for i, ts := range got {
			due := base.UnixMilli() + i*1000/tc.rps
			if ts > due || ts < due-tc.maxPast {
				t.Fatalf("rps %d, max-past %d: row %d has ts %d, want within [%d, %d]", tc.rps, tc.maxPast, i, ts, due-tc.maxPast, due)
			}
			minTS, maxTS = min(minTS, ts), max(maxTS, ts)
		}
		if span := 4999 * 1000 / tc.rps; maxTS-minTS < span-tc.maxPast {
			t.Fatalf("rps %d: timestamps span %d ms, want about %d", tc.rps, maxTS-minTS, span)
		}
	}
}
