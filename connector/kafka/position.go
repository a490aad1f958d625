package kafka

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// tp names a partition of a topic.
type tp struct {
	topic     string
	partition int32
}

// partState is where a reader is in one partition: the offset of the next
// record to read and, for a bounded read, the offset it stops before
// (-1: unbounded).
type partState struct {
	next, end int64
}

const positionVersion = 1

// encodePosition writes the state of every partition, sorted, as
// version, count, then per partition topic, partition, next, end+1.
func encodePosition(parts map[tp]partState) []byte {
	keys := sortedTPs(parts)
	b := []byte{positionVersion}
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		st := parts[k]
		b = binary.AppendUvarint(b, uint64(len(k.topic)))
		b = append(b, k.topic...)
		b = binary.AppendUvarint(b, uint64(k.partition))
		b = binary.AppendUvarint(b, uint64(st.next))
		b = binary.AppendUvarint(b, uint64(st.end+1))
	}
	return b
}

func sortedTPs(parts map[tp]partState) []tp {
	keys := make([]tp, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].topic != keys[j].topic {
			return keys[i].topic < keys[j].topic
		}
		return keys[i].partition < keys[j].partition
	})
	return keys
}

// decodePosition reads what encodePosition wrote.
func decodePosition(b []byte) (map[tp]partState, error) {
	out := map[tp]partState{}
	if len(b) == 0 {
		return out, nil
	}
	if b[0] != positionVersion {
		return nil, fmt.Errorf("kafka position: unknown version %d", b[0])
	}
	i := 1
	bad := fmt.Errorf("kafka position: truncated or damaged (%d bytes)", len(b))
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return 0, false
		}
		i += n
		return v, true
	}
	n, ok := uv()
	if !ok || n > uint64(len(b)) {
		return nil, bad
	}
	for range n {
		l, ok := uv()
		if !ok || l > uint64(len(b)-i) {
			return nil, bad
		}
		topic := string(b[i : i+int(l)])
		i += int(l)
		p, ok1 := uv()
		next, ok2 := uv()
		end, ok3 := uv()
		if !ok1 || !ok2 || !ok3 || p > 1<<31-1 {
			return nil, bad
		}
		out[tp{topic, int32(p)}] = partState{next: int64(next), end: int64(end) - 1}
	}
	if i != len(b) {
		return nil, bad
	}
	return out, nil
}

// DescribePosition renders a kafka source position for `weir checkpoints
// inspect`: every partition with its next offset (and end, when bounded).
func DescribePosition(pos []byte) (string, error) {
	parts, err := decodePosition(pos)
	if err != nil {
		return "", err
	}
	if len(parts) == 0 {
		return "no partitions", nil
	}
	s := ""
	for k, key := range sortedTPs(parts) {
		if k > 0 {
			s += "\n"
		}
		st := parts[key]
		s += fmt.Sprintf("%s-%d: next offset %d", key.topic, key.partition, st.next)
		if st.end >= 0 {
			s += fmt.Sprintf(", ends before %d", st.end)
		}
	}
	return s, nil
}
