package labtest

// bgp_test.go: the BGP lab (`seg6x lab up --bgp`: pe1, pe2, pe3 around a kernel transit node and a
// route reflector), once with FRR's bgpd and once with gobgpd as the reflector. The PEs have no static
// routes: every route to another site must be learned over BGP, in its own tenant, with the remote
// PE's service SID of that tenant as its segment. Then: both tenants' traffic between every pair of
// sites, delivered within its own tenant only; pe3's daemon stopped (its prefixes withdrawn from pe1
// and pe2, site 3 unreachable); started again (re-learned, reachable, traffic isolated again).

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/lab"
	"github.com/seg6x/seg6x/internal/testsupport"
	"google.golang.org/protobuf/encoding/protojson"
)

func TestBGPLab(t *testing.T) {
	bin := testsupport.BuildSeg6x(t)
	for _, kind := range []string{"frr", "gobgpd"} {
		t.Run(kind, func(t *testing.T) {
			bins := []string{"gobgpd", "gobgp"}
			if kind == "frr" {
				bins = []string{"/usr/lib/frr/zebra", "/usr/lib/frr/bgpd", "vtysh"}
			}
			for _, b := range bins {
				if _, err := exec.LookPath(b); err != nil {
					t.Skipf("%s not installed (scripts/deps.sh installs it)", b)
				}
			}
			testBGPLab(t, bin, kind)
		})
	}
}

// serviceSID is PE n's service SID of a tenant: the lowest free functions of its locator fc00:1n::/48
// (block 32, node 16, function 16 bits), A's first.
func serviceSID(n int, tenant string) string {
	return fmt.Sprintf("fc00:1%d:0:%d::", n, map[string]int{"A": 1, "B": 2}[tenant])
}

// wantLearned is what PE n holds when the PEs of up (site numbers) run: each other site's prefixes,
// tenant A's IPv4 and IPv6 and tenant B's IPv4, with that site's PE's service SID of the tenant.
func wantLearned(n int, up ...int) lab.BGPRoutes {
	want := lab.BGPRoutes{"A": {}, "B": {}}
	for _, m := range up {
		if m == n {
			continue
		}
		want["A"][fmt.Sprintf("198.18.%d.0/24", m)] = serviceSID(m, "A")
		want["A"][fmt.Sprintf("2001:db8:%d::/64", m)] = serviceSID(m, "A")
		want["B"][fmt.Sprintf("198.18.%d.0/24", m)] = serviceSID(m, "B")
	}
	return want
}

// checkLearned compares each PE of up's routes of origin bgp with wantLearned.
func checkLearned(t *testing.T, l *lab.Lab, when string, up ...int) {
	t.Helper()
	for _, n := range up {
		got, err := l.Learned(lab.BGPPEs[n-1])
		if err != nil {
			t.Fatal(err)
		}
		if want := wantLearned(n, up...); got.String() != want.String() {
			t.Errorf("%s: pe%d learned %s\nwant %s", when, n, got, want)
		}
	}
}

