package planner

import (
	"testing"
)

const idsBase = `
CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'datagen');
CREATE TABLE o (k STRING, s INT) WITH ('connector' = 'print');
CREATE TABLE o2 (k STRING, v INT) WITH ('connector' = 'print');
`

// opIDs maps each operator's name to its id.
func opIDs(t *testing.T, script string) map[string]string {
	t.Helper()
	text, plan := runScript(script)
	if plan == nil {
		t.Fatalf("no plan:\n%s", text)
	}
	ids := map[string]string{}
	for _, v := range plan.Graph.Vertices {
		for _, op := range v.Operators {
			ids[op.Name] = op.ID
		}
	}
	return ids
}

func TestOperatorIDsAreStable(t *testing.T) {
	base := opIDs(t, idsBase+`INSERT INTO o SELECT UPPER(k), SUM(v) FROM t GROUP BY UPPER(k)`)
	variants := map[string]string{
		"downstream filter": idsBase + `INSERT INTO o SELECT k, s FROM (SELECT UPPER(k) AS k, SUM(v) AS s FROM t GROUP BY UPPER(k)) AS x WHERE s > 10`,
		"second insert first": idsBase + `INSERT INTO o2 SELECT k, v FROM t WHERE v > 1;
INSERT INTO o SELECT UPPER(k), SUM(v) FROM t GROUP BY UPPER(k)`,
		"second insert after": idsBase + `INSERT INTO o SELECT UPPER(k), SUM(v) FROM t GROUP BY UPPER(k);
INSERT INTO o2 SELECT k, SUM(v) FROM t GROUP BY k`,
	}
	preAgg, agg := "", ""
	for name, id := range base {
		switch shortName(name) {
		case "GroupAggregate":
			agg = id
		case "Calc":
			if preAgg == "" || len(name) < len(preAgg) {
				preAgg = id
			}
		}
	}
	if agg == "" {
		t.Fatalf("no GroupAggregate in %v", base)
	}
	for vname, script := range variants {
		t.Run(vname, func(t *testing.T) {
			got := opIDs(t, script)
			found := map[string]bool{}
			for _, id := range got {
				found[id] = true
			}
			if !found[agg] {
				t.Errorf("GroupAggregate id %s changed; ids now %v", agg, got)
			}
			for name, id := range base {
				if shortName(name) == "Calc" && name == "Calc(select=[UPPER(k) AS $f0, v])" && !found[id] {
					t.Errorf("pre-aggregate Calc id %s changed; ids now %v", id, got)
				}
			}
		})
	}
	// A change upstream does change the id.
	changed := opIDs(t, idsBase+`INSERT INTO o SELECT UPPER(k), SUM(v) FROM t WHERE v > 0 GROUP BY UPPER(k)`)
	for _, id := range changed {
		if id == agg {
			t.Errorf("GroupAggregate id unchanged after an upstream filter was added")
		}
	}
}
