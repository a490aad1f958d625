// Package session executes SQL statements the way a user issues them: it
// holds the catalog and the SET configuration, runs DDL and SET at once, and
// turns INSERT statements into jobs. `weir run`, `weir explain` and the shell
// all drive a Session.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-sql/weir/confval"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/builtin"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/planner"
	"github.com/weir-sql/weir/udf"
)

// Session is one user's SQL session: catalog, configuration and connectors.
type Session struct {
	Catalog    *planner.Catalog
	Config     map[string]string
	Connectors *connector.Registry
	Env        connector.Env
	// Functions holds the Go functions of the build that CREATE FUNCTION
	// can bind (package udf); nil: none.
	Functions *udf.Registry
	// Warn, if set, receives warnings about statements (a SET of a Flink
	// key that Weir ignores); by default they go to Env.Stderr.
	Warn func(pos parser.Pos, msg string)

	// outMu orders the writes of jobs' sinks to Env.Stdout and Env.Stderr:
	// the subtasks of one or several print sinks write at once.
	// (a pointer: a background job's copy of the session shares it; nil
	// for a Session not made by New: writes are not ordered).
	outMu *sync.Mutex
}

// lockedWriter writes to w under a lock shared by all writers of a session.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// New returns a session with the built-in connectors, writing to env.
func New(env connector.Env) *Session {
	return &Session{
		Catalog:    planner.NewCatalog(),
		Config:     map[string]string{},
		Connectors: builtin.Registry(),
		Env:        env,
		outMu:      new(sync.Mutex),
	}
}

// RunOptions tunes how RunScript runs jobs.
type RunOptions struct {
	// JobName is the default 'pipeline.name' (usually the file's base name).
	JobName string
	// Quiet suppresses progress messages on Env.Stderr.
	Quiet bool
	// Exec holds runtime options; zero values take the defaults.
	Exec exec.Options
	// Restore is "" (start from the beginning), RestoreLatest, or the
	// folder of a checkpoint or savepoint to restore. When empty,
	// 'execution.savepoint.path' is used if set.
	Restore string
	// AllowNonRestoredState drops restored state that matches no operator
	// of the query (also 'execution.savepoint.ignore-unclaimed-state').
	AllowNonRestoredState bool
	// AllowDuplicateOutput starts the job although a sink's folder holds
	// output committed after the checkpoint it starts from, writing those
	// rows again (also 'table.exec.sink.allow-duplicate-output' = 'true').
	AllowDuplicateOutput bool
	// StopWithSavepoint makes a stop (ctx cancelled: Ctrl-C, SIGTERM) write
	// a savepoint first (also 'execution.savepoint.on-stop' = 'true').
	StopWithSavepoint bool
	// Savepoints, when it delivers, takes a savepoint of the running job
	// (weir run does this on SIGUSR1).
	Savepoints <-chan struct{}
	// Control, if set, lets another goroutine watch and steer the job (the
	// shell's background jobs).
	Control *JobControl
}

// JobControl steers a job that runJob runs: it exposes the current run's
// exec.Job (which changes when the job restarts) and takes savepoints on
// request.
type JobControl struct {
	mu        sync.Mutex
	current   *exec.Job
	savepoint chan controlSavepoint
	start     chan struct{} // closed when the first run has started
	once      sync.Once
}

type controlSavepoint struct {
	stop  bool
	reply chan controlResult
}

type controlResult struct {
	path string
	err  error
}

// NewJobControl returns a control for one job.
func NewJobControl() *JobControl {
	return &JobControl{savepoint: make(chan controlSavepoint), start: make(chan struct{})}
}

// started is closed once the job's first run has started.
func (c *JobControl) started() <-chan struct{} { return c.start }

// Metrics returns the current run's metrics (zero before it starts).
func (c *JobControl) Metrics() exec.Metrics {
	c.mu.Lock()
	j := c.current
	c.mu.Unlock()
	if j == nil {
		return exec.Metrics{}
	}
	return j.Metrics()
}

// Savepoint takes a savepoint (and with stop, stops the job after it) and
// returns its folder. done is closed when the job has ended.
func (c *JobControl) Savepoint(stop bool, done <-chan struct{}) (string, error) {
	r := controlSavepoint{stop: stop, reply: make(chan controlResult, 1)}
	select {
	case c.savepoint <- r:
	case <-done:
		return "", fmt.Errorf("the job has ended")
	}
	res := <-r.reply
	return res.path, res.err
}

func (c *JobControl) set(j *exec.Job) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.current = j
	c.mu.Unlock()
	c.once.Do(func() { close(c.start) })
}

