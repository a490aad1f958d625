// Package connectortest holds helpers for testing connectors: reading a
// source to the end and rendering rows as text.
package connectortest

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// Drain calls r.Next with batches of up to batchMax rows until io.EOF or
// until at least limit rows were read (limit < 0: no limit), and returns the
// rows formatted with types.FormatRow.
func Drain(ctx context.Context, r connector.SourceReader, width, batchMax, limit int) ([]string, error) {
	var out []string
	b := types.NewBatch(width, batchMax)
	for limit < 0 || len(out) < limit {
		b.Reset()
		max := batchMax
		if limit >= 0 {
			max = min(max, limit-len(out))
		}
		err := r.Next(ctx, b, max)
		if b.Len() > max {
			return out, fmt.Errorf("Next appended %d rows, more than max %d", b.Len(), max)
		}
		for i := range b.Len() {
			out = append(out, types.FormatRow(b.Kinds[i], b.Row(i)))
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// ReadAll opens all parallelism subtasks of src, drains each to the end
// and returns each subtask's rows.
func ReadAll(ctx context.Context, src connector.Source, width, parallelism, batchMax int) ([][]string, error) {
	out := make([][]string, parallelism)
	for s := range parallelism {
		r, err := src.Open(s, parallelism)
		if err != nil {
			return nil, fmt.Errorf("open subtask %d: %w", s, err)
		}
		rows, err := Drain(ctx, r, width, batchMax, -1)
		cerr := r.Close()
		if err != nil {
			return nil, fmt.Errorf("subtask %d: %w", s, err)
		}
		if cerr != nil {
			return nil, fmt.Errorf("close subtask %d: %w", s, cerr)
		}
		out[s] = rows
	}
	return out, nil
}

// Table returns a table with the given columns and options, for tests.
func Table(name string, cols []types.Column, opts map[string]string) *connector.Table {
	return &connector.Table{Name: name, Schema: types.Schema{Columns: cols}, Options: opts}
}

// ReadRescaled reads src in stages, as a job restored at other
// parallelisms would: stage k opens parallelisms[k] readers, restores in
// each with SeekAll the positions the previous stage ended at (nothing for
// the first stage), reads up to cut(k, subtask) rows from each (a negative
// cut: to the end), then records their positions and closes them. It
// returns every row read, by stage then subtask.
func ReadRescaled(ctx context.Context, src connector.Source, width, batchMax int, parallelisms []int, cut func(stage, subtask int) int) ([]string, error) {
	var out []string
	var positions [][]byte
	for k, p := range parallelisms {
		next := make([][]byte, p)
		for s := range p {
			rows, pos, err := readStage(ctx, src, width, batchMax, s, p, positions, cut(k, s))
			if err != nil {
				return out, fmt.Errorf("stage %d, subtask %d of %d: %w", k, s, p, err)
			}
			out = append(out, rows...)
			next[s] = pos
		}
		positions = next
	}
	return out, nil
}

func readStage(ctx context.Context, src connector.Source, width, batchMax, subtask, parallelism int, positions [][]byte, limit int) ([]string, []byte, error) {
	r, err := src.Open(subtask, parallelism)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	if positions != nil {
		rr, ok := r.(connector.RescalableReader)
		if !ok {
			return nil, nil, fmt.Errorf("reader %T is not a connector.RescalableReader", r)
		}
		if err := rr.SeekAll(positions); err != nil {
			return nil, nil, fmt.Errorf("SeekAll: %w", err)
		}
	}
	rows, err := Drain(ctx, r, width, batchMax, limit)
	if err != nil {
		return nil, nil, err
	}
	pos, err := r.Position()
	if err != nil {
		return nil, nil, fmt.Errorf("Position: %w", err)
	}
	return rows, pos, nil
}
