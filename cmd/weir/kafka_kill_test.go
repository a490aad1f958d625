package main

// Kill tests of the Kafka connectors with the real binary: a broker in a
// helper process (weir kafka serve), a producer in the test that writes
// the input while the job runs, `weir run` reading the topic, summing per
// key and writing a Kafka sink, SIGKILLed at random moments and at the
// sink's commit points, restored with --restore latest. A read-committed
// consumer (franz-go) of the output must see exactly the batch answer.

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The input: kafkaRows records {"k": i % kafkaKeys, "v": i}, record i in
// partition i % kafkaParts, produced at about kafkaRate records/s.
const (
	kafkaRows  = 120000
	kafkaKeys  = 4000
	kafkaParts = 4
	kafkaRate  = 60000
	kafkaJob   = "kafka_sum"
)

// kafkaBroker starts `weir kafka serve` on a free port in a helper
// process, killed when the test ends, and returns its address.
func kafkaBroker(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(weirBin, "kafka", "serve", "--port", "0", "--partitions", "1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	drained := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-drained
		_ = cmd.Wait()
	})
	if !lines.Scan() {
		close(drained)
		t.Fatal("weir kafka serve printed nothing")
	}
	first := lines.Text()
	go func() {
		defer close(drained)
		for lines.Scan() {
		}
	}()
	m := regexp.MustCompile(`listening on (\S+)`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("weir kafka serve: %q", first)
	}
	return m[1]
}

// kafkaClient returns a client of the broker, closed when the test ends.
func kafkaClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// startProducer creates the topics and writes the input at kafkaRate in
// the background; the returned function waits for it and fails the test
// on a produce error.
func startProducer(t *testing.T, addr string) func() {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	adm := kadm.NewClient(kafkaClient(t, addr))
	if _, err := adm.CreateTopic(ctx, kafkaParts, 1, nil, "in"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "out"); err != nil {
		t.Fatal(err)
	}
	cl := kafkaClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	errc := make(chan error, 1)
	go func() {
		defer cancel()
		const chunk = 1000
		tick := time.NewTicker(time.Second * chunk / kafkaRate)
		defer tick.Stop()
		for i := 0; i < kafkaRows; i += chunk {
			recs := make([]*kgo.Record, 0, chunk)
			for j := i; j < min(i+chunk, kafkaRows); j++ {
				recs = append(recs, &kgo.Record{Topic: "in", Partition: int32(j % kafkaParts),
					Value: []byte(fmt.Sprintf(`{"k":%d,"v":%d}`, j%kafkaKeys, j))})
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				errc <- err
				return
			}
			<-tick.C
		}
		errc <- nil
	}()
	return func() {
		t.Helper()
		if err := <-errc; err != nil {
			t.Fatalf("produce the input: %v", err)
		}
	}
}

// kafkaAnswer is the batch answer: per key, the sum of v and the count.
func kafkaAnswer() map[int64]sumRow {
	want := make(map[int64]sumRow, kafkaKeys)
	for i := int64(0); i < kafkaRows; i++ {
		r := want[i%kafkaKeys]
		r.sum += i
		r.count++
		want[i%kafkaKeys] = r
	}
	return want
}

// kafkaSQL is the job: the input read up to its known end, summed per key,
// written to the topic out by sink (its WITH options after the topic).
func kafkaSQL(addr, sink string, retain int) string {
	var ends []string
	for p := range kafkaParts {
		n := kafkaRows / kafkaParts
		if p < kafkaRows%kafkaParts {
			n++
		}
		ends = append(ends, fmt.Sprintf("partition:%d,offset:%d", p, n))
	}
	return fmt.Sprintf(`SET 'parallelism.default' = '2';
SET 'execution.checkpointing.interval' = '100ms';
SET 'state.checkpoints.dir' = 'ckpts';
SET 'state.checkpoints.num-retained' = '%d';
SET 'restart-strategy.type' = 'none';
CREATE TABLE ev (k BIGINT, v BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = '%s', 'format' = 'json',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = '%s');
CREATE TABLE sums (k BIGINT, s BIGINT, c BIGINT%s) WITH (
  'topic' = 'out', 'properties.bootstrap.servers' = '%[2]s', %[5]s);
INSERT INTO sums SELECT k, SUM(v), COUNT(*) FROM ev GROUP BY k;
`, retain, addr, strings.Join(ends, ";"), map[bool]string{true: ", PRIMARY KEY (k) NOT ENFORCED"}[strings.Contains(sink, "upsert-kafka")], sink)
}