func (c *JobControl) requests() chan controlSavepoint {
	if c == nil {
		return nil
	}
	return c.savepoint
}

// JobNameFromPath returns the default job name for a query file: its base
// name without extension.
func JobNameFromPath(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// RunScript executes a script. SET, RESET, DDL, EXPLAIN and SHOW statements
// take effect in order; all INSERT statements are collected and run at the
// end as one job (as Flink's STATEMENT SET), until bounded input is exhausted
// or ctx is cancelled (a clean stop).
func (s *Session) RunScript(ctx context.Context, src string, opts RunOptions) error {
	plan, query, err := s.planScript(src, opts, false)
	if err != nil || plan == nil {
		return err
	}
	return s.runJob(ctx, plan, query, opts)
}

// InitScript executes an init file (weir run -i, as the Flink SQL
// client's -i): its SET, DDL and other statements take effect in order, so
// that a query file run next sees its tables, views and functions. An
// INSERT or a bare query in it is an error at its line and column.
func (s *Session) InitScript(src string) error {
	stmts, err := parser.Parse(src)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		switch st.(type) {
		case *parser.Insert, *parser.QueryStmt:
			return withSource(parser.Errorf(st.Position(),
				"an init file holds SET and DDL statements only; %s belongs in the query file", firstWord(st.SQL())), src)
		}
		if err := s.Exec(st, s.Env.Stdout); err != nil {
			return withSource(err, src)
		}
	}
	return nil
}

// ExplainScript executes a script's SET and DDL statements and prints the
// plan of its INSERT statements (as one job) and of its EXPLAIN statements
// and queries.
func (s *Session) ExplainScript(src string, opts RunOptions) error {
	plan, _, err := s.planScript(src, opts, true)
	if err != nil || plan == nil {
		return err
	}
	fmt.Fprintln(s.Env.Stdout, plan.Explain)
	return nil
}

// PlanScript executes a script's SET, DDL and other statements in order
// and plans its INSERTs as one job, as RunScript does, without running it
// (for callers that run the job themselves, such as the benchmarks). It
// returns nil when the script has no INSERT, and the INSERTs' text.
func (s *Session) PlanScript(src string, opts RunOptions) (*planner.Plan, string, error) {
	return s.planScript(src, opts, false)
}

// planScript executes a script's statements other than INSERT in order and
// plans its INSERTs as one job; it returns nil when there is none, and the
// INSERTs' text. With explain, bare queries print their plan.
func (s *Session) planScript(src string, opts RunOptions, explain bool) (*planner.Plan, string, error) {
	stmts, err := parser.Parse(src)
	if err != nil {
		return nil, "", err
	}
	var inserts []*parser.Insert
	for _, st := range stmts {
		switch st := st.(type) {
		case *parser.Insert:
			inserts = append(inserts, st)
			continue
		case *parser.StatementSet:
			// All INSERTs of a file run as one job anyway.
			inserts = append(inserts, st.Inserts...)
			continue
		case *parser.BeginStatementSet:
			return nil, "", withSource(parser.Errorf(st.Pos, "this statement set has no END: close it with END;"), src)
		case *parser.EndStatementSet:
			return nil, "", withSource(parser.Errorf(st.Pos, "END without BEGIN STATEMENT SET (or EXECUTE STATEMENT SET BEGIN)"), src)
		case *parser.QueryStmt:
			if explain {
				st2 := &parser.Explain{StmtBase: st.StmtBase, Stmt: st}
				if err := s.Exec(st2, s.Env.Stdout); err != nil {
					return nil, "", withSource(err, src)
				}
				continue
			}
			return nil, "", withSource(parser.Errorf(st.Position(),
				"a query in a file needs a sink: INSERT INTO a table (a 'print' table shows the changelog), or run the file in the shell (weir -f FILE)"), src)
		}
		if err := s.Exec(st, s.Env.Stdout); err != nil {
			return nil, "", withSource(err, src)
		}
	}
	if len(inserts) == 0 {
		return nil, "", nil
	}
	plan, err := s.planner().PlanInserts(inserts, s.jobName(opts.JobName))
	if err != nil {
		return nil, "", withSource(err, src)
	}
	parts := make([]string, len(inserts))
	for i, st := range inserts {
		parts[i] = st.SQL() + ";"
	}
	return plan, strings.Join(parts, "\n"), nil
}

