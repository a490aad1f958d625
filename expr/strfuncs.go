package expr

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/weir-sql/weir/types"
)

// String functions, with Flink's semantics: positions and lengths count
// characters (runes), from 1; NULL in gives NULL out unless said otherwise.
// Regular expressions are Go's (RE2): no backreferences or lookaround.

func addStringFuncs(m map[string]*scalarDef) {
	str := []argClass{aStr}
	strInt := []argClass{aStr, aInt}
	intT := typeOf(types.KindInt)
	boolT := typeOf(types.KindBoolean)
	m["REGEXP"] = &scalarDef{min: 2, max: 2, args: str, result: boolT, prepare: prepareRegexp(1), eval3: evalRegexp,
		doc: "REGEXP(s, regex): TRUE if some substring of s matches regex"}
	m["REGEXP_REPLACE"] = &scalarDef{min: 3, max: 3, args: str, prepare: prepareRegexp(1), eval3: evalRegexpReplace, nullable: true,
		doc: "REGEXP_REPLACE(s, regex, r): s with every match of regex replaced by r ($1 names a group)"}
	m["REGEXP_EXTRACT"] = &scalarDef{min: 2, max: 3, args: []argClass{aStr, aStr, aInt}, prepare: prepareRegexp(1), eval3: evalRegexpExtract, eval1: evalRegexpExtract1, nullable: true,
		doc: "REGEXP_EXTRACT(s, regex [, i]): group i (0: the whole match, the default) of the first match; NULL if none"}
	m["SPLIT_INDEX"] = &scalarDef{min: 3, max: 3, args: []argClass{aStr, aStr, aInt}, eval3: evalSplitIndex, eval1: evalSplitIndex1, nullable: true,
		doc: "SPLIT_INDEX(s, sep, i): the i-th (from 0) piece of s split at sep; NULL if there is none"}
	m["REPLACE"] = &scalarDef{min: 3, max: 3, args: str, eval3: func(_ *Scalar, a, b, c types.Value) (types.Value, error) {
		return types.StringValue(strings.ReplaceAll(a.Str(), b.Str(), c.Str())), nil
	}, doc: "REPLACE(s, from, to): s with every occurrence of from replaced by to"}
	m["LPAD"] = &scalarDef{min: 3, max: 3, args: []argClass{aStr, aInt, aStr}, eval3: evalPad(true), nullable: true,
		doc: "LPAD(s, n, pad): s left-padded with pad to n characters (cut to n if longer); NULL if n < 0 or pad is empty"}
	m["RPAD"] = &scalarDef{min: 3, max: 3, args: []argClass{aStr, aInt, aStr}, eval3: evalPad(false), nullable: true,
		doc: "RPAD(s, n, pad): s right-padded with pad to n characters (cut to n if longer); NULL if n < 0 or pad is empty"}
	m["INITCAP"] = &scalarDef{min: 1, max: 1, args: str, eval3: evalInitCap,
		doc: "INITCAP(s): each word's first letter upper case, the rest lower case"}
	m["POSITION"] = &scalarDef{min: 2, max: 2, args: str, result: intT, eval3: func(_ *Scalar, a, b, _ types.Value) (types.Value, error) {
		return types.IntValue(int64(runeIndex(b.Str(), a.Str(), 0))), nil
	}, doc: "POSITION(x IN s): the position (from 1) of the first x in s; 0 if none"}
	m["LOCATE"] = &scalarDef{min: 2, max: 3, args: []argClass{aStr, aStr, aInt}, result: intT, eval3: evalLocate,
		doc: "LOCATE(x, s [, from]): the position of the first x in s at or after from; 0 if none"}
	m["INSTR"] = &scalarDef{min: 2, max: 2, args: str, result: intT, eval3: func(_ *Scalar, a, b, _ types.Value) (types.Value, error) {
		return types.IntValue(int64(runeIndex(a.Str(), b.Str(), 0))), nil
	}, doc: "INSTR(s, x): the position (from 1) of the first x in s; 0 if none"}
	m["REPEAT"] = &scalarDef{min: 2, max: 2, args: strInt, eval3: evalRepeat,
		doc: "REPEAT(s, n): s n times ('' for n <= 0)"}
	m["REVERSE"] = &scalarDef{min: 1, max: 1, args: str, eval3: func(_ *Scalar, a, _, _ types.Value) (types.Value, error) {
		r := []rune(a.Str())
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return types.StringValue(string(r)), nil
	}, doc: "REVERSE(s): s backwards"}
	m["LEFT"] = &scalarDef{min: 2, max: 2, args: strInt, eval3: evalLeftRight(true),
		doc: "LEFT(s, n): the first n characters of s ('' for n <= 0)"}
	m["RIGHT"] = &scalarDef{min: 2, max: 2, args: strInt, eval3: evalLeftRight(false),
		doc: "RIGHT(s, n): the last n characters of s ('' for n <= 0)"}
	m["MD5"] = &scalarDef{min: 1, max: 1, args: str, eval3: evalHash(md5.New),
		doc: "MD5(s): the MD5 digest of s as 32 hex digits"}
	m["SHA1"] = &scalarDef{min: 1, max: 1, args: str, eval3: evalHash(sha1.New),
		doc: "SHA1(s): the SHA-1 digest of s as 40 hex digits"}
	m["SHA224"] = &scalarDef{min: 1, max: 1, args: str, eval3: evalHash(sha256.New224),
		doc: "SHA224(s): the SHA-224 digest of s in hex"}
	m["SHA256"] = &scalarDef{min: 1, max: 1, args: str, eval3: evalHash(sha256.New),
		doc: "SHA256(s): the SHA-256 digest of s as 64 hex digits"}
	m["SHA384"] = &scalarDef{min: 1, max: 1, args: str, eval3: evalHash(sha512.New384),
		doc: "SHA384(s): the SHA-384 digest of s in hex"}
	m["SHA512"] = &scalarDef{min: 1, max: 1, args: str, eval3: evalHash(sha512.New),
		doc: "SHA512(s): the SHA-512 digest of s in hex"}
	m["SHA2"] = &scalarDef{min: 2, max: 2, args: strInt, eval3: evalSHA2, nullable: true,
		doc: "SHA2(s, bits): the SHA-2 digest of s in hex, bits 224, 256, 384 or 512 (else NULL)"}
	m["TO_BASE64"] = &scalarDef{min: 1, max: 1, args: str, eval3: func(_ *Scalar, a, _, _ types.Value) (types.Value, error) {
		return types.StringValue(base64.StdEncoding.EncodeToString([]byte(a.Str()))), nil
	}, doc: "TO_BASE64(s): s in base64"}
	m["FROM_BASE64"] = &scalarDef{min: 1, max: 1, args: str, eval3: func(_ *Scalar, a, _, _ types.Value) (types.Value, error) {
		b, err := base64.StdEncoding.DecodeString(a.Str())
		if err != nil {
			return types.Value{}, fmt.Errorf("FROM_BASE64: '%s' is not base64: %w", a.Str(), err)
		}
		return types.StringValue(string(b)), nil
	}, doc: "FROM_BASE64(s): the text base64 s encodes (an error if it is not base64)"}
	m["CONCAT_WS"] = &scalarDef{min: 1, max: -1, evalN: evalConcatWS, result: func(args []Expr) (types.Type, error) {
		return types.Type{Kind: types.KindVarchar, NotNull: args[0].Type().NotNull}, nil
	}, doc: "CONCAT_WS(sep, a, b, ...): a, b, ... joined with sep, NULLs skipped; NULL if sep is NULL"}
	m["TRIM"] = &scalarDef{min: 1, max: 2, args: str, eval3: evalTrim(true, true),
		doc: "TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) or TRIM(s): s without the leading and/or trailing chars (default ' ')"}
	m["LTRIM"] = &scalarDef{min: 1, max: 2, args: str, eval3: evalTrim(true, false),
		doc: "LTRIM(s [, chars]): s without the leading chars (default ' ')"}
	m["RTRIM"] = &scalarDef{min: 1, max: 2, args: str, eval3: evalTrim(false, true),
		doc: "RTRIM(s [, chars]): s without the trailing chars (default ' ')"}
	m["ASCII"] = &scalarDef{min: 1, max: 1, args: str, result: intT, eval3: func(_ *Scalar, a, _, _ types.Value) (types.Value, error) {
		if a.Str() == "" {
			return types.IntValue(0), nil
		}
		return types.IntValue(int64(a.Str()[0])), nil
	}, doc: "ASCII(s): the code of the first byte of s (0 for '')"}
	m["CHR"] = &scalarDef{min: 1, max: 1, args: []argClass{aInt}, eval3: func(_ *Scalar, a, _, _ types.Value) (types.Value, error) {
		n := a.Int()
		if n < 0 {
			return types.StringValue(""), nil
		}
		if n > 255 {
			n %= 255
		}
		return types.StringValue(string(rune(n))), nil
	}, doc: "CHR(n): the character of code n (n mod 255 above 255; '' if negative)"}
}