func testBGPLab(t *testing.T, bin, kind string) {
	start := time.Now()
	l := lab.NewBGP(fmt.Sprintf("s6g%d%s", os.Getpid()%100000, kind[:1]), bin, kind, testWriter{t})
	defer l.Down()
	if err := l.Up(); err != nil {
		t.Fatal(err)
	}
	all := []int{1, 2, 3}

	// Each PE allocated its tenants' service SIDs from its locator (End.DT46, tenant's VLAN on decap).
	for n, pe := range lab.BGPPEs {
		sids, err := l.ServiceSIDs(pe)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"A": serviceSID(n+1, "A"), "B": serviceSID(n+1, "B")}; fmt.Sprint(sids) != fmt.Sprint(want) {
			t.Fatalf("%s: service SIDs %v, want %v", pe, sids, want)
		}
	}

	// Routes learned both ways: every PE holds exactly the other two sites' prefixes per tenant.
	d, err := l.WaitBGP(lab.BGPPEs, lab.BGPConvergeTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: every PE learned the other sites %.1f s after the daemons started", kind, d.Seconds())
	checkLearned(t, l, "converged", all...)
	bgpSessions(t, l, kind)

	// Traffic between every pair of sites, both tenants (A also IPv6), delivered within its own tenant
	// only: no answer from, no message to and no frame tagged for the other tenant (rep.Problems).
	const count = 3
	traffic(t, l, "first", count)

	// Withdraw on a PE's stop: pe1 and pe2 lose 198.18.3.0/24 (and A's 2001:db8:3::/64) in both
	// tenants, and site 3 is unreachable from the others.
	l.StopDaemon("pe3")
	if d, err = l.WaitBGP(lab.BGPPEs[:2], lab.BGPWithdrawTimeout); err != nil {
		t.Error(err)
	}
	t.Logf("%s: pe3 stopped, its routes gone from pe1 and pe2 after %.1f s", kind, d.Seconds())
	checkLearned(t, l, "pe3 stopped", 1, 2)
	reach(t, l, "pe3 stopped", false)

	// Re-learn on its return: everything as before.
	if err := l.StartDaemon("pe3"); err != nil {
		t.Fatal(err)
	}
	if d, err = l.WaitBGP(lab.BGPPEs, lab.BGPConvergeTimeout); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: pe3 started again, every PE converged after %.1f s", kind, d.Seconds())
	checkLearned(t, l, "pe3 back", all...)
	reach(t, l, "pe3 back", true)
	traffic(t, l, "after pe3's return", count)
	t.Logf("%s: BGP lab test took %.1f s (before removing the lab)", kind, time.Since(start).Seconds())
}

// bgpSessions: each PE has one session, to the reflector, established, with exactly 6 routes learned
// and imported (into the tenant whose route target they carry, from the PE that advertised them:
// next hop its loopback, SID its service SID) and 3 advertised; the reflector has every PE's 2 VPNv4
// and 1 VPNv6 routes. FRR 8.4 also reflects each client's own 3 routes back to it, which the PE
// receives and drops (its own originator id): 9 received there, 6 from gobgpd.
func bgpSessions(t *testing.T, l *lab.Lab, kind string) {
	t.Helper()
	received := map[string]uint64{"frr": 9, "gobgpd": 6}[kind]
	for n, pe := range lab.BGPPEs {
		r, err := l.BGPStatus(pe)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Neighbors) != 1 {
			t.Fatalf("%s: %d BGP neighbors, want 1 (the reflector): %v", pe, len(r.Neighbors), r.Neighbors)
		}
		nb := r.Neighbors[0]
		if !r.Running || r.Imported != 6 || nb.Address != lab.BGPRRAddr || nb.State != "established" || nb.Received != received ||
			nb.Accepted != 6 || nb.Advertised != 3 || r.LastError != "" {
			t.Errorf("%s: BGP running %v, %d imported, last error %q; neighbor %s %s, %d received, %d accepted, %d advertised; "+
				"want running, 6 imported, no error, neighbor %s established, %d received, 6 accepted, 3 advertised",
				pe, r.Running, r.Imported, r.LastError, nb.Address, nb.State, nb.Received, nb.Accepted, nb.Advertised, lab.BGPRRAddr, received)
		}
		if len(r.Learned) != 6 {
			t.Errorf("%s: %d learned paths, want 6", pe, len(r.Learned))
		}
		for _, p := range r.Learned {
			var m, rt int
			if _, err := fmt.Sscanf(p.Rd, "198.18.255.%d:%d", &m, &rt); err != nil || m == n+1 {
				t.Errorf("%s: learned %s %s: RD not another PE's", pe, p.Rd, p.Prefix)
				continue
			}
			tenant := map[int]string{100: "A", 200: "B"}[rt]
			if p.Tenant != tenant || p.Peer != lab.BGPRRAddr || p.NextHop != lab.BGPPEAddr(m) || p.Sid != serviceSID(m, tenant) ||
				len(p.Rts) != 1 || p.Rts[0] != fmt.Sprintf("65000:%d", rt) || p.Reason != "" {
				t.Errorf("%s: learned %s %s: tenant %q from %s next hop %s SID %s RTs %v (%s); want tenant %s from %s next hop %s SID %s RT 65000:%d",
					pe, p.Rd, p.Prefix, p.Tenant, p.Peer, p.NextHop, p.Sid, p.Rts, p.Reason, tenant, lab.BGPRRAddr, lab.BGPPEAddr(m),
					serviceSID(m, tenant), rt)
			}
		}
	}
	sessions, err := l.RR().Sessions()
	if err != nil {
		t.Fatal(err)
	}
	for fam, want := range map[string]int{"vpnv4": 2, "vpnv6": 1} {
		got, err := l.RR().Received(fam)
		if err != nil {
			t.Fatal(err)
		}
		for n := range lab.BGPPEs {
			a := lab.BGPPEAddr(n + 1)
			if sessions[a] != "Established" || got[a] != want {
				t.Errorf("reflector: client %s %s, %d %s routes received; want Established, %d", a, sessions[a], got[a], fam, want)
			}
		}
	}
}

