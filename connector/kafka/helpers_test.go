package kafka

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// broker starts an in-process kfake cluster, closed when the test ends.
func broker(t *testing.T, opts ...kfake.Opt) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, strings.Join(c.ListenAddrs(), ",")
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// client returns a plain client of the broker, closed when the test ends.
func client(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produce writes records synchronously.
func produce(t *testing.T, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func rec(topic string, partition int32, key, value string) *kgo.Record {
	r := &kgo.Record{Topic: topic, Partition: partition, Value: []byte(value)}
	if key != "" {
		r.Key = []byte(key)
	}
	return r
}

// createTopic creates a topic with parts partitions.
func createTopic(t *testing.T, addr, topic string, parts int32) {
	t.Helper()
	adm := kadm.NewClient(client(t, addr))
	if _, err := adm.CreateTopic(testCtx(t), parts, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
}

// manual is a client that writes to the partition a record names.
func manual(t *testing.T, addr string) *kgo.Client {
	return client(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
}

func table(cols string, opts map[string]string) *connector.Table {
	var cs []types.Column
	for _, c := range strings.Split(cols, ",") {
		name, kind, _ := strings.Cut(strings.TrimSpace(c), " ")
		k := map[string]types.Kind{"INT": types.KindInt, "BIGINT": types.KindBigInt, "STRING": types.KindVarchar, "TIMESTAMP": types.KindTimestamp, "DOUBLE": types.KindDouble}[kind]
		cs = append(cs, types.Column{Name: name, Type: types.Type{Kind: k}})
	}
	return &connector.Table{Name: "t", Schema: types.Schema{Columns: cs}, Options: opts}
}

func with(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// readAll reads a bounded source at parallelism p and returns every row,
// sorted.
func readAll(t *testing.T, src connector.Source, width, p int) []string {
	t.Helper()
	var all []string
	for s := range p {
		r, err := src.Open(s, p)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := drain(testCtx(t), r, width, -1)
		r.Close()
		if err != nil {
			t.Fatalf("subtask %d: %v", s, err)
		}
		all = append(all, rows...)
	}
	sort.Strings(all)
	return all
}

// drain reads r to EOF, or until limit rows (limit >= 0).
func drain(ctx context.Context, r connector.SourceReader, width, limit int) ([]string, error) {
	var out []string
	b := types.NewBatch(width, 16)
	for limit < 0 || len(out) < limit {
		b.Reset()
		max := 16
		if limit >= 0 {
			max = min(max, limit-len(out))
		}
		err := r.Next(ctx, b, max)
		for i := range b.Len() {
			out = append(out, types.FormatRow(b.Kinds[i], b.Row(i)))
		}
		if err != nil {
			if err.Error() == "EOF" {
				return out, nil
			}
			return out, err
		}
	}
	return out, nil
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s:\ngot  %d %v\nwant %d %v", what, len(got), got, len(want), want)
	}
}
