package datagen

import "github.com/weir-sql/weir/types"

// mix is splitmix64's finaliser: a fast, well-distributed 64-bit hash.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

const hexDigits = "0123456789abcdef"

// generator produces rows as a pure function of the global row number.
type generator struct {
	seed   uint64
	base   int64 // "now" of row 0's random timestamps, ms since the epoch
	rps    int64 // rows per second (all subtasks): row i's "now" is base + i*1000/rps
	fields []field
	buf    []byte // scratch for random strings
}

// fill writes row number i (global, 0-based) into row.
func (g *generator) fill(row []types.Value, i int64) {
	rowHash := mix(g.seed ^ mix(uint64(i)))
	for c := range g.fields {
		f := &g.fields[c]
		if f.sequence {
			v := f.start + i
			switch f.kind {
			case types.KindDouble:
				row[c] = types.DoubleValue(float64(v))
			default:
				row[c] = types.BigIntValue(v).WithKind(f.kind)
			}
			continue
		}
		h := mix(rowHash ^ (uint64(c+1) * 0xd1b54a32d192ed03))
		if f.nullBelow != 0 && mix(h^0x5851f42d4c957f2d) < f.nullBelow {
			row[c] = types.NullValue()
			continue
		}
		switch f.kind {
		case types.KindBoolean:
			row[c] = types.BoolValue(h&1 == 1)
		case types.KindInt, types.KindBigInt, types.KindInterval:
			row[c] = types.BigIntValue(int64(uint64(f.min) + f.span.reduce(h))).WithKind(f.kind)
		case types.KindDouble:
			u := float64(h>>11) / (1 << 53)
			row[c] = types.DoubleValue(f.fmin + (f.fmax-f.fmin)*u)
		case types.KindTimestamp, types.KindTimestampLTZ:
			row[c] = types.TimestampValue(g.now(i) - int64(f.span.reduce(h))).WithKind(f.kind)
		case types.KindVarchar:
			row[c] = types.StringValue(g.randomString(h, f.length))
		default:
			row[c] = types.NullValue()
		}
	}
}

// now returns row i's "now": the time the row is due at the table's rate
// (rows-per-second) when the source starts at base. Time thus moves with
// the rows, as Flink's datagen (which reads the clock) has it, and a
// replayed row gets the same value.
func (g *generator) now(i int64) int64 {
	if g.rps <= 0 {
		return g.base
	}
	return g.base + (i/g.rps)*1000 + (i%g.rps)*1000/g.rps
}

// prepare precomputes what fill needs: the span of a random integer,
// interval or timestamp field, onto which fill maps a random h uniformly
// (up to a negligible bias) as h mod span.
func (f *field) prepare() {
	switch f.kind {
	case types.KindInt, types.KindBigInt, types.KindInterval:
		f.span = newFastMod(uint64(f.max) - uint64(f.min) + 1)
	case types.KindTimestamp, types.KindTimestampLTZ:
		f.span = newFastMod(uint64(f.maxPast) + 1)
	}
}

// randomString returns n lowercase hex digits derived from h.
func (g *generator) randomString(h uint64, n int) string {
	g.buf = g.buf[:0]
	for k := uint64(0); len(g.buf) < n; k++ {
		x := mix(h + k)
		for j := 0; j < 16 && len(g.buf) < n; j++ {
			g.buf = append(g.buf, hexDigits[x&15])
			x >>= 4
		}
	}
	return string(g.buf)
}

// rowsOf returns how many of the first total global rows belong to subtask
// out of parallelism (row i belongs to subtask i % parallelism).
func rowsOf(total int64, subtask, parallelism int) int64 {
	if total <= int64(subtask) {
		return 0
	}
	return (total-int64(subtask)-1)/int64(parallelism) + 1
}