// Exec executes one statement that does not start a job (everything but
// INSERT and a bare query), writing any result to out.
func (s *Session) Exec(st parser.Statement, out io.Writer) error {
	switch st := st.(type) {
	case *parser.SetStmt:
		if st.Key == "" {
			keys := make([]string, 0, len(s.Config))
			for k := range s.Config {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(out, "'%s' = '%s'\n", k, s.Config[k])
			}
			return nil
		}
		warning, err := CheckSet(st.Key, st.Value)
		if err != nil {
			return parser.Errorf(st.Pos, "%v", err)
		}
		if warning != "" {
			s.warn(st.Pos, warning)
		}
		s.Config[st.Key] = st.Value
	case *parser.ResetStmt:
		if st.Key == "" {
			clear(s.Config)
		} else {
			if err := CheckReset(st.Key, s.Config); err != nil {
				return parser.Errorf(st.Position(), "%v", err)
			}
			delete(s.Config, st.Key)
		}
	case *parser.CreateTable:
		return s.Catalog.CreateTable(st)
	case *parser.CreateView:
		return s.Catalog.CreateView(st)
	case *parser.DropTable:
		return s.Catalog.Drop(st)
	case *parser.AlterTable:
		return s.Catalog.AlterTable(st)
	case *parser.ShowViews:
		for _, n := range s.Catalog.ViewNames() {
			fmt.Fprintln(out, n)
		}
	case *parser.ShowCreateView:
		text, err := s.Catalog.ShowCreateView(st.Name)
		if err != nil {
			return parser.Errorf(st.Pos, "%v", err)
		}
		fmt.Fprintln(out, text)
	case *parser.CreateFunction:
		return s.createFunction(st)
	case *parser.DropFunction:
		return s.Catalog.DropFunction(st)
	case *parser.Explain:
		text, err := s.planner().Explain(st)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, text)
	case *parser.ShowTables:
		for _, n := range s.Catalog.Names() {
			fmt.Fprintln(out, n)
		}
	case *parser.ShowFunctions:
		for _, f := range s.AllFunctions() {
			fmt.Fprintf(out, "%s\t%s\t%s\n", f.Name, f.Kind, f.Forms)
		}
	case *parser.Describe:
		rows, err := s.Catalog.DescribeTable(st.Name)
		if err != nil {
			return err
		}
		for _, r := range rows {
			fmt.Fprintln(out, strings.TrimRight(strings.Join(DescribeCells(r), "\t"), "\t"))
		}
	case *parser.ShowCreateTable:
		text, err := s.Catalog.ShowCreate(st.Name)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, text)
	case *parser.Insert, *parser.QueryStmt, *parser.StatementSet:
		return parser.Errorf(st.Position(), "%s starts a job; run it with 'weir run' or in the shell", firstWord(st.SQL()))
	default:
		return parser.Errorf(st.Position(), "%s is not supported in a query file", firstWord(st.SQL()))
	}
	return nil
}

// DescribeCells returns a DESCRIBE row's cells, in the order of
// planner.DescribeHeader, as Flink shows them (null as TRUE or FALSE).
func DescribeCells(r planner.DescribeRow) []string {
	null := "FALSE"
	if r.Null {
		null = "TRUE"
	}
	return []string{r.Name, r.Type, null, r.Key, r.Extras, r.Watermark}
}

func (s *Session) warn(pos parser.Pos, msg string) {
	if s.Warn != nil {
		s.Warn(pos, msg)
		return
	}
	fmt.Fprintf(s.Env.Stderr, "weir: warning: line %d:%d: %s\n", pos.Line, pos.Col, msg)
}

func (s *Session) planner() *planner.Planner {
	env := s.Env
	env.Location = s.Location()
	if env.Stdout != nil && s.outMu != nil {
		env.Stdout = lockedWriter{mu: s.outMu, w: env.Stdout}
	}
	if env.Stderr != nil && s.outMu != nil {
		env.Stderr = lockedWriter{mu: s.outMu, w: env.Stderr}
	}
	return &planner.Planner{Catalog: s.Catalog, Connectors: s.Connectors, Env: env, Config: s.Config}
}

// Location returns the session's time zone ('table.local-time-zone';
// 'default', or a value SET did not accept, is the machine's).
func (s *Session) Location() *time.Location {
	if v, ok := s.Config[KeyLocalTimeZone]; ok {
		if loc, err := confval.TimeZone(v); err == nil {
			return loc
		}
	}
	return time.Local
}

func (s *Session) jobName(def string) string {
	if n := s.Config["pipeline.name"]; n != "" {
		return n
	}
	if def == "" {
		return "weir-job"
	}
	return def
}

