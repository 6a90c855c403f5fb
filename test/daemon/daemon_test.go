// Package daemontest runs the seg6x daemon in the benchmark rig's DUT namespace and checks, with a
// counted stream of frames, that (1) killing and restarting it never interrupts forwarding, and (2)
// replacing a policy's segment list or a tenant's whole route table while traffic flows never lets
// a packet see a mix of old and new state, and loses none.
package daemontest

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/testsupport"
)

type daemon struct {
	t      *testing.T
	r      *benchrig.Rig
	bin    string
	cfg    string
	d      *testsupport.Daemon // nil while stopped
	custom bool                // started with other arguments than --config cfg
	logs   *testsupport.LogBuffer
	out    logSwitch // to logs, as start set it
}

// start runs the daemon with args (default: --config cfg) and waits until it serves; its output
// goes to d.logs. It runs on every CPU of this process (allCPUs: no stream runs now).
func (d *daemon) start(args ...string) {
	d.t.Helper()
	allCPUs()
	if err := d.startErr(args...); err != nil {
		d.t.Fatal(err)
	}
}

// startErr is start for a goroutine other than the test's: it returns what went wrong.
func (d *daemon) startErr(args ...string) error {
	d.custom = len(args) > 0
	if !d.custom {
		args = []string{"--config", d.cfg}
	}
	d.out.to(d.logs)
	var err error
	if d.d, err = testsupport.StartDaemon(d.bin, d.r.DutNS(), d.r.DutDir(), &d.out, args...); err != nil {
		return fmt.Errorf("%v:\n%s", err, d.logs)
	}
	return nil
}

func (d *daemon) kill(sig syscall.Signal) {
	if d.d != nil {
		d.d.Signal(sig)
		d.d = nil
	}
}

// tenantFlows are the flows of benchrig's Stream.
var tenantFlows = []int{0, 1, 2}

