package labtest

// bgp_test.go: the BGP lab (`seg6x-lab up --bgp`: pe1, pe2, pe3 around a kernel transit node and a
// route reflector), once with FRR's bgpd and once with gobgpd as the reflector. The PEs have no static
// routes: every route to another site must be learned over BGP, in its own tenant, with the remote
// PE's service SID of that tenant as its segment. Then: both tenants' traffic between every pair of
// sites, delivered within its own tenant only; pe3's daemon stopped (its prefixes withdrawn from pe1
// and pe2, site 3 unreachable); started again (re-learned, reachable, traffic isolated again).
// gobgpd-rtc runs the same with route target constraint (RFC 4684) on every session and a tenant C
// that only pe1 and pe2 serve: gobgpd, reflecting the PEs' route target memberships, must send pe3
// none of C's routes (pe3 receives exactly A's and B's), while pe1 and pe2 learn each other's C route.

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/tools/lab"
	"google.golang.org/protobuf/encoding/protojson"
)

func TestBGPLab(t *testing.T) {
	t.Parallel()
	bin, tool := binaries(t)
	for _, v := range []struct {
		name string
		o    lab.BGPOptions
	}{{"frr", lab.BGPOptions{RR: "frr"}}, {"gobgpd", lab.BGPOptions{RR: "gobgpd"}}, {"gobgpd-rtc", lab.BGPOptions{RR: "gobgpd", RTC: true}}} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			bins := []string{"gobgpd", "gobgp"}
			if v.o.RR == "frr" {
				bins = []string{"/usr/lib/frr/zebra", "/usr/lib/frr/bgpd", "vtysh"}
			}
			for _, b := range bins {
				if _, err := exec.LookPath(b); err != nil {
					t.Skipf("%s not installed (scripts/deps.sh installs it)", b)
				}
			}
			testBGPLab(t, bin, tool, v.name, v.o)
		})
	}
	// FRR 8.4 has no route target constraint: the lab refuses the combination before building anything.
	if _, err := lab.NewBGPWith("s6gnone", bin, tool, lab.BGPOptions{RR: "frr", RTC: true}, nil); err == nil ||
		!strings.Contains(err.Error(), "FRR 8.4 has no RTC") {
		t.Errorf("BGP lab with FRR and rtc: error %v, want a refusal naming FRR 8.4's missing RTC", err)
	}
}

// serviceSID is PE n's service SID of a tenant: the lowest free functions of its locator fc00:1n::/48
// (block 32, node 16, function 16 bits), in tenant-name order: A's first.
func serviceSID(n int, tenant string) string {
	return fmt.Sprintf("fc00:1%d:0:%d::", n, map[string]int{"A": 1, "B": 2, "C": 3}[tenant])
}

// servesC reports whether site n's PE serves tenant C; c are the sites whose PEs do (none without route
// target constraint, pe1's and pe2's when the lab comes up with it).
func servesC(n int, c []int) bool { return slices.Contains(c, n) }

// wantLearned is what PE n holds when the PEs of up (site numbers) run: each other site's prefixes,
// tenant A's IPv4 and IPv6 and tenant B's IPv4, with that site's PE's service SID of the tenant; with
// route target constraint also tenant C's 198.19.m.0/24 of the other PE serving C, if n serves C.
func wantLearned(n int, c []int, up ...int) lab.BGPRoutes {
	want := lab.BGPRoutes{"A": {}, "B": {}, "C": {}}
	for _, m := range up {
		if m == n {
			continue
		}
		want["A"][fmt.Sprintf("198.18.%d.0/24", m)] = serviceSID(m, "A")
		want["A"][fmt.Sprintf("2001:db8:%d::/64", m)] = serviceSID(m, "A")
		want["B"][fmt.Sprintf("198.18.%d.0/24", m)] = serviceSID(m, "B")
		if servesC(n, c) && servesC(m, c) {
			want["C"][lab.BGPTenantCPrefix(m)] = serviceSID(m, "C")
		}
	}
	return want
}

