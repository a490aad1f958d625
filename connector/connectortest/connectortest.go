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