// prepareRegexp compiles argument i of the call when it is a literal: a
// bad pattern is an error when the call is built.
func prepareRegexp(i int) func(s *Scalar) error {
	return func(s *Scalar) error {
		v, ok := s.constArg(i)
		if !ok || v.IsNull() {
			return nil
		}
		re, err := newFastRegexp(v.Str())
		if err != nil {
			return &ArgError{Arg: i, Err: fmt.Errorf("%s: bad regular expression '%s': %w", s.Name, v.Str(), err)}
		}
		s.state = re
		return nil
	}
}

// regexpOf returns the call's precompiled pattern or compiles p; a bad
// pattern computed at run time gives NULL, as in Flink (ok false).
func (s *Scalar) regexpOf(p string) (*fastRegexp, bool) {
	if re, ok := s.state.(*fastRegexp); ok {
		return re, true
	}
	re, err := goRegexp(p)
	return re, err == nil
}

func evalRegexp(s *Scalar, a, b, _ types.Value) (types.Value, error) {
	re, ok := s.regexpOf(b.Str())
	if !ok {
		return types.Value{}, nil
	}
	return types.BoolValue(re.MatchString(a.Str())), nil
}

func evalRegexpReplace(s *Scalar, a, b, c types.Value) (types.Value, error) {
	re, ok := s.regexpOf(b.Str())
	if !ok {
		return types.Value{}, nil
	}
	return types.StringValue(re.re.ReplaceAllString(a.Str(), c.Str())), nil
}

