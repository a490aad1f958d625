package nexmark

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weir-sql/weir/connector/internal/seqsplit"
	"github.com/weir-sql/weir/connector/nexmark/model"
)

// Positions. Subtask s of a run at parallelism p passes events s, s+p, ...
// and its position is its cursor: how many of them it passed. A run
// restored at another parallelism must skip the events that earlier runs
// emitted, so a position also carries the progress of those runs, one
// layer each: layer (p, cursors) emitted event n iff n/p < cursors[n%p].
// A restore at the same parallelism keeps the layers; one at another adds
// the run it restores as a layer.

// position is a decoded Position.
type position struct {
	cursor      int64
	subtask     int
	parallelism int
	base        int64 // event 0's time
	wallBase    int64 // when event 0 was due (rate.limited)
	layers      []seqsplit.Layer
}

const (
	positionVersion = 1
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
	b = seqsplit.AppendLayers(b, p.layers)
	return b
}

func decodePosition(b []byte) (*position, error) {
	if len(b) == 0 || b[0] != positionVersion {
		return nil, fmt.Errorf("%w: unknown version", ErrBadPosition)
	}
	d := seqsplit.Decoder{Rest: b[1:]}
	p := &position{cursor: d.Count(), subtask: int(d.Count()), parallelism: int(d.Count())}
	p.base, p.wallBase = d.Varint(), d.Varint()
	p.layers = d.Layers()
	if d.Err != nil || len(d.Rest) != 0 {
		return nil, fmt.Errorf("%w: truncated or trailing bytes", ErrBadPosition)
	}
	if p.parallelism < 1 || p.parallelism > seqsplit.MaxLayerWidth || p.subtask >= p.parallelism {
		return nil, fmt.Errorf("%w: subtask %d of %d", ErrBadPosition, p.subtask, p.parallelism)
	}
	return p, nil
}

// Position encodes the cursor, the subtask layout, the timeline's base
// times and the layers of earlier runs.
func (r *Reader) Position() ([]byte, error) {
	p := position{cursor: r.count, subtask: r.subtask, parallelism: r.parallelism, base: r.base, wallBase: r.wallBase, layers: r.skips.Layers()}
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
	r.skips.Set(p.layers)
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
		if k > 0 && (p.base != first.base || p.wallBase != first.wallBase || !seqsplit.LayersEqual(p.layers, first.layers)) {
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
	r.count = 0
	r.setBase(decoded[0].base, decoded[0].wallBase)
	r.skips.Set(seqsplit.Rescaled(decoded[0].layers, cursors))
	return nil
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
		cs := make([]string, len(l.Cursors))
		for i, c := range l.Cursors {
			cs[i] = fmt.Sprint(c)
		}
		fmt.Fprintf(&b, "\nskips the events below %d that an earlier run at parallelism %d emitted (events per subtask: %s)",
			l.Horizon, l.P, strings.Join(cs, ", "))
	}
	return b.String(), nil
}
