package planner

import (
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/parser"
)

// modeSource is a fake source of a given changelog mode.
type modeSource struct {
	fakeSource
	mode connector.ChangelogMode
}

func (s modeSource) ChangelogMode() connector.ChangelogMode { return s.mode }

// planWith plans the INSERTs of script with the built-in connectors plus
// 'upsert-test' (a source of upsert changelogs) and 'retract-test'.
func planWith(t *testing.T, script string) (*Plan, error) {
	t.Helper()
	stmts, err := parser.Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	reg := testRegistry()
	reg.RegisterSource("upsert-test", func(*connector.Table, connector.Env) (connector.Source, error) {
		return modeSource{mode: connector.ModeUpsert}, nil
	})
	reg.RegisterSource("retract-test", func(*connector.Table, connector.Env) (connector.Source, error) {
		return modeSource{mode: connector.ModeRetract}, nil
	})
	cat := NewCatalog()
	p := &Planner{Catalog: cat, Connectors: reg, Config: map[string]string{"parallelism.default": "2"}}
	var ins []*parser.Insert
	for _, st := range stmts {
		switch s := st.(type) {
		case *parser.CreateTable:
			if err := cat.CreateTable(s); err != nil {
				t.Fatal(err)
			}
		case *parser.Insert:
			ins = append(ins, s)
		}
	}
	return p.PlanInserts(ins, "test")
}

// TestPlanModes checks the modes of each INSERT's result and Updating.
func TestPlanModes(t *testing.T) {
	plan, err := planWith(t, `
CREATE TABLE r (id BIGINT, v INT) WITH ('connector' = 'retract-test');
CREATE TABLE u (id BIGINT, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-test');
CREATE TABLE d (v INT) WITH ('connector' = 'datagen');
CREATE TABLE out (id BIGINT, v INT) WITH ('connector' = 'print');
CREATE TABLE out1 (v BIGINT) WITH ('connector' = 'print');
INSERT INTO out1 SELECT v FROM d;
INSERT INTO out SELECT id, v FROM u WHERE v > 0;
INSERT INTO out1 SELECT v FROM d UNION ALL SELECT v FROM r;
INSERT INTO out1 SELECT COUNT(*) FROM d`)
	if err != nil {
		t.Fatal(err)
	}
	// The upsert source is normalized into a retract changelog.
	want := []string{"I", "I,UB,UA,D", "I,UB,UA,D", "I,UB,UA"}
	var got []string
	for _, m := range plan.Modes {
		got = append(got, m.String())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || !plan.Updating {
		t.Errorf("modes %v (updating %v), want %v", got, plan.Updating, want)
	}
	if !strings.Contains(plan.Explain, `   +- ChangelogNormalize(key=[id], changelogMode=[I,UB,UA,D], upsertKeys=[[id]])
      +- Exchange(distribution=[hash[id]], changelogMode=[I,UA,D], upsertKeys=[[id]])
         +- TableSourceScan(table=[u], fields=[id, v], changelogMode=[I,UA,D], upsertKeys=[[id]])`) {
		t.Errorf("explain:\n%s", plan.Explain)
	}
	plan, err = planWith(t, `
CREATE TABLE d (v INT) WITH ('connector' = 'datagen');
CREATE TABLE out1 (v BIGINT) WITH ('connector' = 'print');
INSERT INTO out1 SELECT v FROM d`)
	if err != nil || plan.Updating {
		t.Errorf("insert-only plan: updating %v, %v", plan != nil && plan.Updating, err)
	}
}

// TestAggregateOverUpsertNormalized: GroupAggregate needs -U rows to
// retract; over an upsert source with a primary key the planner puts a
// ChangelogNormalize (keyed by the key) between them, as Flink does.
// Without a primary key there is nothing to normalize by: refused.
func TestAggregateOverUpsertNormalized(t *testing.T) {
	plan, err := planWith(t, `CREATE TABLE u (id BIGINT, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-test');
CREATE TABLE out (v INT, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT v, COUNT(*) FROM u GROUP BY v`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.Explain, `GroupAggregate(groupBy=[v], select=[v, COUNT(*) AS EXPR$1], changelogMode=[I,UB,UA,D], upsertKeys=[[v]])
      +- Exchange(distribution=[hash[v]], changelogMode=[I,UB,UA,D])
         +- Calc(select=[v], changelogMode=[I,UB,UA,D])
            +- ChangelogNormalize(key=[id], changelogMode=[I,UB,UA,D], upsertKeys=[[id]])`) {
		t.Errorf("explain:\n%s", plan.Explain)
	}
	_, err = planWith(t, `CREATE TABLE u (id BIGINT, v INT) WITH ('connector' = 'upsert-test');
CREATE TABLE out (v INT, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT v, COUNT(*) FROM u GROUP BY v`)
	if err == nil || !strings.Contains(err.Error(), "line 3:1: GroupAggregate(groupBy=[v], select=[v, COUNT(*) AS EXPR$1]) over an upsert changelog (+I/+U/-D, no -U) is not supported yet") {
		t.Errorf("without a primary key: got %v", err)
	}
}
