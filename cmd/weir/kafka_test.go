package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/connector"
)

// TestKafkaServe starts the local broker on a free port, produces to a
// topic it has never seen (created on first use) and reads it back.
func TestKafkaServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		code := serveKafka(ctx, []string{"--port", "0", "--partitions", "2"}, connector.Env{Stdout: pw, Stderr: pw})
		pw.Close()
		done <- code
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("no output")
	}
	first := lines.Text()
	if !strings.Contains(first, "not") && !strings.Contains(first, "testing only") {
		t.Fatalf("first line %q does not say it is for testing", first)
	}
	addr := strings.Fields(strings.TrimPrefix(first, "kafka broker listening on "))[0]
	go func() {
		for lines.Scan() {
		}
	}()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation(), kgo.ConsumeTopics("fresh"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer pcancel()
	if err := cl.ProduceSync(pctx, &kgo.Record{Topic: "fresh", Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	fs := cl.PollFetches(pctx)
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "hello" {
		t.Fatalf("got %v", recs)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if code := run([]string{"kafka", "--help"}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("--help exit %d", code)
	}
}
