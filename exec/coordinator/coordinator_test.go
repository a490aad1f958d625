package coordinator

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected actions in testdata traces")

// TestTraces replays each testdata/*.trace file: every event line is fed to
// a coordinator and the actions it returns must equal the "->" lines that
// follow it. With -rewrite the "->" lines are regenerated.
func TestTraces(t *testing.T) {
	files, err := filepath.Glob("testdata/*.trace")
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runTrace(t, f) })
	}
}

func runTrace(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		cfg     Config
		tasks   []TaskID
		sources []TaskID
		first   int64 = 1
		c       *Coordinator
		out     strings.Builder
		want    []string
		got     []string
		lineNo  int
	)
	base := time.Unix(1_700_000_000, 0)
	flush := func() {
		if strings.Join(want, "\n") != strings.Join(got, "\n") && !*rewrite {
			t.Errorf("%s:%d: actions differ\ngot:\n%s\nwant:\n%s", path, lineNo, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for _, g := range got {
			out.WriteString(g + "\n")
		}
		want, got = nil, nil
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "->") {
			want = append(want, line)
			continue
		}
		flush()
		lineNo++
		out.WriteString(line + "\n")
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		at := func(i int) time.Time {
			d, err := time.ParseDuration(f[i])
			if err != nil {
				t.Fatalf("%s: bad duration %q", path, f[i])
			}
			return base.Add(d)
		}
		id := func(i int) int64 {
			n, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				t.Fatalf("%s: bad id %q", path, f[i])
			}
			return n
		}
		var acts []Action
		switch f[0] {
		case "config":
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				if k == "final" {
					cfg.Final = v == "true"
					continue
				}
				d, err := time.ParseDuration(v)
				if err != nil {
					t.Fatalf("bad config %q", kv)
				}
				switch k {
				case "interval":
					cfg.Interval = d
				case "timeout":
					cfg.Timeout = d
				case "minpause":
					cfg.MinPause = d
				}
				continue
			}
		case "tasks":
			tasks = parseTasks(t, f[1:])
		case "sources":
			sources = parseTasks(t, f[1:])
		case "first":
			first = id(1)
		case "start":
			c = New(cfg, tasks, sources, first)
		case "tick": // tick AT
			acts = c.Tick(at(1))
		case "trigger": // trigger AT
			acts = []Action{c.Trigger(at(1))}
		case "ack": // ack ID TASK
			acts = c.Acked(id(1), Ack{Task: parseTasks(t, f[2:3])[0]})
		case "decline": // decline AT ID TASK
			acts = c.Declined(at(1), id(2), parseTasks(t, f[3:4])[0], "test")
		case "written": // written AT ID
			acts = c.Written(at(1), id(2))
		case "write-failed": // write-failed AT ID
			acts = c.WriteFailed(at(1), id(2), errors.New("disk full"))
		case "source-finished": // source-finished TASK
			acts = c.SourceFinished(Ack{Task: parseTasks(t, f[1:2])[0]})
		case "task-finished": // task-finished AT TASK
			acts = c.TaskFinished(at(1), parseTasks(t, f[2:3])[0])
		default:
			t.Fatalf("%s: unknown event %q", path, f[0])
		}
		for _, a := range acts {
			got = append(got, formatAction(a))
		}
	}
	flush()
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func parseTasks(t *testing.T, f []string) []TaskID {
	var out []TaskID
	for _, s := range f {
		v, st, ok := strings.Cut(s, "/")
		a, err1 := strconv.Atoi(v)
		b, err2 := strconv.Atoi(st)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("bad task %q", s)
		}
		out = append(out, TaskID{a, b})
	}
	return out
}

func formatAction(a Action) string {
	s := fmt.Sprintf("-> %s %d", a.Kind, a.ID)
	if a.Kind == WriteMetadata {
		var ts []string
		for _, ack := range a.Acks {
			ts = append(ts, ack.Task.String())
		}
		s += " [" + strings.Join(ts, " ") + "]"
	}
	if a.Kind == SnapshotFinished {
		s += " " + a.Task.String()
	}
	if a.Reason != "" {
		s += ": " + a.Reason
	}
	return s
}

// TestFinishedTasks checks that a non-source task that finished is listed
// for the snapshots of later checkpoints only with a final checkpoint
// (without one it left no snapshot and the job drains).
func TestFinishedTasks(t *testing.T) {
	for _, final := range []bool{true, false} {
		c := New(Config{Interval: time.Second, Final: final}, []TaskID{{1, 0}, {1, 1}, {2, 0}}, []TaskID{{0, 0}}, 1)
		now := time.Unix(1_700_000_000, 0)
		c.Tick(now)
		c.TaskFinished(now, TaskID{1, 1})
		c.TaskFinished(now, TaskID{1, 0})
		c.TaskFinished(now, TaskID{0, 0}) // a source: not a finished task
		got := c.FinishedTasks()
		if final && (len(got) != 2 || got[0] != (TaskID{1, 0}) || got[1] != (TaskID{1, 1})) {
			t.Errorf("final: FinishedTasks = %v, want [1/0 1/1]", got)
		}
		if !final && len(got) != 0 {
			t.Errorf("no final: FinishedTasks = %v, want none", got)
		}
		acts := c.Tick(now.Add(time.Second))
		if triggered := len(acts) == 1 && acts[0].Kind == TriggerSources; triggered != final {
			t.Errorf("final=%v: tick after a task finished = %v", final, acts)
		}
	}
}
