package state

import (
	"fmt"

	"github.com/weir-sql/weir/statestore"
	"github.com/weir-sql/weir/types"
)

// MigrateLayout1 returns the statestore.Rewrite that moves state written
// in key layout 1 into this package's layout (KeyLayout), keeping only key
// groups [first, last] of maxParallelism. Layout 1 is that of
// statestore.Table: op | key group (types.HashKey over types.AppendKey) |
// key (types.AppendKey of each key value) | state name | len(state name).
// The key is re-encoded with AppendValue, its key group is computed anew
// (KeyGroup), and the entry moves to op | key group | len(state name) |
// state name | key, where Records and the state handles read it. Values
// are kept as they are.
//
// Used at restore by every new subtask over the snapshots of all old
// subtasks, it is a rescale in which every old subtask overlaps every new
// one.
func MigrateLayout1(first, last, maxParallelism int) statestore.Rewrite {
	var key []byte
	return func(dst, old []byte) ([]byte, bool, error) {
		op, _, k, name, err := statestore.SplitTableKey(old)
		if err != nil {
			return nil, false, err
		}
		if len(name) == 0 || len(name) > 200 {
			return nil, false, fmt.Errorf("layout 1 key %x: state name of %d bytes", old, len(name))
		}
		key = append(key[:0], byte(len(name)))
		key = append(key, name...)
		n := len(key)
		for rest := k; len(rest) > 0; {
			v, r, err := types.DecodeKey(rest)
			if err != nil {
				return nil, false, fmt.Errorf("layout 1 key %x: %w", old, err)
			}
			key = AppendValue(key, v)
			rest = r
		}
		kg := KeyGroup(key[n:], maxParallelism)
		if kg < first || kg > last {
			return nil, false, nil
		}
		return statestore.AppendSpaceKey(dst, op, kg, key), true, nil
	}
}
