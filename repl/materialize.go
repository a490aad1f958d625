package repl

import (
	"fmt"

	"github.com/weir-sql/weir/types"
)

// Materializer applies a changelog (+I, -U, +U, -D) to a list of rows: the
// table a query's result is at this moment. Rows keep the position they
// were first inserted at; an update (-U followed by +U) replaces its row in
// place, so a grouped result does not jump around while it changes.
type Materializer struct {
	width int
	slots [][]types.Value  // display order; nil marks a removed row
	index map[string][]int // encoded row → its slots
	live  int              // non-nil slots
	// hole is the slot a -U just emptied, for the +U that follows it.
	hole    int
	keyBuf  []byte
	arena   []types.Value // storage rows are carved from
	changes int64
}

// NewMaterializer returns an empty table of rows of width columns.
func NewMaterializer(width int) *Materializer {
	return &Materializer{width: width, index: map[string][]int{}, hole: -1}
}

// Len returns the number of rows.
func (m *Materializer) Len() int { return m.live }

// Changes returns the number of changelog rows applied so far.
func (m *Materializer) Changes() int64 { return m.changes }

// ApplyBatch applies every row of b.
func (m *Materializer) ApplyBatch(b *types.Batch) error {
	for i := range b.Len() {
		if err := m.Apply(b.Kinds[i], b.Row(i)); err != nil {
			return err
		}
	}
	return nil
}

// Apply applies one changelog row. Retracting a row that is not in the
// table is an error (the changelog is inconsistent).
func (m *Materializer) Apply(kind types.RowKind, row []types.Value) error {
	if len(row) != m.width {
		return fmt.Errorf("changelog row has %d columns, want %d", len(row), m.width)
	}
	m.changes++
	m.keyBuf = m.keyBuf[:0]
	for _, v := range row {
		m.keyBuf = types.AppendKey(m.keyBuf, v)
	}
	if kind.IsRetraction() {
		slots := m.index[string(m.keyBuf)]
		if len(slots) == 0 {
			return fmt.Errorf("changelog retracts a row that is not in the result: %s", types.FormatRow(kind, row))
		}
		at := slots[len(slots)-1]
		if len(slots) == 1 {
			delete(m.index, string(m.keyBuf))
		} else {
			m.index[string(m.keyBuf)] = slots[:len(slots)-1]
		}
		m.slots[at] = nil
		m.live--
		m.hole = -1
		if kind == types.UpdateBefore {
			m.hole = at
		}
		m.compact()
		return nil
	}
	at := len(m.slots)
	if kind == types.UpdateAfter && m.hole >= 0 {
		at = m.hole
	}
	m.hole = -1
	stored := m.store(row)
	if at == len(m.slots) {
		m.slots = append(m.slots, stored)
	} else {
		m.slots[at] = stored
	}
	m.index[string(m.keyBuf)] = append(m.index[string(m.keyBuf)], at)
	m.live++
	return nil
}

// store copies row into the arena, which grows in chunks so that a row does
// not cost an allocation of its own.
func (m *Materializer) store(row []types.Value) []types.Value {
	if len(m.arena)+m.width > cap(m.arena) {
		m.arena = make([]types.Value, 0, max(256*m.width, m.width))
	}
	n := len(m.arena)
	m.arena = append(m.arena, row...)
	return m.arena[n : n+m.width : n+m.width]
}

// compact drops removed slots once they outnumber the live rows, keeping
// the order of the others.
func (m *Materializer) compact() {
	if len(m.slots)-m.live <= max(m.live, 64) || m.hole >= 0 {
		return
	}
	kept := m.slots[:0]
	clear(m.index)
	for _, r := range m.slots {
		if r == nil {
			continue
		}
		m.keyBuf = m.keyBuf[:0]
		for _, v := range r {
			m.keyBuf = types.AppendKey(m.keyBuf, v)
		}
		m.index[string(m.keyBuf)] = append(m.index[string(m.keyBuf)], len(kept))
		kept = append(kept, r)
	}
	clear(m.slots[len(kept):])
	m.slots = kept
}

// Rows calls f for each row in display order until f returns false.
func (m *Materializer) Rows(f func(row []types.Value) bool) {
	for _, r := range m.slots {
		if r != nil && !f(r) {
			return
		}
	}
}
