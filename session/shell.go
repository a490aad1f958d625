package session

import (
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/planner"
	"github.com/weir-sql/weir/types"
)

// This file holds what the interactive shell needs beyond RunScript: it
// plans statements one at a time.

// PlanInsert plans one INSERT as its own job, named by 'pipeline.name' or
// else "insert-into_<table>" (as Flink names it).
func (s *Session) PlanInsert(ins *parser.Insert) (*planner.Plan, error) {
	return s.planner().PlanInserts([]*parser.Insert{ins}, s.jobName("insert-into_"+ins.Table))
}

// PlanStatementSet plans the INSERTs of a statement set as one job, named
// by 'pipeline.name' or else "insert-into_<table>,<table>…".
func (s *Session) PlanStatementSet(ins []*parser.Insert) (*planner.Plan, error) {
	names := make([]string, len(ins))
	for i, in := range ins {
		names[i] = in.Table
	}
	return s.planner().PlanInserts(ins, s.jobName("insert-into_"+strings.Join(names, ",")))
}

// PlanQuery plans a bare query whose changelog goes to the sink that sink
// builds from the result schema and whether the result is updating.
func (s *Session) PlanQuery(q *parser.QueryStmt, sink func(schema types.Schema, updating bool) (connector.Sink, error)) (*planner.Plan, error) {
	return s.planner().PlanQuery(q, sink, s.jobName("collect"))
}
