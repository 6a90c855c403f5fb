package testsupport

// daemon.go: a seg6x daemon run in a network namespace, for the benchmark rig and the tests under
// test/: start it, wait until its socket answers, talk to it (its client, the routes it shows), stop it.

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"
)

// Daemon is a running `seg6x daemon` and a client of its socket.
type Daemon struct {
	Cmd    *exec.Cmd
	Client pb.ControlClient
	done   func()
}

// StartDaemon runs `ip netns exec ns bin --dir dir daemon args...` (output to out, if not nil) and
// waits up to 10 s until the socket answers as a daemon. It dials the socket only: the CLI's
// in-process fallback would take the instance's lock from under the starting daemon.
func StartDaemon(bin, ns, dir string, out io.Writer, args ...string) (*Daemon, error) {
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, bin, "--dir", dir, "daemon"}, args...)...)
	return StartDaemonCmd(cmd, ns, dir, out)
}

// StartDaemonAsSystemd runs the daemon the way systemd runs a unit with ProtectSystem= or
// PrivateTmp=: in a mount namespace of its own whose mounts do not propagate back (unshare -m
// --propagation slave), and in network namespace ns (nsenter --net: unlike ip netns exec, it keeps
// the host's /sys and with it the host's bpffs). Both exec: the pid is the daemon's.
func StartDaemonAsSystemd(bin, ns, dir string, out io.Writer, args ...string) (*Daemon, error) {
	cmd := exec.Command("unshare", append([]string{"-m", "--propagation", "slave", "--", "nsenter", "--net=/run/netns/" + ns,
		bin, "--dir", dir, "daemon"}, args...)...)
	return StartDaemonCmd(cmd, ns, dir, out)
}

// StartDaemonCmd starts cmd (a daemon of instance dir in namespace ns) and waits as StartDaemon does.
func StartDaemonCmd(cmd *exec.Cmd, ns, dir string, out io.Writer) (*Daemon, error) {
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &Daemon{Cmd: cmd}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c, done, err := api.DialSocket(api.SocketPath(dir))
		if err != nil {
			continue
		}
		if s, err := c.Status(context.Background(), &pb.StatusRequest{}); err == nil && s.Daemon {
			d.Client, d.done = c, done
			return d, nil
		}
		done()
	}
	d.Signal(os.Kill)
	return nil, fmt.Errorf("the daemon in %s did not come up within 10 s", ns)
}

// Signal sends sig to the daemon (ip netns exec execs it: the pid is the daemon's), waits for it to
// exit, and drops the client.
func (d *Daemon) Signal(sig os.Signal) {
	if d.done != nil {
		d.done()
		d.done = nil
	}
	_ = d.Cmd.Process.Signal(sig)
	_ = d.Cmd.Wait() // also waits for the output to be copied
}

// Routes are the routes of the daemon's state: its Show stream, read to the end.
func (d *Daemon) Routes() ([]*pb.Route, error) {
	st, err := d.Client.Show(context.Background(), &pb.ShowRequest{})
	if err != nil {
		return nil, err
	}
	var out []*pb.Route
	for {
		ch, err := st.Recv()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ch.GetState().GetRoutes()...)
	}
}
