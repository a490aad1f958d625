package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/builtin"
)

const checkpointsUsage = `usage: weir checkpoints list DIR [--job NAME]
       weir checkpoints inspect PATH

list     lists a job's checkpoints (DIR is <state.checkpoints.dir>/<job>):
         id, time, kind, and valid or what is damaged; given
         state.checkpoints.dir itself, lists its jobs (checkpoints, the
         latest valid one and its time)
inspect  shows a checkpoint or savepoint folder (status, statements, source
         positions as the connector reads them, operators with their
         statement, sinks and state); given a job's folder, its latest
         valid checkpoint

Each subcommand's --help lists its flags.`

const listUsage = `usage: weir checkpoints list DIR [--job NAME]

Lists the checkpoints of a job: DIR is the job's folder
(<state.checkpoints.dir>/<job>), or state.checkpoints.dir with --job NAME.
Every state file's size and checksum is verified. Given
state.checkpoints.dir without --job, lists its jobs.`

const inspectUsage = `usage: weir checkpoints inspect PATH

Shows a checkpoint or savepoint folder (…/chk-<n>, …/savepoint-<n>-<time>):
its status (every state file verified), the job's statements, each source
subtask's position as its connector reads it, and each stateful operator
with its statement, the sinks it feeds, and its state per subtask. Given a
job's folder (<state.checkpoints.dir>/<job>), inspects its latest valid
checkpoint.`

// checkpoints implements `weir checkpoints list|inspect`.
func checkpoints(args []string, env connector.Env) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, checkpointsUsage)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(env.Stdout, checkpointsUsage)
		return 0
	case "list":
		return listCheckpoints(args[1:], env)
	case "inspect":
		return inspectCheckpoint(args[1:], env)
	}
	fmt.Fprintf(env.Stderr, "weir: unknown checkpoints command %q (list, inspect)\n\n%s\n", args[0], checkpointsUsage)
	return 2
}

// listCheckpoints implements `weir checkpoints list`.
func listCheckpoints(args []string, env connector.Env) int {
	fs := flag.NewFlagSet("checkpoints list", flag.ContinueOnError)
	job := fs.String("job", "", "list the checkpoints of job `NAME` in DIR, when DIR is state.checkpoints.dir")
	dir, code, done := parseOneArg(fs, args, listUsage,
		"usage: weir checkpoints list DIR [--job NAME] (weir checkpoints list --help says more)", env.Stdout, env.Stderr)
	if done {
		return code
	}
	name := *job
	if name == "" {
		kind, err := checkpoint.Classify(checkpoint.OSFS{}, dir)
		if err != nil {
			fmt.Fprintf(env.Stderr, "weir: checkpoints list: %v\n", err)
			return 1
		}
		switch kind {
		case checkpoint.FolderRoot:
			jobs, err := checkpoint.ListJobs(checkpoint.OSFS{}, dir)
			if err != nil {
				fmt.Fprintf(env.Stderr, "weir: checkpoints list: %v\n", err)
				return 1
			}
			fmt.Fprint(env.Stdout, checkpoint.FormatJobs(jobs))
			return 0
		case checkpoint.FolderSnapshot:
			fmt.Fprintf(env.Stderr, "weir: checkpoints list: %s is one checkpoint; list its job's folder (%s), or show it with: weir checkpoints inspect %s\n",
				dir, filepath.Dir(filepath.Clean(dir)), dir)
			return 2
		}
		// DIR is the job's own folder: <state.checkpoints.dir>/<job>.
		abs, err := filepath.Abs(dir)
		if err != nil {
			fmt.Fprintf(env.Stderr, "weir: %v\n", err)
			return 1
		}
		dir, name = filepath.Dir(abs), filepath.Base(abs)
	}
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		fmt.Fprintf(env.Stderr, "weir: checkpoints list: %v\n", err)
		return 1
	}
	st, err := checkpoint.NewStorage(checkpoint.OSFS{}, dir, name)
	if err != nil {
		fmt.Fprintf(env.Stderr, "weir: %v\n", err)
		return 1
	}
	infos, err := st.List()
	if err != nil {
		fmt.Fprintf(env.Stderr, "weir: checkpoints list: %v\n", err)
		return 1
	}
	fmt.Fprint(env.Stdout, checkpoint.FormatList(infos))
	return 0
}

