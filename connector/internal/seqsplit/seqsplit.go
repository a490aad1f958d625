// Package seqsplit is the restore bookkeeping of sources that split a
// sequence of numbered items (rows, events) across subtasks: item i
// belongs to subtask i % p of a run at parallelism p, and a subtask walks
// its items in increasing i with a cursor (how many of its items it has
// passed). A run restored at another parallelism must not emit again what
// earlier runs emitted, so a position carries the progress of those runs,
// one Layer each: layer (p, cursors) emitted item i iff
// i/p < cursors[i%p]. Layers grow by one per rescale; a restore at the
// same parallelism keeps them. datagen and nexmark use it.
package seqsplit

import (
	"encoding/binary"
	"errors"
	"slices"
)

// MaxLayerWidth bounds a decoded layer's parallelism.
const MaxLayerWidth = 1 << 16

// ErrBad is wrapped by decoding errors; callers wrap it in their own
// position error.
var ErrBad = errors.New("bad sequence position")

// Layer is the progress of all subtasks of an earlier run.
type Layer struct {
	P       int
	Cursors []int64
	Horizon int64 // no item at or above it was emitted
}

// NewLayer is the layer of a run whose subtask k passed cursors[k] items.
func NewLayer(cursors []int64) Layer {
	l := Layer{P: len(cursors), Cursors: cursors}
	for k, c := range cursors {
		if c > 0 {
			l.Horizon = max(l.Horizon, int64(k)+(c-1)*int64(l.P)+1)
		}
	}
	return l
}

// Covers reports whether the layer's run emitted item i.
func (l *Layer) Covers(i int64) bool {
	return i < l.Horizon && i/int64(l.P) < l.Cursors[i%int64(l.P)]
}

// LayersEqual reports whether a and b describe the same earlier runs.
func LayersEqual(a, b []Layer) bool {
	return slices.EqualFunc(a, b, func(x, y Layer) bool { return x.P == y.P && slices.Equal(x.Cursors, y.Cursors) })
}

// Rescaled returns the layers of a run restored at another parallelism
// from a run with the given layers whose subtask k passed cursors[k]
// items: that run becomes a layer, unless it emitted nothing.
func Rescaled(layers []Layer, cursors []int64) []Layer {
	if slices.ContainsFunc(cursors, func(c int64) bool { return c > 0 }) {
		return append(slices.Clip(layers), NewLayer(cursors))
	}
	return layers
}

// Skips is what a reader skips: the items earlier runs emitted.
type Skips struct {
	layers  []Layer
	horizon int64 // no item at or above it was emitted by a layer
}

// Set installs the layers of earlier runs.
func (s *Skips) Set(layers []Layer) {
	s.layers, s.horizon = layers, 0
	for _, l := range layers {
		s.horizon = max(s.horizon, l.Horizon)
	}
}

// Layers returns the installed layers.
func (s *Skips) Layers() []Layer { return s.layers }

// Emitted reports whether an earlier run emitted item i.
func (s *Skips) Emitted(i int64) bool {
	if i >= s.horizon {
		return false
	}
	for k := range s.layers {
		if s.layers[k].Covers(i) {
			return true
		}
	}
	return false
}

// AppendLayers encodes layers: their count, then per layer P and its P
// cursors, as uvarints.
func AppendLayers(b []byte, layers []Layer) []byte {
	b = binary.AppendUvarint(b, uint64(len(layers)))
	for _, l := range layers {
		b = binary.AppendUvarint(b, uint64(l.P))
		for _, c := range l.Cursors {
			b = binary.AppendUvarint(b, uint64(c))
		}
	}
	return b
}

// Decoder reads varints, remembering the first error.
type Decoder struct {
	Rest []byte
	Err  error
}

// Count reads a uvarint that must fit a non-negative int64.
func (d *Decoder) Count() int64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.Rest)
	if n <= 0 || v > 1<<62 {
		d.Err = ErrBad
		return 0
	}
	d.Rest = d.Rest[n:]
	return int64(v)
}

// Varint reads a varint.
func (d *Decoder) Varint() int64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Varint(d.Rest)
	if n <= 0 {
		d.Err = ErrBad
		return 0
	}
	d.Rest = d.Rest[n:]
	return v
}

// Layers reads what AppendLayers wrote.
func (d *Decoder) Layers() []Layer {
	var layers []Layer
	n := d.Count()
	for k := int64(0); k < n && d.Err == nil; k++ {
		width := d.Count()
		if width < 1 || width > MaxLayerWidth || width > int64(len(d.Rest)) {
			d.Err = ErrBad
			return nil
		}
		cursors := make([]int64, width)
		for c := range cursors {
			cursors[c] = d.Count()
		}
		layers = append(layers, NewLayer(cursors))
	}
	return layers
}
