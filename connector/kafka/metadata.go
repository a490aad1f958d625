package kafka

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/types"
)

// The metadata keys of the kafka and upsert-kafka connectors, as Flink's.
const (
	metaTopic         = "topic"
	metaPartition     = "partition"
	metaOffset        = "offset"
	metaTimestamp     = "timestamp"
	metaTimestampType = "timestamp-type"
	metaHeaders       = "headers"
)

// MetadataKeys are the metadata columns a kafka table may declare
// (col TYPE METADATA FROM 'key'): the record's topic, partition, offset,
// timestamp, timestamp type and headers. A sink writes 'timestamp' (the
// record's timestamp) and 'headers'.
var MetadataKeys = []connector.MetadataKey{
	{Key: metaTopic, Type: types.Varchar},
	{Key: metaPartition, Type: types.Int},
	{Key: metaOffset, Type: types.BigInt},
	{Key: metaTimestamp, Type: types.Type{Kind: types.KindTimestampLTZ}, Writable: true},
	{Key: metaTimestampType, Type: types.Varchar},
	{Key: metaHeaders, Type: types.Type{Kind: types.KindMap}, TypeText: "MAP<STRING, BYTES>", Writable: true},
}

// metaCol is a metadata column of the table: its index and key.
type metaCol struct {
	col     int
	key     string
	virtual bool
}

// timestampTypes are the names of a record's timestamp type, as Flink's.
func timestampType(rec *kgo.Record) string {
	switch rec.Attrs.TimestampType() {
	case 0:
		return "CreateTime"
	case 1:
		return "LogAppendTime"
	}
	return "NoTimestampType"
}

// fillMetadata sets the metadata columns of row from rec; headers are
// built with hb.
func fillMetadata(row []types.Value, meta []metaCol, rec *kgo.Record, hb *types.RowBuilder) {
	for _, m := range meta {
		var v types.Value
		switch m.key {
		case metaTopic:
			v = types.StringValue(rec.Topic)
		case metaPartition:
			v = types.IntValue(int64(rec.Partition))
		case metaOffset:
			v = types.BigIntValue(rec.Offset)
		case metaTimestamp:
			v = types.TimestampLTZValue(rec.Timestamp.UnixMilli())
		case metaTimestampType:
			v = types.StringValue(timestampType(rec))
		case metaHeaders:
			hb.Begin()
			for _, h := range rec.Headers {
				hb.Add(types.StringValue(h.Key))
				if h.Value == nil {
					hb.Add(types.NullValue())
				} else {
					hb.Add(types.BytesValue(string(h.Value)))
				}
			}
			v = hb.Finish(types.KindMap)
		}
		row[m.col] = v
	}
}

// writeMetadata sets rec's timestamp and headers from the written
// (non-virtual) metadata columns of row; a NULL leaves them unset (the
// timestamp is then the time of the produce).
func writeMetadata(rec *kgo.Record, row []types.Value, meta []metaCol) {
	for _, m := range meta {
		v := row[m.col]
		if m.virtual || v.IsNull() {
			continue
		}
		switch m.key {
		case metaTimestamp:
			rec.Timestamp = time.UnixMilli(v.Int())
		case metaHeaders:
			for i := 0; i+1 < 2*v.Len(); i += 2 {
				k, val := v.Field(i), v.Field(i+1)
				h := kgo.RecordHeader{Key: k.Str()}
				if !val.IsNull() {
					h.Value = []byte(val.Str())
				}
				rec.Headers = append(rec.Headers, h)
			}
		}
	}
}