// evalRegexpExtract1 is REGEXP_EXTRACT with a literal pattern (and
// group).
func evalRegexpExtract1(s *Scalar, a types.Value) (types.Value, error) {
	return evalRegexpExtract(s, a, s.consts[1], s.consts[2])
}

func evalRegexpExtract(s *Scalar, a, b, c types.Value) (types.Value, error) {
	re, ok := s.regexpOf(b.Str())
	if !ok {
		return types.Value{}, nil
	}
	idx := 0
	if len(s.Args) == 3 {
		idx = int(c.Int())
		if idx < 0 || idx > re.nsub {
			return types.Value{}, nil
		}
	}
	lo, hi, ok := re.Group(a.Str(), idx)
	if !ok {
		return types.Value{}, nil
	}
	return types.StringValue(a.Str()[lo:hi]), nil
}

func evalSplitIndex(_ *Scalar, a, b, c types.Value) (types.Value, error) {
	return splitIndex(a.Str(), b.Str(), c.Int()), nil
}

// evalSplitIndex1 is SPLIT_INDEX with a literal separator and index.
func evalSplitIndex1(sc *Scalar, a types.Value) (types.Value, error) {
	return splitIndex(a.Str(), sc.consts[1].Str(), sc.consts[2].Int()), nil
}

// splitIndex is SPLIT_INDEX(s, sep, idx): piece idx of s split at sep, a
// substring of s; NULL past the end, for idx < 0 and for an empty s.
// Flink splits with commons-lang's splitByWholeSeparatorPreserveAllTokens:
// every separator ends a piece (empty pieces count), an empty string has
// no pieces, and an empty separator splits at each whitespace character
// (Java's Character.isWhitespace).
func splitIndex(s, sep string, idx int64) types.Value {
	if idx < 0 || s == "" {
		return types.Value{}
	}
	if sep == "" {
		start := 0
		for i, r := range s {
			if !javaWhitespace(r) {
				continue
			}
			if idx == 0 {
				return types.StringValue(s[start:i])
			}
			idx--
			start = i + utf8.RuneLen(r)
		}
		if idx == 0 {
			return types.StringValue(s[start:])
		}
		return types.Value{}
	}
	if len(sep) == 1 {
		return splitIndexByte(s, sep[0], idx)
	}
	for ; idx > 0; idx-- {
		i := strings.Index(s, sep)
		if i < 0 {
			return types.Value{}
		}
		s = s[i+len(sep):]
	}
	if i := strings.Index(s, sep); i >= 0 {
		s = s[:i]
	}
	return types.StringValue(s)
}

