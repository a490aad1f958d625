package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weir-sql/weir/checkpoint"
	"github.com/weir-sql/weir/connector"
)

// checkpoints implements `weir checkpoints list|inspect`.
func checkpoints(args []string, env connector.Env) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, "usage: weir checkpoints list DIR [--job NAME] | weir checkpoints inspect PATH")
		return 2
	}
	switch args[0] {
	case "list":
		fs := flag.NewFlagSet("checkpoints list", flag.ContinueOnError)
		fs.SetOutput(env.Stderr)
		job := fs.String("job", "", "job name, when DIR is state.checkpoints.dir rather than the job's folder")
		if err := fs.Parse(reorder(args[1:])); err != nil || fs.NArg() != 1 {
			fmt.Fprintln(env.Stderr, "usage: weir checkpoints list DIR [--job NAME]")
			return 2
		}
		dir := fs.Arg(0)
		name := *job
		if name == "" {
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
	case "inspect":
		if len(args) != 2 {
			fmt.Fprintln(env.Stderr, "usage: weir checkpoints inspect PATH")
			return 2
		}
		text, err := checkpoint.Inspect(checkpoint.OSFS{}, args[1])
		if err != nil {
			fmt.Fprintf(env.Stderr, "weir: checkpoints inspect: %v\n", err)
			return 1
		}
		fmt.Fprint(env.Stdout, text)
		return 0
	}
	fmt.Fprintf(env.Stderr, "weir: unknown checkpoints command %q (list, inspect)\n", args[0])
	return 2
}

// reorder moves flags after positional arguments to the front, so that
// `list DIR --job x` works as well as `list --job x DIR`.
func reorder(args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			if i+1 < len(args) && !containsEq(a) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}

func containsEq(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '=' {
			return true
		}
	}
	return false
}