// inspectCheckpoint implements `weir checkpoints inspect`.
func inspectCheckpoint(args []string, env connector.Env) int {
	fs := flag.NewFlagSet("checkpoints inspect", flag.ContinueOnError)
	path, code, done := parseOneArg(fs, args, inspectUsage,
		"usage: weir checkpoints inspect PATH (weir checkpoints inspect --help says more)", env.Stdout, env.Stderr)
	if done {
		return code
	}
	fsys := checkpoint.OSFS{}
	kind, err := checkpoint.Classify(fsys, path)
	if err != nil {
		fmt.Fprintf(env.Stderr, "weir: checkpoints inspect: %v\n", err)
		return 1
	}
	switch kind {
	case checkpoint.FolderRoot:
		jobs, err := checkpoint.ListJobs(fsys, path)
		if err != nil {
			fmt.Fprintf(env.Stderr, "weir: checkpoints inspect: %v\n", err)
			return 1
		}
		fmt.Fprintf(env.Stderr, "weir: checkpoints inspect: %s holds the checkpoints of %d %s (it is state.checkpoints.dir); pick one: weir checkpoints inspect %s\n\n%s",
			path, len(jobs), plural(len(jobs), "job", "jobs"), filepath.Join(path, "<job>"), checkpoint.FormatJobs(jobs))
		return 2
	case checkpoint.FolderJob:
		abs, err := filepath.Abs(path)
		if err != nil {
			fmt.Fprintf(env.Stderr, "weir: %v\n", err)
			return 1
		}
		st, err := checkpoint.NewStorage(fsys, filepath.Dir(abs), filepath.Base(abs))
		if err != nil {
			fmt.Fprintf(env.Stderr, "weir: %v\n", err)
			return 1
		}
		latest, skipped, err := st.Latest()
		var why []string
		for _, s := range skipped {
			r := strings.TrimPrefix(s.Reason.Error(), "load "+s.Path+": ")
			why = append(why, fmt.Sprintf("chk-%d: %s", s.ID, r))
		}
		if err != nil {
			if errors.Is(err, checkpoint.ErrNoCheckpoint) && len(why) > 0 {
				err = fmt.Errorf("%w (%s)", err, strings.Join(why, "; "))
			}
			fmt.Fprintf(env.Stderr, "weir: checkpoints inspect: %v\n", err)
			return 1
		}
		fmt.Fprintf(env.Stdout, "%s is a job's folder: inspecting its latest valid checkpoint, %s", path, filepath.Base(latest.Path))
		if len(why) > 0 {
			fmt.Fprintf(env.Stdout, " (newer ones skipped: %s)", strings.Join(why, "; "))
		}
		fmt.Fprint(env.Stdout, "\n\n")
		path = latest.Path
	}
	text, err := checkpoint.InspectWith(fsys, path, checkpoint.InspectOptions{DescribePosition: describePosition})
	if err != nil {
		fmt.Fprintf(env.Stderr, "weir: checkpoints inspect: %v\n", err)
		return 1
	}
	fmt.Fprint(env.Stdout, text)
	return 0
}

// connectors is the registry whose describers read source positions.
var connectors = builtin.Registry()

// describePosition describes a source position with its connector's
// describer; ok is false for a connector without one.
func describePosition(name string, pos []byte) (string, bool, error) {
	d := connectors.PositionDescriber(name)
	if d == nil {
		return "", false, nil
	}
	text, err := d(pos)
	return text, err == nil, err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
