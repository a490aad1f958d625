package planner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/expr"
)

// This file prunes the columns of an OVER aggregate's input, as Flink's
// ProjectWindowTransposeRule does: an OverAgg under a Calc gets, below it,
// a projection of the columns its partition, its ORDER BY, its calls'
// arguments and the Calc read. The OVER passes its other input columns
// through untouched, so the Calc cannot tell them missing; the OVER then
// keeps and re-emits narrower rows (an updating OVER keeps each row in its
// state and re-emits up to n+1 rows a change), and the exchange before it
// carries fewer values.

// KeyOverInputPruning is the SET key (Weir's) that turns the pruning of
// OVER aggregates' inputs off ('false'; default 'true'). The pruned OVER
// has another operator id (its input is a new Calc), so a savepoint of a
// plan without it is refused, naming the operator; with 'false' such a
// savepoint restores.
const KeyOverInputPruning = "table.optimizer.over-input-pruning"

// pruneOvers prunes the input of every OVER aggregate of n under a Calc,
// unless KeyOverInputPruning is 'false'.
func (p *Planner) pruneOvers(n Node) (Node, error) {
	if v, ok := p.Config[KeyOverInputPruning]; ok {
		on, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("config '%s' = '%s': expected 'true' or 'false'", KeyOverInputPruning, v)
		}
		if !on {
			return n, nil
		}
	}
	return fixpoint(n, []rule{pruneOverInput, mergeCalcs, dropIdentityCalc})
}

// pruneOverInput: Calc(OverAgg(in)) → Calc'(OverAgg'(Calc_p(in))) where
// Calc_p keeps the input columns the OVER (partition, order, time
// attribute, arguments) and the Calc read; OverAgg' and Calc' read the
// narrower rows (the calls' results follow the kept columns).
func pruneOverInput(n Node) (Node, bool, error) {
	c, ok := n.(*Calc)
	if !ok {
		return n, false, nil
	}
	o, ok := c.Input.(*OverAgg)
	if !ok {
		return n, false, nil
	}
	// The calls' results are the "right side" of pruneColumns, kept whole.
	pr, ok := pruneColumns(c, o.Input, nil, len(o.Calls), false, func(need []bool) {
		for _, k := range o.Partition {
			need[k] = true
		}
		for _, s := range o.Order {
			need[s.Col] = true
		}
		if o.TimeCol >= 0 {
			need[o.TimeCol] = true
		}
		for _, call := range o.Calls {
			if call.Arg >= 0 {
				need[call.Arg] = true
			}
		}
	}, nil)
	if !ok {
		return n, false, nil
	}
	no := *o
	no.Input = pr.left
	no.Partition = pr.leftCols(o.Partition)
	no.Order = slices.Clone(o.Order)
	for i := range no.Order {
		no.Order[i].Col = pr.newIdx[o.Order[i].Col]
	}
	if o.TimeCol >= 0 {
		no.TimeCol = pr.newIdx[o.TimeCol]
	}
	no.Calls = slices.Clone(o.Calls)
	for i := range no.Calls {
		if a := no.Calls[i].Arg; a >= 0 {
			no.Calls[i].Arg = pr.newIdx[a]
		}
	}
	return pr.rebuild(c, &no, nil, func(expr.Expr) {})
}