// traffic runs the lab's traffic (ping, UDP, TCP from every host to its tenant's hosts on the other
// two sites; IPv6 pings for tenant A) and checks delivery, isolation and each PE's counters.
func traffic(t *testing.T, l *lab.Lab, when string, count int) {
	t.Helper()
	rep, err := l.Traffic(count)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems() {
		t.Errorf("%s traffic: %s", when, p)
	}
	if len(rep.Flows) != 12 || len(rep.Ping6) != 6 {
		t.Errorf("%s traffic: %d flows and %d IPv6 ping runs, want 12 and 6", when, len(rep.Flows), len(rep.Ping6))
	}
	// Each PE decapsulated both tenants' traffic from both other sites with its service SIDs and
	// encapsulated towards both (one policy per learned route), dropping nothing.
	for n, pe := range lab.BGPPEs {
		var s pb.StatsReply
		if err := protojson.Unmarshal(rep.Stats[pe], &s); err != nil {
			t.Fatal(err)
		}
		if len(s.Sids) != 2 || len(s.Policies) != 6 {
			t.Errorf("%s %s: %d SIDs and %d policies, want 2 and 6", when, pe, len(s.Sids), len(s.Policies))
		}
		for _, sd := range s.Sids {
			if (sd.Sid != serviceSID(n+1, "A") && sd.Sid != serviceSID(n+1, "B")) || sd.Action != "End.DT46" ||
				sd.Count.GetPackets() < uint64(2*3*count) {
				t.Errorf("%s %s: SID %s %s counted %d packets, want a service SID, End.DT46, >= %d", when, pe, sd.Sid, sd.Action,
					sd.Count.GetPackets(), 2*3*count)
			}
		}
		for _, p := range s.Policies {
			if p.Count.GetPackets() < uint64(count) {
				t.Errorf("%s %s: policy %v counted %d packets, want >= %d", when, pe, p.Segs, p.Count.GetPackets(), count)
			}
		}
		for name, c := range s.Reasons {
			if name[:4] == "DROP" && c.GetPackets() > 0 {
				t.Errorf("%s %s: %d packets dropped with %s", when, pe, c.GetPackets(), name)
			}
		}
	}
}

// reach pings site 3 from every other site's host of the same tenant (IPv4, and IPv6 for A) and
// wants every ping answered (reachable) or none.
func reach(t *testing.T, l *lab.Lab, when string, reachable bool) {
	t.Helper()
	const count = 3
	answered := 0
	if reachable {
		answered = count
	}
	rs := l.PingSite(3, count)
	if len(rs) != 6 {
		t.Errorf("%s: %d ping runs to site 3, want 6", when, len(rs))
	}
	for _, r := range rs {
		if r.Received != answered {
			t.Errorf("%s: tenant %s %s -> %s: %d/%d pings answered, want %d", when, r.Tenant, r.From, r.To, r.Received, r.Sent, answered)
		}
	}
}
