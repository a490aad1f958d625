package datagen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Positions. Global row i belongs to subtask i % p of a run at parallelism
// p, and a subtask walks its rows in increasing i with a cursor: the number
// of its rows it has passed. A run restored at another parallelism must not
// emit the rows the earlier runs emitted, so a position carries the layers
// of the earlier runs: layer (p, cursors) covers row i iff
// i/p < cursors[i%p]. A row is skipped iff a layer covers it. Layers grow
// by one per rescale only; a restore at the same parallelism keeps them.

// layer is the progress of all subtasks of an earlier run.
type layer struct {
	p       int
	cursors []int64
	horizon int64 // no row at or above it is covered
}

func newLayer(cursors []int64) layer {
	l := layer{p: len(cursors), cursors: cursors}
	for k, c := range cursors {
		if c > 0 {
			l.horizon = max(l.horizon, int64(k)+(c-1)*int64(l.p)+1)
		}
	}
	return l
}

// covers reports whether the layer's run emitted row i.
func (l *layer) covers(i int64) bool {
	return i < l.horizon && i/int64(l.p) < l.cursors[i%int64(l.p)]
}

func layersEqual(a, b []layer) bool {
	return slices.EqualFunc(a, b, func(x, y layer) bool { return x.p == y.p && slices.Equal(x.cursors, y.cursors) })
}

// position is a decoded Position.
type position struct {
	cursor      int64
	subtask     int
	parallelism int
	base        int64
	layers      []layer
}

const (
	positionV1 = 1 // cursor, subtask, parallelism, base
	positionV2 = 2 // v1, then the layers: count, then per layer p and p cursors
	// maxLayerWidth bounds a decoded layer's parallelism.
	maxLayerWidth = 1 << 16
)

// ErrBadPosition reports a position Seek cannot use.
var ErrBadPosition = errors.New("datagen: invalid position")

func (p *position) encode() []byte {
	b := []byte{positionV2}
	b = binary.AppendUvarint(b, uint64(p.cursor))
	b = binary.AppendUvarint(b, uint64(p.subtask))
	b = binary.AppendUvarint(b, uint64(p.parallelism))
	b = binary.AppendVarint(b, p.base)
	b = binary.AppendUvarint(b, uint64(len(p.layers)))
	for _, l := range p.layers {
		b = binary.AppendUvarint(b, uint64(l.p))
		for _, c := range l.cursors {
			b = binary.AppendUvarint(b, uint64(c))
		}
	}
	return b
}

// decodePosition parses a position of version 1 or 2.
func decodePosition(b []byte) (*position, error) {
	if len(b) == 0 || (b[0] != positionV1 && b[0] != positionV2) {
		return nil, fmt.Errorf("%w: unknown version", ErrBadPosition)
	}
	d := decoder{rest: b[1:]}
	p := &position{
		cursor:      d.count(),
		subtask:     int(d.count()),
		parallelism: int(d.count()),
	}
	p.base = d.varint()
	if b[0] == positionV2 {
		n := d.count()
		for k := int64(0); k < n && d.err == nil; k++ {
			width := d.count()
			if width < 1 || width > maxLayerWidth || width > int64(len(d.rest)) {
				return nil, fmt.Errorf("%w: bad layer", ErrBadPosition)
			}
			cursors := make([]int64, width)
			for c := range cursors {
				cursors[c] = d.count()
			}
			p.layers = append(p.layers, newLayer(cursors))
		}
	}
	if d.err != nil || len(d.rest) != 0 {
		return nil, fmt.Errorf("%w: truncated or trailing bytes", ErrBadPosition)
	}
	if p.parallelism < 1 || p.parallelism > maxLayerWidth || p.subtask >= p.parallelism {
		return nil, fmt.Errorf("%w: subtask %d of %d", ErrBadPosition, p.subtask, p.parallelism)
	}
	return p, nil
}

// decoder reads varints, remembering the first error.
type decoder struct {
	rest []byte
	err  error
}

// count reads a uvarint that must fit a non-negative int64.
func (d *decoder) count() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.rest)
	if n <= 0 || v > 1<<62 {
		d.err = ErrBadPosition
		return 0
	}
	d.rest = d.rest[n:]
	return int64(v)
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.rest)
	if n <= 0 {
		d.err = ErrBadPosition
		return 0
	}
	d.rest = d.rest[n:]
	return v
}

// Position encodes the reader's cursor, subtask layout, timestamp base and
// the layers of earlier runs (version 2; Seek also accepts version 1,
// which has no layers).
func (r *Reader) Position() ([]byte, error) {
	p := position{cursor: r.count, subtask: r.subtask, parallelism: r.parallelism, base: r.gen.base, layers: r.layers}
	return p.encode(), nil
}

// Seek restores a position from Position. It must come from the same
// subtask at the same parallelism; SeekAll restores at another one.
func (r *Reader) Seek(pos []byte) error {
	p, err := decodePosition(pos)
	if err != nil {
		return err
	}
	if p.subtask != r.subtask || p.parallelism != r.parallelism {
		return fmt.Errorf("%w: taken by subtask %d of %d, restoring subtask %d of %d (use SeekAll to change parallelism)",
			ErrBadPosition, p.subtask, p.parallelism, r.subtask, r.parallelism)
	}
	if r.quota >= 0 && p.cursor > r.quota {
		return fmt.Errorf("%w: row count %d beyond this subtask's %d rows", ErrBadPosition, p.cursor, r.quota)
	}
	r.count, r.gen.base = p.cursor, p.base
	r.setLayers(p.layers)
	return nil
}

// SeekAll restores the positions of all subtasks of an earlier run
// (positions[k] from subtask k), at any parallelism: this reader then
// emits its rows that no earlier run emitted.
func (r *Reader) SeekAll(positions [][]byte) error {
	if len(positions) == 0 {
		return fmt.Errorf("%w: no positions", ErrBadPosition)
	}
	decoded := make([]*position, len(positions))
	for k, b := range positions {
		p, err := decodePosition(b)
		if err != nil {
			return fmt.Errorf("position of subtask %d: %w", k, err)
		}
		if p.subtask != k || p.parallelism != len(positions) {
			return fmt.Errorf("%w: position %d of %d was taken by subtask %d of %d", ErrBadPosition, k, len(positions), p.subtask, p.parallelism)
		}
		if first := decoded[0]; k > 0 && (p.base != first.base || !layersEqual(p.layers, first.layers)) {
			return fmt.Errorf("%w: subtask %d's position belongs to another run than subtask 0's", ErrBadPosition, k)
		}
		decoded[k] = p
	}
	if len(positions) == r.parallelism {
		return r.Seek(positions[r.subtask])
	}
	cursors := make([]int64, len(decoded))
	for k, p := range decoded {
		cursors[k] = p.cursor
	}
	layers := decoded[0].layers
	if slices.ContainsFunc(cursors, func(c int64) bool { return c > 0 }) {
		layers = append(slices.Clip(layers), newLayer(cursors))
	}
	r.count, r.gen.base = 0, decoded[0].base
	r.setLayers(layers)
	return nil
}

// setLayers installs the layers of earlier runs and their common horizon.
func (r *Reader) setLayers(layers []layer) {
	r.layers, r.horizon = layers, 0
	for _, l := range layers {
		r.horizon = max(r.horizon, l.horizon)
	}
}

// emitted reports whether an earlier run emitted row i.
func (r *Reader) emitted(i int64) bool {
	if i >= r.horizon {
		return false
	}
	for k := range r.layers {
		if r.layers[k].covers(i) {
			return true
		}
	}
	return false
}
