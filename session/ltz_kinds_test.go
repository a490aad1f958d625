package session

import "testing"

// TestToTimestampLTZOfDecimalAndFloat runs TO_TIMESTAMP_LTZ over DECIMAL
// and FLOAT numbers end to end: 1.5 seconds is 1.5 seconds, whatever the
// number's type (the function once read a DECIMAL's unscaled integer and
// a FLOAT's bits).
func TestToTimestampLTZOfDecimalAndFloat(t *testing.T) {
	src := `SET 'parallelism.default' = '1';
CREATE TABLE out (a TIMESTAMP_LTZ(3), b TIMESTAMP_LTZ(3), c TIMESTAMP_LTZ(3)) WITH ('connector' = 'print');
INSERT INTO out SELECT TO_TIMESTAMP_LTZ(d, 0), TO_TIMESTAMP_LTZ(CAST(f AS FLOAT), 0), TO_TIMESTAMP_LTZ(CAST(d * 1000 AS DECIMAL(10, 1)), 3)
FROM (VALUES (CAST(1.5 AS DECIMAL(4, 2)), 2.5)) AS v(d, f);
`
	got := sortedRows(applyChangelog(t, runScript(t, src)))
	want := "[1970-01-01 00:00:01.500, 1970-01-01 00:00:02.500, 1970-01-01 00:00:01.500]"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %v, want [%s]", got, want)
	}
}
