package exec

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// listSource is a bounded source without rows whose readers have operator
// list state: subtask s of the first run holds entries "src-s-i"; a
// restored reader records the entries it gets back. Its sink's writers do
// the same with "sink-s-i".
type listSource struct {
	mode     connector.ListStateMode
	counts   []int // entries per subtask of the first run
	prefix   string
	mu       sync.Mutex
	restored map[int][]string // subtask → entries handed back
}

func (s *listSource) record(sub int, entries [][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var e []string
	for _, b := range entries {
		e = append(e, string(b))
	}
	s.restored[sub] = e
}

func (s *listSource) entries(sub int) [][]byte {
	var out [][]byte
	if sub < len(s.counts) {
		for i := range s.counts[sub] {
			out = append(out, fmt.Appendf(nil, "%s-%d-%d", s.prefix, sub, i))
		}
	}
	return out
}

func (s *listSource) Bounded() bool { return true }
func (s *listSource) Open(sub, _ int) (connector.SourceReader, error) {
	return &listReader{s: s, sub: sub, state: s.entries(sub)}, nil
}

type listReader struct {
	s     *listSource
	sub   int
	state [][]byte
}

func (r *listReader) Next(context.Context, *types.Batch, int) error { return io.EOF }
func (r *listReader) Position() ([]byte, error)                     { return []byte{1}, nil }
func (r *listReader) Seek([]byte) error                             { return nil }
func (r *listReader) SeekAll([][]byte) error                        { return nil }
func (r *listReader) Close() error                                  { return nil }
func (r *listReader) OperatorStateMode() connector.ListStateMode    { return r.s.mode }
func (r *listReader) SnapshotOperatorState() ([][]byte, error)      { return r.state, nil }
func (r *listReader) RestoreOperatorState(e [][]byte) error {
	r.state = e
	r.s.record(r.sub, e)
	return nil
}

type listSink struct{ *listSource }

func (s listSink) AcceptsUpdates() bool { return true }
func (s listSink) Parallelism() int     { return 0 }
func (s listSink) Open(sub, _ int) (connector.SinkWriter, error) {
	return &listWriter{listReader{s: s.listSource, sub: sub, state: s.entries(sub)}}, nil
}

type listWriter struct{ listReader }

func (w *listWriter) Write(*types.Batch) error { return nil }
func (w *listWriter) Flush() error             { return nil }

// TestOperatorListStateRedistribution checkpoints a source and a sink
// with operator list state at parallelism 3 and restores them at 3, 2 and
// 5: with even split every entry comes back exactly once, dealt
// round-robin (each subtask its own at an unchanged parallelism); with
// union every subtask gets every entry.
func TestOperatorListStateRedistribution(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	counts := []int{rng.IntN(6), 1 + rng.IntN(6), rng.IntN(6)}
	for _, mode := range []connector.ListStateMode{connector.EvenSplit, connector.Union} {
		t.Run(mode.String(), func(t *testing.T) {
			var first *checkpoint.Checkpoint
			run := func(par int, counts []int, restore bool) (*listSource, *listSource) {
				t.Helper()
				src := &listSource{mode: mode, counts: counts, prefix: "src", restored: map[int][]string{}}
				snk := &listSource{mode: connector.EvenSplit, counts: counts, prefix: "sink", restored: map[int][]string{}}
				if mode == connector.EvenSplit {
					snk.mode = connector.Union
				}
				g := &JobGraph{Name: "lists", Vertices: []*Vertex{{ID: "src", Name: "Source", Parallelism: par,
					Source: src, SourceWidth: 1, SourceName: "src", Sink: listSink{snk}, SinkName: "out"}}}
				ck := testCheckpointing(t, t.TempDir(), "lists", nil, 0)
				if restore {
					ck.Restore = first
				}
				j, err := Start(context.Background(), g, Options{Checkpoint: ck})
				if err != nil {
					t.Fatal(err)
				}
				if err := j.Wait(); err != nil {
					t.Fatal(err)
				}
				if !restore {
					c, _, err := ck.Storage.Latest()
					if err != nil {
						t.Fatal(err)
					}
					if len(c.Meta.OperatorLists) != 2*par {
						t.Fatalf("the checkpoint has %d subtask lists, want %d", len(c.Meta.OperatorLists), 2*par)
					}
					first = c
				}
				return src, snk
			}
			run(3, counts, false)
			var all []string
			for sub, n := range counts {
				for i := range n {
					all = append(all, fmt.Sprintf("-%d-%d", sub, i))
				}
			}
			for _, par := range []int{3, 2, 5} {
				src, snk := run(par, nil, true)
				for _, ls := range []*listSource{src, snk} {
					check(t, seed, ls, par, all)
				}
			}
		})
	}
}

// check compares what the subtasks of a restored run got back with the
// entries of the first run (all, without the prefix).
func check(t *testing.T, seed uint64, ls *listSource, par int, all []string) {
	t.Helper()
	if len(ls.restored) != par {
		t.Fatalf("seed %d: %s at parallelism %d: %d subtasks restored, want all", seed, ls.prefix, par, len(ls.restored))
	}
	want := make([]string, len(all))
	for i, e := range all {
		want[i] = ls.prefix + e
	}
	switch ls.mode {
	case connector.Union:
		for sub := range par {
			if got := ls.restored[sub]; !slices.Equal(got, want) {
				t.Fatalf("seed %d: %s (union) at parallelism %d: subtask %d got %v, want every entry %v", seed, ls.prefix, par, sub, got, want)
			}
		}
	case connector.EvenSplit:
		var got []string
		for sub := range par {
			e := ls.restored[sub]
			if par == 3 {
				// Unchanged parallelism: each subtask its own entries.
				var own []string
				for _, w := range want {
					if w[len(ls.prefix)+1:len(ls.prefix)+2] == fmt.Sprint(sub) {
						own = append(own, w)
					}
				}
				if !slices.Equal(e, own) {
					t.Fatalf("seed %d: %s at parallelism 3: subtask %d got %v, want its own %v", seed, ls.prefix, sub, e, own)
				}
			} else if n := len(e); n < len(want)/par || n > (len(want)+par-1)/par {
				t.Fatalf("seed %d: %s at parallelism %d: subtask %d got %d of %d entries, not an even split", seed, ls.prefix, par, sub, n, len(want))
			}
			got = append(got, e...)
		}
		slices.Sort(got)
		w := slices.Clone(want)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Fatalf("seed %d: %s at parallelism %d: the subtasks got %v together, want each of %v once", seed, ls.prefix, par, got, w)
		}
	}
}
