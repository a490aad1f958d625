package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/internal/filelock"
	"github.com/weir-sql/weir/planner"
)

// KeyAllowDuplicateOutput lets a job start although a sink's folder holds
// output committed after the checkpoint it starts from (as the flag
// --allow-duplicate-output). Weir's key: Flink does not check.
const KeyAllowDuplicateOutput = "table.exec.sink.allow-duplicate-output"

// checkpointLockName is the lock file in a job's checkpoint folder.
const checkpointLockName = ".lock"

// claims are the locks a run holds on the folders it writes: the job's
// checkpoint folder and every durable sink's location.
type claims struct {
	releases []func() error
}

// claim takes, for one run of the job, its checkpoint folder (ck may be
// nil: no checkpointing) and the location of each durable sink of the
// plan. A folder another run holds fails the whole claim at once, naming
// that run; what was taken before is given back.
func (s *Session) claim(plan *planner.Plan, ck *exec.CheckpointOptions) (*claims, error) {
	owner := "job " + plan.Graph.Name + ", " + commandLine()
	c := &claims{}
	if ck != nil {
		dir := ck.Storage.Dir()
		l, err := filelock.Acquire(filepath.Join(dir, checkpointLockName), owner)
		if err != nil {
			return nil, fmt.Errorf("job %s: checkpoint folder %s is in use: %w", plan.Graph.Name, dir, describeHeld(err))
		}
		c.releases = append(c.releases, l.Release)
	}
	claimed := map[string]string{} // location -> the sink table that writes it
	for _, v := range plan.Graph.Vertices {
		ds, ok := v.Sink.(connector.DurableSink)
		if !ok {
			continue
		}
		loc := samePlace(ds.Location())
		if other, dup := claimed[loc]; dup {
			c.release(nil)
			return nil, fmt.Errorf("job %s: %s is written by two INSERTs (into %s and %s); a job can write a sink's folder from one INSERT only "+
				"(their part files and their recovery would collide): give each its own folder, or combine the queries with UNION ALL",
				plan.Graph.Name, ds.Location(), other, v.SinkName)
		}
		claimed[loc] = v.SinkName
		release, err := ds.Claim(owner)
		if err != nil {
			c.release(nil)
			return nil, fmt.Errorf("job %s: sink %s: %w", plan.Graph.Name, v.SinkName, describeHeld(err))
		}
		c.releases = append(c.releases, release)
	}
	return c, nil
}

// release gives back every lock, reporting failures on w (nil: silent).
func (c *claims) release(s *Session) {
	for k := len(c.releases) - 1; k >= 0; k-- {
		if err := c.releases[k](); err != nil && s != nil {
			fmt.Fprintf(s.Env.Stderr, "weir: %v\n", err)
		}
	}
	c.releases = nil
}

// describeHeld adds to a lock that another run holds what the user can do.
func describeHeld(err error) error {
	if errors.Is(err, filelock.ErrHeld) {
		return fmt.Errorf("%w; one run of a job at a time: stop the other run first (or, for another job, give it its own folder)", err)
	}
	return err
}

// commandLine describes this process for lock messages: the command and
// its arguments, or the shell.
func commandLine() string {
	if len(os.Args) == 0 {
		return "weir"
	}
	args := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	if len(args) == 1 {
		return args[0] + " shell"
	}
	return strings.Join(args, " ")
}

// samePlace returns a folder's path in a form equal for equal folders:
// absolute, and through its symbolic links when it exists.
func samePlace(dir string) string {
	p, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
