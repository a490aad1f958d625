package udf

import (
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestFuncTypesFromGo: the SQL types come from the Go signature and a call
// converts the values both ways.
func TestFuncTypesFromGo(t *testing.T) {
	f3 := Func3(func(a int32, b float64, c bool) string {
		if c {
			return strings.Repeat("x", int(a)) + "!"
		}
		return ""
	})
	if got := f3.Signature("f"); got != "f(INT, DOUBLE, BOOLEAN) -> STRING" {
		t.Errorf("signature %q", got)
	}
	v, err := f3.Call(types.IntValue(3), types.DoubleValue(1.5), types.BoolValue(true))
	if err != nil || v.Kind() != types.KindVarchar || v.Str() != "xxx!" {
		t.Errorf("call: %v %v", v, err)
	}
	f1 := Func1(func(x int64) float64 { return float64(x) / 4 })
	v, _ = f1.Call(types.BigIntValue(6), types.Value{}, types.Value{})
	if v.Kind() != types.KindDouble || v.Float() != 1.5 {
		t.Errorf("Func1: %v", v)
	}
	f2 := Func2(CountChar)
	v, _ = f2.Call(types.StringValue("abcabc"), types.StringValue("cx"), types.Value{})
	if v.Kind() != types.KindBigInt || v.Int() != 2 {
		t.Errorf("count_char: %v", v)
	}
}

// TestCountChar counts bytes as the reference's CountChar does.
func TestCountChar(t *testing.T) {
	for _, c := range []struct {
		s, ch string
		want  int64
	}{{"", "c", 0}, {"ccc", "c", 3}, {"abc", "", 0}, {"accept", "cat", 2}, {"é", "\xc3", 1}} {
		if got := CountChar(c.s, c.ch); got != c.want {
			t.Errorf("CountChar(%q, %q) = %d, want %d", c.s, c.ch, got, c.want)
		}
	}
}

// TestRegistry: identifiers are checked, duplicates refused, IDs sorted.
func TestRegistry(t *testing.T) {
	r := NewRegistry()
	f := Func2(CountChar)
	if err := r.Register("count_char", "d", f); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("a.B", "", f); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "a b", "it's"} {
		if err := r.Register(bad, "", f); err == nil {
			t.Errorf("identifier %q accepted", bad)
		}
	}
	if err := r.Register("count_char", "", f); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("duplicate: %v", err)
	}
	if err := r.Register("x", "", nil); err == nil {
		t.Error("nil function accepted")
	}
	if got := strings.Join(r.IDs(), ","); got != "a.B,count_char" {
		t.Errorf("IDs %s", got)
	}
	g, ok := r.Lookup("count_char")
	if !ok || g.ID != "count_char" || g.Doc != "d" {
		t.Errorf("lookup: %+v %v", g, ok)
	}
	var none *Registry
	if _, ok := none.Lookup("x"); ok || none.IDs() != nil {
		t.Error("nil registry has functions")
	}
}

// BenchmarkCall: a call through the wrapper does not allocate.
func BenchmarkCall(b *testing.B) {
	f := Func2(CountChar)
	s, c := types.StringValue("abcdefghijabcdefghijabcdefghij"), types.StringValue("c")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Call(s, c, types.Value{}); err != nil {
			b.Fatal(err)
		}
	}
}
