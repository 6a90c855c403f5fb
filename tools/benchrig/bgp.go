package benchrig

// bgp.go: `seg6x-bench bgp`: a BGP speaker (a GoBGP server in a process of its own, bgpinject.go,
// standing for a route reflector) injects N VPNv4 routes into one seg6x node — the packet rig's data
// plane with the real seg6x BGP speaker (internal/bgp) on it in this process, peering over the
// loopback of the bench's own namespace.
// Measured: the time from the first announcement until every sampled prefix forwards (a frame to
// it, run through the real program on the real maps, leaves encapsulated towards the route's SID),
// the process and map memory it took (per route, with the heap profile on request: bgpmem.go), and
// the time from a withdrawal to the data plane change (a batch of sampled prefixes at once, and single
// prefixes one at a time). The routes may be spread over several tenants (bgplayout.go).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"time"

	api "github.com/osrg/gobgp/v4/api"
	"github.com/osrg/gobgp/v4/pkg/server"

	"github.com/seg6x/seg6x/internal/bgp"
	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/memtune"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/fixtures"
)

// BGPOptions are `seg6x-bench bgp`'s flags.
type BGPOptions struct {
	Routes, Samples, Withdraw, PEs int
	Tenants                        int    // VPNs the routes are spread over (0: as many as needed, 131,072 routes each)
	MemProfile                     string // "": none; else the node's heap profile after convergence
	GCHeadroom                     int    // the node's collector headroom, as the daemon's --gc-headroom (internal/memtune)
}

