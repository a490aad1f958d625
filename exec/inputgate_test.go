package exec

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/weir-sql/weir/types"
)

// runGateTrace drives an inputGate with a trace of events, one per line:
//
//	data CH ID   a batch (named ID) arrives on channel CH
//	end CH       end of input arrives on channel CH
//	hold CH      the task holds channel CH
//	release CH   the task releases CH and re-offers what was queued
//	barrier CH N barrier of checkpoint N arrives on channel CH
//	releaseall 0 the task ends the alignment and re-offers what was queued
//
// A subsumed barrier is handled as a task does: ReleaseAll, re-offer the
// queue, re-offer the barrier.
//
// and returns the decisions, one per line: "process ID", "ended CH",
// "all-ended CH", "queued CH".
func runGateTrace(t *testing.T, channels int, trace string) string {
	t.Helper()
	g := newInputGate(channels)
	ids := map[*types.Batch]string{}
	var out []string
	var offer func(m message)
	offer = func(m message) {
		switch g.Offer(m) {
		case gateProcess:
			out = append(out, "process "+ids[m.batch])
		case gateEnded:
			out = append(out, fmt.Sprint("ended ", m.ch))
		case gateAllEnded:
			out = append(out, fmt.Sprint("all-ended ", m.ch))
		case gateQueued:
			out = append(out, fmt.Sprint("queued ", m.ch))
		case gateBarrier:
			out = append(out, fmt.Sprint("barrier ", m.ch))
		case gateAligned:
			out = append(out, fmt.Sprint("aligned ", g.Aligning()))
		case gateStale:
			out = append(out, fmt.Sprint("stale ", m.ckpt))
		case gateSubsumed:
			out = append(out, fmt.Sprint("subsumed ", g.Aligning(), " by ", m.ckpt))
			for _, q := range g.ReleaseAll() {
				offer(q)
			}
			offer(m)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(trace), "\n") {
		f := strings.Fields(line)
		ch, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("bad trace line %q", line)
		}
		switch f[0] {
		case "data":
			b := &types.Batch{}
			ids[b] = f[2]
			offer(message{batch: b, ch: int32(ch), kind: msgData})
		case "end":
			offer(message{ch: int32(ch), kind: msgEnd})
		case "hold":
			g.Hold(ch)
		case "release":
			for _, m := range g.Release(ch) {
				offer(m)
			}
		case "barrier":
			n, _ := strconv.ParseInt(f[2], 10, 64)
			offer(message{ch: int32(ch), kind: msgBarrier, ckpt: n})
		case "releaseall":
			for _, m := range g.ReleaseAll() {
				offer(m)
			}
		default:
			t.Fatalf("bad trace line %q", line)
		}
	}
	return strings.Join(out, "\n")
}

func TestInputGate(t *testing.T) {
	tests := []struct {
		name     string
		channels int
		trace    string
		want     string
	}{
		{
			name: "all channels end", channels: 3,
			trace: "data 0 a\nend 1\ndata 2 b\nend 0\nend 2",
			want:  "process a\nended 1\nprocess b\nended 0\nall-ended 2",
		},
		{
			name: "held channel queues in order while others flow", channels: 2,
			trace: "data 0 a\nhold 0\ndata 0 b\ndata 1 c\ndata 0 d\nend 0\ndata 1 e\nrelease 0\nend 1",
			want:  "process a\nqueued 0\nprocess c\nqueued 0\nqueued 0\nprocess e\nprocess b\nprocess d\nended 0\nall-ended 1",
		},
		{
			// DESIGN.md's even subtask: S1's barrier first, S1's 4 held, S2's 4 processed.
			name: "alignment holds the channel whose barrier came first", channels: 2,
			trace: "data 0 s1-2\ndata 1 s2-2\nbarrier 0 2\ndata 0 s1-4\ndata 1 s2-4\nbarrier 1 2\nreleaseall 0\ndata 1 s2-6",
			want:  "process s1-2\nprocess s2-2\nbarrier 0\nqueued 0\nprocess s2-4\naligned 2\nprocess s1-4\nprocess s2-6",
		},
		{
			name: "an ended channel counts as aligned", channels: 3,
			trace: "end 2\nbarrier 0 1\ndata 1 a\nbarrier 1 1\nreleaseall 0\nbarrier 0 2\nend 1",
			want:  "ended 2\nbarrier 0\nprocess a\naligned 1\nbarrier 0\nended 1",
		},
		{
			name: "one channel aligns at once", channels: 1,
			trace: "data 0 a\nbarrier 0 5\nreleaseall 0\ndata 0 b",
			want:  "process a\naligned 5\nprocess b",
		},
		{
			name: "a newer barrier subsumes an abandoned alignment", channels: 2,
			trace: "barrier 0 3\ndata 0 x\nbarrier 1 4\nbarrier 0 3\nbarrier 0 4",
			want:  "barrier 0\nqueued 0\nsubsumed 3 by 4\nprocess x\nbarrier 1\nstale 3\naligned 4",
		},
		{
			name: "release of an empty hold", channels: 1,
			trace: "hold 0\nrelease 0\ndata 0 a\nend 0",
			want:  "process a\nall-ended 0",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := runGateTrace(t, tc.channels, tc.trace); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestInputGateState(t *testing.T) {
	g := newInputGate(2)
	g.Hold(1)
	if !g.Held(1) || g.Held(0) || g.NumChannels() != 2 {
		t.Fatal("hold state wrong")
	}
	g.Offer(message{ch: 0, kind: msgEnd})
	if !g.Ended(0) || g.AllEnded() {
		t.Fatal("end state wrong")
	}
	if a := g.Offer(message{ch: 1, kind: msgEnd}); a != gateQueued || g.AllEnded() {
		t.Fatal("end on a held channel must be queued")
	}
	q := g.Release(1)
	if len(q) != 1 || g.Offer(q[0]) != gateAllEnded || !g.AllEnded() {
		t.Fatal("released end must end the gate")
	}
}
