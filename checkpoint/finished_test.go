package checkpoint

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestFinishedSubtasks: an operator whose subtasks finished writes no state
// folders (SubtaskState.Finished). Such a checkpoint completes without
// listing files, loads as valid, has no folder for those subtasks (for a
// restore at the same parallelism or rescaled), is copied into a savepoint
// and inspected; a finished subtask that names a folder is corrupt.
func TestFinishedSubtasks(t *testing.T) {
	st, _ := newStorage(t, OSFS{})
	p, err := st.Begin(3)
	must(t, err)
	m := testMeta(3)
	m.Operators = append(m.Operators, OperatorState{ID: "join", Name: "Join", Parallelism: 2,
		Subtasks: []SubtaskState{{Subtask: 0, Finished: true}, {Subtask: 1, Finished: true}}})
	for sub := 0; sub < 2; sub++ {
		writeFakeState(t, p.SubtaskDir("agg", sub))
	}
	c, err := p.Complete(m)
	must(t, err)
	loaded, err := Load(OSFS{}, c.Path)
	must(t, err)
	op := loaded.Meta.Operator("join")
	if op == nil || !op.Finished() || loaded.Meta.Operator("agg").Finished() {
		t.Fatalf("Finished: join %+v, agg %+v", op, loaded.Meta.Operator("agg"))
	}
	for _, s := range op.Subtasks {
		if s.Dir != "" || s.Files != nil {
			t.Errorf("finished subtask %d lists a folder %q or files %v", s.Subtask, s.Dir, s.Files)
		}
	}
	if dir, ok := loaded.SubtaskDir("join", 1); ok {
		t.Errorf("SubtaskDir of a finished subtask = %q, want none", dir)
	}
	if dir, ok := loaded.SubtaskDir("agg", 1); !ok || filepath.Base(dir) != SubtaskDirName("agg", 1) {
		t.Errorf("SubtaskDir(agg, 1) = %q, %v", dir, ok)
	}
	dirs, err := loaded.StateDirsForKeyGroups("join", 0, 127)
	must(t, err)
	if len(dirs) != 0 {
		t.Errorf("StateDirsForKeyGroups of a finished operator = %v, want none", dirs)
	}
	dirs, err = loaded.StateDirsForKeyGroups("agg", 0, 127)
	must(t, err)
	if len(dirs) != 2 {
		t.Errorf("StateDirsForKeyGroups(agg) = %v, want both subtasks", dirs)
	}

	sp, err := Savepoint(OSFS{}, loaded, filepath.Join(t.TempDir(), "sp"))
	must(t, err)
	if again, err := Load(OSFS{}, sp.Path); err != nil || !again.Meta.Operator("join").Finished() {
		t.Fatalf("savepoint: %v, finished %v", err, again != nil && again.Meta.Operator("join").Finished())
	}

	report, err := Inspect(OSFS{}, c.Path)
	must(t, err)
	if !strings.Contains(report, "subtask 1  finished (its inputs had ended): no state") || !strings.Contains(report, "status:          valid") {
		t.Errorf("inspect does not show the finished subtasks as such:\n%s", report)
	}

	// A checkpoint in which every operator finished (the usual final
	// one) is valid, not mistaken for one without checksums.
	p2, err := st.Begin(4)
	must(t, err)
	m2 := testMeta(4)
	m2.Operators = []OperatorState{{ID: "join", Name: "Join", Parallelism: 1, Subtasks: []SubtaskState{{Subtask: 0, Finished: true}}}}
	c2, err := p2.Complete(m2)
	must(t, err)
	report, err = Inspect(OSFS{}, c2.Path)
	must(t, err)
	if !strings.Contains(report, "status:          valid\n") {
		t.Errorf("inspect of a checkpoint whose operators all finished:\n%s", report)
	}

	bad := m
	bad.FormatVersion, bad.Kind = FormatVersion, KindCheckpoint
	bad.Operators = ownSubtasks(m.Operators)
	bad.Operators[1].Subtasks[0].Dir = "op-join-0"
	data, err := EncodeMetadata(&bad)
	must(t, err)
	if _, err := DecodeMetadata(data); !errors.Is(err, ErrCorruptCheckpoint) || !strings.Contains(err.Error(), "finished, yet has a state folder") {
		t.Errorf("a finished subtask with a folder decodes with %v", err)
	}
}
