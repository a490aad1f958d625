package blackhole

import (
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/types"
)

func TestBlackhole(t *testing.T) {
	s, err := NewSink(connectortest.Table("b", nil, map[string]string{"connector": "blackhole"}), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.AcceptsUpdates() || s.Parallelism() != 0 {
		t.Errorf("AcceptsUpdates %v, Parallelism %d", s.AcceptsUpdates(), s.Parallelism())
	}
	w, err := s.Open(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := types.NewBatch(1, 1)
	b.Append(types.Delete, []types.Value{types.IntValue(1)})
	for _, err := range []error{w.Write(b), w.Flush(), w.Close()} {
		if err != nil {
			t.Error(err)
		}
	}
	if _, err := s.Open(1, 1); err == nil {
		t.Error("Open(1, 1) accepted")
	}
	_, err = NewSink(connectortest.Table("b", nil, map[string]string{"path": "x"}), connector.Env{})
	if err == nil || !strings.Contains(err.Error(), "unsupported option 'path'") {
		t.Errorf("got %v", err)
	}
}