// javaWhitespace reports whether Java's Character.isWhitespace holds for
// r: Unicode space, line and paragraph separators other than the
// no-break spaces, and the ASCII controls \t \n \v \f \r and 0x1c-0x1f.
func javaWhitespace(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r' || (r >= 0x1c && r <= 0x1f):
		return true
	case r == '\u00a0' || r == '\u2007' || r == '\u202f':
		return false
	}
	return r > 0x7f && unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp) || r == ' '
}

// splitIndexByte is SPLIT_INDEX(s, string(c), idx) for idx >= 0: one
// pass over s up to the end of piece idx, returning a substring of s.
// It finds the separators eight bytes at a time (a URL's pieces are a
// few bytes each: a call of strings.IndexByte per separator costs more).
func splitIndexByte(s string, c byte, idx int64) types.Value {
	const low7 = 0x7f7f7f7f7f7f7f7f
	pat := 0x0101010101010101 * uint64(c)
	start, i := 0, 0
	for ; i+8 <= len(s); i += 8 {
		w := load64(s, i) ^ pat // zero bytes are separators
		// The high bit of each zero byte of w, exactly (no carries
		// between bytes).
		m := ^((w&low7 + low7) | w | low7)
		for ; m != 0; m &= m - 1 {
			j := i + bits.TrailingZeros64(m)/8
			if idx == 0 {
				return types.StringValue(s[start:j])
			}
			idx--
			start = j + 1
		}
	}
	for ; i < len(s); i++ {
		if s[i] != c {
			continue
		}
		if idx == 0 {
			return types.StringValue(s[start:i])
		}
		idx--
		start = i + 1
	}
	if idx == 0 {
		return types.StringValue(s[start:])
	}
	return types.Value{}
}

