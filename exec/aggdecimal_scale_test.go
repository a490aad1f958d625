package exec

import (
	"math/big"
	"testing"

	"github.com/weir-sql/weir/types"
)

// TestDecimalSumResultScaleMismatch: SUM whose result type has another
// scale than its argument (no planned call has one: SUM(DECIMAL(p, s)) is
// DECIMAL(38, s)) must not change the sum's value: the 128-bit path once
// multiplied by 10^(S-s) for SUM too but kept the argument's scale, so
// 1.23 came out as 123.00.
func TestDecimalSumResultScaleMismatch(t *testing.T) {
	a := &decSumAcc{typ: types.Decimal(38, 4), argScale: 2}
	setDecState(a, big.NewInt(123), 1) // 1.23
	got := a.result(0)
	if f := got.Float(); f != 1.23 {
		t.Fatalf("SUM of 1.23 as DECIMAL(38, 4) from scale 2: got %v (%s), want 1.23", f, valText(got))
	}
}
