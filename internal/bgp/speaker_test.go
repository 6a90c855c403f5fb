package bgp

// speaker_test.go: two seg6x instances (real BPF maps, needs root), each with its speaker, peer over
// the loopback. Each learns the other's tenant prefixes as encap routes of origin bgp into the
// tenant whose import route targets match (overlapping prefixes stay apart), with the other's service
// SID as the segment, transposed or not; a withdrawal removes the route; a stopped speaker's routes go,
// and come back when it starts again; a prefix the API holds is refused and reported, the rest still
// imported; with route target constraint a peer sends only the routes of route targets some tenant
// imports.

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func freePort(t *testing.T) uint16 {
	t.Helper()
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return uint16(l.Addr().(*net.TCPAddr).Port)
}

type node struct {
	ctl    *core.Controller
	cancel context.CancelFunc
	done   chan struct{}
	sp     *Speaker
	opts   Options // the speaker's (Debounce: 5 ms)
}

func (n *node) start() {
	ctx, cancel := context.WithCancel(context.Background())
	o := n.opts
	o.Debounce = 5 * time.Millisecond
	n.sp = New(n.ctl, o)
	n.cancel, n.done = cancel, make(chan struct{})
	go func() { defer close(n.done); n.sp.Run(ctx) }()
}

func (n *node) stop() {
	if n.cancel != nil {
		n.cancel()
		<-n.done
		n.cancel = nil
	}
}

func pe(asn uint32, id string, listen, peerPort uint16, loc string, transpose bool) model.State {
	p := netip.MustParsePrefix
	return model.State{
		BGP: &model.BGP{ASN: asn, RouterID: netip.MustParseAddr(id), ListenPort: int32(listen), NextHop: netip.MustParseAddr("fc00:9::" + id[len(id)-1:]),
			Locator: p(loc), Transposition: transpose,
			Neighbors: []model.Neighbor{{Address: netip.MustParseAddr("::1"), ASN: asn, Port: peerPort,
				Families: []string{model.FamilyVPNv4, model.FamilyVPNv6, model.FamilyRTC}}}},
		Tenants: []model.Tenant{
			{Name: "blue", Table: 100, VPN: &model.VPN{RD: id + ":100", ImportRT: []string{"65000:100"}, ExportRT: []string{"65000:100"}}},
			{Name: "red", Table: 200, VPN: &model.VPN{RD: id + ":200", ImportRT: []string{"65000:200"}, ExportRT: []string{"65000:200"}}},
		},
	}
}

// learned is tenant -> prefix -> "segment" for the routes of origin bgp.
func learned(n *node) map[string]map[string]string {
	out := map[string]map[string]string{}
	n.ctl.Read(func(st *state.Store) {
		st.EachRoute(func(r model.Route) bool {
			if r.Origin == model.OriginBGP {
				if out[r.Tenant] == nil {
					out[r.Tenant] = map[string]string{}
				}
				out[r.Tenant][r.Prefix.String()] = r.Segs[0].String()
			}
			return true
		})
	})
	return out
}

func waitFor(t *testing.T, what string, n *node, want map[string]map[string]string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := learned(n)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: learned routes %v, want %v (last error: %s)", what, got, want, n.sp.Report(false).GetLastError())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func serviceSID(n *node, tenant string) string {
	var sid string
	n.ctl.Read(func(st *state.Store) {
		for _, t := range st.Tenants() {
			if t.Name == tenant {
				sid = t.VPN.ServiceSID.String()
			}
		}
	})
	return sid
}

