package aggfunc

import (
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

func TestLookupForms(t *testing.T) {
	r := Builtins()
	for _, tc := range []struct {
		name string
		star bool
		kind Kind
	}{
		{"COUNT", true, CountStar}, {"COUNT", false, Count}, {"SUM", false, Sum},
		{"AVG", false, Avg}, {"MIN", false, Min}, {"MAX", false, Max},
	} {
		f, err := r.Lookup(tc.name, tc.star)
		if err != nil {
			t.Fatalf("Lookup(%s, %v): %v", tc.name, tc.star, err)
		}
		if f.Kind != tc.kind || f.Name != tc.name {
			t.Errorf("Lookup(%s, %v) = %s kind %d, want kind %d", tc.name, tc.star, f.Name, f.Kind, tc.kind)
		}
	}
	if _, err := r.Lookup("SUM", true); err == nil || err.Error() != "SUM(*) is not supported; only COUNT(*)" {
		t.Errorf("SUM(*): got %v", err)
	}
}

func TestLookupUnknownListsCloseNames(t *testing.T) {
	r := Builtins()
	for _, tc := range []struct{ name, want string }{
		{"SUMM", "unknown aggregate function SUMM (closest: SUM)"},
		{"CONT", "unknown aggregate function CONT (closest: COUNT)"},
		{"MAXIMUM", "unknown aggregate function MAXIMUM (closest: MAX)"},
		{"ZZZZZZ", "unknown aggregate function ZZZZZZ (aggregate functions: AVG, BOOL_AND, BOOL_OR, COUNT, FIRST_VALUE, LAST_VALUE, LISTAGG, MAX, MIN, STDDEV_POP, STDDEV_SAMP, SUM, VAR_POP, VAR_SAMP)"},
	} {
		_, err := r.Lookup(tc.name, false)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Lookup(%s): got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestResultTypes(t *testing.T) {
	r := Builtins()
	nn := func(t types.Type) types.Type { t.NotNull = true; return t }
	count, _ := r.Lookup("COUNT", false)
	sum, _ := r.Lookup("SUM", false)
	max, _ := r.Lookup("MAX", false)
	for _, tc := range []struct {
		f    *Func
		arg  types.Type
		want types.Type
		err  string
	}{
		{count, types.Varchar, types.Type{Kind: types.KindBigInt, NotNull: true}, ""},
		{sum, nn(types.Int), types.Int, ""},
		{sum, types.Double, types.Double, ""},
		{sum, types.Varchar, types.Type{}, "SUM needs a numeric argument, not VARCHAR"},
		{max, nn(types.Timestamp), types.Timestamp, ""},
	} {
		got, err := tc.f.ResultType(tc.arg)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s over %s: error %v, want %q", tc.f.Name, tc.arg, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s over %s = %s, %v; want %s", tc.f.Name, tc.arg, got, err, tc.want)
		}
	}
}

func TestNewRejectsDuplicatesAndBadNames(t *testing.T) {
	a := &Func{Name: "F", Arg: AnyArg}
	if _, err := New(a, &Func{Name: "F", Arg: NumericArg}); err == nil || !strings.Contains(err.Error(), "F(numeric) registered twice") {
		t.Errorf("duplicate: got %v", err)
	}
	if _, err := New(a, &Func{Name: "F", Arg: NoArg}); err != nil {
		t.Errorf("F(*) and F(x): %v", err)
	}
	if _, err := New(&Func{Name: "f"}); err == nil {
		t.Error("lower-case name accepted")
	}
}

// TestKindsAreStable pins the numbers of the kinds: they are hashed into
// operator ids, so renumbering one would orphan every checkpoint.
func TestKindsAreStable(t *testing.T) {
	for k, want := range map[Kind]int{CountStar: 0, Count: 1, Sum: 2, Avg: 3, Min: 4, Max: 5} {
		if int(k) != want {
			t.Errorf("kind %d, want %d", k, want)
		}
	}
}
