package testsupport

// netns.go: network namespaces: creating and deleting them, ip and sysctl inside one, running Go
// code on a thread switched into one, and running this process again inside a fresh one.

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/vishvananda/netns"
)

// AddNetns creates the named network namespaces.
func AddNetns(names ...string) error {
	for _, n := range names {
		if err := Run("ip", "netns", "add", n); err != nil {
			return err
		}
	}
	return nil
}

// DelNetns deletes the named network namespaces, ignoring those that do not exist.
func DelNetns(names ...string) {
	for _, n := range names {
		_ = exec.Command("ip", "netns", "del", n).Run()
	}
}

// IP runs `ip -n ns args...` (plain `ip args...` when ns is "": the current namespace).
func IP(ns string, args ...string) (string, error) {
	if ns == "" {
		return Output("ip", args...)
	}
	return Output("ip", append([]string{"-n", ns}, args...)...)
}

// IPLines runs each line (`ip` arguments separated by spaces) with IP in ns.
func IPLines(ns string, lines ...string) error {
	for _, line := range lines {
		if _, err := IP(ns, strings.Fields(line)...); err != nil {
			return err
		}
	}
	return nil
}

// NetnsExec runs a command inside namespace ns (`ip netns exec ns args...`).
func NetnsExec(ns string, args ...string) (string, error) {
	return Output("ip", append([]string{"netns", "exec", ns}, args...)...)
}

// Sysctl sets each "key=value" with `sysctl -qw` inside ns ("": the current namespace).
func Sysctl(ns string, settings ...string) error {
	for _, s := range settings {
		var err error
		if ns == "" {
			err = Run("sysctl", "-qw", s)
		} else {
			_, err = NetnsExec(ns, "sysctl", "-qw", s)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// InNetns runs fn on an OS thread switched into namespace name (sockets and links made there stay
// there), and switches the thread back.
func InNetns(name string, fn func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	target, err := netns.GetFromName(name)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	ferr := fn()
	if err := netns.Set(orig); err != nil {
		return fmt.Errorf("restore netns: %w", err) // thread stays locked and dies with its goroutine
	}
	runtime.UnlockOSThread()
	return ferr
}

// ReexecInNetns runs this binary again inside a fresh network namespace (deleted afterwards) unless
// it already runs in one made for it; it returns the child's exit code and true when it did so.
// The child's temporary files go to a directory of its own (TMPDIR), removed afterwards too; an
// interrupt or termination is passed on to the child, and the cleanup still runs.
func ReexecInNetns(prefix string) (int, bool, error) {
	const marker = "SEG6X_IN_TEST_NETNS"
	if os.Getenv(marker) != "" {
		return 0, false, nil
	}
	ns := fmt.Sprintf("%s-%d", prefix, os.Getpid())
	if err := AddNetns(ns); err != nil {
		return 0, true, err
	}
	defer DelNetns(ns)
	tmp, err := os.MkdirTemp("", ns+"-")
	if err != nil {
		return 0, true, err
	}
	defer os.RemoveAll(tmp) // the child's bpffs mounts were in its own mount namespace (ip netns exec)
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, os.Args[0]}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), marker+"=1", "TMPDIR="+tmp)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 1, true, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-sigs:
			_ = cmd.Process.Signal(sig)
			continue
		case err = <-done:
		}
		break
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			code := ee.ExitCode()
			if code < 0 {
				code = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
			}
			return code, true, nil
		}
		return 1, true, err
	}
	return 0, true, nil
}

// BridgeNetfilterOff turns off, inside ns, the bridge's hand-over of IP and ARP frames to netfilter
// (net.bridge.bridge-nf-call-*), as an operator does for seg6x to accelerate a VXLAN bridge
// (docs/vxlan.md). Without br_netfilter in the kernel the settings do not exist and nothing is to do.
func BridgeNetfilterOff(ns string) error {
	if _, err := os.Stat("/proc/sys/net/bridge"); err != nil {
		return nil
	}
	return Sysctl(ns, "net.bridge.bridge-nf-call-iptables=0", "net.bridge.bridge-nf-call-ip6tables=0",
		"net.bridge.bridge-nf-call-arptables=0")
}
