package benchrig

// mirror.go: `seg6x-bench mirror`: how fast kernel route changes reach the fast path through the
// kernel mirror (add, replace, delete; a flood of thousands), and what a switch back to the kernel
// (detaching seg6x under traffic) loses.

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// Latency summarises the propagation delays of one kind of change, in milliseconds.
type Latency struct {
	Count  int     `json:"count"`
	Median float64 `json:"median_ms"`
	Max    float64 `json:"max_ms"`
}

func summarize(ds []time.Duration) Latency {
	slices.Sort(ds)
	if len(ds) == 0 {
		return Latency{}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return Latency{Count: len(ds), Median: ms(ds[len(ds)/2]), Max: ms(ds[len(ds)-1])}
}

// MirrorResult is `seg6x-bench mirror`'s report.
type MirrorResult struct {
	Add, Replace, Delete Latency
	FloodRoutes          int     `json:"flood_routes"`
	FloodAddSeconds      float64 `json:"flood_add_seconds"`    // until every route of the flood is accelerated
	FloodDeleteSeconds   float64 `json:"flood_delete_seconds"` // until none is left
	Resyncs              uint64  `json:"resyncs"`              // full resyncs the floods caused (netlink overruns)
	Stale                int     `json:"stale"`                // mirrored routes left after the kernel deleted them all
	Switchover           *StreamResult
}

// mirrorNS is a namespace with two attached veths and a seg6x daemon mirroring the kernel.
type mirrorNS struct {
	ns, dir string
	daemon  *testsupport.Daemon
	logs    testsupport.LogBuffer
	batch   io.WriteCloser
	ipCmd   *exec.Cmd
}

func startMirrorNS(bin, ns string) (*mirrorNS, error) {
	m := &mirrorNS{ns: ns, dir: filepath.Join("/run/seg6x-bench", ns)}
	m.stop()
	steps := [][]string{{"netns", "add", ns}, {"-n", ns, "link", "add", "m0", "type", "veth", "peer", "name", "m1"},
		{"-n", ns, "link", "set", "m0", "up"}, {"-n", ns, "link", "set", "m1", "up"}, {"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "-6", "addr", "add", "fc00:1::1/64", "dev", "m0", "nodad"}, {"-n", ns, "-6", "route", "add", "fc00:2::/48", "dev", "m0"}}
	for _, s := range steps {
		if err := testsupport.Run("ip", s...); err != nil {
			return m, err
		}
	}
	if err := testsupport.MountInstance(m.dir); err != nil {
		return m, err
	}
	cfg := filepath.Join(m.dir, "seg6x.yaml")
	if err := os.WriteFile(cfg, []byte("interfaces: [{name: m0}, {name: m1}]\n"), 0o600); err != nil {
		return m, err
	}
	d, err := testsupport.StartDaemon(bin, ns, m.dir, &m.logs, "--mirror-kernel", "--config", cfg)
	if err != nil {
		return m, err
	}
	m.daemon = d
	// One long-lived `ip -batch -`: a route change is applied as soon as its line is written.
	m.ipCmd = exec.Command("ip", "-n", ns, "-force", "-batch", "-")
	if m.batch, err = m.ipCmd.StdinPipe(); err != nil {
		return m, err
	}
	return m, m.ipCmd.Start()
}

func (m *mirrorNS) stop() {
	if m.batch != nil {
		m.batch.Close()
		m.ipCmd.Wait()
	}
	if m.daemon != nil {
		m.daemon.Signal(os.Kill)
	}
	testsupport.DelNetns(m.ns)
	testsupport.RemoveInstance(m.dir)
}

// kernelRoutes returns the mirror's accelerated kernel routes by prefix (their descriptions).
func (m *mirrorNS) kernelRoutes() (map[string]string, *pb.KernelReply, error) {
	k, err := m.daemon.Client.Kernel(context.Background(), &pb.KernelRequest{})
	if err != nil {
		return nil, nil, err
	}
	out := map[string]string{}
	for _, r := range k.Routes {
		if r.Accelerated {
			out[r.Prefix] = r.Route
		}
	}
	return out, k, nil
}

// change writes one ip command and waits until cond holds for the mirror's routes.
func (m *mirrorNS) change(cmd string, cond func(map[string]string) bool, limit time.Duration) (time.Duration, error) {
	t0 := time.Now()
	if _, err := io.WriteString(m.batch, cmd+"\n"); err != nil {
		return 0, err
	}
	for time.Since(t0) < limit {
		rs, _, err := m.kernelRoutes()
		if err != nil {
			return 0, err
		}
		if cond(rs) {
			return time.Since(t0), nil
		}
		time.Sleep(200 * time.Microsecond)
	}
	return 0, m.failure(fmt.Sprintf("%q: not in the fast path after %v", cmd, limit))
}

func floodPrefix(i int) string { return fmt.Sprintf("198.18.%d.%d/32", 100+i/250, i%250) }

// RunMirror measures n single changes of each kind and a flood of flood routes.
func RunMirror(bin string, n, flood int, switchover bool) (*MirrorResult, error) {
	m, err := startMirrorNS(bin, fmt.Sprintf("s6m%d", os.Getpid()%10000))
	defer m.stop()
	if err != nil {
		return nil, err
	}
	res := &MirrorResult{}
	var add, rep, del []time.Duration
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("198.18.%d.0/24", i)
		d, err := m.change(fmt.Sprintf("route add %s encap seg6 mode encap segs fc00:2::1 dev m0", p),
			func(rs map[string]string) bool { return rs[p] != "" }, 5*time.Second)
		if err != nil {
			return nil, err
		}
		add = append(add, d)
		d, err = m.change(fmt.Sprintf("route replace %s encap seg6 mode encap segs fc00:2::2,fc00:2::3 dev m0", p),
			func(rs map[string]string) bool { return strings.Contains(rs[p], "fc00:2::3") }, 5*time.Second)
		if err != nil {
			return nil, err
		}
		rep = append(rep, d)
		d, err = m.change("route del "+p, func(rs map[string]string) bool { return rs[p] == "" }, 5*time.Second)
		if err != nil {
			return nil, err
		}
		del = append(del, d)
	}
	res.Add, res.Replace, res.Delete = summarize(add), summarize(rep), summarize(del)

	// A flood: the kernel gets flood routes as fast as ip can write them.
	res.FloodRoutes = flood
	t0 := time.Now()
	for i := 0; i < flood; i++ {
		if _, err := fmt.Fprintf(m.batch, "route add %s encap seg6 mode encap segs fc00:2::1 dev m0\n", floodPrefix(i)); err != nil {
			return nil, err
		}
	}
	if err := m.wait(func(rs map[string]string) bool { return len(rs) == flood }, time.Minute); err != nil {
		return nil, fmt.Errorf("flood add: %w", err)
	}
	res.FloodAddSeconds = time.Since(t0).Seconds()
	t0 = time.Now()
	for i := 0; i < flood; i++ {
		if _, err := fmt.Fprintf(m.batch, "route del %s\n", floodPrefix(i)); err != nil {
			return nil, err
		}
	}
	if err := m.wait(func(rs map[string]string) bool { return len(rs) == 0 }, time.Minute); err != nil {
		return nil, fmt.Errorf("flood delete: %w", err)
	}
	res.FloodDeleteSeconds = time.Since(t0).Seconds()
	// Nothing stale in the data plane: the kernel tenant holds no encap route any more.
	routes, err := m.daemon.Routes()
	if err != nil {
		return nil, err
	}
	for _, r := range routes {
		if r.Mode != "pass" {
			res.Stale++
		}
	}
	_, k, err := m.kernelRoutes()
	if err != nil {
		return nil, err
	}
	res.Resyncs = k.Resyncs - 1 // the first one is the start
	if switchover {
		if res.Switchover, err = runSwitchover(bin); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (m *mirrorNS) wait(cond func(map[string]string) bool, limit time.Duration) error {
	t0 := time.Now()
	for time.Since(t0) < limit {
		rs, _, err := m.kernelRoutes()
		if err != nil {
			return err
		}
		if cond(rs) {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return m.failure(fmt.Sprintf("not reached after %v", limit))
}

// failure describes where the mirror stands: its counters and the daemon's last lines.
func (m *mirrorNS) failure(what string) error {
	rs, k, err := m.kernelRoutes()
	if err != nil {
		return fmt.Errorf("%s; the daemon does not answer: %w\n%s", what, err, m.logs.Tail(20))
	}
	return fmt.Errorf("%s; mirror: %d routes accelerated, %d events, %d resyncs, %d commits, %d refused, last error %q; daemon log:\n%s",
		what, len(rs), k.Events, k.Resyncs, k.Commits, k.FailedCommits, k.LastError, m.logs.Tail(20))
}

// runSwitchover streams through a DUT whose kernel has a seg6 route that seg6x mirrors, and detaches
// seg6x mid-stream: the sink accepts seg6x's output and the kernel's (they differ in the documented
// fields), so what it lost is what the switchover cost.
func runSwitchover(bin string) (*StreamResult, error) {
	r, err := Up(fmt.Sprintf("s6w%d", os.Getpid()%10000), bin)
	if err != nil {
		return nil, err
	}
	defer r.Down()
	for _, line := range []string{"sr tunsrc set " + encapSrc.String(),
		"route replace 198.19.1.0/24 encap seg6 mode encap segs fc00:e::1 dev " + devDutEg} {
		if err := r.DutIP(strings.Fields(line)...); err != nil {
			return nil, err
		}
	}
	// After the switch the DUT's ingress has no XDP program: GRO lets it take the generator's frames.
	if err := r.DutExec("ethtool", "-K", devDutIn, "gro", "on"); err != nil {
		return nil, err
	}
	cfg := filepath.Join(r.Dir, "dut.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("interfaces: [{name: %s}, {name: %s}]\n", devDutIn, devDutEg)), 0o600); err != nil {
		return nil, err
	}
	d, err := testsupport.StartDaemon(bin, r.ns("dut"), r.DutDir(), nil, "--mirror-kernel", "--config", cfg)
	if err != nil {
		return nil, err
	}
	defer d.Signal(os.Kill)
	c := d.Client
	for i := 0; ; i++ {
		k, err := c.Kernel(context.Background(), &pb.KernelRequest{})
		if err == nil && len(k.Routes) == 1 && k.Routes[0].Accelerated {
			break
		}
		if i > 250 {
			return nil, fmt.Errorf("the mirror did not take the kernel route: %v %v", k, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sids := []netip.Addr{sid("fc00:e::1")}
	frames := [][]byte{plain(64, 0, 0), plain(64, 1, 0), plain(64, 2, 0)}
	seg6xOut := expectEncap(sids, sids[0], 0, true, false, 64, 63)(64)
	kernelOut := expectEncap(sids, sids[0], 0, true, false, 63, 64)(64)
	res, err := r.streamFrames(frames, []pattern{seg6xOut, kernelOut}, 40000, 3*time.Second, func() error {
		time.Sleep(time.Second)
		ops := []*pb.Op{{Kind: pb.Op_DELETE, Object: &pb.Op_Interface{Interface: &pb.Interface{Name: devDutIn}}},
			{Kind: pb.Op_DELETE, Object: &pb.Op_Interface{Interface: &pb.Interface{Name: devDutEg}}}}
		_, err := c.Commit(context.Background(), &pb.CommitRequest{Ops: ops})
		return err
	})
	return &res, err
}
