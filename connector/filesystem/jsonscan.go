package filesystem

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// jsonScanner reads JSON tokens from one record without allocating.
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) reset(b []byte) { s.b, s.i = b, 0 }

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte, or 0 at the end.
func (s *jsonScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// errorf reports malformed JSON at the scanner's position.
func (s *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at byte %d of the record: %s", s.i+1, fmt.Sprintf(format, args...))
}

// expected reports that want was expected where the scanner is.
func (s *jsonScanner) expected(want string) error {
	if s.i >= len(s.b) {
		return s.errorf("expected %s, found the end of the line", want)
	}
	return s.errorf("expected %s, found %q", want, s.b[s.i])
}

// literal consumes word (true, false, null) if it is next.
func (s *jsonScanner) literal(word string) bool {
	if bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		s.i += len(word)
		return true
	}
	return false
}

// str reads a string token (the scanner is at its quote) and appends its
// unescaped text to dst.
func (s *jsonScanner) str(dst []byte) ([]byte, error) {
	open := s.i
	s.i++
	for {
		j := s.i
		for j < len(s.b) && s.b[j] != '"' && s.b[j] != '\\' {
			j++
		}
		dst = append(dst, s.b[s.i:j]...)
		s.i = j
		if j >= len(s.b) {
			s.i = open
			return dst, s.errorf("unterminated string")
		}
		if s.b[j] == '"' {
			s.i++
			return dst, nil
		}
		var err error
		if dst, err = s.escape(dst); err != nil {
			return dst, err
		}
	}
}

// escape decodes the escape sequence at the scanner's backslash.
func (s *jsonScanner) escape(dst []byte) ([]byte, error) {
	if s.i+1 >= len(s.b) {
		return dst, s.errorf("unterminated string")
	}
	c := s.b[s.i+1]
	s.i += 2
	switch c {
	case '"', '\\', '/':
		return append(dst, c), nil
	case 'b':
		return append(dst, '\b'), nil
	case 'f':
		return append(dst, '\f'), nil
	case 'n':
		return append(dst, '\n'), nil
	case 'r':
		return append(dst, '\r'), nil
	case 't':
		return append(dst, '\t'), nil
	case 'u':
		r, ok := s.hex4()
		if !ok {
			return dst, s.errorf("invalid \\u escape")
		}
		if utf16Surrogate(r) && s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
			save := s.i
			s.i += 2
			if lo, ok := s.hex4(); ok && lo >= 0xdc00 && lo < 0xe000 && r < 0xdc00 {
				return utf8.AppendRune(dst, (r-0xd800)<<10+(lo-0xdc00)+0x10000), nil
			}
			s.i = save
		}
		return utf8.AppendRune(dst, r), nil
	}
	s.i--
	return dst, s.errorf("invalid escape '\\%c'", c)
}

func utf16Surrogate(r rune) bool { return r >= 0xd800 && r < 0xe000 }

func (s *jsonScanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}

// number reads a number token and returns its text.
func (s *jsonScanner) number() ([]byte, error) {
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			s.i++
			continue
		}
		break
	}
	if s.i == start {
		return nil, s.expected("a value")
	}
	return s.b[start:s.i], nil
}

// skipValue consumes any value and returns its raw text.
func (s *jsonScanner) skipValue() ([]byte, error) {
	start := s.i
	switch c := s.peek(); c {
	case '"':
		for s.i++; s.i < len(s.b); s.i++ {
			switch s.b[s.i] {
			case '\\':
				s.i++
			case '"':
				s.i++
				return s.b[start:s.i], nil
			}
		}
		return nil, s.errorf("unterminated string")
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return s.b[start:s.i], nil
				}
			case '"':
				if _, err := s.skipValue(); err != nil {
					return nil, err
				}
				continue
			}
			s.i++
		}
		if c == '{' {
			return nil, s.errorf("unterminated object")
		}
		return nil, s.errorf("unterminated array")
	case 't':
		if s.literal("true") {
			return s.b[start:s.i], nil
		}
	case 'f':
		if s.literal("false") {
			return s.b[start:s.i], nil
		}
	case 'n':
		if s.literal("null") {
			return s.b[start:s.i], nil
		}
	default:
		return s.number()
	}
	return nil, s.expected("a value")
}
