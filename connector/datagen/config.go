package datagen

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/weir-sql/weir/connector/internal/options"
	"github.com/weir-sql/weir/types"
)

// Defaults, as in Flink's datagen connector.
const (
	defaultRowsPerSecond = 10000
	defaultStringLength  = 100
)

// field is the generator of one column.
type field struct {
	name     string
	kind     types.Kind
	sequence bool
	// sequence: value of row i is start+i, for i <= end-start.
	start, end int64
	// random integers, timestamps' max-past and intervals: [min, max].
	min, max int64
	// random doubles: [fmin, fmax).
	fmin, fmax float64
	// random strings: length characters.
	length int
	// maxPast: a random timestamp lies in [base-maxPast, base].
	maxPast int64
	// span reduces a random value onto [min, max] (or [0, maxPast]).
	span fastMod
	// nullBelow: a value is NULL when its null hash is below this; 0 never.
	nullBelow uint64
}

// config is a datagen table's parsed options.
type config struct {
	rowsPerSecond float64
	rows          int64 // total rows; -1 when unbounded
	seed          uint64
	fields        []field
}

// parseConfig validates the options of t and builds the generators.
func parseConfig(schema types.Schema, opts map[string]string) (*config, error) {
	valid := []string{"rows-per-second", "number-of-rows", "seed"}
	rps, err := options.Int(opts, "rows-per-second", defaultRowsPerSecond)
	if err != nil {
		return nil, err
	}
	if rps <= 0 {
		return nil, fmt.Errorf("option 'rows-per-second': must be positive, got %d", rps)
	}
	c := &config{rowsPerSecond: float64(rps), rows: -1}
	if _, ok := opts["number-of-rows"]; ok {
		n, err := options.Int(opts, "number-of-rows", 0)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, fmt.Errorf("option 'number-of-rows': must not be negative, got %d", n)
		}
		c.rows = n
	}
	seed, err := options.Int(opts, "seed", 0)
	if err != nil {
		return nil, err
	}
	c.seed = uint64(seed)

	for _, col := range schema.Columns {
		f, keys, err := parseField(col, opts)
		if err != nil {
			return nil, err
		}
		valid = append(valid, keys...)
		if f.sequence {
			if n := f.end - f.start + 1; c.rows < 0 || n < c.rows {
				c.rows = n
			}
		}
		f.prepare()
		c.fields = append(c.fields, f)
	}
	if err := options.CheckKnown("datagen", opts, valid); err != nil {
		return nil, err
	}
	return c, nil
}

