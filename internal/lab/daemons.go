package lab

// daemons.go: a `seg6x daemon` on every router once it is configured, as in production: the CLI then
// talks to it, and its slow path (fragmenting IPv4 without DF too big for the tunnel, relaying the
// ICMP errors of decapsulated packets) runs. Each daemon outlives the command that started it; Down
// stops it (pid in <Dir>/<node>.pid, log in <Dir>/<node>.log).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seg6x/seg6x/internal/api"
)

func (l *Lab) pidFile(node string) string { return filepath.Join(l.Dir, node+".pid") }

// DaemonLog is the log file of a router's daemon.
func (l *Lab) DaemonLog(node string) string { return filepath.Join(l.Dir, node+".log") }

// startDaemons starts a daemon on every router and waits until each answers its API.
func (l *Lab) startDaemons() error {
	for _, r := range routers {
		logf, err := os.OpenFile(l.DaemonLog(r), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		cmd := exec.Command("ip", "netns", "exec", l.NS(r), l.Bin, "--dir", l.NodeDir(r), "daemon")
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // not killed with the terminal of `lab up`
		err = cmd.Start()
		logf.Close()
		if err != nil {
			return fmt.Errorf("start the daemon of %s: %w", r, err)
		}
		if err := os.WriteFile(l.pidFile(r), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
			return err
		}
		go cmd.Wait() // reaped if it exits while this process still runs
	}
	for _, r := range routers {
		// The socket first: a CLI started before it exists works in-process and waits for the
		// instance's lock, which the daemon holds.
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := os.Stat(api.SocketPath(l.NodeDir(r))); err == nil {
				break
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(l.DaemonLog(r))
				return fmt.Errorf("the daemon of %s did not come up in 10 s; log: %s", r, log)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if out, err := l.Seg6x(r, "status"); err != nil || !strings.Contains(out, "up since") {
			return fmt.Errorf("the daemon of %s does not answer: %v %s", r, err, out)
		}
		l.logf("lab %s: seg6x daemon running on %s (log %s)", l.Prefix, r, l.DaemonLog(r))
	}
	return nil
}

// stopDaemons sends every daemon SIGTERM and waits up to 5 s for it to exit (then SIGKILL).
func (l *Lab) stopDaemons() {
	for _, r := range routers {
		b, err := os.ReadFile(l.pidFile(r))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 1 {
			continue
		}
		_ = syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 50 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = os.Remove(l.pidFile(r))
	}
}
