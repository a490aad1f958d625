package datagen

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/weir-sql/weir/connector/internal/seqsplit"
)

// Positions. Global row i belongs to subtask i % p of a run at parallelism
// p; a position carries the subtask's cursor and the layers of earlier runs
// at other parallelisms (connector/internal/seqsplit), so that a rescaled
// run skips the rows they emitted.

// position is a decoded Position.
type position struct {
	cursor      int64
	subtask     int
	parallelism int
	base        int64
	layers      []seqsplit.Layer
}

const (
	positionV1 = 1 // cursor, subtask, parallelism, base
	positionV2 = 2 // v1, then the layers: count, then per layer p and p cursors
)

// ErrBadPosition reports a position Seek cannot use.
var ErrBadPosition = errors.New("datagen: invalid position")

func (p *position) encode() []byte {
	b := []byte{positionV2}
	b = binary.AppendUvarint(b, uint64(p.cursor))
	b = binary.AppendUvarint(b, uint64(p.subtask))
	b = binary.AppendUvarint(b, uint64(p.parallelism))
	b = binary.AppendVarint(b, p.base)
	b = seqsplit.AppendLayers(b, p.layers)
	return b
}

// decodePosition parses a position of version 1 or 2.
func decodePosition(b []byte) (*position, error) {
	if len(b) == 0 || (b[0] != positionV1 && b[0] != positionV2) {
		return nil, fmt.Errorf("%w: unknown version", ErrBadPosition)
	}
	d := seqsplit.Decoder{Rest: b[1:]}
	p := &position{
		cursor:      d.Count(),
		subtask:     int(d.Count()),
		parallelism: int(d.Count()),
	}
	p.base = d.Varint()
	if b[0] == positionV2 {
		p.layers = d.Layers()
	}
	if d.Err != nil || len(d.Rest) != 0 {
		return nil, fmt.Errorf("%w: truncated or trailing bytes", ErrBadPosition)
	}
	if p.parallelism < 1 || p.parallelism > seqsplit.MaxLayerWidth || p.subtask >= p.parallelism {
		return nil, fmt.Errorf("%w: subtask %d of %d", ErrBadPosition, p.subtask, p.parallelism)
	}
	return p, nil
}

// Position encodes the reader's cursor, subtask layout, timestamp base and
// the layers of earlier runs (version 2; Seek also accepts version 1,
// which has no layers).
func (r *Reader) Position() ([]byte, error) {
	p := position{cursor: r.count, subtask: r.subtask, parallelism: r.parallelism, base: r.gen.base, layers: r.skips.Layers()}
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
	r.skips.Set(p.layers)
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
		if first := decoded[0]; k > 0 && (p.base != first.base || !seqsplit.LayersEqual(p.layers, first.layers)) {
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
	r.count, r.gen.base = 0, decoded[0].base
	r.skips.Set(seqsplit.Rescaled(decoded[0].layers, cursors))
	return nil
}
