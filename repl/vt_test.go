package repl

import (
	"strconv"
	"strings"
)

// vt is a small terminal emulator for the pty tests: enough of a VT100 /
// xterm to tell what a user sees on the screen and what went into the
// scrollback. It knows printable ASCII and UTF-8, CR, LF, BS, cursor
// movement (CSI A B C D G H), erasing (CSI J K), and the alternate screen
// (CSI ?1049 h/l), and ignores other sequences.
type vt struct {
	rows, cols int
	main, alt  [][]rune
	screen     *[][]rune // main or alt
	row, col   int
	savedRow   int
	savedCol   int
	scrollback []string // lines scrolled off the top of the main screen
	pending    []byte   // an incomplete escape sequence or UTF-8 rune
}

func newVT(rows, cols int) *vt {
	v := &vt{rows: rows, cols: cols}
	v.main = v.blank()
	v.screen = &v.main
	return v
}

func (v *vt) blank() [][]rune {
	s := make([][]rune, v.rows)
	for i := range s {
		s[i] = []rune(strings.Repeat(" ", v.cols))
	}
	return s
}

// write feeds terminal output.
func (v *vt) write(b []byte) {
	b = append(v.pending, b...)
	v.pending = nil
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x1b:
			n, ok := v.escape(b[i:])
			if !ok {
				v.pending = append([]byte(nil), b[i:]...)
				return
			}
			i += n
			continue
		case c == '\r':
			v.col = 0
		case c == '\n':
			v.lineFeed()
		case c == '\b':
			v.col = max(v.col-1, 0)
		case c < 0x20 || c == 0x7f:
			// other controls: ignored
		default:
			r, size := rune(c), 1
			if c >= 0x80 {
				s := string(b[i:min(len(b), i+4)])
				r2, n := decodeRune(s)
				if n == 0 {
					v.pending = append([]byte(nil), b[i:]...)
					return
				}
				r, size = r2, n
			}
			if v.col >= v.cols {
				v.col = 0
				v.lineFeed()
			}
			(*v.screen)[v.row][v.col] = r
			v.col++
			i += size
			continue
		}
		i++
	}
}

// decodeRune decodes the first rune of s; 0 bytes when s is incomplete.
func decodeRune(s string) (rune, int) {
	for _, r := range s {
		if r == '\uFFFD' && len(s) < 4 {
			return 0, 0
		}
		return r, len(string(r))
	}
	return 0, 0
}

func (v *vt) lineFeed() {
	if v.row < v.rows-1 {
		v.row++
		return
	}
	s := *v.screen
	if v.screen == &v.main {
		v.scrollback = append(v.scrollback, strings.TrimRight(string(s[0]), " "))
	}
	copy(s, s[1:])
	s[v.rows-1] = []rune(strings.Repeat(" ", v.cols))
}

// escape handles the escape sequence at the start of b and returns its
// length; ok is false when b ends inside it.
func (v *vt) escape(b []byte) (int, bool) {
	if len(b) < 2 {
		return 0, false
	}
	switch b[1] {
	case '7':
		v.savedRow, v.savedCol = v.row, v.col
		return 2, true
	case '8':
		v.row, v.col = v.savedRow, v.savedCol
		return 2, true
	case '[':
	default:
		return 2, true
	}
	end := 2
	for end < len(b) && (b[end] < 0x40 || b[end] > 0x7e) {
		end++
	}
	if end == len(b) {
		return 0, false
	}
	params, final := string(b[2:end]), b[end]
	private := strings.HasPrefix(params, "?")
	params = strings.TrimPrefix(params, "?")
	nums := []int{}
	for _, p := range strings.Split(params, ";") {
		n, _ := strconv.Atoi(p)
		nums = append(nums, n)
	}
	arg := func(k, def int) int {
		if k < len(nums) && nums[k] != 0 {
			return nums[k]
		}
		return def
	}
	s := *v.screen
	switch {
	case private && (final == 'h' || final == 'l'):
		if nums[0] == 1049 {
			if final == 'h' && v.screen != &v.alt {
				v.savedRow, v.savedCol = v.row, v.col
				v.alt = v.blank()
				v.screen = &v.alt
			} else if final == 'l' && v.screen == &v.alt {
				v.screen = &v.main
				v.row, v.col = v.savedRow, v.savedCol
			}
		}
	case final == 'A':
		v.row = max(v.row-arg(0, 1), 0)
	case final == 'B':
		v.row = min(v.row+arg(0, 1), v.rows-1)
	case final == 'C':
		v.col = min(v.col+arg(0, 1), v.cols-1)
	case final == 'D':
		v.col = max(v.col-arg(0, 1), 0)
	case final == 'G':
		v.col = min(arg(0, 1)-1, v.cols-1)
	case final == 'H' || final == 'f':
		v.row, v.col = min(arg(0, 1)-1, v.rows-1), min(arg(1, 1)-1, v.cols-1)
	case final == 'K':
		from, to := v.col, v.cols
		switch nums[0] {
		case 1:
			from, to = 0, min(v.col+1, v.cols)
		case 2:
			from = 0
		}
		for c := from; c < to; c++ {
			s[v.row][c] = ' '
		}
	case final == 'J':
		switch nums[0] {
		case 2, 3:
			*v.screen = v.blank()
		default:
			for c := min(v.col, v.cols); c < v.cols; c++ {
				s[v.row][c] = ' '
			}
			for r := v.row + 1; r < v.rows; r++ {
				s[r] = []rune(strings.Repeat(" ", v.cols))
			}
		}
	}
	return end + 1, true
}

// lines returns the scrollback and then the main screen's lines, trailing
// blanks trimmed, without the empty lines at the end.
func (v *vt) lines() []string {
	out := append([]string(nil), v.scrollback...)
	for _, l := range v.main {
		out = append(out, strings.TrimRight(string(l), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
