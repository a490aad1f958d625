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

// kafkaFlags returns the flag set of `weir kafka serve` with its flags.
func kafkaFlags() (fs *flag.FlagSet, port, parts *int) {
	fs = flag.NewFlagSet("kafka serve", flag.ContinueOnError)
	port = fs.Int("port", 9092, "listen on port `N` (0: any free port)")
	parts = fs.Int("partitions", 4, "`N` partitions for a topic created on first use")
	return fs, port, parts
}

// kafkaCmd implements `weir kafka serve`.
func kafkaCmd(args []string, env connector.Env) int {
	if len(args) == 0 || args[0] != "serve" {
		fs, _, _ := kafkaFlags()
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			printHelp(env.Stdout, fs, kafkaUsage)
			return 0
		}
		printHelp(env.Stderr, fs, kafkaUsage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveKafka(ctx, args[1:], env)
}

// serveKafka runs the broker until ctx ends.
func serveKafka(ctx context.Context, args []string, env connector.Env) int {
	fs, port, parts := kafkaFlags()
	pos, code, done := parseArgs(fs, args, kafkaUsage, env.Stdout, env.Stderr)
	if done {
		return code
	}
	if len(pos) > 0 || *port < 0 || *port > 65535 || *parts < 1 {
		fmt.Fprintf(env.Stderr, "weir kafka serve: want --port from 0 to 65535, --partitions of at least 1 and no arguments\n")
		printHelp(env.Stderr, fs, kafkaUsage)
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
