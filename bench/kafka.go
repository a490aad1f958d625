package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// w11Script is W11's job: a topic of JSON records → SUM per key →
// upsert-kafka, exactly-once (%[1]s is the broker, %[2]d the run number,
// which names the topics and the transactional ids).
const w11Script = `SET 'parallelism.default' = '2';
SET 'table.exec.mini-batch.enabled' = 'true';
CREATE TABLE t (k BIGINT, v BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in%[2]d',
  'properties.bootstrap.servers' = '%[1]s', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset'%[3]s);
CREATE TABLE s (k BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
  'topic' = 'out%[2]d', 'properties.bootstrap.servers' = '%[1]s', 'key.format' = 'json', 'value.format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'w11-%[2]d');
INSERT INTO s SELECT k, SUM(v) FROM t GROUP BY k;
`

// w11Keys is the number of keys of W11's ordinary records; a latency
// probe has a key of its own above them.
const w11Keys = 1000

// w11BacklogRate sizes the throughput run's backlog: the records a job at
// this rate reads in the run's duration (the target, 1M records/s).
const w11BacklogRate = 1_000_000

// w11LatencyRate is the input rate of the latency run, unless half the
// measured throughput is lower.
const w11LatencyRate = 200_000

// w11Bounded ends the throughput run's source at the backlog's end.
const w11Bounded = `, 'scan.bounded.mode' = 'latest-offset'`

// kafkaBench runs W11 against a broker in process (kfake, as `weir kafka
// serve`): first the throughput, the job reading a backlog produced before
// it starts (so the producer does not compete with it for the CPU), up to
// the backlog's end; then the latency, with the producer at a fixed rate
// below that throughput sending a probe (a record with a new key) every
// 10 ms, timed from its produce to its result's read-committed consume.
func (s *suite) kafkaBench(ctx context.Context, d time.Duration) (*Result, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(2), kfake.AllowAutoTopicCreation())
	if err != nil {
		return nil, fmt.Errorf("W11: broker: %w", err)
	}
	defer c.Close()
	addr := strings.Join(c.ListenAddrs(), ",")
	s.kafkaRuns++
	run := s.kafkaRuns * 2

	// Throughput: the job reads a backlog to its end.
	backlog := int64(d.Seconds() * w11BacklogRate)
	took, err := preproduceW11(ctx, addr, run, backlog)
	if err != nil {
		return nil, err
	}
	if s.cfg.Progress != nil {
		fmt.Fprintf(s.cfg.Progress, "  W11 backlog of %d records produced in %.1fs\n", backlog, took.Seconds())
	}
	spec := s.spec("W11", fmt.Sprintf(w11Script, addr, run, w11Bounded), time.Second, 3*d)
	jr, err := runJob(ctx, spec)
	if err != nil {
		return nil, err
	}
	r := jr.result("W11")
	rate := r.RowsPerSec

	// Latency at a fixed rate below the throughput.
	run++
	latRate := min(w11LatencyRate, rate/2)
	lat, err := s.kafkaLatency(ctx, addr, run, latRate, d)
	if err != nil {
		return nil, err
	}
	r.LatP50, r.LatP99, r.LatP999 = lat.quantile(0.50), lat.quantile(0.99), lat.quantile(0.999)
	r.Note = fmt.Sprintf("read a backlog of %s records (produced before); latency at %s records/s produced meanwhile, produce to read-committed consume",
		formatRate(float64(backlog)), formatRate(latRate))
	return r, nil
}

