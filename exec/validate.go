package exec

import (
	"errors"
	"fmt"

	"github.com/weir-sql/weir/types"
)

// ErrInvalidGraph reports a job graph the runtime cannot run.
var ErrInvalidGraph = errors.New("invalid job graph")

// validate checks g and returns the output row width of every vertex.
func validate(g *JobGraph, maxPar int) ([]int, error) {
	if g == nil || len(g.Vertices) == 0 {
		return nil, fmt.Errorf("%w: no vertices", ErrInvalidGraph)
	}
	if maxPar <= 0 {
		return nil, fmt.Errorf("%w: max parallelism %d", ErrInvalidGraph, maxPar)
	}
	widths := make([]int, len(g.Vertices))
	consumed := make([]bool, len(g.Vertices))
	for i, v := range g.Vertices {
		if v == nil {
			return nil, fmt.Errorf("%w: vertex %d is nil", ErrInvalidGraph, i)
		}
		w, err := validateVertex(g, i, v, widths, maxPar)
		if err != nil {
			return nil, fmt.Errorf("%w: vertex %d (%s): %w", ErrInvalidGraph, i, v.Name, err)
		}
		widths[i] = w
		for _, in := range v.Inputs {
			consumed[in.From] = true
		}
	}
	for i, v := range g.Vertices {
		if consumed[i] && v.Sink != nil {
			return nil, fmt.Errorf("%w: vertex %d (%s) ends in a sink but feeds other vertices", ErrInvalidGraph, i, v.Name)
		}
	}
	return widths, nil
}

func validateVertex(g *JobGraph, i int, v *Vertex, widths []int, maxPar int) (int, error) {
	if v.Parallelism < 1 {
		return 0, fmt.Errorf("parallelism %d", v.Parallelism)
	}
	if v.Parallelism > maxPar {
		return 0, fmt.Errorf("parallelism %d exceeds max parallelism %d", v.Parallelism, maxPar)
	}
	width := -1
	portWidth := map[int]int{}
	switch {
	case v.Source != nil:
		if len(v.Inputs) > 0 {
			return 0, errors.New("a source vertex cannot have inputs")
		}
		if v.SourceWidth < 0 {
			return 0, fmt.Errorf("source width %d", v.SourceWidth)
		}
		width = v.SourceWidth
		if w := v.Watermark; w != nil {
			if w.Expr == nil || w.Column < -1 || w.Column >= v.SourceWidth {
				return 0, fmt.Errorf("watermark on column %d of %d, or without an expression", w.Column, v.SourceWidth)
			}
			if k := w.Expr.Type().Kind; k != types.KindTimestamp && k != types.KindTimestampLTZ {
				return 0, fmt.Errorf("watermark expression %s is %s, not TIMESTAMP(3) or TIMESTAMP_LTZ(3)", w.Expr, w.Expr.Type())
			}
		}
	case v.Watermark != nil:
		return 0, errors.New("a watermark without a source")
	case len(v.Inputs) == 0:
		return 0, errors.New("neither a source nor inputs")
	}
	for k, in := range v.Inputs {
		if in.From < 0 || in.From >= i {
			return 0, fmt.Errorf("input %d refers to vertex %d, not an earlier one", k, in.From)
		}
		up := g.Vertices[in.From]
		inW := widths[in.From]
		switch in.Partition.Kind {
		case Forward:
			if up.Parallelism != v.Parallelism {
				return 0, fmt.Errorf("input %d: FORWARD between parallelism %d and %d", k, up.Parallelism, v.Parallelism)
			}
		case Hash:
			if len(in.Partition.Keys) == 0 {
				return 0, fmt.Errorf("input %d: HASH without keys", k)
			}
			for _, c := range in.Partition.Keys {
				if c < 0 || c >= inW {
					return 0, fmt.Errorf("input %d: hash key column %d out of range (width %d)", k, c, inW)
				}
			}
		case Broadcast, Rebalance, Global:
		default:
			return 0, fmt.Errorf("input %d: unknown partitioning %d", k, in.Partition.Kind)
		}
		if in.Port < 0 {
			return 0, fmt.Errorf("input %d: port %d", k, in.Port)
		}
		if in.Port > 0 && len(v.Operators) == 0 {
			return 0, fmt.Errorf("input %d: port %d without an operator", k, in.Port)
		}
		if w, ok := portWidth[in.Port]; ok && w != inW {
			return 0, fmt.Errorf("input %d: width %d, other inputs of port %d have %d", k, inW, in.Port, w)
		}
		portWidth[in.Port] = inW
		if len(v.Operators) == 0 {
			// Rows pass through: every input must have the same width.
			if width >= 0 && width != inW {
				return 0, fmt.Errorf("input %d: width %d, other inputs have %d", k, inW, width)
			}
			width = inW
		}
	}
	for k, op := range v.Operators {
		if op.New == nil {
			return 0, fmt.Errorf("operator %d (%s) has no constructor", k, op.Name)
		}
		if op.OutWidth < 0 {
			return 0, fmt.Errorf("operator %d (%s): width %d", k, op.Name, op.OutWidth)
		}
		width = op.OutWidth
	}
	return width, nil
}
