package repl

import (
	"bytes"
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
	// end the line (see lineEndKey).
	lineEnd func()

	mu   sync.Mutex
	left []byte // rest of a chunk Read could not return at once
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
	give := p.left
	at, size := lineEndKey(p.left)
	switch {
	case at > 0:
		give = p.left[:at] // what comes before the key first
	case at == 0:
		give = p.left[:size]
	}
	n := copy(b, give)
	p.left = p.left[n:]
	if at == 0 && n == size && p.lineEnd != nil {
		p.lineEnd()
	}
	return n, nil
}

// lineEndKey finds the first key in b after which readline stops reading
// the terminal until it is told to read again: Enter (CR), Ctrl-J (LF),
// Ctrl-C, Ctrl-D and the Delete key (ESC [ 3 ~, which readline treats as
// Ctrl-D). It returns the key's offset and length, or -1.
func lineEndKey(b []byte) (at, size int) {
	for i, c := range b {
		switch c {
		case '\r', '\n', 0x03, 0x04:
			return i, 1
		case 0x1b:
			if bytes.HasPrefix(b[i:], []byte("\x1b[3~")) {
				return i, 4
			}
		}
	}
	return -1, 0
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
