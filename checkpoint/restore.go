package checkpoint

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weir-sql/weir/types"
)

// CheckOperators compares the stateful operators of a checkpoint with those
// of the job being restored (their ids). State of an operator the job no
// longer has is an error naming every such operator, unless
// allowNonRestoredState is set, in which case that state is dropped.
// Operators of the job without state in the checkpoint start empty.
func (m *Metadata) CheckOperators(jobOperatorIDs []string, allowNonRestoredState bool) error {
	if allowNonRestoredState {
		return nil
	}
	var missing []string
	for _, op := range m.Operators {
		if !slices.Contains(jobOperatorIDs, op.ID) {
			missing = append(missing, fmt.Sprintf("%q", op.ID))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s %d holds state of operators the query no longer has: %s (allow dropping it to restore anyway)",
			m.Kind, m.CheckpointID, strings.Join(missing, ", "))
	}
	return nil
}

// StateDirsForKeyGroups returns the state folders of an operator's old
// subtasks that own any of key groups [first, last], in subtask order, for
// statestore.RestoreKeyGroups when the parallelism changed. It returns nil
// if the checkpoint holds no state for the operator; finished subtasks
// (SubtaskState.Finished) have none.
func (c *Checkpoint) StateDirsForKeyGroups(operatorID string, first, last int) ([]string, error) {
	op := c.Meta.Operator(operatorID)
	if op == nil {
		return nil, nil
	}
	maxPar := c.Meta.MaxParallelism
	if maxPar <= 0 {
		maxPar = types.DefaultMaxParallelism
	}
	if first < 0 || last >= maxPar || first > last {
		return nil, fmt.Errorf("key groups [%d, %d] outside [0, %d)", first, last, maxPar)
	}
	if op.Parallelism <= 0 {
		return nil, fmt.Errorf("operator %q: parallelism %d", operatorID, op.Parallelism)
	}
	want := map[int]bool{}
	for kg := first; kg <= last; kg++ {
		want[types.SubtaskForKeyGroup(kg, op.Parallelism, maxPar)] = true
	}
	var dirs []string
	for _, st := range op.Subtasks {
		if want[st.Subtask] {
			if !st.Finished { // a finished subtask wrote no state
				dirs = append(dirs, filepath.Join(c.Path, st.Dir))
			}
			delete(want, st.Subtask)
		}
	}
	if len(want) > 0 {
		return nil, fmt.Errorf("%w: operator %q lacks the state of subtasks owning key groups [%d, %d]",
			ErrCorruptCheckpoint, operatorID, first, last)
	}
	return dirs, nil
}
