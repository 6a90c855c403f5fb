package lab

// daemons.go: a `seg6x daemon` on every router once it is configured, as in production: the CLI then
// talks to it, its slow path (fragmenting IPv4 without DF too big for the tunnel, relaying the ICMP
// errors of decapsulated packets) runs, and its programs cache next hops (invalidated on every netlink
// change). Each daemon outlives the command that started it; Down stops it (pid in <Dir>/<node>.pid,
// log in <Dir>/<node>.log). Used by the main and BGP labs (lab.go) and the hypervisor lab
// (hypervisor.go); the BGP lab also stops and restarts one PE's daemon (StopDaemon, StartDaemon).

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

// daemonSet is where one lab's daemons run: its state root, the binary, its routers and how to reach them.
type daemonSet struct {
	name    string // the lab's prefix, for log lines
	dir     string // pid and log files
	bin     string
	nodes   []string
	ns      func(node string) string
	nodeDir func(node string) string
	seg6x   func(node string, args ...string) (string, error)
	logf    func(format string, args ...any)
}

func (l *Lab) daemons() daemonSet {
	return daemonSet{l.Prefix, l.Dir, l.Bin, l.topo.routers, l.NS, l.NodeDir, l.Seg6x, l.logf}
}

// only is the same set restricted to nodes.
func (d daemonSet) only(nodes ...string) daemonSet {
	d.nodes = nodes
	return d
}

// StopDaemon stops the daemon of one router (its data plane keeps forwarding what it holds).
func (l *Lab) StopDaemon(node string) { l.daemons().only(node).stop() }

// StartDaemon starts the daemon of one router again and waits until it answers.
func (l *Lab) StartDaemon(node string) error { return l.daemons().only(node).start() }

// DaemonLog is the log file of a router's daemon.
func (l *Lab) DaemonLog(node string) string { return l.daemons().logFile(node) }

func (l *Lab) startDaemons() error { return l.daemons().start() }

func (l *Lab) stopDaemons() { l.daemons().stop() }

func (d daemonSet) pidFile(node string) string { return filepath.Join(d.dir, node+".pid") }

func (d daemonSet) logFile(node string) string { return filepath.Join(d.dir, node+".log") }

// start starts a daemon on every router and waits until each answers its API.
func (d daemonSet) start() error {
	for _, r := range d.nodes {
		logf, err := os.OpenFile(d.logFile(r), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		cmd := exec.Command("ip", "netns", "exec", d.ns(r), d.bin, "--dir", d.nodeDir(r), "daemon")
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // not killed with the terminal of `seg6x-lab up`
		err = cmd.Start()
		logf.Close()
		if err != nil {
			return fmt.Errorf("start the daemon of %s: %w", r, err)
		}
		if err := os.WriteFile(d.pidFile(r), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
			return err
		}
		go cmd.Wait() // reaped if it exits while this process still runs
	}
	const daemonStartWait = 30 * time.Second
	for _, r := range d.nodes {
		// The socket first: a CLI started before it exists works in-process and waits for the
		// instance's lock, which the daemon holds.
		// 30 s: a loaded machine (CI runs test packages in parallel) can take long to start one.
		deadline := time.Now().Add(daemonStartWait)
		for {
			if _, err := os.Stat(api.SocketPath(d.nodeDir(r))); err == nil {
				break
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(d.logFile(r))
				return fmt.Errorf("the daemon of %s did not come up in %v; log: %s", r, daemonStartWait, log)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if out, err := d.seg6x(r, "status"); err != nil || !strings.Contains(out, "up since") {
			return fmt.Errorf("the daemon of %s does not answer: %v %s", r, err, out)
		}
		d.logf("lab %s: seg6x daemon running on %s (log %s)", d.name, r, d.logFile(r))
	}
	return nil
}

// stop sends every daemon SIGTERM and waits up to 5 s for it to exit (then SIGKILL).
func (d daemonSet) stop() {
	for _, r := range d.nodes {
		if pid := readPid(d.pidFile(r)); pid > 1 {
			terminate(pid)
		}
		_ = os.Remove(d.pidFile(r))
	}
}

// readPid is the process id in a pid file, 0 if there is none.
func readPid(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

// terminate sends pid SIGTERM, waits up to 5 s for it to be gone, then sends SIGKILL.
func terminate(pid int) {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 50 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
