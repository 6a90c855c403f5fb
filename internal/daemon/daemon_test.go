package daemon

// daemon_test.go: messages a user sees from the daemon (no root needed).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/state"
	"golang.org/x/sys/unix"
)

// TestConfigErrorNamesFileOnce: a bad --config reads "config: FILE: yaml: line N: ...", the file
// and "yaml: " once each.
func TestConfigErrorNamesFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("routes:\n  - tenant: a\n    prefix: 10.0.0.0/33\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := applyConfig(nil, path, &Options{})
	want := "config: " + path + `: yaml: line 3: routes[0].prefix: "10.0.0.0/33" is not a prefix: prefix length out of range`
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}

// TestLockHolder names the process holding an instance's lock (here this test).
func TestLockHolder(t *testing.T) {
	lock := state.LockPath(t.TempDir())
	if got := lockHolder(lock); got != "another seg6x process" {
		t.Errorf("no lock file: %q", got)
	}
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if got, want := lockHolder(lock), fmt.Sprintf("pid %d (%s", os.Getpid(), os.Args[0]); !strings.HasPrefix(got, want) {
		t.Errorf("lockHolder = %q, want %s...)", got, want)
	}
}
