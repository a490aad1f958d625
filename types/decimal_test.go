package types

import (
	"math/big"
	"testing"
)

func TestDecimalTextParseRescale(t *testing.T) {
	cases := []struct {
		in   string
		p, s int
		want string
		err  bool
	}{
		{"0.908", 3, 3, "0.908", false},
		{"-0.05", 3, 3, "-0.050", false},
		{"12.345", 5, 2, "12.35", false}, // HALF_UP
		{"-12.345", 5, 2, "-12.35", false},
		{"12.344", 5, 2, "12.34", false},
		{"999.995", 5, 2, "", true}, // rounds to 1000.00: 6 digits
		{"1e3", 6, 1, "1000.0", false},
		{" 7 ", 1, 0, "7", false},
		{"abc", 5, 2, "", true},
		{"12345678901234567890.5", 38, 2, "12345678901234567890.50", false},
		{"-99999999999999999999999999999999999999", 38, 0, "-99999999999999999999999999999999999999", false},
		{"100000000000000000000000000000000000000", 38, 0, "", true},
	}
	for _, c := range cases {
		v, err := ParseDecimal(c.in, c.p, c.s)
		if c.err {
			if err == nil {
				t.Errorf("ParseDecimal(%q, %d, %d) = %v, want an error", c.in, c.p, c.s, v)
			}
			continue
		}
		if err != nil || v.String() != c.want {
			t.Errorf("ParseDecimal(%q, %d, %d) = %v, %v; want %s", c.in, c.p, c.s, v, err, c.want)
		}
		// Key round trip.
		got, rest, err := DecodeKey(AppendKey(nil, v))
		if err != nil || len(rest) != 0 || !Equal(got, v) || got.String() != v.String() {
			t.Errorf("key round trip of %v: %v, %v", v, got, err)
		}
	}
	// Rescale rounds HALF_UP and compares numerically across scales.
	a := DecimalValue(12345, 3) // 12.345
	b, _ := Rescale(a, 1)
	if b.String() != "12.3" || Compare(a, b) <= 0 {
		t.Errorf("Rescale(12.345, 1) = %v", b)
	}
	c, _ := Rescale(DecimalValue(-125, 2), 1)
	if c.String() != "-1.3" {
		t.Errorf("Rescale(-1.25, 1) = %v, want -1.3", c)
	}
	if !Equal(DecimalValue(10, 1), DecimalValue(100, 2)) || Compare(DecimalValue(15, 1), IntValue(1)) != 1 {
		t.Errorf("cross-scale and integer comparison")
	}
	u, _ := new(big.Int).SetString("-123456789012345678901234", 10)
	w, err := DecimalFromBig(u, 4)
	if err != nil || w.String() != "-12345678901234567890.1234" || w.BigUnscaled().Cmp(u) != 0 {
		t.Errorf("wide decimal: %v %v", w, err)
	}
}