// preproduceW11 writes n of W11's records into topic in<run> (creating it
// and out<run>) as fast as it can, and returns how long that took.
func preproduceW11(ctx context.Context, addr string, run int, n int64) (time.Duration, error) {
	start := time.Now()
	topic := fmt.Sprintf("in%d", run)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(500000), kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return 0, fmt.Errorf("W11: producer: %w", err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopics(ctx, 2, 1, nil, topic, fmt.Sprintf("out%d", run)); err != nil {
		return 0, fmt.Errorf("W11: create topics: %w", err)
	}
	var first atomic.Pointer[error]
	fail := func(_ *kgo.Record, err error) {
		if err != nil {
			first.CompareAndSwap(nil, &err)
		}
	}
	// The records' values are slices of one buffer per chunk.
	const chunk = 4096
	for i := int64(0); i < n; i += chunk {
		m := min(chunk, n-i)
		buf := make([]byte, 0, m*20)
		recs := make([]kgo.Record, m)
		for j := range m {
			at := len(buf)
			buf = appendW11Value(buf, (i+j)%w11Keys, (i+j)%100)
			recs[j] = kgo.Record{Topic: topic, Value: buf[at:len(buf):len(buf)]}
			cl.Produce(ctx, &recs[j], fail)
		}
		if e := first.Load(); e != nil {
			return 0, fmt.Errorf("W11: produce the backlog: %w", *e)
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return 0, fmt.Errorf("W11: produce the backlog: %w", err)
	}
	if e := first.Load(); e != nil {
		return 0, fmt.Errorf("W11: produce the backlog: %w", *e)
	}
	return time.Since(start), nil
}

// appendW11Value appends the JSON value {"k":k,"v":v}.
func appendW11Value(buf []byte, k, v int64) []byte {
	buf = append(buf, `{"k":`...)
	buf = strconv.AppendInt(buf, k, 10)
	buf = append(buf, `,"v":`...)
	buf = strconv.AppendInt(buf, v, 10)
	return append(buf, '}')
}

func (s *suite) kafkaLatency(ctx context.Context, addr string, run int, rate float64, d time.Duration) (*histogram, error) {
	prod, err := startW11Producer(addr, run, rate)
	if err != nil {
		return nil, err
	}
	cons, err := startW11Consumer(addr, run, prod)
	if err != nil {
		prod.stop()
		return nil, err
	}
	spec := s.spec("W11", fmt.Sprintf(w11Script, addr, run, ""), time.Second, d)
	spec.label = "W11 latency"
	_, err = runJob(ctx, spec)
	prod.stop()
	h := cons.stop()
	if err != nil {
		return nil, err
	}
	return h, nil
}

// w11Producer writes W11's input: ordinary records round-robin over
// w11Keys keys and, when paced, a probe every 10 ms whose produce time it
// keeps.
type w11Producer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	n      atomic.Int64
	mu     sync.Mutex
	probes map[int64]time.Time // probe key -> when it was produced
	errs   atomic.Pointer[error]
}

func startW11Producer(addr string, run int, rate float64) (*w11Producer, error) {
	topic := fmt.Sprintf("in%d", run)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(time.Millisecond),
		kgo.MaxBufferedRecords(200000), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return nil, fmt.Errorf("W11: producer: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &w11Producer{cl: cl, cancel: cancel, done: make(chan struct{}), probes: map[int64]time.Time{}}
	// The topics exist before the job starts.
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(ctx, 2, 1, nil, topic, fmt.Sprintf("out%d", run)); err != nil {
		cancel()
		cl.Close()
		return nil, fmt.Errorf("W11: create topics: %w", err)
	}
	fail := func(_ *kgo.Record, err error) {
		if err != nil && ctx.Err() == nil {
			p.errs.CompareAndSwap(nil, &err)
		}
	}
	go func() {
		defer close(p.done)
		start := time.Now()
		nextProbe := start
		probe := int64(w11Keys)
		var buf []byte
		for i := int64(0); ctx.Err() == nil; i++ {
			if rate > 0 {
				// Paced: wait until record i is due, checking for a probe.
				due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
				if wait := time.Until(due); wait > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
				}
				if now := time.Now(); now.After(nextProbe) {
					nextProbe = now.Add(10 * time.Millisecond)
					p.mu.Lock()
					p.probes[probe] = now
					p.mu.Unlock()
					cl.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf(`{"k":%d,"v":1}`, probe))}, fail)
					probe++
				}
			}
			buf = appendW11Value(buf[:0], i%w11Keys, i%100)
			cl.Produce(ctx, &kgo.Record{Topic: topic, Value: append([]byte(nil), buf...)}, fail)
			p.n.Add(1)
		}
	}()
	return p, nil
}

// stop ends the producer and returns how many records it wrote.
func (p *w11Producer) stop() int64 {
	p.cancel()
	<-p.done
	p.cl.Close()
	return p.n.Load()
}

// w11Consumer reads W11's output read-committed and times the probes.
type w11Consumer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	lat    histogram
}

func startW11Consumer(addr string, run int, prod *w11Producer) (*w11Consumer, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(fmt.Sprintf("out%d", run)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(10*time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("W11: consumer: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &w11Consumer{cl: cl, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			now := time.Now()
			fs.EachRecord(func(r *kgo.Record) {
				k, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(string(r.Key), `{"k":`), "}"), 10, 64)
				if err != nil || k < w11Keys {
					return
				}
				prod.mu.Lock()
				at, ok := prod.probes[k]
				delete(prod.probes, k)
				prod.mu.Unlock()
				if ok {
					c.lat.add(int64(now.Sub(at)), 1)
				}
			})
		}
	}()
	return c, nil
}

// stop ends the consumer and returns the probes' latencies.
func (c *w11Consumer) stop() *histogram {
	c.cancel()
	<-c.done
	c.cl.Close()
	return &c.lat
}
