package filesystem

import (
	"fmt"
	"time"

	"github.com/weir-sql/weir/connector/internal/options"
)

// The supported formats.
const (
	formatCSV      = "csv"
	formatJSON     = "json"
	formatDebezium = "debezium-json"
	isoStandard    = "ISO-8601"
	sqlStandard    = "SQL"
)

// format is the parsed 'format' option and its format-specific options.
type format struct {
	name string // formatCSV, formatJSON or formatDebezium
	// CSV
	delim, quote   byte
	comments       bool
	nullLiteral    string
	hasNullLiteral bool
	arrayDelim     byte // between the fields of a ROW, the elements of an ARRAY
	// JSON and Debezium JSON
	failOnMissing bool
	isoTimestamps bool
	// all
	ignoreErrors bool
	// loc is the session's time zone: TIMESTAMP_LTZ values are written and
	// read as local times in it (nil: UTC).
	loc *time.Location
}

// parseFormat reads 'format' and its options from opts and returns the
// option keys it recognises. Source-only options (parse errors, comments,
// missing fields) are recognised only when forSource is set.
func parseFormat(opts map[string]string, forSource bool) (format, []string, error) {
	name, ok := opts["format"]
	if !ok {
		return format{}, nil, fmt.Errorf("missing option 'format' (one of '%s', '%s', '%s')", formatCSV, formatJSON, formatDebezium)
	}
	name, err := options.OneOf(opts, "format", "", formatCSV, formatJSON, formatDebezium)
	if err != nil {
		return format{}, nil, err
	}
	f := format{name: name}
	var keys []string
	p := name + "."
	if forSource {
		keys = append(keys, "ignore-parse-errors", p+"ignore-parse-errors")
		generic, err := options.Bool(opts, "ignore-parse-errors", false)
		if err != nil {
			return f, nil, err
		}
		specific, err := options.Bool(opts, p+"ignore-parse-errors", false)
		if err != nil {
			return f, nil, err
		}
		f.ignoreErrors = generic || specific
	}
	switch name {
	case formatCSV:
		keys = append(keys, p+"field-delimiter", p+"quote-character", p+"null-literal", p+"array-element-delimiter")
		if f.delim, err = options.Char(opts, p+"field-delimiter", ','); err != nil {
			return f, nil, err
		}
		if f.quote, err = options.Char(opts, p+"quote-character", '"'); err != nil {
			return f, nil, err
		}
		if f.delim == f.quote {
			return f, nil, fmt.Errorf("options '%sfield-delimiter' and '%squote-character' must differ", p, p)
		}
		f.nullLiteral, f.hasNullLiteral = opts[p+"null-literal"]
		if f.arrayDelim, err = options.Char(opts, p+"array-element-delimiter", ';'); err != nil {
			return f, nil, err
		}
		if f.arrayDelim == '\\' {
			return f, nil, fmt.Errorf("option '%sarray-element-delimiter' cannot be a backslash (it escapes the delimiter in elements)", p)
		}
		if forSource {
			keys = append(keys, p+"allow-comments")
			if f.comments, err = options.Bool(opts, p+"allow-comments", false); err != nil {
				return f, nil, err
			}
		}
	case formatJSON, formatDebezium:
		keys = append(keys, p+"timestamp-format.standard")
		std, err := options.OneOf(opts, p+"timestamp-format.standard", sqlStandard, sqlStandard, isoStandard)
		if err != nil {
			return f, nil, err
		}
		f.isoTimestamps = std == isoStandard
		if forSource && name == formatJSON {
			keys = append(keys, p+"fail-on-missing-field")
			if f.failOnMissing, err = options.Bool(opts, p+"fail-on-missing-field", false); err != nil {
				return f, nil, err
			}
		}
	}
	return f, keys, nil
}
