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
  'properties.bootstrap.servers' = '%[1]s', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset');
CREATE TABLE s (k BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
  'topic' = 'out%[2]d', 'properties.bootstrap.servers' = '%[1]s', 'key.format' = 'json', 'value.format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'w11-%[2]d');
INSERT INTO s SELECT k, SUM(v) FROM t GROUP BY k;
`

// w11Keys is the number of keys of W11's ordinary records; a latency
// probe has a key of its own above them.
const w11Keys = 1000

// kafkaBench runs W11 against a broker in process (kfake, as `weir kafka
// serve`): first the throughput, the job reading what a producer writes
// as fast as it can; then the latency, with the producer at half that
// rate sending a probe (a record with a new key) every 10 ms, timed from
// its produce to its result's read-committed consume.
func (s *suite) kafkaBench(ctx context.Context, d time.Duration) (*Result, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(2), kfake.AllowAutoTopicCreation())
	if err != nil {
		return nil, fmt.Errorf("W11: broker: %w", err)
	}
	defer c.Close()
	addr := strings.Join(c.ListenAddrs(), ",")
	s.kafkaRuns++
	run := s.kafkaRuns * 2

	// Throughput: the producer writes unpaced while the job runs.
	prod, err := startW11Producer(addr, run, 0)
	if err != nil {
		return nil, err
	}
	jr, err := runJob(ctx, s.spec("W11", fmt.Sprintf(w11Script, addr, run), time.Second, d))
	produced := prod.stop()
	if err != nil {
		return nil, err
	}
	r := jr.result("W11")
	rate := r.RowsPerSec

	// Latency at half the rate.
	run++
	lat, err := s.kafkaLatency(ctx, addr, run, rate/2, d)
	if err != nil {
		return nil, err
	}
	r.LatP50, r.LatP99, r.LatP999 = lat.quantile(0.50), lat.quantile(0.99), lat.quantile(0.999)
	r.Note = fmt.Sprintf("produced %s/s; latency at %s records/s, produce to read-committed consume", formatRate(float64(produced)/jr.elapsed.Seconds()), formatRate(rate/2))
	return r, nil
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
	spec := s.spec("W11", fmt.Sprintf(w11Script, addr, run), time.Second, d)
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
			buf = append(buf[:0], `{"k":`...)
			buf = strconv.AppendInt(buf, i%w11Keys, 10)
			buf = append(buf, `,"v":`...)
			buf = strconv.AppendInt(buf, i%100, 10)
			buf = append(buf, '}')
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
