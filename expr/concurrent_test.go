package expr

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weir-sql/weir/types"
)

// TestConcurrentSharedState evaluates one expression of each kind that
// keeps state shared by the subtasks evaluating it from several goroutines
// at once, as a job's parallel subtasks do: RAND(seed)'s generator (behind
// a mutex), DATE_FORMAT's memo of its last result (atomic) and a literal
// pattern's pooled matcher (REGEXP_EXTRACT). Every result must be the one
// computed here without the shared state: the draws of all goroutines
// together are the seed's sequence, each formatted time is Go's
// formatting, each extract is Go's regexp. .ci/test runs it under -race
// (expr itself runs without).
func TestConcurrentSharedState(t *testing.T) {
	const workers, perWorker = 4, 400
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	randCall := func() Expr {
		c, err := NewCall("RAND", []Expr{NewLiteral(types.IntValue(7), types.Type{Kind: types.KindInt, NotNull: true})})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	shared := randCall()
	format, err := NewTimeCall("DATE_FORMAT", "", []Expr{NewColumn(0, types.Timestamp, "ts"), sv("yyyy-MM-dd HH:mm")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const pattern = `(&|^)channel_id=([^&]*)`
	re := regexp.MustCompile(pattern)
	extract, err := NewCall("REGEXP_EXTRACT", []Expr{NewColumn(1, types.Type{Kind: types.KindVarchar}, "url"), sv(pattern), iv(2)})
	if err != nil {
		t.Fatal(err)
	}

	draws := make([][]float64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			errs[w] = func() error {
				r := rand.New(rand.NewPCG(seed, uint64(w)))
				base := time.Date(2024, 3, 5, 7, 0, 0, 0, time.UTC).UnixMilli()
				for i := range perWorker {
					v, err := shared.Eval(nil)
					if err != nil {
						return err
					}
					draws[w] = append(draws[w], v.Float())
					// Times close together (the memo hits) and far apart
					// (it is replaced), in each goroutine's own order.
					ms := base + r.Int64N(int64(3*time.Hour/time.Millisecond))
					url := fmt.Sprintf("a=%d&channel_id=%d&b=%d", i, r.IntN(1000), w)
					row := []types.Value{types.TimestampValue(ms), types.StringValue(url)}
					got, err := format.Eval(row)
					if err != nil {
						return err
					}
					if want := time.UnixMilli(ms).UTC().Format("2006-01-02 15:04"); got.Str() != want {
						return fmt.Errorf("seed %d: DATE_FORMAT of %d: %q, want %q", seed, ms, got.Str(), want)
					}
					got, err = extract.Eval(row)
					if err != nil {
						return err
					}
					if want := re.FindStringSubmatch(url)[2]; got.IsNull() || got.Str() != want {
						return fmt.Errorf("seed %d: REGEXP_EXTRACT of %q: %v, want %q", seed, url, got, want)
					}
				}
				return nil
			}()
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The generator is shared: the goroutines' draws, together, are the
	// first workers*perWorker values of the seed's sequence (each drawn
	// once), read here from a call of its own.
	var all []float64
	for _, d := range draws {
		all = append(all, d...)
	}
	own := randCall()
	var want []float64
	for range workers * perWorker {
		v, err := own.Eval(nil)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, v.Float())
	}
	slices.Sort(all)
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Fatal("the concurrent draws of RAND(7) are not the values of its sequence, each once")
	}
}
