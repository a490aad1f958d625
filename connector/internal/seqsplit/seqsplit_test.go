package seqsplit

import (
	"errors"
	"slices"
	"testing"
)

// TestRescaledSkipsWhatEarlierRunsEmitted: a run at parallelism 3 passes
// some items per subtask; after a rescale the layers skip exactly those
// items (checked against the definition: subtask i%3 passed i/3 < cursor).
func TestRescaledSkipsWhatEarlierRunsEmitted(t *testing.T) {
	cursors := []int64{4, 0, 2}
	var s Skips
	s.Set(Rescaled(nil, cursors))
	for i := int64(0); i < 40; i++ {
		want := i/3 < cursors[i%3]
		if got := s.Emitted(i); got != want {
			t.Fatalf("item %d: emitted %v, want %v", i, got, want)
		}
	}
	if got := Rescaled(nil, []int64{0, 0}); got != nil {
		t.Fatalf("a run that emitted nothing became a layer: %v", got)
	}
}

// TestLayersRoundTrip: AppendLayers and Decoder.Layers agree, and a
// truncated encoding is an error, not a panic.
func TestLayersRoundTrip(t *testing.T) {
	layers := []Layer{NewLayer([]int64{3, 1}), NewLayer([]int64{0, 5, 2})}
	b := AppendLayers(nil, layers)
	d := Decoder{Rest: b}
	got := d.Layers()
	if d.Err != nil || len(d.Rest) != 0 || !LayersEqual(got, layers) {
		t.Fatalf("decoded %v (%v, %d bytes left), want %v", got, d.Err, len(d.Rest), layers)
	}
	if !slices.Equal([]int64{got[0].Horizon, got[1].Horizon}, []int64{layers[0].Horizon, layers[1].Horizon}) {
		t.Fatalf("horizons %d, %d", got[0].Horizon, got[1].Horizon)
	}
	for n := range len(b) {
		d := Decoder{Rest: b[:n]}
		d.Layers()
		if n < len(b) && d.Err == nil && len(d.Rest) == 0 {
			t.Fatalf("truncated to %d of %d bytes: no error", n, len(b))
		}
		if d.Err != nil && !errors.Is(d.Err, ErrBad) {
			t.Fatalf("error %v does not wrap ErrBad", d.Err)
		}
	}
}
