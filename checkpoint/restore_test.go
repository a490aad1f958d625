package checkpoint

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckOperators(t *testing.T) {
	m := sampleMetadata()
	m.Operators = append(m.Operators, OperatorState{ID: "join"})
	cases := []struct {
		ids   []string
		allow bool
		want  string
	}{
		{[]string{"agg", "join"}, false, ""},
		{[]string{"agg", "join", "new"}, false, ""},
		{[]string{"agg"}, false, `"join"`},
		{[]string{"other"}, false, `"agg", "join"`},
		{[]string{"other"}, true, ""},
	}
	for _, c := range cases {
		err := m.CheckOperators(c.ids, c.allow)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v allow=%v: %v", c.ids, c.allow, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v allow=%v: %v, want error naming %s", c.ids, c.allow, err, c.want)
		}
	}
}

func TestStateDirsForKeyGroups(t *testing.T) {
	// Old parallelism 4 over 16 key groups: subtask j owns [4j, 4j+3].
	c := &Checkpoint{Path: "/chk", Meta: Metadata{MaxParallelism: 16, Operators: []OperatorState{{
		ID: "agg", Parallelism: 4,
		Subtasks: []SubtaskState{{Subtask: 0, Dir: "a0"}, {Subtask: 1, Dir: "a1"}, {Subtask: 2, Dir: "a2"}, {Subtask: 3, Dir: "a3"}},
	}}}}
	cases := []struct {
		first, last int
		want        string
	}{
		{0, 3, "[a0]"},
		{0, 7, "[a0 a1]"},
		{3, 4, "[a0 a1]"},
		{5, 13, "[a1 a2 a3]"},
		{15, 15, "[a3]"},
	}
	for _, tc := range cases {
		dirs, err := c.StateDirsForKeyGroups("agg", tc.first, tc.last)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range dirs {
			names = append(names, filepath.Base(d))
		}
		if got := fmt.Sprint(names); got != tc.want {
			t.Errorf("[%d,%d]: %s, want %s", tc.first, tc.last, got, tc.want)
		}
	}
	if dirs, err := c.StateDirsForKeyGroups("none", 0, 3); dirs != nil || err != nil {
		t.Errorf("unknown operator: %v %v", dirs, err)
	}
	if _, err := c.StateDirsForKeyGroups("agg", 0, 16); err == nil {
		t.Error("key group 16 of 16: want error")
	}
	c.Meta.Operators[0].Subtasks = c.Meta.Operators[0].Subtasks[:3]
	if _, err := c.StateDirsForKeyGroups("agg", 12, 15); err == nil {
		t.Error("missing subtask state: want error")
	}
}
