package connector

import (
	"testing"

	"github.com/weir-sql/weir/types"
)

func TestChangelogModeText(t *testing.T) {
	for _, c := range []struct {
		m           ChangelogMode
		text, kinds string
		insertOnly  bool
	}{
		{ModeInsertOnly, "I", "+I", true},
		{ModeRetract, "I,UB,UA,D", "+I/-U/+U/-D", false},
		{ModeUpsert, "I,UA,D", "+I/+U/-D", false},
		{ModeOf(types.Insert, types.UpdateBefore, types.UpdateAfter), "I,UB,UA", "+I/-U/+U", false},
		{0, "NONE", "", true},
	} {
		if got := c.m.String(); got != c.text {
			t.Errorf("String() = %q, want %q", got, c.text)
		}
		if got := c.m.Kinds(); got != c.kinds {
			t.Errorf("%s: Kinds() = %q, want %q", c.text, got, c.kinds)
		}
		if got := c.m.IsInsertOnly(); got != c.insertOnly {
			t.Errorf("%s: IsInsertOnly() = %v", c.text, got)
		}
	}
	if !ModeRetract.ContainsAll(ModeUpsert) || ModeUpsert.ContainsAll(ModeRetract) || !ModeUpsert.ContainsAll(ModeInsertOnly) {
		t.Error("ContainsAll is wrong")
	}
}

type plainSink struct{ updates bool }

func (s plainSink) AcceptsUpdates() bool            { return s.updates }
func (plainSink) Parallelism() int                  { return 0 }
func (plainSink) Open(int, int) (SinkWriter, error) { return nil, nil }

type upsertSink struct{ plainSink }

func (upsertSink) ChangelogMode() ChangelogMode    { return ModeUpsert }
func (upsertSink) ChangelogHint() (string, string) { return "", "" }

func TestSinkChangelogMode(t *testing.T) {
	if m := SinkChangelogMode(plainSink{updates: false}); m != ModeInsertOnly {
		t.Errorf("append-only sink: %s", m)
	}
	if m := SinkChangelogMode(plainSink{updates: true}); m != ModeRetract {
		t.Errorf("updating sink: %s", m)
	}
	if m := SinkChangelogMode(upsertSink{plainSink{updates: true}}); m != ModeUpsert {
		t.Errorf("ChangelogSink: %s", m)
	}
}
