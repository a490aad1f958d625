package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/expr"
	"github.com/weir-sql/weir/types"
)

// modCol is the test expression $i % m over BIGINT.
type modCol struct{ i, m int64 }

func (c modCol) Type() types.Type { return types.BigInt }
func (c modCol) Eval(row []types.Value) (types.Value, error) {
	return types.BigIntValue(row[c.i].Int() % c.m), nil
}
func (c modCol) String() string { return fmt.Sprintf("$%d %% %d", c.i, c.m) }

// finishedAggGraph is SELECT n % 7, SUM(n), COUNT(*) FROM seq GROUP BY 1
// over a seqSource of rows (n, 0), at parallelism par, into sink.
// extra, if set, is a second source whose rows the aggregate also reads.
func finishedAggGraph(rows int64, par int, sink *collectSink, extra *seqSource) *JobGraph {
	calc := []OperatorSpec{{ID: "calc", Name: "Calc", OutWidth: 2,
		New: NewCalc(nil, []expr.Expr{modCol{0, 7}, colRef{0, types.BigInt}})}}
	aggs := []AggCall{
		{Func: AggSum, Arg: 1, ArgType: types.BigInt, Type: types.BigInt},
		{Func: AggCountStar, Arg: -1, Type: types.BigInt},
	}
	hash := Partitioning{Kind: Hash, Keys: []int{0}}
	g := &JobGraph{Name: "fin", Vertices: []*Vertex{
		{ID: "src", Name: "Source -> Calc", Parallelism: par, Source: &seqSource{rows: rows}, SourceWidth: 2, SourceName: "seq", Operators: calc},
		{ID: "agg", Name: "GroupAggregate -> Sink", Parallelism: par, Inputs: []Input{{From: 0, Partition: hash}},
			Operators: []OperatorSpec{{ID: "agg", Name: "GroupAggregate", OutWidth: 3, New: NewGroupAgg([]int{0}, aggs)}},
			Sink:      sink, SinkName: "out"},
	}}
	if extra != nil {
		v := &Vertex{ID: "src2", Name: "Source2 -> Calc", Parallelism: par, Source: extra, SourceWidth: 2, SourceName: "seq2",
			Operators: []OperatorSpec{{ID: "calc2", Name: "Calc", OutWidth: 2, New: calc[0].New}}}
		g.Vertices = []*Vertex{g.Vertices[0], v, g.Vertices[1]}
		g.Vertices[2].Inputs = []Input{{From: 0, Partition: hash}, {From: 1, Partition: hash}}
	}
	return g
}

// seqAggAnswer is the batch answer of finishedAggGraph over rows [0, n).
func seqAggAnswer(n int64) []string {
	var sum, cnt [7]int64
	for i := range n {
		sum[i%7] += i
		cnt[i%7]++
	}
	var want [][]types.Value
	for k := range 7 {
		if cnt[k] > 0 {
			want = append(want, bigints(k, int(sum[k]), int(cnt[k])))
		}
	}
	return sortedRows(want)
}

// TestFinishedOperatorsWriteNoState: a bounded job's final checkpoint
// marks the aggregate finished and writes no state for it (its input
// ended, nothing can change it); restoring that checkpoint, at the same
// parallelism or rescaled, with the input grown, emits nothing and does
// not fail. A restore that could feed the finished aggregate rows again
// (a source above it that had not ended, or one new to the query) is
// refused with an error that says why.
func TestFinishedOperatorsWriteNoState(t *testing.T) {
	sink := &collectSink{}
	ck := testCheckpointing(t, t.TempDir(), "fin", nil, 0)
	var last CheckpointReport
	ck.Report = func(r CheckpointReport) { last = r }
	runJob(t, finishedAggGraph(1000, 2, sink, nil), Options{Checkpoint: ck, BatchSize: 16})
	if got, want := applyChangelog(t, sink.rows), seqAggAnswer(1000); !slices.Equal(got, want) {
		t.Fatalf("result %v, want %v", got, want)
	}
	if !last.Final || last.Finished != 1 || last.StateSize != 0 {
		t.Errorf("the last checkpoint's report %+v, want the final one with 1 finished operator and no state", last)
	}
	final, _, err := ck.Storage.Latest()
	if err != nil {
		t.Fatal(err)
	}
	op := final.Meta.Operator("agg")
	if op == nil || !op.Finished() || len(op.Subtasks) != 2 {
		t.Fatalf("the final checkpoint's aggregate state is %+v, want two finished subtasks", op)
	}
	for sub := range 2 {
		if _, err := os.Stat(filepath.Join(final.Path, checkpoint.SubtaskDirName("agg", sub))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("finished subtask %d has a state folder (stat: %v)", sub, err)
		}
	}
	for _, par := range []int{2, 1, 3} {
		sink := &collectSink{}
		ck := testCheckpointing(t, t.TempDir(), "fin", final, 0)
		runJob(t, finishedAggGraph(3000, par, sink, nil), Options{Checkpoint: ck, BatchSize: 16})
		if len(sink.rows) != 0 {
			t.Fatalf("restored at parallelism %d: emitted %d rows, e.g. %s", par, len(sink.rows), sink.rows[0])
		}
	}

	refused := func(name string, g *JobGraph, r *checkpoint.Checkpoint, why string) {
		t.Helper()
		j, err := Start(context.Background(), g, Options{Checkpoint: testCheckpointing(t, t.TempDir(), "fin", r, 0), BatchSize: 16})
		if err == nil {
			err = j.Wait()
		}
		if err == nil || !strings.Contains(err.Error(), "operator GroupAggregate had finished") || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: restore gave %v, want a refusal that says %q", name, err, why)
		}
	}
	edited := *final
	edited.Meta.Sources = slices.Clone(final.Meta.Sources)
	edited.Meta.Sources[1].Ended = false
	refused("a source subtask had not ended", finishedAggGraph(3000, 2, &collectSink{}, nil), &edited, "source seq above it in this query had not ended")
	refused("a new source feeds the aggregate", finishedAggGraph(1000, 2, &collectSink{}, &seqSource{rows: 10}), final, "source seq2 above it in this query is new to the query")
}

