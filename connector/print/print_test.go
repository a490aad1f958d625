package print

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/types"
)

func rows() *types.Batch {
	b := types.NewBatch(2, 4)
	b.Append(types.Insert, []types.Value{types.BigIntValue(1), types.StringValue("abc")})
	b.Append(types.UpdateBefore, []types.Value{types.BigIntValue(1), types.NullValue()})
	b.Append(types.UpdateAfter, []types.Value{types.BigIntValue(2), types.DoubleValue(3)})
	b.Append(types.Delete, []types.Value{types.NullValue(), types.TimestampValue(0)})
	return b
}

func TestFormat(t *testing.T) {
	body := []string{"+I[1, abc]", "-U[1, <NULL>]", "+U[2, 3.0]", "-D[<NULL>, 1970-01-01 00:00:00.000]"}
	tests := []struct {
		opts        map[string]string
		subtask     int
		parallelism int
		prefix      string
		stderr      bool
	}{
		{map[string]string{}, 0, 1, "", false},
		{map[string]string{}, 1, 3, "2> ", false},
		{map[string]string{"print-identifier": "out"}, 0, 1, "out> ", false},
		{map[string]string{"print-identifier": "out"}, 2, 3, "out:3> ", false},
		{map[string]string{"standard-error": "true"}, 0, 2, "1> ", true},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		s, err := NewSink(connectortest.Table("p", nil, tc.opts), connector.Env{Stdout: &stdout, Stderr: &stderr})
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.Open(tc.subtask, tc.parallelism)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rows()); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, other := stdout.String(), stderr.String()
		if tc.stderr {
			got, other = other, got
		}
		want := tc.prefix + strings.Join(body, "\n"+tc.prefix) + "\n"
		if got != want || other != "" {
			t.Errorf("%v subtask %d of %d:\ngot  %q\nwant %q (other stream %q)", tc.opts, tc.subtask, tc.parallelism, got, want, other)
		}
	}
}

var wholeLine = regexp.MustCompile(`^x:[1-4]> (\+I\[1, abc\]|-U\[1, <NULL>\]|\+U\[2, 3\.0\]|-D\[<NULL>, 1970-01-01 00:00:00\.000\])$`)

// TestNoInterleaving writes from many subtasks at once; every line must be
// whole.
func TestNoInterleaving(t *testing.T) {
	var out bytes.Buffer
	s, err := NewSink(connectortest.Table("p", nil, map[string]string{"print-identifier": "x"}), connector.Env{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	const subtasks, batches = 4, 50
	var wg sync.WaitGroup
	for i := range subtasks {
		w, err := s.Open(i, subtasks)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for range batches {
				if err := w.Write(rows()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != subtasks*batches*4 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if !wholeLine.MatchString(l) {
			t.Fatalf("broken line %q", l)
		}
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"standard-error": "maybe"}, "expected 'true' or 'false'"},
		{map[string]string{"print-identifer": "x"}, "did you mean 'print-identifier'?"},
		{map[string]string{"sink.parallelism": "-1"}, "expected a positive integer"},
	}
	for _, tc := range tests {
		_, err := NewSink(connectortest.Table("p", nil, tc.opts), connector.Env{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.opts, err, tc.want)
		}
	}
	s, err := NewSink(connectortest.Table("p", nil, map[string]string{"sink.parallelism": "3"}), connector.Env{})
	if err != nil || s.Parallelism() != 3 || !s.AcceptsUpdates() {
		t.Errorf("got %v, %v", s, err)
	}
}