// runJob runs a planned job to its end and reports on stderr. With
// checkpointing, a failed job restarts from its latest checkpoint as the
// restart strategy allows.
func (s *Session) runJob(ctx context.Context, plan *planner.Plan, query string, opts RunOptions) error {
	start := time.Now()
	if opts.Restore == "" {
		opts.Restore = s.Config[KeySavepointPath]
	}
	if s.boolKey(KeySavepointOnStop) {
		opts.StopWithSavepoint = true
	}
	if s.boolKey(KeyIgnoreUnclaimed) {
		opts.AllowNonRestoredState = true
	}
	if s.boolKey(KeyAllowDuplicateOutput) {
		opts.AllowDuplicateOutput = true
	}
	ck, err := s.checkpointing(plan, query, opts)
	if err != nil {
		return err
	}
	held, err := s.claim(plan, ck)
	if err != nil {
		return err
	}
	defer held.release(s)
	defer s.removeWorkDir(ck)
	strategy, err := s.restartStrategy(ck != nil && ck.Interval > 0)
	if err != nil {
		return err
	}
	restore := opts.Restore
	var rowsRead, rowsWritten, skipped, dropped, late int64
	badCheckpoints := map[int64]error{} // whose state could not be restored
	// Until this run completes a checkpoint, a restart restores what the
	// first attempt did (a savepoint, or nothing), not the latest
	// checkpoint in the job's folder, which an earlier run may have left.
	budgetShown := false // the state budget line, once per run
	var completedInRun atomic.Bool
	var firstCompleted atomic.Int64 // the run's first completed checkpoint
	for {
		eopts := s.JobOptions(opts.Exec)
		eopts.AllowDuplicateOutput = opts.AllowDuplicateOutput
		if eopts.Notice == nil {
			eopts.Notice = func(msg string) { fmt.Fprintf(s.Env.Stderr, "weir: warning: %s\n", msg) }
		}
		if ck != nil {
			r, err := s.findRestore(ck, restore, badCheckpoints)
			if err != nil {
				return err
			}
			// Falling back never goes below what this run started from:
			// with none of its own checkpoints usable, restore the first
			// attempt's savepoint or checkpoint again.
			if first := firstCompleted.Load(); restore != opts.Restore && opts.Restore != "" && opts.Restore != RestoreLatest &&
				first > 0 && (r == nil || r.Meta.CheckpointID < first) {
				fmt.Fprintf(s.Env.Stderr, "weir: no checkpoint of this run can be restored: restoring %s again\n", opts.Restore)
				if r, err = s.findRestore(ck, opts.Restore, nil); err != nil {
					return err
				}
			}
			c := *ck
			c.Restore = r
			report := c.Report
			c.Report = func(r exec.CheckpointReport) {
				if r.Completed {
					completedInRun.Store(true)
					firstCompleted.CompareAndSwap(0, r.ID)
				}
				if report != nil {
					report(r)
				}
			}
			eopts.Checkpoint = &c
		}
		// Without checkpointing state stays in memory, unbounded; the
		// shell's jobs (Quiet) do not report their checkpoints either.
		// Told before the job runs: its checkpoint lines come after.
		if !budgetShown && ck != nil && !opts.Quiet {
			eopts.Built = func(j *exec.Job) {
				budgetShown = true
				s.reportStateBudget(plan.Graph.Name, j.StateBudget())
			}
		}
		job, err := exec.Start(context.WithoutCancel(ctx), plan.Graph, eopts)
		if err != nil {
			return fmt.Errorf("start job %s: %w", plan.Graph.Name, err)
		}
		err = s.superviseJob(ctx, job, opts)
		m := job.Metrics()
		rowsRead += m.RowsRead
		rowsWritten += m.RowsWritten
		skipped += m.Skipped
		dropped += m.Dropped
		late += m.LateRows
		if err == nil {
			break
		}
		// A checkpoint whose state cannot be read back is skipped for an
		// older one, as a damaged one is before it is opened; the restart
		// strategy is not asked, since the job never ran.
		var bad *exec.StateRestoreError
		if errors.As(err, &bad) && restore == RestoreLatest && ctx.Err() == nil {
			if _, seen := badCheckpoints[bad.Checkpoint]; !seen {
				badCheckpoints[bad.Checkpoint] = fmt.Errorf("its state could not be restored: %w", bad.Err)
				fmt.Fprintf(s.Env.Stderr, "weir: checkpoint %d cannot be restored (%v): trying the one before it\n", bad.Checkpoint, bad.Err)
				continue
			}
		}
		if errors.Is(err, exec.ErrCancelled) {
			return fmt.Errorf("job %s: %w before it finished (output not committed yet was discarded)", plan.Graph.Name, err)
		}
		if errors.Is(err, connector.ErrPermanent) {
			return fmt.Errorf("job %s failed (a restart would fail the same way): %w", plan.Graph.Name, err)
		}
		if ck == nil || !strategy.allow(time.Now()) || ctx.Err() != nil {
			return fmt.Errorf("job %s failed: %w", plan.Graph.Name, err)
		}
		fmt.Fprintf(s.Env.Stderr, "weir: job %s failed: %v\nweir: restarting (%s) in %s\n", plan.Graph.Name, err, strategy.kind, strategy.delay)
		if !sleepCtx(ctx, strategy.delay) {
			return fmt.Errorf("job %s failed: %w", plan.Graph.Name, err)
		}
		if completedInRun.Load() {
			restore = RestoreLatest
		}
	}
	if skipped > 0 {
		fmt.Fprintf(s.Env.Stderr, "weir: skipped %d malformed record(s) (ignore-parse-errors)\n", skipped)
	}
	if late > 0 {
		fmt.Fprintf(s.Env.Stderr, "weir: dropped %d late row(s) (behind the watermark: in windows that had fired, or OVER on event time)\n", late)
	}
	if dropped > 0 {
		fmt.Fprintf(s.Env.Stderr, "weir: dropped %d row(s) with NULL in a NOT NULL sink column ('%s' = 'DROP')\n", dropped, planner.KeyNotNullEnforcer)
	}
	if !opts.Quiet {
		how := "finished"
		if ctx.Err() != nil {
			how = "stopped"
		}
		lateText := ""
		if late > 0 {
			lateText = fmt.Sprintf(", %d late rows dropped", late)
		}
		fmt.Fprintf(s.Env.Stderr, "weir: job %s %s in %s: %d rows read, %d rows written%s\n",
			plan.Graph.Name, how, time.Since(start).Round(time.Millisecond), rowsRead, rowsWritten, lateText)
	}
	return nil
}

