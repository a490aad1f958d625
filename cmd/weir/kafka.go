package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/weir-sql/weir/connector"
)

const kafkaUsage = `usage: weir kafka serve [--port N] [--partitions N]

Runs a local Kafka-compatible broker (franz-go's kfake) on 127.0.0.1, for
trying Weir's kafka connectors and for tests. Topics are created when first
used, with --partitions partitions. It is NOT for production data: it keeps
everything in memory, on one node, and loses it all when it stops. Stop it
with Ctrl-C or SIGTERM.`

// kafkaCmd implements `weir kafka serve`.
func kafkaCmd(args []string, env connector.Env) int {
	if len(args) == 0 || args[0] != "serve" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintln(env.Stdout, kafkaUsage)
			return 0
		}
		fmt.Fprintln(env.Stderr, kafkaUsage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveKafka(ctx, args[1:], env)
}

// serveKafka runs the broker until ctx ends.
func serveKafka(ctx context.Context, args []string, env connector.Env) int {
	fs := flag.NewFlagSet("kafka serve", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprintln(env.Stderr, kafkaUsage); fs.PrintDefaults() }
	port := fs.Int("port", 9092, "port to listen on (0: any free port)")
	parts := fs.Int("partitions", 4, "partitions of a topic created on first use")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || *port < 0 || *port > 65535 || *parts < 1 {
		fmt.Fprintln(env.Stderr, kafkaUsage)
		return 2
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(*port), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(*parts))
	if err != nil {
		fmt.Fprintf(env.Stderr, "weir: kafka serve: %v\n", err)
		return 1
	}
	defer c.Close()
	fmt.Fprintf(env.Stdout, "kafka broker listening on %s (for trying and testing only: data is in memory and lost when it stops); Ctrl-C stops it\n",
		strings.Join(c.ListenAddrs(), ","))
	<-ctx.Done()
	fmt.Fprintln(env.Stdout, "kafka broker stopped")
	return 0
}