func apply(t *testing.T, n *node, s model.State) {
	t.Helper()
	if _, err := n.ctl.Apply(s, core.Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestSpeakersExchangeVPNRoutes(t *testing.T) {
	t.Parallel() // its own speakers, ports and instance directories: it mostly waits on BGP timers
	pa, pb := freePort(t), freePort(t)
	a := &node{ctl: core.New(testsupport.OpenStore(t, t.TempDir(), testsupport.FakeEnv{}))}
	b := &node{ctl: core.New(testsupport.OpenStore(t, t.TempDir(), testsupport.FakeEnv{}))}
	cfgA := pe(65000, "198.18.255.1", pa, pb, "fc00:1::/48", true) // A transposes, B does not
	cfgB := pe(65000, "198.18.255.2", pb, pa, "fc00:2::/48", false)
	// The same prefix in both tenants of A (overlapping tenant space), an IPv6 one in blue.
	cfgA.Tenants[0].VPN.Advertise = []netip.Prefix{netip.MustParsePrefix("198.18.1.0/24"), netip.MustParsePrefix("2001:db8:1::/64")}
	cfgA.Tenants[1].VPN.Advertise = []netip.Prefix{netip.MustParsePrefix("198.18.1.0/24")}
	cfgB.Tenants[0].VPN.Advertise = []netip.Prefix{netip.MustParsePrefix("198.18.2.0/24")}
	// A tenant of A that B does not serve: with route target constraint B never receives its route.
	cfgA.Tenants = append(cfgA.Tenants, model.Tenant{Name: "yellow", Table: 300, VPN: &model.VPN{RD: "198.18.255.1:300",
		ExportRT: []string{"65000:300"}, Advertise: []netip.Prefix{netip.MustParsePrefix("198.18.3.0/24")}}})
	apply(t, a, cfgA)
	apply(t, b, cfgB)
	a.start()
	b.start()
	defer a.stop()
	defer b.stop()

	blueA, redA, blueB := serviceSID(a, "blue"), serviceSID(a, "red"), serviceSID(b, "blue")
	if blueA != "fc00:1:0:1::" || redA != "fc00:1:0:2::" || blueB != "fc00:2:0:1::" {
		t.Fatalf("service SIDs %s %s %s", blueA, redA, blueB)
	}
	full := map[string]map[string]string{
		"blue": {"198.18.1.0/24": blueA, "2001:db8:1::/64": blueA},
		"red":  {"198.18.1.0/24": redA},
	}
	waitFor(t, "B learns A's tenants", b, full)
	waitFor(t, "A learns B's blue", a, map[string]map[string]string{"blue": {"198.18.2.0/24": blueB}})

	rep := b.sp.Report(true)
	if !rep.Running || len(rep.Neighbors) != 1 || rep.Neighbors[0].State != "established" || !rep.Neighbors[0].Rtc ||
		rep.Neighbors[0].Received != 3 ||
		len(rep.Learned) != 3 || len(rep.Advertised) != 1 || rep.Imported != 3 {
		t.Fatalf("B's report: %+v", rep)
	}
	for _, l := range rep.Learned {
		if l.Tenant == "" || l.Peer != "::1" {
			t.Fatalf("learned route %+v: not imported", l)
		}
	}

	// A withdraws its IPv6 prefix.
	cfgA.Tenants[0].VPN.Advertise = cfgA.Tenants[0].VPN.Advertise[:1]
	apply(t, a, cfgA)
	delete(full["blue"], "2001:db8:1::/64")
	waitFor(t, "B after A's withdrawal", b, full)

	// A config route on B for a prefix BGP would bring: refused and reported; the rest stays.
	withRoute := cfgB
	withRoute.Routes = []model.Route{{Tenant: "red", Prefix: netip.MustParsePrefix("198.18.7.0/24"), Segs: []netip.Addr{netip.MustParseAddr("fc00:3::1")}}}
	apply(t, b, withRoute)
	cfgA.Tenants[1].VPN.Advertise = append(cfgA.Tenants[1].VPN.Advertise, netip.MustParsePrefix("198.18.7.0/24"))
	apply(t, a, cfgA)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var reason string
		for _, l := range b.sp.Report(true).Learned {
			if l.Prefix == "198.18.7.0/24" {
				reason = l.Reason
			}
		}
		if strings.Contains(reason, "red") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reason reported for the refused route (last %q)", reason)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitFor(t, "B keeps the rest", b, full)

	// A stops: its routes leave B (no graceful restart); back, they return.
	a.stop()
	waitFor(t, "B after A stopped", b, map[string]map[string]string{})
	a.start()
	waitFor(t, "B after A restarted", b, full)

	// Removing the bgp section of B removes what it learned.
	apply(t, b, model.State{Tenants: []model.Tenant{{Name: "blue", Table: 100}, {Name: "red", Table: 200}}, Routes: withRoute.Routes})
	waitFor(t, "B without bgp", b, map[string]map[string]string{})
}

// TestGracefulRestart: with graceful restart on both sides, a speaker that stops (a daemon stop or
// crash: no NOTIFICATION) leaves its routes at its peer, stale but forwarding; back, it re-advertises
// and what it no longer has is removed at its end-of-RIB; gone for longer than the restart time, its
// routes are removed. B imports with H.Encaps.Red (vpn.encap).
func TestGracefulRestart(t *testing.T) {
	t.Parallel() // its own speakers, ports and instance directories: it mostly waits on BGP timers
	pa, pb := freePort(t), freePort(t)
	a := &node{ctl: core.New(testsupport.OpenStore(t, t.TempDir(), testsupport.FakeEnv{}))}
	b := &node{ctl: core.New(testsupport.OpenStore(t, t.TempDir(), testsupport.FakeEnv{}))}
	cfgA := pe(65000, "198.18.255.1", pa, pb, "fc00:1::/48", false)
	cfgB := pe(65000, "198.18.255.2", pb, pa, "fc00:2::/48", false)
	for _, c := range []*model.State{&cfgA, &cfgB} {
		c.BGP.GracefulRestart = model.GracefulRestart{Enabled: true, RestartTime: 12}
	}
	a.opts.PeerFile = filepath.Join(t.TempDir(), "bgp-neighbors.json") // as the daemon has it
	cfgA.Tenants[0].VPN.Advertise = []netip.Prefix{netip.MustParsePrefix("198.18.1.0/24"), netip.MustParsePrefix("198.18.4.0/24")}
	cfgB.Tenants[0].VPN.Advertise = []netip.Prefix{netip.MustParsePrefix("198.18.2.0/24")}
	cfgB.Tenants[0].VPN.Encap = model.ModeEncapRed
	apply(t, a, cfgA)
	apply(t, b, cfgB)
	a.start()
	b.start()
	defer a.stop()
	defer b.stop()

	blueA, blueB := serviceSID(a, "blue"), serviceSID(b, "blue")
	full := map[string]map[string]string{"blue": {"198.18.1.0/24": blueA, "198.18.4.0/24": blueA}}
	waitFor(t, "B learns A's routes", b, full)
	waitFor(t, "A learns B's route", a, map[string]map[string]string{"blue": {"198.18.2.0/24": blueB}})
	b.ctl.Read(func(st *state.Store) {
		st.EachRoute(func(r model.Route) bool {
			if r.Origin == model.OriginBGP && r.Mode != model.ModeEncapRed {
				t.Errorf("B's learned route %s: mode %q, want %q (vpn.encap)", r.Prefix, r.Mode, model.ModeEncapRed)
			}
			return true
		})
	})

	// A stops: B's session goes down, A's routes stay (stale) for the restart time.
	a.stop()
	down := time.Now().Add(10 * time.Second)
	for b.sp.Report(false).Neighbors[0].State == "established" {
		if time.Now().After(down) {
			t.Fatal("B's session to A still established after A stopped")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if got := learned(b); fmt.Sprint(got) != fmt.Sprint(full) {
			t.Fatalf("B during A's graceful restart: %v, want %v kept", got, full)
		}
	}
	if n := b.sp.Report(false).Neighbors[0]; !n.PeerRestarting {
		t.Fatalf("B's neighbor report during A's restart: %+v, want peer_restarting", n)
	}

	// A returns without 198.18.4.0/24: its end-of-RIB removes the stale route; A keeps B's route
	// throughout its own restart (confirmed by B's end-of-RIB). B keeps 198.18.1.0/24 throughout:
	// A remembers (its peer file) that B negotiated extended next hop, so its first VPNv4 UPDATE to B
	// is the route, not an end-of-RIB that would make B drop it first.
	cfgA.Tenants[0].VPN.Advertise = cfgA.Tenants[0].VPN.Advertise[:1]
	apply(t, a, cfgA)
	kept, stop := make(chan string, 1), make(chan struct{})
	go func() {
		defer close(kept)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, ok := learned(b)["blue"]["198.18.1.0/24"]; !ok {
				kept <- "B lost 198.18.1.0/24 during A's return"
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	a.start()
	if got := learned(a); len(got["blue"]) != 1 {
		t.Fatalf("A lost B's route on its restart: %v", got)
	}
	delete(full["blue"], "198.18.4.0/24")
	waitFor(t, "B after A's return", b, full)
	time.Sleep(time.Second)
	close(stop)
	if msg := <-kept; msg != "" {
		t.Fatal(msg)
	}
	waitFor(t, "A after its restart", a, map[string]map[string]string{"blue": {"198.18.2.0/24": blueB}})
	// The restart is over once B has A's end-of-RIB (a session lost before that is not graceful).
	over := time.Now().Add(10 * time.Second)
	for n := b.sp.Report(false).Neighbors[0]; n.PeerRestarting || n.State != "established"; n = b.sp.Report(false).Neighbors[0] {
		if time.Now().After(over) {
			t.Fatalf("B's neighbor after A's return: %+v", n)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A stops for longer than the restart time (12 s): its routes go.
	a.stop()
	time.Sleep(2 * time.Second)
	if got := learned(b); fmt.Sprint(got) != fmt.Sprint(full) {
		t.Fatalf("B 2 s into A's second restart: %v, want %v kept", got, full)
	}
	waitFor(t, "B after A's restart time ran out", b, map[string]map[string]string{})
}

// TestEBGPWithPassword: two PEs in different ASes (eBGP), the session signed with TCP-MD5: routes are
// exchanged as over iBGP; with a wrong password on one side no session comes up and what was learned
// goes; the right password again brings it back.
func TestEBGPWithPassword(t *testing.T) {
	t.Parallel() // its own speakers, ports and instance directories: it mostly waits on BGP timers
	pa, pb := freePort(t), freePort(t)
	a := &node{ctl: core.New(testsupport.OpenStore(t, t.TempDir(), testsupport.FakeEnv{}))}
	b := &node{ctl: core.New(testsupport.OpenStore(t, t.TempDir(), testsupport.FakeEnv{}))}
	cfgA := pe(65001, "198.18.255.1", pa, pb, "fc00:1::/48", false)
	cfgB := pe(4200000002, "198.18.255.2", pb, pa, "fc00:2::/48", false)
	cfgA.BGP.Neighbors[0].ASN, cfgB.BGP.Neighbors[0].ASN = 4200000002, 65001
	cfgA.BGP.Neighbors[0].Password, cfgB.BGP.Neighbors[0].Password = "s3cret-1", "s3cret-1"
	cfgA.Tenants[0].VPN.Advertise = []netip.Prefix{netip.MustParsePrefix("198.18.1.0/24")}
	cfgB.Tenants[0].VPN.Advertise = []netip.Prefix{netip.MustParsePrefix("2001:db8:2::/64")}
	apply(t, a, cfgA)
	apply(t, b, cfgB)
	a.start()
	b.start()
	defer a.stop()
	defer b.stop()
	fromA := map[string]map[string]string{"blue": {"198.18.1.0/24": serviceSID(a, "blue")}}
	waitFor(t, "B learns A's route over eBGP", b, fromA)
	waitFor(t, "A learns B's route over eBGP", a, map[string]map[string]string{"blue": {"2001:db8:2::/64": serviceSID(b, "blue")}})
	if n := b.sp.Report(false).Neighbors[0]; n.Asn != 65001 || n.State != "established" {
		t.Fatalf("B's neighbor: %+v", n)
	}

	// A wrong password on B: the session goes and stays down; A's route leaves B.
	cfgB.BGP.Neighbors[0].Password = "wrong"
	apply(t, b, cfgB)
	waitFor(t, "B with a wrong password", b, map[string]map[string]string{})
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if n := b.sp.Report(false).Neighbors[0]; n.State == "established" {
			t.Fatalf("session up with mismatched TCP-MD5 passwords: %+v", n)
		}
	}
	cfgB.BGP.Neighbors[0].Password = "s3cret-1"
	apply(t, b, cfgB)
	waitFor(t, "B with the right password again", b, fromA)
}