// BGPResult is `seg6x-bench bgp --json`.
type BGPResult struct {
	Routes          int     `json:"routes"`
	PEs             int     `json:"pes"`     // distinct service SIDs (advertising PEs) per tenant
	Tenants         int     `json:"tenants"` // VPNs (route targets, VLANs) the routes are spread over
	Samples         int     `json:"samples"`
	InjectSeconds   float64 `json:"inject_s"`      // handing the routes to the injecting speaker
	InstalledSecond float64 `json:"installed_s"`   // until the state held every route
	ForwardingSec   float64 `json:"forwarding_s"`  // until every sampled prefix forwarded to its SID
	RoutesPerSecond float64 `json:"routes_per_s"`  // Routes / ForwardingSec
	Commits         uint64  `json:"commits"`       // state commits the speaker made for them
	CPUSeconds      float64 `json:"node_cpu_s"`    // the node's CPU time (user and system) until ForwardingSec
	RSSBeforeMB     float64 `json:"rss_before_mb"` // the node's process (data plane loader, seg6x's speaker), before
	RSSAfterMB      float64 `json:"rss_after_mb"`
	// RSSPerRoute is (RSSAfterMB - RSSBeforeMB) / Routes, in bytes.
	RSSPerRoute float64 `json:"rss_per_route_bytes"`
	// RSSReleasedMB is the RSS after, once the runtime returned its free pages to the kernel: what the
	// process needs for its live data (the rest is heap freed by the collector and kept).
	RSSReleasedMB float64 `json:"rss_released_mb"`
	HeapBeforeMB  float64 `json:"go_heap_before_mb"` // the node's Go heap in use (after a GC), before
	HeapAfterMB   float64 `json:"go_heap_after_mb"`  // the same after convergence
	HeapPerRoute  float64 `json:"go_heap_per_route_bytes"`
	MemProfile    string  `json:"mem_profile,omitempty"` // the heap profile written after convergence
	GCHeadroom    int     `json:"gc_headroom_percent"`   // the node's --gc-headroom (0: off; also when GOGC or GOMEMLIMIT is set)
	GOGC          string  `json:"gogc,omitempty"`        // the node's GOGC and GOMEMLIMIT, when set
	GOMEMLIMIT    string  `json:"gomemlimit,omitempty"`
	RSSPeakMB     float64 `json:"rss_peak_mb"`     // the node's highest RSS (VmHWM) until convergence
	Updates       uint64  `json:"updates"`         // UPDATE messages that carried the routes (NLRI per UPDATE: the attributes shared)
	InjectorRSSMB float64 `json:"injector_rss_mb"` // the injecting speaker's process, after announcing
	MapMemoryMB   float64 `json:"map_memory_mb"`   // the BPF maps (preallocated: the same for any route count)
	// WithdrawBatch prefixes withdrawn at once, until none of them forwarded any more.
	WithdrawBatch   int       `json:"withdraw_batch"`
	WithdrawBatchMs float64   `json:"withdraw_batch_ms"`
	WithdrawOneMs   []float64 `json:"withdraw_one_ms"` // single withdrawals, one at a time
	WithdrawOneMed  float64   `json:"withdraw_one_median_ms"`
	Method          string    `json:"method"`
}

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// RunBGP runs the benchmark; it must run inside a namespace made for it.
// tool is the seg6x-bench binary (it runs the injector: `seg6x-bench bgp-injector`).
func RunBGP(tool string, o BGPOptions, logf func(string, ...any)) (*BGPResult, error) {
	lay, err := newBGPLayout(o.Routes, o.PEs, o.Tenants)
	if err != nil {
		return nil, err
	}
	routes, pes := o.Routes, o.PEs
	samples, withdraw := min(o.Samples, routes), min(o.Withdraw, routes)
	rig, err := fixtures.NewRig()
	if err != nil {
		return nil, err
	}
	defer rig.Close()
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ip link set lo up: %v: %s", err, out)
	}
	dutPort, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	injPort, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	h := memtune.Default
	h.Percent = o.GCHeadroom
	stopTune, active := memtune.Start(h) // as the daemon does
	defer stopTune()
	if !active {
		h.Percent = 0
	}
	before := sampleMemory()
	res := &BGPResult{GCHeadroom: h.Percent, Routes: routes, PEs: pes, Tenants: lay.tenants, Samples: samples, WithdrawBatch: withdraw,
		RSSBeforeMB: before.rssMB, HeapBeforeMB: before.heapMB, GOGC: os.Getenv("GOGC"), GOMEMLIMIT: os.Getenv("GOMEMLIMIT")}

	// The node: tenants on the rig's access port with a vpn section importing their injected RT.
	ctl := core.New(rig.Store)
	lo := netip.MustParseAddr("::1")
	ops := []state.Op{
		{Kind: model.OpReplace, BGP: &model.BGP{ASN: 65000, RouterID: netip.MustParseAddr("198.18.255.1"), ListenPort: int32(dutPort),
			NextHop: netip.MustParseAddr("fc00:12::1"), Locator: netip.MustParsePrefix("fc00:77::/48"), Neighbors: []model.Neighbor{{Address: lo, ASN: 65000, Port: uint16(injPort),
				Families: []string{model.FamilyVPNv4}}}}},
	}
	for t := range lay.tenants {
		ops = append(ops, state.Op{Kind: model.OpAdd, Tenant: &model.Tenant{Name: lay.tenantName(t), Table: uint32(777 + t),
			Ports: []model.Port{{Dev: "ta0", VLAN: uint16(lay.vlan(t))}},
			VPN:   &model.VPN{RD: fmt.Sprintf("198.18.255.1:%d", 777+t), ImportRT: []string{lay.rt(t)}}}})
	}
	if _, err := ctl.Commit(ops, core.Options{}); err != nil {
		return nil, err
	}
	sp := bgp.New(ctl, bgp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); sp.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// The injector, in its own process.
	inj, err := startInjector(tool, lay, injPort, dutPort)
	if err != nil {
		return nil, err
	}
	defer inj.close()
	logf("bgp: rig up; waiting for the session (seg6x on [::1]:%d, injector on [::1]:%d)", dutPort, injPort)
	if _, err := inj.do("up"); err != nil {
		return nil, err
	}
	logf("bgp: session up; announcing %d routes (%d tenants)", routes, lay.tenants)
	idx, err := rig.Ifindex("ta0")
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// Always the last one; a copy, so that the permutation of all routes (8 MB at 1M) is not kept.
	sample := append(slices.Clone(rng.Perm(routes)[:samples-1]), routes-1)
	forwards := func(i int) (bool, error) {
		act, out, err := rig.RunFrame(rig.Objs.Seg6xXdp, int(idx), udpFrame(lay.vlan(lay.tenant(i)), lay.prefix(i).Addr()), make([]byte, 8192), 0)
		if err != nil {
			return false, err
		}
		// Encapsulated: an IPv6 frame whose destination is the route's SID.
		ok := act == dataplane.XDPRedirect && len(out) >= 54 && out[12] == 0x86 && out[13] == 0xdd &&
			netip.AddrFrom16([16]byte(out[38:54])) == lay.sid(i)
		return ok, nil
	}

	// Announce everything, then wait for the state and the data plane.
	t0, cpu0 := time.Now(), cpuSeconds()
	if _, err := inj.do("announce"); err != nil {
		return nil, err
	}
	res.InjectSeconds = time.Since(t0).Seconds()
	// 5 minutes, more for more than 1M routes (about 1.5 min per 1M on 2 vCPUs).
	deadline := t0.Add(max(5*time.Minute, time.Duration(routes)*300*time.Microsecond))
	installed := false
	pending := slices.Clone(sample)
	lastLog := time.Now()
	for len(pending) > 0 {
		if time.Since(lastLog) > 5*time.Second {
			lastLog = time.Now()
			rep := sp.Report(false)
			logf("bgp: %v: state holds %d routes, %d of %d samples not forwarding; speaker: %d commits, last error %q",
				time.Since(t0).Round(time.Second), installedRoutes(ctl), len(pending), samples, rep.GetCommits(), rep.GetLastError())
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("after %v: %d of %d sampled prefixes still not forwarding (state holds %d routes; speaker: %s)",
				time.Since(t0).Round(time.Second), len(pending), samples, installedRoutes(ctl), sp.Report(false).GetLastError())
		}
		if !installed && installedRoutes(ctl) >= routes {
			installed, res.InstalledSecond = true, time.Since(t0).Seconds()
		}
		next := pending[:0]
		for _, i := range pending {
			ok, err := forwards(i)
			if err != nil {
				return nil, err
			}
			if !ok {
				next = append(next, i)
			}
		}
		pending = next
		if len(pending) > 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	res.ForwardingSec = time.Since(t0).Seconds()
	res.CPUSeconds = cpuSeconds() - cpu0
	for !installed && time.Now().Before(deadline) {
		if installedRoutes(ctl) >= routes {
			installed, res.InstalledSecond = true, time.Since(t0).Seconds()
		}
		time.Sleep(5 * time.Millisecond)
	}
	res.RoutesPerSecond = float64(routes) / res.ForwardingSec
	res.Commits = sp.Report(false).GetCommits()
	after := sampleMemory()
	res.HeapAfterMB, res.RSSAfterMB = after.heapMB, after.rssMB
	res.RSSPerRoute, res.HeapPerRoute = perRoute(before.rssMB, after.rssMB, routes), perRoute(before.heapMB, after.heapMB, routes)
	if o.MemProfile != "" {
		if err := writeHeapProfile(o.MemProfile); err != nil {
			return nil, err
		}
		res.MemProfile = o.MemProfile
	}
	res.RSSPeakMB = peakRSSMB()
	res.RSSReleasedMB = releasedRSSMB()
	if v, err := inj.do("updates"); err == nil {
		res.Updates, _ = strconv.ParseUint(v, 10, 64)
	}
	res.MapMemoryMB = mapMemory(dataplane.MapsOf(rig.Store))
	if v, err := inj.do("rss"); err == nil {
		res.InjectorRSSMB, _ = strconv.ParseFloat(v, 64)
	}
	logf("bgp: %d routes forwarding after %.2f s (state %.2f s)", routes, res.ForwardingSec, res.InstalledSecond)

	// Withdraw a batch of sampled prefixes at once, then single ones.
	waitGone := func(idx []int, what string) (time.Duration, error) {
		t := time.Now()
		left := slices.Clone(idx)
		for len(left) > 0 {
			if time.Since(t) > 2*time.Minute {
				return 0, fmt.Errorf("%s: %d prefixes still forwarding after %v", what, len(left), time.Since(t).Round(time.Second))
			}
			next := left[:0]
			for _, i := range left {
				ok, err := forwards(i)
				if err != nil {
					return 0, err
				}
				if ok {
					next = append(next, i)
				}
			}
			left = next
		}
		return time.Since(t), nil
	}
	batch := sample[:withdraw]
	t1 := time.Now()
	if err := inj.withdraw(batch); err != nil {
		return nil, err
	}
	if _, err := waitGone(batch, "batch withdrawal"); err != nil {
		return nil, err
	}
	res.WithdrawBatchMs = float64(time.Since(t1).Microseconds()) / 1000
	for _, i := range sample[withdraw:min(withdraw+20, len(sample))] {
		t := time.Now()
		if err := inj.withdraw([]int{i}); err != nil {
			return nil, err
		}
		if _, err := waitGone([]int{i}, "withdrawal"); err != nil {
			return nil, err
		}
		res.WithdrawOneMs = append(res.WithdrawOneMs, float64(time.Since(t).Microseconds())/1000)
	}
	if n := len(res.WithdrawOneMs); n > 0 {
		s := slices.Sorted(slices.Values(res.WithdrawOneMs))
		res.WithdrawOneMed = s[n/2]
	}
	res.Method = fmt.Sprintf("in one namespace: the packet rig's data plane and seg6x's BGP speaker in one process (debounce 20 ms, "+
		"commits of up to 10000 routes; its RSS and heap are the node's memory) peering over ::1 with a GoBGP injector in a second "+
		"process (commands over a pipe, timed from their write); %d VPNv4 /32s in %d tenants (route targets) from %d PEs "+
		"(SIDs) announced in batches of 10000; forwarding checked by running a UDP frame to each of %d sampled prefixes through "+
		"the seg6x XDP program (BPF_PROG_TEST_RUN on the live maps) until it leaves encapsulated towards the route's SID; "+
		"memory: RSS and Go heap (after a GC) once the rig is up and before the tenants and the speaker, and after convergence; "+
		"per route: the difference divided by the routes; withdrawal times until the frame no longer does; %d CPUs",
		routes, lay.tenants, pes, samples, runtime.NumCPU())
	return res, nil
}

func installedRoutes(ctl *core.Controller) int {
	var n int
	ctl.Read(func(st *state.Store) { n = st.Counts().Routes4 })
	return n
}

func waitEstablished(s *server.BgpServer, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		up := false
		_ = s.ListPeer(context.Background(), &api.ListPeerRequest{}, func(p *api.Peer) {
			up = up || p.GetState().GetSessionState() == api.PeerState_SESSION_STATE_ESTABLISHED
		})
		if up {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the injector's session to the seg6x node did not come up within %v", within)
}