// checkLearned compares each PE of up's routes of origin bgp with wantLearned.
func checkLearned(t *testing.T, l *lab.Lab, when string, c []int, up ...int) {
	t.Helper()
	for _, n := range up {
		got, err := l.Learned(lab.BGPPEs[n-1])
		if err != nil {
			t.Fatal(err)
		}
		if want := wantLearned(n, c, up...); got.String() != want.String() {
			t.Errorf("%s: pe%d learned %s\nwant %s", when, n, got, want)
		}
	}
}

func testBGPLab(t *testing.T, bin, tool, kind string, o lab.BGPOptions) {
	start := time.Now()
	l, err := lab.NewBGPWith(fmt.Sprintf("s6g%d%s", os.Getpid()%100000, map[string]string{"frr": "f", "gobgpd": "g", "gobgpd-rtc": "r"}[kind]),
		bin, tool, o, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Down()
	if err := l.Up(); err != nil {
		t.Fatal(err)
	}
	all := []int{1, 2, 3}
	var c []int // the sites serving tenant C
	if o.RTC {
		c = []int{1, 2}
	}

	// Each PE allocated its tenants' service SIDs from its locator (End.DT46, tenant's VLAN on decap).
	for n, pe := range lab.BGPPEs {
		sids, err := l.ServiceSIDs(pe)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"A": serviceSID(n+1, "A"), "B": serviceSID(n+1, "B")}
		if servesC(n+1, c) {
			want["C"] = serviceSID(n+1, "C")
		}
		if fmt.Sprint(sids) != fmt.Sprint(want) {
			t.Fatalf("%s: service SIDs %v, want %v", pe, sids, want)
		}
	}

	// Routes learned both ways: every PE holds exactly the other two sites' prefixes per tenant.
	d, err := l.WaitBGP(lab.BGPPEs, lab.BGPConvergeTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: every PE learned the other sites %.1f s after the daemons started", kind, d.Seconds())
	checkLearned(t, l, "converged", c, all...)
	bgpSessions(t, l, kind, c)

	// Traffic between every pair of sites, both tenants (A also IPv6), delivered within its own tenant
	// only: no answer from, no message to and no frame tagged for the other tenant (rep.Problems).
	const count = 3
	traffic(t, l, "first", count, c)

	// A wrong or hostile PE: pe2 also advertises site 1's 198.18.1.0/24 in tenant A. pe1 holds that
	// prefix itself (its tenant table): it keeps it (a route that hands it to the kernel, the learned
	// one refused with its note); pe3 still uses pe1's path (BGP's best path: its RD sorts first).
	ownPrefixOutranksLearned(t, l)
	checkLearned(t, l, "after the hijack was withdrawn", c, all...)

	// Withdraw on a PE's stop: pe1 and pe2 lose 198.18.3.0/24 (and A's 2001:db8:3::/64) in both
	// tenants, and site 3 is unreachable from the others.
	l.StopDaemon("pe3")
	if d, err = l.WaitBGP(lab.BGPPEs[:2], lab.BGPWithdrawTimeout); err != nil {
		t.Error(err)
	}
	t.Logf("%s: pe3 stopped, its routes gone from pe1 and pe2 after %.1f s", kind, d.Seconds())
	checkLearned(t, l, "pe3 stopped", c, 1, 2)
	reach(t, l, "pe3 stopped", false)

	// Re-learn on its return: everything as before.
	if err := l.StartDaemon("pe3"); err != nil {
		t.Fatal(err)
	}
	if d, err = l.WaitBGP(lab.BGPPEs, lab.BGPConvergeTimeout); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: pe3 started again, every PE converged after %.1f s", kind, d.Seconds())
	checkLearned(t, l, "pe3 back", c, all...)
	reach(t, l, "pe3 back", true)
	traffic(t, l, "after pe3's return", count, c)
	if o.RTC {
		rtcJoinLeave(t, l, kind)
	}
	t.Logf("%s: BGP lab test took %.1f s (before removing the lab)", kind, time.Since(start).Seconds())
}

// rtcJoinLeave: pe3 joins tenant C (its daemon's config applied with C: it sends a membership route
// for 65000:300): gobgpd must now send it pe1's and pe2's C routes, and pe3's C route reaches them.
// pe3 leaves C again (membership withdrawn): gobgpd must withdraw C's routes from pe3, which then
// receives exactly its 6 again (its own tenant C's removal drops them from its tenants at once, so
// the received count, GoBGP's Adj-RIB-In, is what shows the reflector's withdrawal).
func rtcJoinLeave(t *testing.T, l *lab.Lab, kind string) {
	t.Helper()
	all := []int{1, 2, 3}
	for _, step := range []struct {
		join     bool
		c        []int
		received uint64 // at pe3
	}{{true, all, 8}, {false, []int{1, 2}, 6}} {
		when := map[bool]string{true: "pe3 joined tenant C", false: "pe3 left tenant C"}[step.join]
		start := time.Now()
		if err := l.SetTenantC("pe3", step.join); err != nil {
			t.Fatal(err)
		}
		if _, err := l.WaitBGP(lab.BGPPEs, lab.BGPConvergeTimeout); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		var got uint64
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			r, err := l.BGPStatus("pe3")
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Neighbors) == 1 {
				got = r.Neighbors[0].Received
			}
			if got == step.received || time.Now().After(deadline) {
				break
			}
		}
		if got != step.received {
			t.Errorf("%s: pe3 received %d VPN routes from the reflector, want %d", when, got, step.received)
		}
		t.Logf("%s: every PE held what it should, pe3 %d routes received, after %.1f s", kind+": "+when, got, time.Since(start).Seconds())
		checkLearned(t, l, when, step.c, all...)
		bgpSessions(t, l, kind, step.c)
	}
}