// load64 returns the eight bytes of s from i, little-endian (one load).
func load64(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// evalPad is LPAD (left) or RPAD as Flink computes them.
func evalPad(left bool) func(*Scalar, types.Value, types.Value, types.Value) (types.Value, error) {
	return func(_ *Scalar, a, b, c types.Value) (types.Value, error) {
		n, pad := b.Int(), c.Str()
		if n < 0 || pad == "" {
			return types.Value{}, nil
		}
		s := a.Str()
		sl := int64(utf8.RuneCountInString(s))
		if sl >= n {
			return types.StringValue(s[:runeOffset(s, int(n))]), nil
		}
		var buf strings.Builder
		buf.Grow(len(s) + int(n-sl)*utf8.UTFMax)
		if !left {
			buf.WriteString(s)
		}
		for need := n - sl; need > 0; {
			for _, r := range pad {
				if need == 0 {
					break
				}
				buf.WriteRune(r)
				need--
			}
		}
		if left {
			buf.WriteString(s)
		}
		return types.StringValue(buf.String()), nil
	}
}

// runeOffset returns the byte offset of character n (from 0) of s, or len(s).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// runeIndex returns the position (from 1, in characters) of the first x in
// s at or after character from (from 0), or 0.
func runeIndex(s, x string, from int) int {
	off := runeOffset(s, from)
	if from > 0 && off == len(s) && from > utf8.RuneCountInString(s) {
		return 0
	}
	i := strings.Index(s[off:], x)
	if i < 0 {
		return 0
	}
	return from + utf8.RuneCountInString(s[off:off+i]) + 1
}

func evalLocate(s *Scalar, a, b, c types.Value) (types.Value, error) {
	from := int64(1)
	if len(s.Args) == 3 {
		from = c.Int()
		if from < 1 {
			return types.IntValue(0), nil
		}
	}
	return types.IntValue(int64(runeIndex(b.Str(), a.Str(), int(from-1)))), nil
}

// maxRepeat bounds the result of REPEAT, LPAD and RPAD.
const maxRepeat = 1 << 28

func evalRepeat(_ *Scalar, a, b, _ types.Value) (types.Value, error) {
	n := b.Int()
	if n <= 0 || a.Str() == "" {
		return types.StringValue(""), nil
	}
	if int64(len(a.Str()))*n > maxRepeat {
		return types.Value{}, fmt.Errorf("REPEAT: the result would be %d bytes, more than %d", int64(len(a.Str()))*n, maxRepeat)
	}
	return types.StringValue(strings.Repeat(a.Str(), int(n))), nil
}

func evalLeftRight(left bool) func(*Scalar, types.Value, types.Value, types.Value) (types.Value, error) {
	return func(_ *Scalar, a, b, _ types.Value) (types.Value, error) {
		n, s := b.Int(), a.Str()
		if n <= 0 {
			return types.StringValue(""), nil
		}
		l := int64(utf8.RuneCountInString(s))
		if n >= l {
			return a, nil
		}
		if left {
			return types.StringValue(s[:runeOffset(s, int(n))]), nil
		}
		return types.StringValue(s[runeOffset(s, int(l-n)):]), nil
	}
}

func evalInitCap(_ *Scalar, a, _, _ types.Value) (types.Value, error) {
	var buf strings.Builder
	buf.Grow(len(a.Str()))
	start := true
	for _, r := range a.Str() {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case alnum && start:
			buf.WriteRune(unicode.ToUpper(r))
		case alnum:
			buf.WriteRune(unicode.ToLower(r))
		default:
			buf.WriteRune(r)
		}
		start = !alnum
	}
	return types.StringValue(buf.String()), nil
}

func evalHash(h func() hash.Hash) func(*Scalar, types.Value, types.Value, types.Value) (types.Value, error) {
	return func(_ *Scalar, a, _, _ types.Value) (types.Value, error) {
		d := h()
		d.Write([]byte(a.Str()))
		var sum [64]byte
		return types.StringValue(hex.EncodeToString(d.Sum(sum[:0]))), nil
	}
}

func evalSHA2(s *Scalar, a, b, c types.Value) (types.Value, error) {
	var h func() hash.Hash
	switch b.Int() {
	case 224:
		h = sha256.New224
	case 256, 0:
		h = sha256.New
	case 384:
		h = sha512.New384
	case 512:
		h = sha512.New
	default:
		return types.Value{}, nil
	}
	return evalHash(h)(s, a, b, c)
}

func evalConcatWS(s *Scalar, row []types.Value) (types.Value, error) {
	sep, err := s.Args[0].Eval(row)
	if err != nil || sep.IsNull() {
		return types.Value{}, err
	}
	var buf []byte
	first := true
	for _, a := range s.Args[1:] {
		v, err := a.Eval(row)
		if err != nil {
			return types.Value{}, err
		}
		if v.IsNull() {
			continue
		}
		if !first {
			buf = append(buf, sep.Str()...)
		}
		first = false
		if v.Kind() == types.KindVarchar {
			buf = append(buf, v.Str()...)
		} else {
			buf = append(buf, castToString(v)...)
		}
	}
	return types.StringValue(string(buf)), nil
}

// evalTrim trims the characters of the second argument (default ' ') from
// the start and/or the end.
func evalTrim(leading, trailing bool) func(*Scalar, types.Value, types.Value, types.Value) (types.Value, error) {
	return func(s *Scalar, a, b, _ types.Value) (types.Value, error) {
		cut := " "
		if len(s.Args) == 2 {
			cut = b.Str()
		}
		r := a.Str()
		if leading {
			r = strings.TrimLeft(r, cut)
		}
		if trailing {
			r = strings.TrimRight(r, cut)
		}
		return types.StringValue(r), nil
	}
}
