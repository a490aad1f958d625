package checkpoint

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sampleMetadata() Metadata {
	return Metadata{
		FormatVersion:   FormatVersion,
		Job:             "sums",
		Query:           "SELECT n % 2 AS parity, SUM(n)\nFROM (SELECT * FROM s1 UNION ALL SELECT * FROM s2)\nGROUP BY n % 2",
		PlanFingerprint: "9f2c41d0",
		CheckpointID:    2,
		Timestamp:       time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC),
		Kind:            KindCheckpoint,
		MaxParallelism:  128,
		Operators: []OperatorState{{
			ID: "agg", Name: "GroupAggregate(groupBy=[parity], select=[parity, SUM(n)])", Parallelism: 2,
			Subtasks: []SubtaskState{
				{Subtask: 0, Dir: "op-agg-0", StateBytes: 4096, Keys: 1, Files: []FileInfo{{Name: "MANIFEST-000001", Size: 100}, {Name: "OPTIONS-000003", Size: 200}, {Name: "000004.sst", Size: 3796}}},
				{Subtask: 1, Dir: "op-agg-1", StateBytes: 4096, Keys: 1, Files: []FileInfo{{Name: "MANIFEST-000001", Size: 100}, {Name: "OPTIONS-000003", Size: 200}, {Name: "000004.sst", Size: 3796}}},
			},
		}},
		Sources: []SourcePosition{{Source: "s1", Subtask: 0, Position: []byte("3")}, {Source: "s2", Subtask: 0, Position: []byte{0, 0, 0, 4}}},
		Sinks:   []SinkTransaction{{Sink: "out", Subtask: 0, Transaction: []byte("txn-2-0")}},
		OperatorLists: []OperatorList{{Owner: "source:s1", Subtask: 0, Mode: ListSplit, Entries: [][]byte{[]byte("a"), {}}},
			{Owner: "sink:out", Subtask: 0, Mode: ListUnion, Entries: [][]byte{}}},
		Extra: map[string]string{"note": "worked example"},
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	m := sampleMetadata()
	data, err := EncodeMetadata(&m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMetadata(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, m) {
		t.Errorf("round trip:\n got %+v\nwant %+v", *got, m)
	}
}

func TestMetadataDamageDetected(t *testing.T) {
	m := sampleMetadata()
	data, err := EncodeMetadata(&m)
	if err != nil {
		t.Fatal(err)
	}
	// Every truncation and every single-bit flip is detected.
	for n := 0; n < len(data); n++ {
		if _, err := DecodeMetadata(data[:n]); !errors.Is(err, ErrCorruptCheckpoint) {
			t.Fatalf("truncated to %d bytes: err %v, want ErrCorruptCheckpoint", n, err)
		}
	}
	for i := 0; i < len(data); i++ {
		for bit := 0; bit < 8; bit++ {
			d := append([]byte(nil), data...)
			d[i] ^= 1 << bit
			got, err := DecodeMetadata(d)
			if err == nil && !reflect.DeepEqual(*got, m) {
				t.Fatalf("flip byte %d bit %d: decoded different metadata without error", i, bit)
			}
			if err != nil && !errors.Is(err, ErrCorruptCheckpoint) {
				t.Fatalf("flip byte %d bit %d: err %v does not wrap ErrCorruptCheckpoint", i, bit, err)
			}
		}
	}
}

func TestMetadataRejects(t *testing.T) {
	cases := []struct {
		name string
		edit func(m *Metadata)
		want string
	}{
		{"unknown kind", func(m *Metadata) { m.Kind = "backup" }, "unknown kind"},
		{"escaping dir", func(m *Metadata) { m.Operators[0].Subtasks[0].Dir = "../x" }, "not a plain folder name"},
		{"absolute dir", func(m *Metadata) { m.Operators[0].Subtasks[0].Dir = "/etc" }, "not a plain folder name"},
		{"duplicate operator", func(m *Metadata) { m.Operators = append(m.Operators, m.Operators[0]) }, "listed twice"},
		{"unknown list mode", func(m *Metadata) { m.OperatorLists[0].Mode = "broadcast" }, `unknown mode "broadcast"`},
		{"mixed list modes", func(m *Metadata) {
			m.OperatorLists = append(m.OperatorLists, OperatorList{Owner: "source:s1", Subtask: 1, Mode: ListUnion})
		}, "modes"},
		{"duplicate list", func(m *Metadata) { m.OperatorLists = append(m.OperatorLists, m.OperatorLists[0]) }, "listed twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := sampleMetadata()
			c.edit(&m)
			data, err := EncodeMetadata(&m)
			if err != nil {
				t.Fatal(err)
			}
			_, err = DecodeMetadata(data)
			if !errors.Is(err, ErrCorruptCheckpoint) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want ErrCorruptCheckpoint mentioning %q", err, c.want)
			}
		})
	}
	// A newer format is not corrupt: a newer Weir wrote it.
	m := sampleMetadata()
	m.FormatVersion = FormatVersion + 1
	data, err := EncodeMetadata(&m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = DecodeMetadata(data); !errors.Is(err, ErrNewerCheckpoint) || errors.Is(err, ErrCorruptCheckpoint) {
		t.Errorf("future version: err %v, want ErrNewerCheckpoint only", err)
	}
}

// TestMetadataDamagedVersionNotNewer: the checksum covers the body only, so
// a header whose version digits were damaged into a newer version, over an
// intact body of this build's format, is corrupt, not written by a newer
// Weir (which would stop every restore from the latest checkpoint).
func TestMetadataDamagedVersionNotNewer(t *testing.T) {
	m := sampleMetadata()
	data, err := EncodeMetadata(&m)
	if err != nil {
		t.Fatal(err)
	}
	nl := strings.IndexByte(string(data), '\n')
	fields := strings.Fields(string(data[:nl]))
	for _, v := range []string{"8", "9", "17", "70", "77", "1000000"} {
		header := strings.Join([]string{fields[0], v, fields[2], fields[3]}, " ")
		d := append([]byte(header+"\n"), data[nl+1:]...)
		if _, err := DecodeMetadata(d); !errors.Is(err, ErrCorruptCheckpoint) || errors.Is(err, ErrNewerCheckpoint) {
			t.Errorf("header version %s over a version %d body: err %v, want ErrCorruptCheckpoint only", v, FormatVersion, err)
		}
	}
}

func TestSubtaskDirName(t *testing.T) {
	cases := map[string]string{
		"agg":       "op-agg-3",
		"Agg_1.v2":  "op-Agg_1.v2-3",
		"a/b":       "op-a%2Fb-3",
		"a-b":       "op-a%2Db-3",
		"x y%":      "op-x%20y%25-3",
		"../../etc": "op-..%2F..%2Fetc-3",
		"":          "op--3",
	}
	for id, want := range cases {
		if got := SubtaskDirName(id, 3); got != want {
			t.Errorf("SubtaskDirName(%q) = %q, want %q", id, got, want)
		}
	}
}
