package exec

import (
	"errors"
	"fmt"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
)

// ErrCommittedOutput is wrapped by *CommittedOutputError.
var ErrCommittedOutput = errors.New("the sink already holds output this run would write again")

// CommittedOutputError refuses a start that would write committed output
// a second time: a durable sink holds output committed by a checkpoint
// later than the one the job starts from (Restored; 0 when it starts from
// the beginning). That happens when a restore falls back past a damaged
// checkpoint, resumes an older savepoint, or a job runs again from scratch
// into the folder of an earlier run.
type CommittedOutputError struct {
	Sink      string // the sink table
	Location  string // where its output is (a folder)
	Committed int64  // the highest checkpoint with committed output there
	Restored  int64  // the checkpoint the job starts from; 0 for none
}

func (e *CommittedOutputError) Error() string {
	var what string
	if e.Restored == 0 {
		what = fmt.Sprintf("sink %s: %s already holds output committed by an earlier run of the job (up to checkpoint %d); "+
			"starting from the beginning would write it all again. Either continue that run (--restore latest, "+
			"if it took checkpoints), point the sink at a fresh folder (or empty this one), or accept the rows again "+
			"with --allow-duplicate-output (SET 'table.exec.sink.allow-duplicate-output' = 'true')",
			e.Sink, e.Location, e.Committed)
	} else {
		what = fmt.Sprintf("sink %s: %s already holds output committed by checkpoint %d, later than checkpoint %d "+
			"that the job restores (the later checkpoint is damaged, was not kept, or an older savepoint was chosen); "+
			"running on would write the rows between checkpoint %d and %d again. Either restore checkpoint %d if you "+
			"still have it (--restore PATH), point the sink at a fresh folder, or accept the rows again with "+
			"--allow-duplicate-output (SET 'table.exec.sink.allow-duplicate-output' = 'true')",
			e.Sink, e.Location, e.Committed, e.Restored, e.Restored, e.Committed, e.Committed)
	}
	return what
}

// Unwrap makes errors.Is(err, ErrCommittedOutput) true.
func (e *CommittedOutputError) Unwrap() error { return ErrCommittedOutput }

// checkCommittedOutput looks at every durable sink of the job before it
// starts from restore (nil: from the beginning). If one holds output
// committed after that checkpoint, the start fails with a
// *CommittedOutputError, unless AllowDuplicateOutput says to write it
// again (then a Notice says so). It returns the highest checkpoint with
// committed output of any sink.
func checkCommittedOutput(j *Job, restore *checkpoint.Checkpoint) (int64, error) {
	var restored int64
	if restore != nil {
		restored = restore.Meta.CheckpointID
	}
	var highest int64
	for _, v := range j.graph.Vertices {
		ds, ok := v.Sink.(connector.DurableSink)
		if !ok {
			continue
		}
		committed, err := ds.Committed()
		if err != nil {
			return 0, fmt.Errorf("sink %s: %w", v.SinkName, err)
		}
		highest = max(highest, committed)
		if committed <= restored {
			continue
		}
		e := &CommittedOutputError{Sink: v.SinkName, Location: ds.Location(), Committed: committed, Restored: restored}
		if !j.opts.AllowDuplicateOutput {
			return 0, e
		}
		if j.opts.Notice != nil {
			j.opts.Notice(fmt.Sprintf("sink %s: writing output again that %s already holds up to checkpoint %d (--allow-duplicate-output)",
				v.SinkName, e.Location, committed))
		}
	}
	return highest, nil
}