// bgpSessions: each PE has one session, to the reflector, established, with exactly 6 routes learned
// and imported (into the tenant whose route target they carry, from the PE that advertised them:
// next hop its loopback, SID its service SID) and 3 advertised; the reflector has every PE's 2 VPNv4
// and 1 VPNv6 routes. FRR 8.4 also reflects each client's own 3 routes back to it, which the PE
// receives and drops (its own originator id): 9 received there, 6 from gobgpd.
// With route target constraint (rtc negotiated on every session): pe1 and pe2 also advertise their
// tenant C route and receive the other's (7 received, 7 imported, 4 advertised), pe3 receives exactly
// its 6: gobgpd holds C's routes but sends pe3 none (its Adj-RIB-Out to pe3 has no route with
// 65000:300), and reflects every client's route target memberships to every client (RFC 4684 3.2).
func bgpSessions(t *testing.T, l *lab.Lab, kind string, c []int) {
	t.Helper()
	rtc := l.RTC()
	for n, pe := range lab.BGPPEs {
		r, err := l.BGPStatus(pe)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Neighbors) != 1 {
			t.Fatalf("%s: %d BGP neighbors, want 1 (the reflector): %v", pe, len(r.Neighbors), r.Neighbors)
		}
		routes, advertised := uint64(6), uint64(3)
		if servesC(n+1, c) {
			routes, advertised = routes+uint64(len(c)-1), 4
		}
		received, families := routes, "[vpnv4 vpnv6]"
		if kind == "frr" {
			received += 3
		}
		if rtc {
			families = "[vpnv4 vpnv6 rtc]"
		}
		nb := r.Neighbors[0]
		if !r.Running || r.Imported != routes || nb.Address != lab.BGPRRAddr || nb.State != "established" || nb.Received != received ||
			nb.Accepted != routes || nb.Advertised != advertised || nb.Rtc != rtc || fmt.Sprint(nb.Families) != families || r.LastError != "" {
			t.Errorf("%s: BGP running %v, %d imported, last error %q; neighbor %s %s, families %v (rtc %v), %d received, %d accepted, %d advertised; "+
				"want running, %d imported, no error, neighbor %s established, families %s (rtc %v), %d received, %d accepted, %d advertised",
				pe, r.Running, r.Imported, r.LastError, nb.Address, nb.State, nb.Families, nb.Rtc, nb.Received, nb.Accepted, nb.Advertised,
				routes, lab.BGPRRAddr, families, rtc, received, routes, advertised)
		}
		if uint64(len(r.Learned)) != routes {
			t.Errorf("%s: %d learned paths, want %d", pe, len(r.Learned), routes)
		}
		for _, p := range r.Learned {
			var m, rt int
			if _, err := fmt.Sscanf(p.Rd, "198.18.255.%d:%d", &m, &rt); err != nil || m == n+1 {
				t.Errorf("%s: learned %s %s: RD not another PE's", pe, p.Rd, p.Prefix)
				continue
			}
			tenant := map[int]string{100: "A", 200: "B", 300: "C"}[rt]
			if tenant == "C" && !servesC(n+1, c) {
				t.Errorf("%s: learned %s %s of tenant C, which it does not serve: route target constraint did not filter it", pe, p.Rd, p.Prefix)
			}
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
	families := []string{"vpnv4", "vpnv6"}
	if rtc {
		families = append(families, "rtc")
	}
	for _, fam := range families {
		got, err := l.RR().Received(fam)
		if err != nil {
			t.Fatal(err)
		}
		for n := range lab.BGPPEs {
			// Per PE: A and B in VPNv4, A in VPNv6, a membership per import RT; tenant C adds one of each.
			want := map[string]int{"vpnv4": 2, "vpnv6": 1, "rtc": 2}[fam]
			if fam != "vpnv6" && servesC(n+1, c) {
				want++
			}
			a := lab.BGPPEAddr(n + 1)
			if sessions[a] != "Established" || got[a] != want {
				t.Errorf("reflector: client %s %s, %d %s routes received; want Established, %d", a, sessions[a], got[a], fam, want)
			}
		}
	}
	if kind == "frr" {
		return
	}
	// What gobgpd sends each client: every other PE's VPN routes of the tenants the client serves (with
	// rtc, C's only to pe1 and pe2; without, no PE has C), and with rtc every membership of the cluster.
	for n := 1; n <= len(lab.BGPPEs); n++ {
		want := map[string][]string{}
		for m := 1; m <= len(lab.BGPPEs); m++ {
			if m == n {
				continue
			}
			want["vpnv4"] = append(want["vpnv4"], fmt.Sprintf("198.18.255.%d:100:198.18.%d.0/24 [65000:100]", m, m),
				fmt.Sprintf("198.18.255.%d:200:198.18.%d.0/24 [65000:200]", m, m))
			want["vpnv6"] = append(want["vpnv6"], fmt.Sprintf("198.18.255.%d:100:2001:db8:%d::/64 [65000:100]", m, m))
			if servesC(n, c) && servesC(m, c) {
				want["vpnv4"] = append(want["vpnv4"], fmt.Sprintf("198.18.255.%d:300:%s [65000:300]", m, lab.BGPTenantCPrefix(m)))
			}
		}
		if rtc {
			want["rtc"] = []string{"65000:65000:100 []", "65000:65000:200 []", "65000:65000:300 []"}
		}
		for _, fam := range families {
			out, err := l.RR().AdjOut(lab.BGPPEAddr(n), fam)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for nlri, rts := range out {
				got = append(got, fmt.Sprintf("%s %v", nlri, rts))
			}
			slices.Sort(got)
			slices.Sort(want[fam])
			if !slices.Equal(got, want[fam]) {
				t.Errorf("reflector: %s sent to pe%d: %v\nwant %v", fam, n, got, want[fam])
			}
		}
	}
}

// traffic runs the lab's traffic (ping, UDP, TCP from every host to its tenant's hosts on the other
// two sites; IPv6 pings for tenant A) and checks delivery, isolation and each PE's counters.
func traffic(t *testing.T, l *lab.Lab, when string, count int, c []int) {
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
	// encapsulated towards both (one policy per learned route), dropping nothing. Tenant C (rtc) has
	// a service SID and a learned route on pe1 and pe2 but no hosts: no traffic.
	for n, pe := range lab.BGPPEs {
		var s pb.StatsReply
		if err := protojson.Unmarshal(rep.Stats[pe], &s); err != nil {
			t.Fatal(err)
		}
		sids, policies := 2, 6
		if servesC(n+1, c) {
			sids, policies = 3, 6+len(c)-1
		}
		if len(s.Sids) != sids || len(s.Policies) != policies {
			t.Errorf("%s %s: %d SIDs and %d policies, want %d and %d", when, pe, len(s.Sids), len(s.Policies), sids, policies)
		}
		for _, sd := range s.Sids {
			want := uint64(2 * 3 * count)
			if servesC(n+1, c) && sd.Sid == serviceSID(n+1, "C") {
				want = 0
			}
			if (sd.Sid != serviceSID(n+1, "A") && sd.Sid != serviceSID(n+1, "B") && want != 0) || sd.Action != "End.DT46" ||
				sd.Count.GetPackets() < want {
				t.Errorf("%s %s: SID %s %s counted %d packets, want a service SID, End.DT46, >= %d", when, pe, sd.Sid, sd.Action,
					sd.Count.GetPackets(), want)
			}
		}
		for _, p := range s.Policies {
			if len(p.Segs) == 1 && strings.HasSuffix(p.Segs[0], ":0:3::") && servesC(n+1, c) {
				continue // tenant C's route to the other PE serving C: no traffic
			}
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

// ownPrefixOutranksLearned has pe2 advertise pe1's own 198.18.1.0/24 in tenant A, checks pe1 keeps it
// for itself (and pe3 keeps pe1's path), then withdraws it.
func ownPrefixOutranksLearned(t *testing.T, l *lab.Lab) {
	t.Helper()
	const own = "198.18.1.0/24"
	if err := l.AdvertiseInA("pe2", own); err != nil {
		t.Fatal(err)
	}
	var note, mode string
	deadline := time.Now().Add(lab.BGPConvergeTimeout)
	for ; time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		st, err := l.BGPStatus("pe1")
		if err != nil {
			t.Fatal(err)
		}
		note = ""
		for _, r := range st.GetLearned() {
			if r.GetPrefix() == own && r.GetNextHop() == lab.BGPPEAddr(2) {
				note = r.GetReason()
			}
		}
		out, err := l.Seg6x("pe1", "show", "routes", "--tenant", "A", "--prefix", own, "--json")
		if err != nil {
			t.Fatal(err)
		}
		mode = ""
		if strings.Contains(out, `"mode": "pass"`) && strings.Contains(out, `"origin": "bgp"`) {
			mode = "pass"
		}
		if note != "" && mode == "pass" {
			break
		}
	}
	if !strings.Contains(note, `tenant "A" holds 198.18.1.0/24 itself`) || mode != "pass" {
		t.Errorf("pe1 after pe2 advertised its %s: learned path note %q, route mode %q (want the kernel's, pass)", own, note, mode)
	}
	if got, err := l.Learned("pe3"); err != nil || got["A"][own] != serviceSID(1, "A") {
		t.Errorf("pe3's route to %s: %q (%v), want pe1's path (%s)", own, got["A"][own], err, serviceSID(1, "A"))
	}
	if err := l.AdvertiseInA("pe2"); err != nil {
		t.Fatal(err)
	}
	for deadline = time.Now().Add(lab.BGPWithdrawTimeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		got, err := l.Learned("pe1")
		if _, still := got["A"][own]; err == nil && !still {
			return
		}
	}
	t.Errorf("pe1 still holds a route of origin bgp for %s after pe2 withdrew it", own)
}
