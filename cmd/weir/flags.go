package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// parseArgs parses a subcommand's arguments with fs. Flags may come before
// or after the positional arguments (weir run FILE.sql --quiet); after
// "--" everything is positional. -h or --help prints the subcommand's help
// (usage, then every flag) to stdout: done with exit code 0. A bad flag
// prints the error and the help to stderr: done with exit code 2.
func parseArgs(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (positional []string, code int, done bool) {
	fs.SetOutput(io.Discard)
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, fs, usage)
			return nil, 0, true
		}
		if err != nil {
			fmt.Fprintf(stderr, "weir %s: %v\n", fs.Name(), err)
			printHelp(stderr, fs, usage)
			return nil, 2, true
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, 0, false
		}
		if i := len(args) - len(rest); i > 0 && args[i-1] == "--" {
			return append(positional, rest...), 0, false
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// parseOneArg is parseArgs for a command that takes exactly one
// positional argument (a file or a folder); short is the usage line printed
// when it gets another number of them.
func parseOneArg(fs *flag.FlagSet, args []string, usage, short string, stdout, stderr io.Writer) (arg string, code int, done bool) {
	pos, code, done := parseArgs(fs, args, usage, stdout, stderr)
	if done {
		return "", code, true
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, short)
		return "", 2, true
	}
	return pos[0], 0, false
}

// printHelp writes a subcommand's usage and its flags, one line each.
func printHelp(w io.Writer, fs *flag.FlagSet, usage string) {
	fmt.Fprintln(w, usage)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nflags:")
	fs.VisitAll(func(f *flag.Flag) {
		name, help := flag.UnquoteUsage(f)
		left := "  --" + f.Name
		if len(f.Name) == 1 { // a one-letter flag is written as its users know it: -i, -f
			left = "  -" + f.Name
		}
		if name != "" {
			left += " " + name
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "0s" {
			help += " (default " + def + ")"
		}
		fmt.Fprintf(w, "%-28s %s\n", left, help)
	})
}

// versionText describes this build: Weir's version (the module version,
// or the commit it was built from), and the Go and Pebble versions.
func versionText() string {
	version, goVersion, pebble := "(unknown)", "(unknown)", "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		version = bi.Main.Version
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = "+changes"
				}
			}
		}
		if (version == "" || version == "(devel)") && rev != "" {
			version = "devel " + rev[:min(12, len(rev))] + modified
		}
		for _, d := range bi.Deps {
			if strings.HasPrefix(d.Path, "github.com/cockroachdb/pebble") {
				pebble = d.Version
			}
		}
	}
	return fmt.Sprintf("weir %s\ngo %s\npebble %s\n", version, goVersion, pebble)
}