// kafkaRuns runs the job in dir through kills until a run finishes: the
// runs armed with faults first (each must kill itself), then kills at
// random moments after a checkpoint completed, kills of them at most.
// It returns the last run.
func kafkaRuns(t *testing.T, dir string, faults []string, kills int, rng *rand.Rand) *weirProc {
	t.Helper()
	faultLog := filepath.Join(dir, "faults.log")
	runs := 0
	start := func(faults string) *weirProc {
		args := []string{"run"}
		if runs > 0 {
			args = append(args, "--restore", "latest")
		}
		args = append(args, kafkaJob+".sql")
		p := startWeir(t, dir, filepath.Join(dir, fmt.Sprintf("stdout-%02d.txt", runs)), faultLog, faults, runs, args)
		runs++
		return p
	}
	for _, f := range faults {
		p := start(f)
		if st := p.waitDeadline(t, runDeadline); !killedBySIGKILL(st) {
			t.Fatalf("%s: %v, want death by SIGKILL at the fault\nstderr:\n%s", p.label, st, p.log.text())
		}
		t.Logf("%s: completed %v, killed at the fault", p.label, p.completedIDs())
	}
	for range kills {
		p := start("")
		waitLine(t, p, 0, completeLine, firstCheckpointDeadline)
		jitter := time.Duration(rng.Int64N(int64(400 * time.Millisecond)))
		timer := time.NewTimer(jitter)
		select {
		case <-timer.C:
		case <-p.readerDone:
		}
		timer.Stop()
		p.kill(t)
		st := p.waitDeadline(t, runDeadline)
		if st.Success() {
			t.Logf("%s: finished before the kill", p.label)
			return p
		}
		if !killedBySIGKILL(st) {
			t.Fatalf("%s: %v, want death by SIGKILL\nstderr:\n%s", p.label, st, p.log.text())
		}
		t.Logf("%s: completed %v, killed after %s", p.label, p.completedIDs(), jitter)
	}
	p := start("")
	expectFinished(t, p, regexp.MustCompile(`^weir: job `+kafkaJob+` finished`))
	return p
}

// consumeOut reads every record of topic out that a consumer with the
// given isolation sees, to the end of the topic, in order.
func consumeOut(t *testing.T, addr string, readCommitted bool) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := kadm.NewClient(kafkaClient(t, addr))
	ends, err := adm.ListEndOffsets(ctx, "out")
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup("out", 0)
	opts := []kgo.Opt{kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"out": {0: kgo.NewOffset().AtStart()}}), kgo.KeepControlRecords()}
	if readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl := kafkaClient(t, addr, opts...)
	var out []*kgo.Record
	next := int64(0)
	for next < end.Offset {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("consume out: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			next = r.Offset + 1
			if !r.Attrs.IsControl() {
				out = append(out, r)
			}
		})
	}
	return out
}

