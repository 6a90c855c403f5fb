package daemontest

// wait_test.go: a command that finds the instance held by a process that does not serve it (a
// daemon killed and another starting, adopting the pins) waits for it (--wait, bounded) instead of
// failing; --wait 0 fails at once and says why; a read-only command never creates an instance; a
// user who is not root is told what is needed.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/benchrig"
	"golang.org/x/sys/unix"
)

func TestCommandsWaitForRestartingDaemon(t *testing.T) {
	r, d := setup(t, benchrig.SIDs(0, 1))
	run := func(args ...string) (string, error) {
		out, err := exec.Command("ip", append([]string{"netns", "exec", r.DutNS(), d.bin, "--dir", r.DutDir()}, args...)...).CombinedOutput()
		return string(out), err
	}
	d.kill(syscall.SIGKILL) // the socket stays behind
	// The instance held as a starting daemon holds it: the lock taken, nothing answering.
	lf, err := os.OpenFile(state.LockPath(r.DutDir()), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	out, err := run("--wait", "0", "show", "tenants")
	if err == nil || !strings.Contains(out, "is held by another process") || !strings.Contains(out, "did not answer within 0s (--wait)") || time.Since(t0) > 3*time.Second {
		t.Errorf("--wait 0 while held: %v after %v\n%s", err, time.Since(t0), out)
	}
	restarted := make(chan error, 1)
	release := time.AfterFunc(1200*time.Millisecond, func() {
		unix.Flock(int(lf.Fd()), unix.LOCK_UN)
		restarted <- d.startErr() // the new daemon takes over
	})
	defer release.Stop()
	t0 = time.Now()
	out, err = run("--wait", "10s", "show", "tenants")
	waited := time.Since(t0)
	if err != nil || !strings.Contains(out, "t") || waited < time.Second {
		t.Errorf("show while the daemon restarts: %v after %v\n%s", err, waited, out)
	}
	select {
	case err := <-restarted:
		if err != nil || d.d == nil {
			t.Fatalf("the daemon did not start again: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon did not start again within 20 s")
	}

	// A read-only command on a mistyped --dir: refused, nothing created.
	typo := filepath.Join(t.TempDir(), "seg6x-typo")
	out2, err := exec.Command(d.bin, "--dir", typo, "show").CombinedOutput()
	if err == nil || !strings.Contains(string(out2), "no seg6x instance in "+typo) {
		t.Errorf("show --dir %s: %v\n%s", typo, err, out2)
	}
	if _, err := os.Stat(typo); err == nil {
		t.Errorf("show created %s", typo)
	}

	// Not root: one line saying what is needed.
	out2, err = exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", d.bin, "--dir", r.DutDir(), "status").CombinedOutput()
	if err == nil || !strings.Contains(string(out2), "run it as root (sudo)") || strings.Count(strings.TrimSpace(string(out2)), "\n") != 0 {
		t.Errorf("status as nobody: %v\n%s", err, out2)
	}
}