// TestStoppedOperatorsKeepState: a job stopped before its input ended
// (Job.Stop) takes its final checkpoint with the aggregate's state, not
// marked finished, and a restore reads on from it: over the two runs the
// applied result equals the batch answer over all rows read.
func TestStoppedOperatorsKeepState(t *testing.T) {
	sink := &collectSink{firstWrite: make(chan struct{})}
	final := stopAfterFirstWrite(t, finishedAggGraph(1<<40, 2, sink, nil), sink, testCheckpointing(t, t.TempDir(), "fin", nil, 0), 16)
	op := final.Meta.Operator("agg")
	if op == nil || len(op.Subtasks) != 2 || slices.ContainsFunc(op.Subtasks, func(s checkpoint.SubtaskState) bool { return s.Finished }) {
		t.Fatalf("the checkpoint after a stop has aggregate state %+v, want two subtasks with state", op)
	}
	most := seqEndPast(t, final, 200)
	sink2 := &collectSink{}
	ck2 := testCheckpointing(t, t.TempDir(), "fin", final, 0)
	runJob(t, finishedAggGraph(most, 3, sink2, nil), Options{Checkpoint: ck2, BatchSize: 16})
	// The rows the first run emitted after its final checkpoint's cut are
	// not there: the collect sink is not transactional, but a stop's last
	// checkpoint is taken after everything was emitted.
	if got, want := applyChangelog(t, append(slices.Clone(sink.rows), sink2.rows...)), seqAggAnswer(most); !slices.Equal(got, want) {
		t.Fatalf("result over the stopped run and its restore %v, want %v", got, want)
	}
}

