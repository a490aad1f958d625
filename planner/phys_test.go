package planner

import (
	"strings"
	"testing"

	"github.com/weir-sql/weir/aggfunc"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// TestAggregateRefusesRetractionsItCannotTake: a GroupAggregate whose
// function cannot take values back out (a registry function with Retracts
// false) is refused over input with retractions, with the call named, and
// planned over insert-only input.
func TestAggregateRefusesRetractionsItCannotTake(t *testing.T) {
	noRetract := &aggfunc.Func{Name: "FIRST_SEEN", Kind: aggfunc.Max, Arg: aggfunc.AnyArg, Result: aggfunc.ArgNullable}
	schema := types.Schema{Columns: []types.Column{{Name: "k", Type: types.Varchar}, {Name: "v", Type: types.BigInt}}}
	stub := &Scan{Table: &connector.Table{Name: "t", Schema: schema}}
	agg := &Aggregate{Input: stub, Keys: []int{0}, Names: []string{"k", "f"},
		Aggs: []aggfunc.Call{{Func: noRetract, Arg: 1, ArgType: types.BigInt, Type: types.BigInt, Name: "FIRST_SEEN(v)"}}}
	b := &physBuilder{parallelism: 2}
	for _, tc := range []struct {
		mode connector.ChangelogMode
		want string // "" = planned
	}{
		{connector.ModeOf(types.Insert), ""},
		{connector.ModeOf(types.Insert, types.UpdateBefore, types.UpdateAfter), "FIRST_SEEN(v) cannot consume retractions, and its input has updates (+I/-U/+U)"},
		{connector.ModeOf(types.Insert, types.Delete), "FIRST_SEEN(v) cannot consume retractions, and its input has deletes (+I/-D)"},
	} {
		in := &unionNode{physBase{tr: traits{schema: schema, mode: tc.mode, parallelism: 2}}}
		p, err := agg.lower(b, []physNode{in})
		if tc.want == "" {
			if err != nil {
				t.Errorf("mode %s: %v", tc.mode, err)
			} else if got := p.traits().mode; got != connector.ModeOf(types.Insert, types.UpdateBefore, types.UpdateAfter) {
				t.Errorf("mode %s: aggregate mode %s", tc.mode, got)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("mode %s: got %v, want %q", tc.mode, err, tc.want)
		}
	}
}
