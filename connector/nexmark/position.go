package nexmark

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weir-sql/weir/connector/nexmark/model"
)

// Positions. Subtask s of a run at parallelism p passes events s, s+p, ...
// and its position is its cursor: how many of them it passed. A run
// restored at another parallelism must skip the events that earlier runs
// emitted, so a position also carries the progress of those runs, one
// layer each: layer (p, cursors) emitted event n iff n/p < cursors[n%p].
// A restore at the same parallelism keeps the layers; one at another adds
// the run it restores as a layer.

// layer is the progress of all subtasks of an earlier run.
type layer struct {
	p       int
	cursors []int64
	horizon int64 // no event at or above it was emitted
}

func newLayer(cursors []int64) layer {
	l := layer{p: len(cursors), cursors: cursors}
	for s, c := range cursors {
		if c > 0 {
			l.horizon = max(l.horizon, int64(s)+(c-1)*int64(l.p)+1)
		}
	}
	return l
}

func (l *layer) emitted(n int64) bool {
	return n < l.horizon && n/int64(l.p) < l.cursors[n%int64(l.p)]
}

// position is a decoded Position.
type position struct {
	cursor      int64
	subtask     int
	parallelism int
	base        int64 // event 0's time
	wallBase    int64 // when event 0 was due (rate.limited)
	layers      []layer
}

const (
	positionVersion = 1
	maxLayerWidth   = 1 << 16
)

// ErrBadPosition reports a position Seek cannot use.
var ErrBadPosition = errors.New("nexmark: invalid position")

func (p *position) encode() []byte {
	b := []byte{positionVersion}
	b = binary.AppendUvarint(b, uint64(p.cursor))
	b = binary.AppendUvarint(b, uint64(p.subtask))
	b = binary.AppendUvarint(b, uint64(p.parallelism))
	b = binary.AppendVarint(b, p.base)
	b = binary.AppendVarint(b, p.wallBase)
	b = binary.AppendUvarint(b, uint64(len(p.layers)))
	for _, l := range p.layers {
		b = binary.AppendUvarint(b, uint64(l.p))
		for _, c := range l.cursors {
			b = binary.AppendUvarint(b, uint64(c))
		}
	}
	return b
}

func decodePosition(b []byte) (*position, error) {
	if len(b) == 0 || b[0] != positionVersion {
		return nil, fmt.Errorf("%w: unknown version", ErrBadPosition)
	}
	d := decoder{rest: b[1:]}
	p := &position{cursor: d.count(), subtask: int(d.count()), parallelism: int(d.count())}
	p.base, p.wallBase = d.varint(), d.varint()
	layers := d.count()
	for k := int64(0); k < layers && d.err == nil; k++ {
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

// Position encodes the cursor, the subtask layout, the timeline's base
// times and the layers of earlier runs.
func (r *Reader) Position() ([]byte, error) {
	p := position{cursor: r.count, subtask: r.subtask, parallelism: r.parallelism, base: r.base, wallBase: r.wallBase, layers: r.layers}
	return p.encode(), nil
}

// Seek restores a position of the same subtask at the same parallelism;
// SeekAll restores at another one. The restored reader continues the
// position's timeline (its base time), whatever 'base-time' says now.
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
		return fmt.Errorf("%w: %d events passed, beyond this subtask's %d ('events.num' changed?)", ErrBadPosition, p.cursor, r.quota)
	}
	r.count = p.cursor
	r.setBase(p.base, p.wallBase)
	r.setLayers(p.layers)
	return nil
}

// SeekAll restores the positions of all subtasks of an earlier run
// (positions[k] from subtask k) at any parallelism: this reader then emits
// its events that no earlier run emitted.
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
		first := decoded[0]
		if k > 0 && (p.base != first.base || p.wallBase != first.wallBase || !layersEqual(p.layers, first.layers)) {
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
	r.count = 0
	r.setBase(decoded[0].base, decoded[0].wallBase)
	r.setLayers(layers)
	return nil
}

func layersEqual(a, b []layer) bool {
	return slices.EqualFunc(a, b, func(x, y layer) bool { return x.p == y.p && slices.Equal(x.cursors, y.cursors) })
}

// setBase moves the reader onto a restored timeline.
func (r *Reader) setBase(base, wallBase int64) {
	if base != r.base {
		cfg := r.src.cfg.model
		cfg.BaseTime = base
		r.gen = model.NewGenerator(cfg, r.src.tables)
	}
	r.base, r.wallBase = base, wallBase
}

func (r *Reader) setLayers(layers []layer) {
	r.layers, r.horizon = layers, 0
	for _, l := range layers {
		r.horizon = max(r.horizon, l.horizon)
	}
}

// emittedBefore reports whether an earlier run emitted event n.
func (r *Reader) emittedBefore(n int64) bool {
	if n >= r.horizon {
		return false
	}
	for k := range r.layers {
		if r.layers[k].emitted(n) {
			return true
		}
	}
	return false
}

// DescribePosition says what a reader's position (from Position) means,
// for `weir checkpoints inspect`: the subtask, the events it passed and the
// next event number, the timeline's base, and the earlier runs whose
// events it skips.
func DescribePosition(pos []byte) (string, error) {
	p, err := decodePosition(pos)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	next := int64(p.subtask) + p.cursor*int64(p.parallelism)
	fmt.Fprintf(&b, "subtask %d of %d: %d events passed, next event %d; base time %s (event 0's time)",
		p.subtask, p.parallelism, p.cursor, next, time.UnixMilli(p.base).UTC().Format("2006-01-02T15:04:05.000Z"))
	for _, l := range p.layers {
		cs := make([]string, len(l.cursors))
		for i, c := range l.cursors {
			cs[i] = fmt.Sprint(c)
		}
		fmt.Fprintf(&b, "\nskips the events below %d that an earlier run at parallelism %d emitted (events per subtask: %s)",
			l.horizon, l.p, strings.Join(cs, ", "))
	}
	return b.String(), nil
}
