package cli

// progress.go: a one-line progress display on a terminal for long commands (apply): the phase and
// the time spent in it, redrawn in place on stderr and erased when done. Nothing on a pipe or a file,
// nor under --json.

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// progress shows the current phase of a command; its zero value (not on a terminal) shows nothing.
type progress struct {
	mu    sync.Mutex
	on    bool
	phase string
	since time.Time
	stop  chan struct{}
	done  chan struct{}
}

// isTerminal says whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// newProgress starts a display on stderr when it is a terminal and the output is not JSON.
func newProgress() *progress {
	p := &progress{}
	if g.jsonOut || !isTerminal(os.Stderr) {
		return p
	}
	p.on, p.stop, p.done = true, make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				fmt.Fprint(os.Stderr, "\r\033[K")
				return
			case <-t.C:
				p.draw()
			}
		}
	}()
	return p
}

// step starts phase (e.g. "applying 101000 objects"), shown with the time spent in it.
func (p *progress) step(phase string) {
	if !p.on {
		return
	}
	p.mu.Lock()
	p.phase, p.since = phase, time.Now()
	p.mu.Unlock()
	p.draw()
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.phase != "" {
		fmt.Fprintf(os.Stderr, "\r\033[K%s ... %.1fs", p.phase, time.Since(p.since).Seconds())
	}
}

// end erases the line; the command's own output follows.
func (p *progress) end() {
	if !p.on {
		return
	}
	p.on = false
	close(p.stop)
	<-p.done
}
