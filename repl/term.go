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

	mu   sync.Mutex
	left []byte // rest of a chunk Read could not return at once
}

func startKeyPump(f *os.File) *keyPump {
	p := &keyPump{f: f, chunks: make(chan []byte), quit: make(chan struct{}), done: make(chan struct{})}
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

// Read is readline's input.
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
	n := copy(b, p.left)
	p.left = p.left[n:]
	return n, nil
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