// superviseJob waits for a running job, stopping it when ctx is cancelled
// (with a savepoint first if asked) and taking a savepoint whenever
// opts.Savepoints delivers. Savepoint paths are reported on stderr.
func (s *Session) superviseJob(ctx context.Context, job *exec.Job, opts RunOptions) error {
	opts.Control.set(job)
	var wg sync.WaitGroup
	defer wg.Wait()
	savepoint := func(stop bool, reply chan controlResult) {
		defer wg.Done()
		path, err := job.Savepoint(context.Background(), s.savepointDir(), stop)
		if reply != nil {
			reply <- controlResult{path: path, err: err}
		}
		if err != nil {
			fmt.Fprintf(s.Env.Stderr, "weir: savepoint failed: %v\n", err)
			if stop {
				job.Stop()
			}
			return
		}
		if reply == nil { // a requester reports the folder itself
			fmt.Fprintf(s.Env.Stderr, "weir: savepoint written to %s\n", path)
		}
	}
	stopping := ctx.Done()
	for {
		select {
		case <-job.Done():
			return job.Wait()
		case <-stopping:
			stopping = nil
			if job.SourcesFinished() {
				// Stop would wait for the operators to finish what the
				// sources read; nothing is left to stop but them.
				fmt.Fprintf(s.Env.Stderr, "weir: stopping job %s: its sources have read all their input and its operators are still at work: cancelling them\n", job.Name())
				job.Cancel()
			} else if opts.StopWithSavepoint {
				wg.Add(1)
				go savepoint(true, nil)
			} else {
				job.Stop()
			}
		case <-opts.Savepoints:
			wg.Add(1)
			go savepoint(false, nil)
		case r := <-opts.Control.requests():
			wg.Add(1)
			go savepoint(r.stop, r.reply)
		}
	}
}

// savepointDir is 'state.savepoints.dir' (default weir-savepoints).
func (s *Session) savepointDir() string {
	if d := s.Config[KeySavepointDir]; d != "" {
		return strings.TrimPrefix(d, "file://")
	}
	return DefaultSavepointDir
}

func (s *Session) boolKey(key string) bool {
	return strings.EqualFold(strings.TrimSpace(s.Config[key]), "true")
}

// withSource attaches the script text to a SQL error so that it renders the
// offending line with a caret.
func withSource(err error, src string) error {
	var perr *parser.Error
	if errors.As(err, &perr) && perr.Source == "" && error(perr) == err {
		return perr.WithSource(src)
	}
	return err
}

func firstWord(sql string) string {
	f := strings.Fields(sql)
	if len(f) == 0 {
		return "statement"
	}
	return strings.ToUpper(f[0])
}
