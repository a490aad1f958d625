package checkpoint

import (
	"fmt"
	"sort"
)

// List state modes of OperatorList.Mode.
const (
	// ListSplit deals the entries round-robin on rescale (each to one subtask).
	ListSplit = "split"
	// ListUnion gives every subtask all entries on restore.
	ListUnion = "union"
)

// OperatorList is the operator (non-keyed) list state of one source or
// sink subtask: opaque entries the connector keeps, redistributed on
// restore according to Mode (see OperatorListShare).
type OperatorList struct {
	// Owner names the source or sink: "source:<vertex id>" or
	// "sink:<sink id>".
	Owner   string   `json:"owner"`
	Subtask int      `json:"subtask"`
	Mode    string   `json:"mode"`
	Entries [][]byte `json:"entries"`
}

func (m *Metadata) checkLists() error {
	seen := map[string]string{}
	type key struct {
		owner string
		sub   int
	}
	dup := map[key]bool{}
	for _, l := range m.OperatorLists {
		if l.Mode != ListSplit && l.Mode != ListUnion {
			return fmt.Errorf("operator list state of %s subtask %d: unknown mode %q", l.Owner, l.Subtask, l.Mode)
		}
		if l.Subtask < 0 {
			return fmt.Errorf("operator list state of %s: subtask %d", l.Owner, l.Subtask)
		}
		if mode, ok := seen[l.Owner]; ok && mode != l.Mode {
			return fmt.Errorf("operator list state of %s: modes %q and %q", l.Owner, mode, l.Mode)
		}
		seen[l.Owner] = l.Mode
		if dup[key{l.Owner, l.Subtask}] {
			return fmt.Errorf("operator list state of %s subtask %d listed twice", l.Owner, l.Subtask)
		}
		dup[key{l.Owner, l.Subtask}] = true
	}
	return nil
}

// OperatorListShare returns the entries of owner's operator list state
// that subtask gets out of parallelism when the job is restored from m, and
// whether m holds any list state of owner (a fresh owner gets none). With
// mode "union" every subtask gets every entry, in old-subtask order. With
// "split" at the parallelism the state was taken at, each subtask gets its
// own entries back; at another, the entries of all old subtasks, in
// old-subtask order, are dealt round-robin: entry i goes to subtask
// i mod parallelism, so each entry goes to exactly one subtask.
func (m *Metadata) OperatorListShare(owner string, subtask, parallelism int) ([][]byte, bool) {
	var lists []OperatorList
	for _, l := range m.OperatorLists {
		if l.Owner == owner {
			lists = append(lists, l)
		}
	}
	if len(lists) == 0 {
		return nil, false
	}
	sort.Slice(lists, func(i, j int) bool { return lists[i].Subtask < lists[j].Subtask })
	oldPar := lists[len(lists)-1].Subtask + 1
	out := [][]byte{}
	if lists[0].Mode == ListSplit && oldPar == parallelism {
		for _, l := range lists {
			if l.Subtask == subtask {
				out = append(out, l.Entries...)
			}
		}
		return out, true
	}
	i := 0
	for _, l := range lists {
		for _, e := range l.Entries {
			if lists[0].Mode == ListUnion || i%parallelism == subtask {
				out = append(out, e)
			}
			i++
		}
	}
	return out, true
}