// TestKafkaExactlyOnceKills: topic → GROUP BY sum → exactly-once kafka
// sink (debezium-json), killed at the sink's commit points and at random
// moments, restored each time: a read-committed consumer sees a changelog
// that applies without a duplicate or a gap and ends at the batch answer.
// Then the guard: restoring a checkpoint older than the committed output
// is refused, and --allow-duplicate-output numbers the new run's
// checkpoints above it.
func TestKafkaExactlyOnceKills(t *testing.T) {
	needBinary(t)
	t.Parallel() // its own broker, folder and processes; the runs mostly wait on rate-limited sources
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	addr := kafkaBroker(t)
	dir := t.TempDir()
	writeFile(t, dir, kafkaJob+".sql", kafkaSQL(addr, `'connector' = 'kafka', 'format' = 'debezium-json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'sums'`, 100))
	produced := startProducer(t, addr)
	kafkaRuns(t, dir, []string{"K6@3=kill", "K5@2=kill"}, 3, rng)
	produced()

	expectReadCommittedAnswer(t, addr)

	// The guard. The markers say what committed; a checkpoint below it
	// is refused.
	adm := kadm.NewClient(kafkaClient(t, addr))
	var marker int64
	for _, g := range []string{"sums-marker-0", "sums-marker-1"} {
		resp, err := adm.FetchOffsets(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := resp.Lookup("out", 0); ok {
			marker = max(marker, o.At)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "ckpts", kafkaJob))
	if err != nil {
		t.Fatal(err)
	}
	older := int64(0)
	for _, e := range entries {
		if id, err := strconv.ParseInt(strings.TrimPrefix(e.Name(), "chk-"), 10, 64); err == nil && id < marker {
			older = max(older, id)
		}
	}
	if older == 0 {
		t.Fatalf("no retained checkpoint below the marker %d: %v", marker, entries)
	}
	chk := filepath.Join("ckpts", kafkaJob, fmt.Sprintf("chk-%d", older))
	p := startWeir(t, dir, filepath.Join(dir, "stdout-old.txt"), filepath.Join(dir, "faults.log"), "", 90, []string{"run", "--restore", chk, kafkaJob + ".sql"})
	expectRefused(t, p, fmt.Sprintf(`sink sums: kafka topic out \(transactional ids sums-\*\) already holds output committed by checkpoint %d, later than checkpoint %d`, marker, older),
		`--allow-duplicate-output`)
	p = startWeir(t, dir, filepath.Join(dir, "stdout-dup.txt"), filepath.Join(dir, "faults.log"), "", 91,
		[]string{"run", "--restore", chk, "--allow-duplicate-output", kafkaJob + ".sql"})
	expectFinished(t, p, regexp.MustCompile(`^weir: job `+kafkaJob+` finished`))
	ids := p.completedIDs()
	if len(ids) == 0 || slices.Min(ids) <= marker {
		t.Fatalf("--allow-duplicate-output: checkpoints %v, want all above the committed %d\nstderr:\n%s", ids, marker, p.log.text())
	}
	t.Logf("refused restoring %d below the committed %d; with --allow-duplicate-output the checkpoints are %v", older, marker, ids)
}

// TestKafkaAtLeastOnceKills: the same job into an at-least-once
// upsert-kafka sink, killed at random moments: the output, applied as
// upserts by key, ends at the batch answer (nothing lost; records may come
// twice).
func TestKafkaAtLeastOnceKills(t *testing.T) {
	needBinary(t)
	t.Parallel() // its own broker, folder and processes; the runs mostly wait on rate-limited sources
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	addr := kafkaBroker(t)
	dir := t.TempDir()
	writeFile(t, dir, kafkaJob+".sql", kafkaSQL(addr, `'connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json',
  'sink.delivery-guarantee' = 'at-least-once'`, 2))
	produced := startProducer(t, addr)
	kafkaRuns(t, dir, nil, 3, rng)
	produced()
	got := map[int64]sumRow{}
	recs := consumeOut(t, addr, false)
	for _, r := range recs {
		var k, s, c int64
		if _, err := fmt.Sscanf(string(r.Key), `{"k":%d}`, &k); err != nil {
			t.Fatalf("key %q: %v", r.Key, err)
		}
		if r.Value == nil {
			delete(got, k)
			continue
		}
		if _, err := fmt.Sscanf(string(r.Value), `{"k":%d,"s":%d,"c":%d}`, &k, &s, &c); err != nil {
			t.Fatalf("value %q: %v", r.Value, err)
		}
		got[k] = sumRow{s, c}
	}
	want := kafkaAnswer()
	if len(got) != len(want) {
		t.Fatalf("%d keys, want %d", len(got), len(want))
	}
	for k, w := range want {
		if g := got[k]; g != w {
			t.Fatalf("key %d: %v, want %v", k, g, w)
		}
	}
	t.Logf("%d records applied as upserts give the batch answer (%d keys)", len(recs), len(want))
}

// TestKafkaExactlyOnceSinkDataDamaged: the exactly-once sink's records of
// a checkpoint live in the checkpoint's side file (_sinkdata). A run is
// killed right after checkpoint 3 completed (its transaction pre-committed,
// not committed) and that side file is then damaged: the restore skips
// checkpoint 3 saying why, restores the one before, and a read-committed
// consumer still sees exactly the batch answer. The same with the side
// file of the restored run's newest checkpoint deleted.
func TestKafkaExactlyOnceSinkDataDamaged(t *testing.T) {
	needBinary(t)
	t.Parallel() // its own broker, folder and processes; the runs mostly wait on rate-limited sources
	addr := kafkaBroker(t)
	dir := t.TempDir()
	writeFile(t, dir, kafkaJob+".sql", kafkaSQL(addr, `'connector' = 'kafka', 'format' = 'debezium-json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'sums'`, 100))
	produced := startProducer(t, addr)
	chkDir := filepath.Join(dir, "ckpts", kafkaJob)
	faultLog := filepath.Join(dir, "faults.log")
	damage := func(id int64, how func(path string) error) {
		t.Helper()
		side := filepath.Join(chkDir, fmt.Sprintf("chk-%d", id), "_sinkdata")
		if _, err := os.Stat(side); err != nil {
			t.Fatalf("checkpoint %d has no side file: %v", id, err)
		}
		if err := how(side); err != nil {
			t.Fatal(err)
		}
	}
	flip := func(path string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		data[len(data)/2] ^= 0x20
		return os.WriteFile(path, data, 0o644)
	}

	p := startWeir(t, dir, filepath.Join(dir, "stdout-00.txt"), faultLog, "K5@3=kill", 0, []string{"run", kafkaJob + ".sql"})
	if st := p.waitDeadline(t, runDeadline); !killedBySIGKILL(st) {
		t.Fatalf("%s: %v, want death by SIGKILL at the fault\nstderr:\n%s", p.label, st, p.log.text())
	}
	damage(3, flip)

	p = startWeir(t, dir, filepath.Join(dir, "stdout-01.txt"), faultLog, "K5@2=kill", 1, []string{"run", "--restore", "latest", kafkaJob + ".sql"})
	if st := p.waitDeadline(t, runDeadline); !killedBySIGKILL(st) {
		t.Fatalf("%s: %v, want death by SIGKILL at the fault\nstderr:\n%s", p.label, st, p.log.text())
	}
	if !p.log.has(regexp.MustCompile(`^weir: skipping checkpoint 3: .*_sinkdata is damaged`)) || p.restoredID() != 2 {
		t.Fatalf("%s: restored %d, want 2 after skipping the damaged 3\nstderr:\n%s", p.label, p.restoredID(), p.log.text())
	}
	ids := p.completedIDs()
	if len(ids) == 0 {
		t.Fatalf("%s: completed no checkpoint\nstderr:\n%s", p.label, p.log.text())
	}
	newest := slices.Max(ids)
	damage(newest, os.Remove)

	p = startWeir(t, dir, filepath.Join(dir, "stdout-02.txt"), faultLog, "", 2, []string{"run", "--restore", "latest", kafkaJob + ".sql"})
	expectFinished(t, p, regexp.MustCompile(`^weir: job `+kafkaJob+` finished`))
	if !p.log.has(regexp.MustCompile(fmt.Sprintf(`^weir: skipping checkpoint %d: .*missing _sinkdata`, newest))) || p.restoredID() >= newest {
		t.Fatalf("%s: restored %d, want one below %d after skipping it\nstderr:\n%s", p.label, p.restoredID(), newest, p.log.text())
	}
	produced()

	expectReadCommittedAnswer(t, addr)
}

// expectReadCommittedAnswer reads the output topic read-committed and
// applies its Debezium records: each key's final sums must be the batch
// answer, no record applied twice and none lost.
func expectReadCommittedAnswer(t *testing.T, addr string) {
	t.Helper()
	recs := consumeOut(t, addr, true)
	c := committed{rows: map[int64]sumRow{}}
	counts := map[dbzRow]int{}
	for i, r := range recs {
		d, err := parseDbz(r.Value)
		if err != nil {
			t.Fatalf("record %d: %v: %q", i, err, r.Value)
		}
		if err := c.apply(d, counts); err != nil {
			t.Fatalf("record %d (offset %d) %q: %v (a record committed twice, or one lost)", i, r.Offset, r.Value, err)
		}
	}
	want := kafkaAnswer()
	if len(c.rows) != len(want) {
		t.Fatalf("%d keys, want %d", len(c.rows), len(want))
	}
	for k, w := range want {
		if g := c.rows[k]; g != w {
			t.Fatalf("key %d: %v, want %v", k, g, w)
		}
	}
	t.Logf("read committed: %d records apply to the batch answer (%d keys)", len(recs), len(want))
}