// parseField parses the options of one column and returns the option keys
// valid for it.
func parseField(col types.Column, opts map[string]string) (field, []string, error) {
	p := "fields." + col.Name + "."
	f := field{name: col.Name, kind: col.Type.Kind}
	kind, err := options.OneOf(opts, p+"kind", "random", "random", "sequence")
	if err != nil {
		return f, nil, err
	}
	keys := []string{p + "kind"}
	if kind == "sequence" {
		f.sequence = true
		keys = append(keys, p+"start", p+"end")
		return f, keys, parseSequence(&f, col, p, opts)
	}
	keys = append(keys, p+"null-rate")
	rate, err := options.Float(opts, p+"null-rate", 0)
	if err != nil {
		return f, nil, err
	}
	if rate < 0 || rate > 1 || math.IsNaN(rate) {
		return f, nil, fmt.Errorf("option '%snull-rate': must be between 0 and 1, got %v", p, rate)
	}
	if rate > 0 && col.Type.NotNull {
		return f, nil, fmt.Errorf("option '%snull-rate': column %s is NOT NULL", p, col.Name)
	}
	f.nullBelow = uint64(rate * (1 << 63) * 2)
	if rate >= 1 {
		f.nullBelow = math.MaxUint64
	}
	switch col.Type.Kind {
	case types.KindBoolean:
	case types.KindInt, types.KindBigInt, types.KindInterval:
		keys = append(keys, p+"min", p+"max")
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		switch col.Type.Kind {
		case types.KindBigInt:
			lo, hi = math.MinInt64, math.MaxInt64
		case types.KindInterval:
			lo, hi = 0, 86_400_000
		}
		if f.min, err = intOption(opts, p+"min", lo, col.Type.Kind); err != nil {
			return f, nil, err
		}
		if f.max, err = intOption(opts, p+"max", hi, col.Type.Kind); err != nil {
			return f, nil, err
		}
		if f.min > f.max {
			return f, nil, fmt.Errorf("options '%smin' (%d) and '%smax' (%d): min is greater than max", p, f.min, p, f.max)
		}
	case types.KindDouble:
		keys = append(keys, p+"min", p+"max")
		if f.fmin, err = options.Float(opts, p+"min", 0); err != nil {
			return f, nil, err
		}
		if f.fmax, err = options.Float(opts, p+"max", 1); err != nil {
			return f, nil, err
		}
		if !(f.fmin <= f.fmax) || math.IsInf(f.fmax-f.fmin, 0) {
			return f, nil, fmt.Errorf("options '%smin' (%v) and '%smax' (%v): need finite min <= max", p, f.fmin, p, f.fmax)
		}
	case types.KindVarchar:
		keys = append(keys, p+"length")
		n, err := options.Int(opts, p+"length", defaultStringLength)
		if err != nil {
			return f, nil, err
		}
		if n < 0 || n > 1<<20 {
			return f, nil, fmt.Errorf("option '%slength': must be between 0 and %d, got %d", p, 1<<20, n)
		}
		f.length = int(n)
	case types.KindTimestamp, types.KindTimestampLTZ:
		keys = append(keys, p+"max-past")
		if f.maxPast, err = options.Int(opts, p+"max-past", 0); err != nil {
			return f, nil, err
		}
		if f.maxPast < 0 {
			return f, nil, fmt.Errorf("option '%smax-past': must not be negative, got %d", p, f.maxPast)
		}
	default:
		return f, nil, fmt.Errorf("column %s: datagen cannot generate type %s", col.Name, col.Type)
	}
	return f, keys, nil
}

func parseSequence(f *field, col types.Column, p string, opts map[string]string) error {
	switch col.Type.Kind {
	case types.KindInt, types.KindBigInt, types.KindDouble, types.KindTimestamp, types.KindInterval:
	default:
		return fmt.Errorf("column %s: 'sequence' is not supported for type %s (use kind 'random')", col.Name, col.Type)
	}
	for _, k := range []string{"start", "end"} {
		if _, ok := opts[p+k]; !ok {
			return fmt.Errorf("column %s: option '%s%s' is required for a sequence field", col.Name, p, k)
		}
	}
	var err error
	if f.start, err = intOption(opts, p+"start", 0, col.Type.Kind); err != nil {
		return err
	}
	if f.end, err = intOption(opts, p+"end", 0, col.Type.Kind); err != nil {
		return err
	}
	if f.start > f.end {
		return fmt.Errorf("options '%sstart' (%d) and '%send' (%d): start is greater than end", p, f.start, p, f.end)
	}
	if f.end-f.start+1 <= 0 {
		return fmt.Errorf("options '%sstart' and '%send': the sequence is too long", p, p)
	}
	return nil
}

// intOption parses an integer option for a column of kind k: an INT must
// fit 32 bits, and a TIMESTAMP also accepts "yyyy-mm-dd hh:mm:ss[.fff]".
func intOption(opts map[string]string, key string, def int64, k types.Kind) (int64, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	if k == types.KindTimestamp {
		if ms, err := options.ParseTimestamp([]byte(strings.TrimSpace(v))); err == nil {
			return ms, nil
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return n, nil
		}
		return 0, fmt.Errorf("option '%s': invalid value '%s': expected a timestamp 'yyyy-mm-dd hh:mm:ss[.fff]' or milliseconds since the epoch", key, v)
	}
	n, err := options.Int(opts, key, def)
	if err != nil {
		return 0, err
	}
	if k == types.KindInt && (n < math.MinInt32 || n > math.MaxInt32) {
		return 0, fmt.Errorf("option '%s': value %d is out of range for INT", key, n)
	}
	return n, nil
}