// TestFinishedVertexWhileOthersRun: in a job of two statements, the first
// (a bounded aggregate) ends while the second's source runs on. The
// checkpoints taken after that mark the aggregate finished, with no state;
// the job is killed, and a restore of such a checkpoint with the first
// input grown emits nothing more for the first statement, whose output of
// the first run is the batch answer, while the second goes on.
func TestFinishedVertexWhileOthersRun(t *testing.T) {
	sinkA, sinkB := &collectSink{}, &collectSink{}
	build := func(rows int64, trickle *trickleSource) *JobGraph {
		g := finishedAggGraph(rows, 2, sinkA, nil)
		g.Vertices = append(g.Vertices, &Vertex{ID: "trickle", Name: "Trickle", Parallelism: 1, Source: trickle, SourceWidth: 2,
			SourceName: "trickle", Sink: sinkB, SinkName: "b"})
		return g
	}
	ck := testCheckpointing(t, t.TempDir(), "fin", nil, 0)
	ck.Interval, ck.Retain = 5e6, 1000 // 5 ms
	found := make(chan *checkpoint.Checkpoint, 1)
	ck.Report = func(r CheckpointReport) {
		if !r.Completed {
			return
		}
		c, err := checkpoint.Load(checkpoint.OSFS{}, r.Path)
		if err != nil {
			t.Errorf("load checkpoint %d: %v", r.ID, err)
			return
		}
		if op := c.Meta.Operator("agg"); op != nil && op.Finished() {
			select {
			case found <- c:
			default:
			}
		}
	}
	trickle := &trickleSource{idle: true, done: make(chan struct{})}
	j, err := Start(context.Background(), build(1000, trickle), Options{Checkpoint: ck, BatchSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- j.Wait() }()
	var c *checkpoint.Checkpoint
	select {
	case c = <-found:
	case err := <-ended:
		t.Fatalf("the job ended (%v) before a checkpoint marked the aggregate finished", err)
	}
	j.Cancel() // kill the job
	if err := <-ended; !errors.Is(err, ErrCancelled) {
		t.Fatalf("the killed job ended with %v", err)
	}
	if got, want := applyChangelog(t, sinkA.rows), seqAggAnswer(1000); !slices.Equal(got, want) {
		t.Fatalf("first statement's result %v, want %v", got, want)
	}
	// Every subtask is marked (a subtask asked for its snapshot before
	// the last one ended may have written a folder, left unreferenced).
	for _, st := range c.Meta.Operator("agg").Subtasks {
		if !st.Finished || st.Dir != "" {
			t.Errorf("checkpoint %d: aggregate subtask %+v, want it finished without state", c.Meta.CheckpointID, st)
		}
	}
	sinkA.rows, sinkB.rows = nil, nil
	done := &trickleSource{done: make(chan struct{})}
	close(done.done)
	runJob(t, build(5000, done), Options{Checkpoint: testCheckpointing(t, t.TempDir(), "fin", c, 0), BatchSize: 16})
	if len(sinkA.rows) != 0 {
		t.Fatalf("the restored finished statement emitted %d rows, e.g. %s", len(sinkA.rows), sinkA.rows[0])
	}
}

// TestRestoredFinishedStaysFinished: a run restored from a checkpoint in
// which the aggregate had finished marks it finished in every checkpoint
// it takes, also one taken at once (a savepoint), before the restored
// sources have ended again; so restoring that savepoint into the query
// changed to feed the aggregate from a new source is refused, never run
// on the aggregate's empty state. Several attempts, since whether the
// savepoint comes before the restored source ends is a race.
func TestRestoredFinishedStaysFinished(t *testing.T) {
	withTrickle := func(g *JobGraph, tr *trickleSource) *JobGraph {
		g.Vertices = append(g.Vertices, &Vertex{ID: "trickle", Name: "Trickle", Parallelism: 1, Source: tr, SourceWidth: 2,
			SourceName: "trickle", Sink: &collectSink{}, SinkName: "b"})
		return g
	}
	ck := testCheckpointing(t, t.TempDir(), "fin", nil, 0)
	runJob(t, finishedAggGraph(1000, 2, &collectSink{}, nil), Options{Checkpoint: ck, BatchSize: 16})
	final, _, err := ck.Storage.Latest()
	if err != nil {
		t.Fatal(err)
	}
	for attempt := range 5 {
		trickle := &trickleSource{idle: true, done: make(chan struct{})}
		j, err := Start(context.Background(), withTrickle(finishedAggGraph(1000, 2, &collectSink{}, nil), trickle),
			Options{Checkpoint: testCheckpointing(t, t.TempDir(), "fin", final, 0), BatchSize: 16})
		if err != nil {
			t.Fatal(err)
		}
		sp, err := j.Savepoint(context.Background(), t.TempDir(), false)
		close(trickle.done)
		if werr := j.Wait(); err != nil || werr != nil {
			t.Fatalf("attempt %d: savepoint %v, job %v", attempt, err, werr)
		}
		c, err := checkpoint.Load(checkpoint.OSFS{}, sp)
		if err != nil {
			t.Fatal(err)
		}
		if op := c.Meta.Operator("agg"); op == nil || !op.Finished() {
			t.Fatalf("attempt %d: the savepoint after the restore has aggregate state %+v, want it marked finished", attempt, op)
		}
		done := &trickleSource{done: make(chan struct{})}
		close(done.done)
		j, err = Start(context.Background(), withTrickle(finishedAggGraph(1000, 2, &collectSink{}, &seqSource{rows: 10}), done),
			Options{Checkpoint: testCheckpointing(t, t.TempDir(), "fin", c, 0), BatchSize: 16})
		if err == nil {
			err = j.Wait()
		}
		if err == nil || !strings.Contains(err.Error(), "is new to the query") {
			t.Fatalf("attempt %d: restoring the savepoint into the query with a new source gave %v, want a refusal", attempt, err)
		}
	}
}

// TestMarkFinished: when one subtask of an operator is marked finished in
// a checkpoint, every subtask of it is (its state is dead too), and other
// operators are left as they are.
func TestMarkFinished(t *testing.T) {
	ops := []checkpoint.OperatorState{
		{ID: "a", Subtasks: []checkpoint.SubtaskState{{Subtask: 0, Dir: "op-a-0", StateBytes: 10, Keys: 2, Files: []checkpoint.FileInfo{{Name: "x"}}}, {Subtask: 1, Finished: true}}},
		{ID: "b", Subtasks: []checkpoint.SubtaskState{{Subtask: 0, Dir: "op-b-0", StateBytes: 5}, {Subtask: 1, Dir: "op-b-1"}}},
	}
	markFinished(ops)
	for _, st := range ops[0].Subtasks {
		if !st.Finished || st.Dir != "" || st.Files != nil || st.StateBytes != 0 || st.Keys != 0 {
			t.Errorf("operator a subtask %d: %+v, want finished without state", st.Subtask, st)
		}
	}
	if ops[1].Finished() || ops[1].Subtasks[0].Dir != "op-b-0" || ops[1].Subtasks[0].StateBytes != 5 {
		t.Errorf("operator b changed: %+v", ops[1])
	}
}
