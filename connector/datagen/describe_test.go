package datagen

import (
	"context"
	"errors"
	"testing"

	"github.com/weir-sql/weir/connector/connectortest"
)

// TestDescribePosition checks what datagen positions say: rows emitted,
// the next global row number, the timestamp base as a time, and after a
// restore at another parallelism the earlier run whose rows are skipped.
func TestDescribePosition(t *testing.T) {
	ctx := context.Background()
	s := mustSource(t, rescaleCols, rescaleOpts)
	// Subtask 1 of 2 emits rows 1, 3, 5: next is row 7.
	r, err := s.Open(1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectortest.Drain(ctx, r, len(rescaleCols), 10, 3); err != nil {
		t.Fatal(err)
	}
	p1, _ := r.Position()
	r.Close()
	got, err := DescribePosition(p1)
	if err != nil {
		t.Fatal(err)
	}
	if want := "subtask 1 of 2: 3 rows emitted, next row 7; timestamp base 2024-01-01T12:00:00.000Z (row 0's time)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Subtask 0 of 2 emitted 4 rows (0, 2, 4, 6); restored at parallelism
	// 3, subtask 2 skips those rows.
	r0, _ := s.Open(0, 2)
	if _, err := connectortest.Drain(ctx, r0, len(rescaleCols), 10, 4); err != nil {
		t.Fatal(err)
	}
	p0, _ := r0.Position()
	r0.Close()
	r2, _ := s.Open(2, 3)
	if err := r2.(*Reader).SeekAll([][]byte{p0, p1}); err != nil {
		t.Fatal(err)
	}
	p2, _ := r2.Position()
	r2.Close()
	got, err = DescribePosition(p2)
	if err != nil {
		t.Fatal(err)
	}
	want := "subtask 2 of 3: 0 of its rows passed, next row 2; timestamp base 2024-01-01T12:00:00.000Z (row 0's time)\n" +
		"skips the rows below 7 that an earlier run at parallelism 2 emitted (rows per subtask: 4, 3)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := DescribePosition([]byte{7}); !errors.Is(err, ErrBadPosition) {
		t.Errorf("invalid position: got %v, want ErrBadPosition", err)
	}
}
