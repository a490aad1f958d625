package exec

import (
	"slices"
	"testing"
)

// TestDescribeGraph: checkpoints record, per operator, its statement and
// the sinks downstream of it, through chains and exchanges (an aggregate
// over an aggregate feeds the second one's sink; a vertex feeding two
// statements' vertices feeds both sinks), and per source vertex its table
// and connector.
func TestDescribeGraph(t *testing.T) {
	src := &Vertex{ID: "s", SourceName: "t", SourceConnector: "datagen", Source: counterSource{}, Statement: 1,
		Operators: []OperatorSpec{{ID: "calc"}}}
	agg1 := &Vertex{Inputs: []Input{{From: 0}}, Statement: 1, Operators: []OperatorSpec{{ID: "agg1"}}}
	agg2 := &Vertex{Inputs: []Input{{From: 1}}, Statement: 1, Operators: []OperatorSpec{{ID: "agg2"}}, Sink: discardSink{}, SinkName: "out1"}
	other := &Vertex{Inputs: []Input{{From: 1}}, Statement: 2, Sink: discardSink{}, SinkName: "out2"}
	d := describeGraph(&JobGraph{Vertices: []*Vertex{src, agg1, agg2, other}})
	if v := d.sources["s"]; v != src || len(d.sources) != 1 {
		t.Errorf("sources: %v", d.sources)
	}
	for id, want := range map[string][]string{"calc": {"out1", "out2"}, "agg1": {"out1", "out2"}, "agg2": {"out1"}} {
		if got := d.ops[id]; !slices.Equal(got.sinks, want) || got.statement != 1 {
			t.Errorf("operator %s: statement %d, sinks %v; want 1, %v", id, got.statement, got.sinks, want)
		}
	}
}
