// Package builtin registers Weir's built-in connectors.
package builtin

import (
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/blackhole"
	"github.com/weir-sql/weir/connector/datagen"
	"github.com/weir-sql/weir/connector/filesystem"
	"github.com/weir-sql/weir/connector/kafka"
	"github.com/weir-sql/weir/connector/nexmark"
	"github.com/weir-sql/weir/connector/print"
)

// Registry returns a new registry with the built-in connectors: 'datagen',
// 'filesystem' and 'nexmark' sources (and how their positions read),
// 'filesystem', 'print' and 'blackhole' sinks; 'kafka' and 'upsert-kafka'
// sources and sinks.
func Registry() *connector.Registry {
	r := connector.NewRegistry()
	r.RegisterSource("datagen", datagen.NewSource)
	r.RegisterSource("filesystem", filesystem.NewSource)
	r.RegisterSource("nexmark", nexmark.NewSource)
	r.RegisterPositionDescriber("datagen", datagen.DescribePosition)
	r.RegisterPositionDescriber("filesystem", filesystem.DescribePosition)
	r.RegisterPositionDescriber("nexmark", nexmark.DescribePosition)
	r.RegisterSink("filesystem", filesystem.NewSink)
	r.RegisterSink("print", print.NewSink)
	r.RegisterSink("blackhole", blackhole.NewSink)
	r.RegisterSource("kafka", kafka.NewSource)
	r.RegisterSource("upsert-kafka", kafka.NewUpsertSource)
	r.RegisterSink("kafka", kafka.NewSink)
	r.RegisterSink("upsert-kafka", kafka.NewUpsertSink)
	r.RegisterPositionDescriber("kafka", kafka.DescribePosition)
	r.RegisterPositionDescriber("upsert-kafka", kafka.DescribePosition)
	r.RegisterPartitioned("filesystem")
	r.RegisterMetadata("filesystem", filesystem.MetadataKeys)
	r.RegisterMetadata("kafka", kafka.MetadataKeys)
	r.RegisterMetadata("upsert-kafka", kafka.MetadataKeys)
	return r
}
