package nexmark_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/nexmark/model"
	"github.com/weir-sql/weir/exec"
	"github.com/weir-sql/weir/session"
)

// restoreScript counts events per type and sums their ids, from a paced
// nexmark source (so that checkpoints come while it runs) at parallelism
// 2, with checkpoints every few milliseconds and a fast restart strategy.
const restoreScript = `
SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '15ms';
SET 'state.checkpoints.dir' = '%s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '1ms';
CREATE TABLE nx (event_type INT, ` + "`person.id` BIGINT, `auction.id` BIGINT, `bid.auction` BIGINT" + `) WITH (
  'connector' = 'nexmark', 'base-time' = '2026-01-01 00:00:00', 'events.num' = '%d',
  'first-event.rate' = '50000', 'rate.limited' = 'true');
CREATE TABLE out (t INT, c BIGINT, persons BIGINT, auctions BIGINT, bids BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT event_type, COUNT(*), SUM(` + "`person.id`), SUM(`auction.id`), SUM(`bid.auction`" + `) FROM nx GROUP BY event_type;
`

var printLine = regexp.MustCompile(`^(?:\S+> )?([+-][IUD])\[(.*)\]$`)

// TestRestoreThroughSession fails the job after a checkpoint; it restarts
// from the latest checkpoint, its sources seek to their positions, and the
// final counts and sums must equal those computed here: the k-th person
// and auction have id 1000 + k, 1 in 50 events is a person and 3 are
// auctions, and the bids' auctions are summed from the generator.
func TestRestoreThroughSession(t *testing.T) {
	const events = 30000
	var people, auctions, bidSum, bids int64
	var personSum, auctionSum int64
	cfg := model.DefaultConfig()
	g := model.NewGenerator(cfg, model.NewTables(cfg.Seed))
	var b model.Bid
	for n := int64(0); n < events; n++ {
		switch n % 50 {
		case 0:
			personSum += 1000 + people
			people++
		case 1, 2, 3:
			auctionSum += 1000 + auctions
			auctions++
		default:
			g.Bid(n, &b)
			bidSum += b.Auction
			bids++
		}
	}
	want := []string{
		fmt.Sprintf("0, %d, %d, <NULL>, <NULL>", people, personSum),
		fmt.Sprintf("1, %d, <NULL>, %d, <NULL>", auctions, auctionSum),
		fmt.Sprintf("2, %d, <NULL>, <NULL>, %d", bids, bidSum),
	}
	for _, spec := range []string{"", "K5@2=error", "K1@5=error"} {
		t.Run(spec, func(t *testing.T) {
			var fault func(string) error
			var mu sync.Mutex
			var fired []string
			if spec != "" {
				hook, err := session.ParseFaults(spec, "")
				if err != nil {
					t.Fatal(err)
				}
				fault = func(point string) error {
					err := hook(point)
					if errors.Is(err, session.ErrInjected) {
						mu.Lock()
						fired = append(fired, point)
						mu.Unlock()
					}
					return err
				}
			}
			var stdout, stderr bytes.Buffer
			s := session.New(connector.Env{Stdout: &stdout, Stderr: &stderr})
			err := s.RunScript(context.Background(), fmt.Sprintf(restoreScript, t.TempDir(), events),
				session.RunOptions{JobName: "nexmark", Exec: exec.Options{BatchSize: 128, Fault: fault}})
			if err != nil {
				t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
			}
			if spec != "" && (len(fired) != 1 || !strings.Contains(stderr.String(), "weir: restoring checkpoint")) {
				t.Fatalf("faults fired %v; the job did not restore a checkpoint:\n%s", fired, stderr.String())
			}
			final := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				m := printLine.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("unexpected print line %q", l)
				}
				key, _, _ := strings.Cut(m[2], ",")
				if m[1] == "+I" || m[1] == "+U" {
					final[key] = m[2]
				}
			}
			var got []string
			for _, r := range final {
				got = append(got, r)
			}
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("final rows\n%s\nwant\n%s\nstderr:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), stderr.String())
			}
		})
	}
}
