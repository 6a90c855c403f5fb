package testsupport

// logbuffer.go: LogBuffer, a daemon's output collected while the process writes it and a test or
// benchmark reads it.

import (
	"strings"
	"sync"
	"time"
)

// LogBuffer collects a daemon's output; it is safe for one writer and concurrent readers.
type LogBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Tail returns the last n lines.
func (l *LogBuffer) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(l.String(), "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// WaitFor waits (up to 10 s) until the output contains s: a line the daemon logged reaches the
// buffer a moment after the daemon acted.
func (l *LogBuffer) WaitFor(s string) bool {
	for i := 0; i < 1000; i++ {
		if strings.Contains(l.String(), s) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
