package state

// lock_test.go: the instance lock (no root needed: only the lock file, not the maps): waiting for it
// to be released, giving up after OpenOptions.Wait, and failing at once with NoWait.

import (
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

func holdLock(t *testing.T, path string) func() {
	t.Helper()
	lf, err := lockFile(path, OpenOptions{NoWait: true})
	if err != nil {
		t.Fatal(err)
	}
	return func() { lf.Close() }
}

func TestLockWaitsUntilReleased(t *testing.T) {
	path := LockPath(t.TempDir())
	release := holdLock(t, path)
	var waiting atomic.Int32
	go func() {
		time.Sleep(200 * time.Millisecond)
		release()
	}()
	t0 := time.Now()
	lf, err := lockFile(path, OpenOptions{Wait: 5 * time.Second, Waiting: func() { waiting.Add(1) }})
	if err != nil {
		t.Fatalf("lock not taken after its holder let go: %v", err)
	}
	defer lf.Close()
	if d := time.Since(t0); d < 150*time.Millisecond || d > 3*time.Second {
		t.Errorf("took the lock after %v, want about 200ms", d)
	}
	if n := waiting.Load(); n != 1 {
		t.Errorf("Waiting called %d times, want once", n)
	}
}

func TestLockWaitTimesOut(t *testing.T) {
	path := LockPath(t.TempDir())
	defer holdLock(t, path)()
	t0 := time.Now()
	_, err := lockFile(path, OpenOptions{Wait: 150 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if d := time.Since(t0); d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("gave up after %v, want about 150ms", d)
	}
	if want := ErrLocked.Error() + " (still held after 150ms)"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}

func TestLockNoWait(t *testing.T) {
	path := LockPath(t.TempDir())
	release := holdLock(t, path)
	t0 := time.Now()
	called := false
	if _, err := lockFile(path, OpenOptions{NoWait: true, Wait: time.Second, Waiting: func() { called = true }}); err != ErrLocked {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if d := time.Since(t0); d > 100*time.Millisecond || called {
		t.Errorf("NoWait waited (%v, Waiting called: %v)", d, called)
	}
	release()
	lf, err := lockFile(path, OpenOptions{NoWait: true}) // free now
	if err != nil {
		t.Fatal(err)
	}
	lf.Close()
	if _, err := lockFile(filepath.Join(t.TempDir(), "no", "lock"), OpenOptions{}); err == nil {
		t.Error("no error for a lock file in a missing directory")
	}
}
