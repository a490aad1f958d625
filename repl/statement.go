package repl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/planner"
	"github.com/weir-sql/weir/session"
)

// runStatement parses and executes one statement, printing its result or
// its error. It returns the error (already printed), or ErrQuit.
func (sh *Shell) runStatement(ctx context.Context, st located) error {
	if isQuit(st.text) {
		return ErrQuit
	}
	err := sh.execText(ctx, st.text)
	if err != nil {
		err = relocate(err, st)
		sh.printError(err)
	}
	return err
}

// isQuit reports whether text is the shell command QUIT or EXIT.
func isQuit(text string) bool {
	t := strings.ToUpper(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text), ";")))
	return t == "QUIT" || t == "EXIT"
}

func (sh *Shell) execText(ctx context.Context, text string) error {
	stmts, err := parser.Parse(text)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		if err := sh.exec(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// exec executes one parsed statement.
func (sh *Shell) exec(ctx context.Context, st parser.Statement) error {
	out := sh.opts.Out
	if sh.setOpen {
		return sh.inStatementSet(st)
	}
	switch st := st.(type) {
	case *parser.BeginStatementSet:
		sh.setOpen, sh.setInserts = true, nil
		sh.info("Begin a statement set.")
		if st.First != nil {
			return sh.inStatementSet(st.First)
		}
	case *parser.EndStatementSet:
		return parser.Errorf(st.Pos, "END without BEGIN STATEMENT SET")
	case *parser.StatementSet:
		return sh.submitInserts(st.Inserts, st.SQL()+";")
	case *parser.AlterTable:
		if err := sh.sess.Exec(st, out); err != nil {
			return err
		}
		sh.info("Execute statement succeeded.")
	case *parser.ShowViews:
		names := sh.sess.Catalog.ViewNames()
		if len(names) == 0 {
			fmt.Fprintln(out, "Empty set")
			return nil
		}
		rows := make([][]string, len(names))
		for i, n := range names {
			rows[i] = []string{n}
		}
		sh.printTable([]string{"view name"}, []bool{false}, rows)
	case *parser.QueryStmt:
		return sh.runQuery(ctx, st)
	case *parser.Insert:
		return sh.submitInsert(st)
	case *parser.ShowJobs:
		sh.showJobs()
	case *parser.StopJob:
		if st.WithSavepoint {
			path, err := sh.jobs.StopWithSavepoint(st.ID)
			if err != nil {
				return err
			}
			sh.info("Stopped job %s with a savepoint: %s", st.ID, path)
			sh.info("Resume it with SET 'execution.savepoint.path' = '%s'; before the INSERT.", path)
			return nil
		}
		if err := sh.jobs.Stop(st.ID); err != nil {
			return parser.Errorf(st.Pos, "%v", err)
		}
		sh.info("Stopped job %s.", st.ID)
	case *parser.Help:
		fmt.Fprint(out, helpText)
	case *parser.SetStmt:
		if err := sh.sess.Exec(st, out); err != nil {
			return err
		}
		if st.Key != "" {
			sh.info("Session property has been set.")
		}
	case *parser.ResetStmt:
		if err := sh.sess.Exec(st, out); err != nil {
			return err
		}
		sh.info("Session property has been reset.")
	case *parser.CreateTable, *parser.CreateView, *parser.DropTable, *parser.CreateFunction, *parser.DropFunction:
		if err := sh.sess.Exec(st, out); err != nil {
			return err
		}
		sh.info("Execute statement succeeded.")
	case *parser.ShowTables:
		names := sh.sess.Catalog.Names()
		if len(names) == 0 {
			fmt.Fprintln(out, "Empty set")
			return nil
		}
		rows := make([][]string, len(names))
		for i, n := range names {
			rows[i] = []string{n}
		}
		sh.printTable([]string{"table name"}, []bool{false}, rows)
	case *parser.ShowFunctions:
		fns := sh.sess.AllFunctions()
		rows := make([][]string, len(fns))
		for i, f := range fns {
			rows[i] = []string{f.Name, f.Kind, f.Forms}
		}
		sh.printTable([]string{"function name", "kind", "forms"}, []bool{false, false, false}, rows)
	case *parser.Describe:
		desc, err := sh.sess.Catalog.DescribeTable(st.Name)
		if err != nil {
			return parser.Errorf(st.Pos, "%v", err)
		}
		rows := make([][]string, len(desc))
		for i, r := range desc {
			rows[i] = session.DescribeCells(r)
		}
		sh.printTable(planner.DescribeHeader, make([]bool, len(planner.DescribeHeader)), rows)
	default:
		// EXPLAIN, SHOW CREATE TABLE: the session prints their text.
		return sh.sess.Exec(st, out)
	}
	return nil
}

// inStatementSet handles a statement between BEGIN STATEMENT SET and END:
// an INSERT is added to the set, END runs the set as one job.
func (sh *Shell) inStatementSet(st parser.Statement) error {
	switch st := st.(type) {
	case *parser.Insert:
		sh.setInserts = append(sh.setInserts, st)
		sh.info("Add SQL update statement to the statement set.")
		return nil
	case *parser.EndStatementSet:
		ins := sh.setInserts
		sh.setOpen, sh.setInserts = false, nil
		if len(ins) == 0 {
			sh.info("The statement set is empty: nothing to run.")
			return nil
		}
		parts := make([]string, len(ins))
		for i, in := range ins {
			parts[i] = in.SQL() + ";"
		}
		return sh.submitInserts(ins, strings.Join(parts, "\n"))
	}
	return parser.Errorf(st.Position(), "only INSERT statements can be in a statement set (END; runs it)")
}

// submitInsert starts an INSERT as a background job and prints its id.
func (sh *Shell) submitInsert(ins *parser.Insert) error {
	return sh.submitInserts([]*parser.Insert{ins}, ins.SQL()+";")
}

// submitInserts starts INSERTs as one background job (one INSERT, or a
// statement set) and prints its id.
func (sh *Shell) submitInserts(ins []*parser.Insert, query string) error {
	var plan *planner.Plan
	var err error
	if len(ins) == 1 {
		plan, err = sh.sess.PlanInsert(ins[0])
	} else {
		plan, err = sh.sess.PlanStatementSet(ins)
	}
	if err != nil {
		return err
	}
	id, restored, err := sh.jobs.SubmitRestoring(sh.sess, plan, query, session.RunOptions{JobName: plan.Graph.Name, Exec: sh.opts.Exec})
	if err != nil {
		return err
	}
	sh.info("Submitted job %s (%s). SHOW JOBS lists it; STOP JOB '%s' stops it.", id, plan.Graph.Name, id)
	if restored != "" {
		sh.info("Job %s resumes from %s. '%s' has been reset, so the next INSERT starts afresh.", id, restored, session.KeySavepointPath)
	}
	return nil
}

// showJobs prints the jobs of the session.
func (sh *Shell) showJobs() {
	jobs := sh.jobs.List()
	if len(jobs) == 0 {
		fmt.Fprintln(sh.opts.Out, "Empty set")
		return
	}
	rows := make([][]string, len(jobs))
	for i, j := range jobs {
		rows[i] = []string{j.ID, j.Name, string(j.State), j.Uptime.Round(time.Second).String(),
			fmt.Sprint(j.RowsIn), fmt.Sprint(j.RowsOut), fmt.Sprint(j.LateRows)}
	}
	sh.printTable([]string{"id", "name", "state", "uptime", "rows in", "rows out", "late rows"},
		[]bool{false, false, false, true, true, true, true}, rows)
	for _, j := range jobs {
		if j.Err != nil {
			fmt.Fprintf(sh.opts.Out, "job %s failed: %v\n", j.ID, j.Err)
		}
	}
}

// printTable prints rows of cells as a box table fitted to the width.
func (sh *Shell) printTable(names []string, right []bool, rows [][]string) {
	natural := make([]int, len(names))
	for _, r := range rows {
		for i, c := range r {
			natural[i] = max(natural[i], len([]rune(c)))
		}
	}
	f := newTableFormat(names, right, natural, sh.width())
	b := f.appendHeader(nil)
	for _, r := range rows {
		b = f.appendCells(b, r)
	}
	b = f.appendBorder(b)
	b = fmt.Appendf(b, "%d %s in set\n", len(rows), plural(len(rows), "row"))
	sh.opts.Out.Write(b)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
