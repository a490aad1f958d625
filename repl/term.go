package repl

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// terminal is the shell's terminal: its size, the keys typed while a query
// runs, and Ctrl-C (SIGINT) while one runs.
type terminal struct {
	inFd, outFd int
	keys        *keyPump
	interrupts  chan os.Signal
	notices     *promptState // how background output reaches the screen
}

func (t *terminal) width() int {
	if w, _, ok := termSize(t.outFd); ok {
		return w
	}
	return DefaultWidth
}

func (t *terminal) height() int {
	if _, h, ok := termSize(t.outFd); ok {
		return h
	}
	return 24
}

// keyPump reads the terminal in one goroutine and hands what it reads to
// whoever asks: readline while a line is edited (through Read), the query
// loop while a query runs (through chunks). Close stops the goroutine.
type keyPump struct {
	f      *os.File
	chunks chan []byte
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once

	// lineEnd, when set, is called as Read hands readline a key that may
	// end the line (see keyScan).
	lineEnd func()

	mu   sync.Mutex
	left []byte  // rest of a chunk Read could not return at once
	scan keyScan // where readline is in an escape sequence after what Read gave
}

func startKeyPump(f *os.File, lineEnd func()) *keyPump {
	p := &keyPump{f: f, lineEnd: lineEnd, chunks: make(chan []byte), quit: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

func (p *keyPump) run() {
	defer close(p.done)
	defer close(p.chunks)
	buf := make([]byte, 256)
	for {
		n, err := p.f.Read(buf)
		if n > 0 {
			c := make([]byte, n)
			copy(c, buf[:n])
			select {
			case p.chunks <- c:
			case <-p.quit:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Read is readline's input. A key that may end the line goes alone, after
// what precedes it, and lineEnd is called as it goes: readline stops
// reading the terminal once it has such a key, and until its input filter
// has seen the key a notice written through readline would land right
// after the input instead of above the prompt (see noticeWriter).
func (p *keyPump) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.left) == 0 {
		select {
		case c, ok := <-p.chunks:
			if !ok {
				return 0, io.EOF
			}
			p.left = c
		case <-p.quit:
			return 0, io.EOF
		}
	}
	at, ahead := -1, p.scan
	for i, c := range p.left {
		if ahead.step(c) {
			at = i
			break
		}
	}
	give := p.left
	switch {
	case at > 0:
		give = p.left[:at] // what comes before the key first
	case at == 0:
		give = p.left[:1]
	}
	n := copy(b, give)
	for _, c := range p.left[:n] {
		p.scan.step(c)
	}
	p.left = p.left[n:]
	if at == 0 && n == 1 && p.lineEnd != nil {
		p.lineEnd()
	}
	return n, nil
}

// keyScan follows, over the bytes Read hands readline, how readline's
// terminal reader (Terminal.ioloop, readline v1.5.1) groups them into
// keys, to find the byte on which it stops reading until told to read
// again: Enter (CR), Ctrl-J (LF), Ctrl-C, Ctrl-D, also after ESC (readline
// passes them through), and the final ~ of the Delete key ESC [ 3 ~
// (readline's Ctrl-D). After ESC [ or ESC O, digits and ';' and then any
// one byte make one key: a CR there is swallowed, and marking it would
// leave the mark set until the line ends. The state persists across
// reads, as readline's does.
type keyScan struct {
	state  byte // scanText, scanEsc, scanCSI (ESC [) or scanSS3 (ESC O)
	delete bool // scanCSI: the parameters so far are "3"
	params bool // scanCSI: some parameter byte was read
}

const (
	scanText byte = iota
	scanEsc
	scanCSI
	scanSS3
)

// step advances s past c and reports whether readline stops reading on it.
func (s *keyScan) step(c byte) bool {
	stopKey := c == '\r' || c == '\n' || c == 0x03 || c == 0x04
	switch s.state {
	case scanEsc:
		switch c {
		case 0x1b: // ESC ESC: still an escape
			return false
		case '[':
			*s = keyScan{state: scanCSI}
			return false
		case 'O':
			*s = keyScan{state: scanSS3}
			return false
		}
		s.state = scanText
		return stopKey
	case scanCSI, scanSS3:
		if c == ';' || '0' <= c && c <= '9' {
			s.delete = !s.params && c == '3'
			s.params = true
			return false
		}
		stop := s.state == scanCSI && s.delete && c == '~'
		*s = keyScan{}
		return stop
	}
	if c == 0x1b {
		s.state = scanEsc
		return false
	}
	return stopKey
}

// Close stops the pump and waits for its goroutine. Readline calls it too.
func (p *keyPump) Close() error {
	p.once.Do(func() {
		close(p.quit)
		if err := p.f.SetReadDeadline(time.Now()); err != nil && !errors.Is(err, os.ErrNoDeadline) {
			return
		}
		<-p.done
		p.f.Close()
	})
	return nil
}