// Forwarding continues while the daemon is killed (-9) and restarted, and stopped cleanly and
// restarted: every frame of a steady stream arrives, correctly encapsulated.
func TestRestartLosesNothing(t *testing.T) {
	segs := benchrig.SIDs(0, 2)
	r, d := setup(t, segs)
	restarts := 0
	res, err := streamWhile(r, tenantFlows, []benchrig.Pattern{benchrig.EncapOutput(segs)}, 40000, 6500*time.Millisecond, func() error {
		if err := flowing(d.d.Client, 2000); err != nil {
			return err
		}
		for i := 0; i < 4; i++ {
			sig := syscall.SIGKILL
			if i == 2 {
				sig = syscall.SIGTERM // a clean stop (without --cleanup) must not stop forwarding either
			}
			d.kill(sig)
			if i == 3 {
				// An upgrade to a new map layout: the pinned maps look like an older layout's.
				pins := filepath.Join(r.DutDir(), "bpf")
				if err := os.Rename(filepath.Join(pins, dataplane.MapLayout), filepath.Join(pins, "maps-v1")); err != nil {
					return err
				}
			}
			time.Sleep(150 * time.Millisecond) // forwarding with no daemon at all
			// Adopts the pinned maps and links, updates the program.
			if err := d.startErr(); err != nil {
				return err
			}
			restarts++
			if err := flowing(d.d.Client, 2000); err != nil { // through the new daemon's program
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, d.logs)
	}
	t.Logf("%d restarts; sent %d, arrived correct %d, wrong %d", restarts, res.Sent, res.Good, res.Bad)
	if restarts != 4 || logged(d.logs, "adopted", 4) != 4 {
		t.Fatalf("the daemon did not restart 4 times:\n%s", d.logs.String())
	}
	if !d.logs.WaitFor("removed the maps of [maps-v1]") {
		t.Fatalf("the layout change was not carried out:\n%s", d.logs.String())
	}
	if res.Sent < 100000 || res.Good != res.Sent || res.Bad != 0 {
		t.Fatalf("sent %d, sink accepted %d, rejected %d (last rejected %x)\n%s", res.Sent, res.Good, res.Bad, res.LastBad, d.logs)
	}
}

// Replacing the route's segment list (one route) and the tenant's whole route table (hundreds of
// routes, one swap) back and forth while traffic flows: every frame arrives encapsulated exactly
// as one of the two policies says, none is lost, and both were seen.
func TestAtomicUpdatesUnderTraffic(t *testing.T) {
	a, b := benchrig.SIDs(0, 1), benchrig.SIDs(1, 3)
	r, d := setup(t, a)
	c := d.d.Client
	ctx := context.Background()
	route := func(segs []netip.Addr, prefix string) *pb.Route {
		rt := &pb.Route{Tenant: "t", Prefix: prefix, Src: benchrig.EncapSrc().String()}
		for _, s := range segs {
			rt.Segs = append(rt.Segs, s.String())
		}
		return rt
	}
	table := func(segs []netip.Addr, shift int) *pb.Op {
		tr := &pb.TenantRoutes{Tenant: "t", Routes: []*pb.Route{route(segs, "198.19.1.0/24")}}
		for i := 0; i < 300; i++ {
			tr.Routes = append(tr.Routes, route(segs, fmt.Sprintf("198.18.%d.%d/32", 100+(i+shift)/250, (i+shift)%250)))
		}
		return &pb.Op{Kind: pb.Op_REPLACE, Object: &pb.Op_TenantRoutes{TenantRoutes: tr}}
	}
	updates := 0
	pats := []benchrig.Pattern{benchrig.EncapOutput(a), benchrig.EncapOutput(b)}
	res, err := streamWhile(r, tenantFlows, pats, 40000, 2500*time.Millisecond, func() error {
		if err := flowing(c, 2000); err != nil {
			return err
		}
		// A thousand updates (2 s here), in 10 s at most.
		for i, end := 0, time.Now().Add(10*time.Second); updates < 1000 && time.Now().Before(end); i++ {
			segs := a
			if i%2 == 0 {
				segs = b
			}
			op := &pb.Op{Kind: pb.Op_REPLACE, Object: &pb.Op_Route{Route: route(segs, "198.19.1.0/24")}}
			if i%4 >= 2 {
				op = table(segs, i%3*7)
			}
			if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{op}}); err != nil {
				return fmt.Errorf("update %d: %w", i, err)
			}
			updates++
		}
		return flowing(c, 2000) // the last update under traffic too
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d updates; sent %d, arrived as policy A %d, as policy B %d, wrong %d", updates, res.Sent, res.Matched[0], res.Matched[1], res.Bad)
	if updates < 20 {
		t.Fatalf("only %d updates during the stream", updates)
	}
	if res.Bad != 0 || res.Good != res.Sent {
		t.Fatalf("sent %d, accepted %d (A %d, B %d), rejected %d: last rejected %x\n%s", res.Sent, res.Good,
			res.Matched[0], res.Matched[1], res.Bad, res.LastBad, d.logs)
	}
	if res.Matched[0] == 0 || res.Matched[1] == 0 {
		t.Fatalf("the stream did not see both policies (A %d, B %d)", res.Matched[0], res.Matched[1])
	}
}

// SIGHUP re-applies the config file through the API; a broken file changes nothing and the daemon
// keeps running.
func TestSIGHUPReappliesConfig(t *testing.T) {
	a, b := benchrig.SIDs(0, 1), benchrig.SIDs(1, 2)
	_, d := setup(t, a)
	segsNow := func() string {
		routes, err := d.d.Routes()
		if err != nil {
			t.Fatal(err)
		}
		var segs []string
		for _, r := range routes {
			segs = append(segs, strings.Join(r.Segs, ","))
		}
		return strings.Join(segs, ";")
	}
	if got := segsNow(); got != a[0].String() {
		t.Fatalf("routes at start: %q", got)
	}
	hup := func(cfg string) {
		if err := os.WriteFile(d.cfg, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		_ = d.d.Cmd.Process.Signal(syscall.SIGHUP)
	}
	hup("routes: [{tenant: t, prefix: 198.19.1.0/24, segs: [nonsense]}]\n")
	if !d.logs.WaitFor("SIGHUP:") {
		t.Fatalf("the broken config was not reported:\n%s", d.logs)
	}
	if got := segsNow(); got != a[0].String() { // the daemon has read it, and kept the routes
		t.Fatalf("a broken config changed the routes: %q", got)
	}
	hup(benchrig.HeadendConfig(b, 0))
	want := b[0].String() + "," + b[1].String()
	for i := 0; i < 50 && segsNow() != want; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if got := segsNow(); got != want {
		t.Fatalf("after SIGHUP the route has segs %q, want %q\n%s", got, want, d.logs)
	}
}

// A clean stop with --cleanup detaches every interface and removes the pinned maps and the state.
func TestCleanupRemovesEverything(t *testing.T) {
	r, d := setup(t, benchrig.SIDs(0, 1))
	links := filepath.Join(r.DutDir(), "bpf", "links")
	if ents, _ := os.ReadDir(links); len(ents) != 2 {
		t.Fatalf("%d pinned links before the stop, want 2", len(ents))
	}
	d.kill(syscall.SIGTERM)
	d.start("--cleanup")
	d.kill(syscall.SIGTERM)
	ents, _ := os.ReadDir(filepath.Join(r.DutDir(), "bpf"))
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".debug") {
			t.Errorf("left in bpffs after --cleanup: %s", e.Name())
		}
	}
	for _, f := range []string{"state.snapshot", "state.journal"} {
		if _, err := os.Stat(filepath.Join(r.DutDir(), f)); err == nil {
			t.Errorf("%s left after --cleanup", f)
		}
	}
	out, _ := exec.Command("ip", "-n", r.DutNS(), "link", "show", "s6bd0").CombinedOutput()
	if strings.Contains(string(out), "xdp") {
		t.Errorf("XDP still attached after --cleanup: %s", out)
	}
	if !strings.Contains(d.logs.String(), "cleanup: detached every interface") {
		t.Errorf("no cleanup in the log:\n%s", d.logs)
	}
}

// The daemon's programs cache next hops (1000 ms unless set) and the daemon invalidates the cache
// on every netlink change: a neighbor's new MAC is used by the very next frames, not a second later.
// Each step waits for the generation bump (observable), not for time, and streams for 200 ms, well
// inside the cache time: without the invalidation the cached MAC would still be used.
func TestNetlinkChangesInvalidateNextHopCache(t *testing.T) {
	segs := benchrig.SIDs(0, 1)
	r, d := setup(t, segs)
	st, err := d.d.Client.Status(context.Background(), &pb.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.NexthopCacheMs != 1000 {
		t.Fatalf("the daemon's next-hop cache is %d ms, want its default 1000", st.NexthopCacheMs)
	}
	m, err := ebpf.LoadPinnedMap(filepath.Join(dataplane.MapPinDir(r.DutDir()), "nh_gen"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	read := func() uint64 {
		var v uint64
		if err := m.Lookup(uint32(0), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	// The encapsulated frames leave through s6bd1 to fc00:b1::2, whose MAC is the sink's.
	neigh := func(mac string) {
		t.Helper()
		before := read()
		testsupport.MustRun(t, "ip", "-n", r.DutNS(), "-6", "neigh", "replace", "fc00:b1::2", "lladdr", mac, "dev", "s6bd1", "nud", "permanent")
		for i := 0; i < 500 && read() == before; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if read() == before {
			t.Fatal("a neighbor change did not bump nh_gen")
		}
	}
	stream := func(what string, wantGood bool) {
		t.Helper()
		res, err := r.Stream(segs, nil, 20000, 200*time.Millisecond, func() error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent == 0 || (wantGood && res.Good != res.Sent) || (!wantGood && (res.Good != 0 || res.Bad != res.Sent)) {
			t.Fatalf("%s: sent %d, sink accepted %d, rejected %d", what, res.Sent, res.Good, res.Bad)
		}
	}
	sinkMAC := ""
	out, err := exec.Command("ip", "-n", r.DutNS(), "-6", "neigh", "show", "fc00:b1::2", "dev", "s6bd1").Output()
	if f := strings.Fields(string(out)); err == nil && len(f) >= 3 && f[1] == "lladdr" {
		sinkMAC = f[2]
	} else {
		t.Fatalf("neighbor fc00:b1::2: %q %v", out, err)
	}
	stream("before any change (fills the cache)", true)
	neigh("02:00:00:00:00:99")
	stream("right after the neighbor moved to another MAC", false)
	neigh(sinkMAC)
	stream("right after it moved back", true)
}

// An attached interface deleted and created again (a new ifindex) is attached again, and the tenant
// port on it follows, without anyone re-running a command.
func TestRecreatedInterfaceIsReattached(t *testing.T) {
	bin := testsupport.BuildSeg6x(t)
	ns := fmt.Sprintf("s6lk%d", os.Getpid()%10000)
	ip := func(args ...string) {
		t.Helper()
		testsupport.MustRun(t, "ip", append([]string{"-n", ns}, args...)...)
	}
	if err := testsupport.AddNetns(ns); err != nil {
		t.Fatal(err)
	}
	defer testsupport.DelNetns(ns)
	ip("link", "add", "x0", "type", "veth", "peer", "name", "x1")
	ip("link", "set", "x0", "up")
	ip("link", "set", "x1", "up")
	dir := filepath.Join(t.TempDir(), "inst")
	testsupport.ScratchInstance(t, dir)
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("interfaces: [{name: x0}]\ntenants: [{name: t, ports: [{dev: x0, vlan: 7}]}]\n"), 0o600)
	var logs testsupport.LogBuffer
	allCPUs()
	d, err := testsupport.StartDaemon(bin, ns, dir, &logs, "--config", cfg)
	if err != nil {
		t.Fatalf("%v:\n%s", err, logs.String())
	}
	defer d.Signal(syscall.SIGKILL)
	c := d.Client
	status := func() *pb.Interface {
		s, err := c.Status(context.Background(), &pb.StatusRequest{})
		if err != nil || len(s.Interfaces) != 1 {
			t.Fatalf("status: %v %v", s, err)
		}
		return s.Interfaces[0]
	}
	first := status()
	if first.ProgId == 0 {
		t.Fatalf("x0 not attached at start: %+v", first)
	}
	ip("link", "del", "x0")
	ip("link", "add", "x0", "type", "veth", "peer", "name", "x1")
	ip("link", "set", "x0", "up")
	var now *pb.Interface
	for i := 0; i < 1000; i++ { // up to 10 s: other tests may hold the CPUs
		if now = status(); now.Ifindex != first.Ifindex && now.ProgId != 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if now.Ifindex == first.Ifindex || now.ProgId == 0 {
		t.Fatalf("after x0 was recreated: %+v (was %+v)\n%s", now, first, logs.String())
	}
	// The interface and the tenant whose port is on it were both applied again.
	if !logs.WaitFor("re-applied 2 objects with their new ifindex") {
		t.Fatalf("the tenant port did not follow:\n%s", logs.String())
	}
}
