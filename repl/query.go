package repl

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
)

// refreshInterval is how often a running query's view is updated: at most
// ten redraws a second.
const refreshInterval = 100 * time.Millisecond

// runQuery runs a bare query as a foreground job and shows its result in
// the result mode in effect until it ends by itself (bounded input) or the
// user stops it: 'q' or Ctrl-C in the shell, ctx cancelled in a script.
func (sh *Shell) runQuery(ctx context.Context, q *parser.QueryStmt) error {
	col := newCollector(plainLimit(q.Query))
	plan, err := sh.sess.PlanQuery(q, col.sinkFor)
	if err != nil {
		return err
	}
	bounded := true
	for _, v := range plan.Graph.Vertices {
		if v.Source != nil && !v.Source.Bounded() {
			bounded = false
		}
	}
	view := sh.newView(plan.Schema, bounded)

	var keys <-chan []byte
	var interrupts <-chan os.Signal
	if sh.term != nil {
		drainSignals(sh.term.interrupts)
		interrupts = sh.term.interrupts
		if sh.term.keys != nil {
			keys = sh.term.keys.chunks
			if restore, err := keyMode(sh.term.inFd); err == nil {
				defer restore()
			}
		}
	}

	start := time.Now()
	eopts := sh.opts.Exec
	sh.sess.EventTimeOptions(&eopts)
	job, err := exec.Start(context.Background(), plan.Graph, eopts)
	if err != nil {
		return fmt.Errorf("start query: %w", err)
	}
	status := func() string {
		if sh.opts.LastCheckpoint == nil {
			return ""
		}
		return sh.opts.LastCheckpoint(job)
	}
	stopped, limited := false, false
	var viewErr error
	stop := func() {
		if !stopped {
			stopped = true
			job.Stop()
		}
	}
	ctxDone := ctx.Done()
	full := col.full
	ticker := time.NewTicker(refreshInterval)
	defer ticker.Stop()
	view.begin()
	for running := true; running; {
		select {
		case <-job.Done():
			running = false
		case <-ticker.C:
			if viewErr == nil {
				if viewErr = view.update(localTimes(col.take(), sh.sess.Location())); viewErr != nil {
					stop()
				}
				view.tick(time.Since(start), status())
			}
		case <-full:
			// LIMIT n reached: the result is final, as in Flink's SQL
			// client, also on an unbounded input.
			full, limited = nil, true
			stop()
		case <-ctxDone:
			ctxDone = nil
			stop()
		case <-interrupts:
			stop()
		case c, ok := <-keys:
			if !ok {
				keys = nil
				continue
			}
			for _, k := range c {
				if k == 'q' || k == 'Q' || k == 3 {
					stop()
				}
			}
		}
	}
	if viewErr == nil {
		viewErr = view.update(localTimes(col.take(), sh.sess.Location()))
	}
	if err := job.Wait(); err != nil {
		view.abort()
		return fmt.Errorf("query failed: %w", err)
	}
	if viewErr != nil {
		view.abort()
		return fmt.Errorf("query result: %w", viewErr)
	}
	view.finish(time.Since(start), stopped && !limited)
	return nil
}

// plainLimit returns n of a query ending in LIMIT n without ORDER BY, whose
// first n rows are its result, or 0.
func plainLimit(q parser.QueryExpr) int64 {
	for {
		switch n := q.(type) {
		case *parser.With:
			q = n.Body
		case *parser.OrderLimit:
			if len(n.Order) == 0 && n.Limit > 0 {
				return n.Limit
			}
			return 0
		default:
			return 0
		}
	}
}

// drainSignals drops Ctrl-Cs pressed before the query started.
func drainSignals(c chan os.Signal) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}
