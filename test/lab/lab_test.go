// Package labtest runs the namespace lab end to end: real ping, UDP and TCP in both directions for
// two tenants with overlapping IPv4 space (tenant A also IPv6), through H.Encaps(.Red), End, End.DT46
// and End.DX4. Each test builds its own lab (namespaces named after the test and this process) and
// shares nothing with the others: they run in parallel (as many at once as -parallel allows).
package labtest

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/tools/lab"
	"github.com/seg6x/seg6x/tools/testsupport"
	"google.golang.org/protobuf/encoding/protojson"
)

// binaries builds what a lab runs: seg6x on its routers, seg6x-lab's helpers on its hosts.
func binaries(t *testing.T) (bin, tool string) {
	return testsupport.BuildSeg6x(t), testsupport.BuildCmd(t, "seg6x-lab")
}

// labTraffic brings a lab up (namespaces named from prefix and this process), runs the demo's
// traffic with count packets per flow, and tears it down when the test ends.
func labTraffic(t *testing.T, prefix string, o lab.Options, count int) (*lab.Lab, *lab.Report) {
	bin, tool := binaries(t)
	l := lab.NewWith(fmt.Sprintf("%s%d", prefix, os.Getpid()%100000), bin, tool, o, testWriter{t})
	t.Cleanup(func() { l.Down() })
	if err := l.Up(); err != nil {
		t.Fatal(err)
	}
	rep, err := l.Traffic(count)
	if err != nil {
		t.Fatal(err)
	}
	return l, rep
}

func TestLab(t *testing.T) {
	t.Parallel()
	const count = 5
	l, rep := labTraffic(t, "s6t", lab.Options{}, count)
	// Delivery, isolation (no answer from and no message to the other tenant), VLAN tags as bytes on
	// every access port (the host side counts tagged frames and drops anything else).
	for _, p := range rep.Problems() {
		t.Error(p)
	}
	if len(rep.Flows) != 4 {
		t.Fatalf("%d flows, want 4", len(rep.Flows))
	}

	// Each behavior did the work: both PEs encapsulated for both tenants and decapsulated with
	// End.DT46 (tenant A) and End.DX4 (tenant B); the transit node ran End on every packet.
	for _, node := range []string{"pe1", "pe2"} {
		var s pb.StatsReply
		if err := protojson.Unmarshal(rep.Stats[node], &s); err != nil {
			t.Fatal(err)
		}
		// Tenant A's IPv4 and IPv6 routes share the segment list but not the policy (the prebuilt
		// header's next header differs); tenant B has one. Per segment list, the IPv4 traffic counts.
		if len(s.Policies) != 3 {
			t.Errorf("%s: %d policies, want 3 (tenant A IPv4 and IPv6, tenant B)", node, len(s.Policies))
		}
		perSegs := map[string]uint64{}
		for _, p := range s.Policies {
			perSegs[strings.Join(p.Segs, ",")] += p.Count.GetPackets()
		}
		if len(perSegs) != 2 {
			t.Errorf("%s: %d segment lists, want 2 (one per tenant)", node, len(perSegs))
		}
		for segs, n := range perSegs {
			if n < 3*count {
				t.Errorf("%s: policies of %s counted %d packets, want >= %d", node, segs, n, 3*count)
			}
		}
		for _, sd := range s.Sids {
			if sd.Count.GetPackets() < 3*count {
				t.Errorf("%s: SID %s (%s) counted %d packets, want >= %d", node, sd.Sid, sd.Action, sd.Count.GetPackets(), 3*count)
			}
		}
		for name, c := range s.Reasons {
			if name[:4] == "DROP" && c.GetPackets() > 0 {
				t.Errorf("%s: %d packets dropped with %s", node, c.GetPackets(), name)
			}
		}
	}
	var p pb.StatsReply
	if err := protojson.Unmarshal(rep.Stats["p"], &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Sids) != 1 || p.Sids[0].Count.GetPackets() < 12*count {
		t.Errorf("transit End counted %v, want >= %d packets", p.Sids, 12*count)
	}
	// The bulk transfers (checked in rep.Problems) carried full-sized segments both ways: tenant A's
	// clamped to the tunnel at the SYN, tenant B's after path MTU discovery from the PEs' ICMP errors.
	// The routers' program run time was read around each (statistics on while they ran).
	for _, b := range rep.Bulk {
		t.Logf("bulk TCP tenant %s %s<->%s: %d MB each way, %.0f / %.0f Mbit/s, seg6x programs %.1f%% of a CPU",
			b.Tenant, b.From, b.To, b.Bytes>>20, b.UpMbps, b.DownMbps, 100*b.RouterCPU)
		if b.RouterCPU <= 0 {
			t.Errorf("bulk TCP tenant %s: no program run time counted on the routers", b.Tenant)
		}
	}
	tunnelMTU(t, l)
	fragmented(t, l)
	ipv6Tenant(t, l)
	decapTooBig(t, l)

	// Last (it detaches seg6x): the demo's reference, plain kernel routing on the same namespaces.
	plain, err := l.PlainBulk()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("plain routing %s<->%s: %.0f / %.0f Mbit/s", plain.From, plain.To, plain.UpMbps, plain.DownMbps)
	if !plain.SentOK || !plain.RecvOK || plain.Error != "" {
		t.Errorf("plain routing bulk TCP: %+v, want every byte delivered and checked both ways", plain)
	}
}

// ipv6Tenant: tenant A is dual-stack (End.DT46 on both PEs). IPv6 pings cross both ways; one above
// the tunnel MTU (1420) gets an ICMPv6 packet too big from the tenant's IPv6 gateway, which the host
// then holds in its route cache.
func ipv6Tenant(t *testing.T, l *lab.Lab) {
	for _, p := range [][2]string{{"hA1", "2001:db8:2::2"}, {"hA2", "2001:db8:1::2"}} {
		out, err := l.Exec(p[0], "ping", "-6", "-c", "2", "-W", "2", p[1])
		if err != nil || !strings.Contains(out, "64 bytes from "+p[1]) {
			t.Errorf("%s: ping -6 %s: %v\n%s", p[0], p[1], err, out)
		}
	}
	if _, err := l.IP("hA1", "-6", "route", "flush", "cache"); err != nil {
		t.Fatal(err)
	}
	out, _ := l.Exec("hA1", "ping", "-6", "-c", "1", "-W", "2", "-M", "do", "-s", "1400", "2001:db8:2::2")
	if msg := "From 2001:db8:1::1 icmp_seq=1 Packet too big: mtu=1420"; !strings.Contains(out, msg) {
		t.Errorf("hA1: ping -6 -M do -s 1400: want %q, got:\n%s", msg, out)
	}
	out, err := l.IP("hA1", "-6", "route", "get", "2001:db8:2::2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, " mtu 1420") {
		t.Errorf("hA1: IPv6 route cache holds no mtu 1420:\n%s", out)
	}
	_, _ = l.IP("hA1", "-6", "route", "flush", "cache")
}

// slowPath returns a router's slow path counters (its daemon's).
func slowPath(t *testing.T, l *lab.Lab, node string) *pb.SlowPath {
	t.Helper()
	s := stats(t, l, node) // boundary_test.go
	if !s.GetSlowPath().GetRunning() {
		t.Fatalf("%s: the daemon's slow path is not running: %v", node, s.GetSlowPath())
	}
	return s.GetSlowPath()
}

// fragmented: a 1500-byte IPv4 packet without DF, too big for both tenants' tunnels, is delivered:
// pe1 fragments it (the echo request) and pe2 the reply, each fragment then fits and is encapsulated.
func fragmented(t *testing.T, l *lab.Lab) {
	before := slowPath(t, l, "pe1")
	for _, h := range lab.Hosts() {
		if h.Site != 1 {
			continue
		}
		// The host must send 1500-byte packets, not fragment them itself for a path MTU it learned.
		if _, err := l.IP(h.Name, "route", "flush", "cache"); err != nil {
			t.Fatal(err)
		}
		out, err := l.Exec(h.Name, "ping", "-c", "3", "-W", "2", "-M", "dont", "-s", "1472", "198.18.2.2")
		if err != nil || !strings.Contains(out, "1480 bytes from 198.18.2.2") {
			t.Errorf("%s: ping -M dont -s 1472: %v\n%s", h.Name, err, out)
		}
	}
	after := slowPath(t, l, "pe1")
	if after.Fragmented < before.Fragmented+6 || after.Fragments < before.Fragments+12 || after.Failed != before.Failed {
		t.Errorf("pe1 slow path: %d -> %d packets fragmented into %d -> %d fragments, %d -> %d failed; want 6 more "+
			"packets in 12 more fragments, none failed", before.Fragmented, after.Fragmented, before.Fragments,
			after.Fragments, before.Failed, after.Failed)
	}
}

// decapTooBig: with pe2's access links at MTU 1400, a 1408-byte packet with DF fits the tunnel but not
// the tenant port after decapsulation: pe2 answers "frag needed" (MTU 1400) from the tenant's gateway,
// through the tenant's own tunnel back to the sender, whose route cache then holds the MTU.
func decapTooBig(t *testing.T, l *lab.Lab) {
	for _, dev := range []string{"ta", "tb"} {
		if _, err := l.IP("pe2", "link", "set", dev, "mtu", "1400"); err != nil {
			t.Fatal(err)
		}
		defer l.IP("pe2", "link", "set", dev, "mtu", "1500")
	}
	before := slowPath(t, l, "pe2")
	for _, h := range lab.Hosts() {
		if h.Site != 1 {
			continue
		}
		if _, err := l.IP(h.Name, "route", "flush", "cache"); err != nil {
			t.Fatal(err)
		}
		out, _ := l.Exec(h.Name, "ping", "-c", "1", "-W", "2", "-M", "do", "-s", "1380", "198.18.2.2")
		if msg := "From 198.18.2.1 icmp_seq=1 Frag needed and DF set (mtu = 1400)"; !strings.Contains(out, msg) {
			t.Errorf("%s: ping -M do -s 1380 with pe2's access MTU 1400: want %q, got:\n%s", h.Name, msg, out)
		}
		out, err := l.IP(h.Name, "route", "get", "198.18.2.2")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, " mtu 1400") {
			t.Errorf("%s: route cache holds no mtu 1400:\n%s", h.Name, out)
		}
		_, _ = l.IP(h.Name, "route", "flush", "cache")
	}
	// IPv6 (tenant A): a packet too big, from the tenant's IPv6 gateway at pe2.
	out, _ := l.Exec("hA1", "ping", "-6", "-c", "1", "-W", "2", "-M", "do", "-s", "1360", "2001:db8:2::2")
	if msg := "From 2001:db8:2::1 icmp_seq=1 Packet too big: mtu=1400"; !strings.Contains(out, msg) {
		t.Errorf("hA1: ping -6 -M do -s 1360 with pe2's access MTU 1400: want %q, got:\n%s", msg, out)
	}
	_, _ = l.IP("hA1", "-6", "route", "flush", "cache")
	if after := slowPath(t, l, "pe2"); after.Injected < before.Injected+3 {
		t.Errorf("pe2 slow path relayed %d answers, want 3", after.Injected-before.Injected)
	}
}

// showRoutes is `seg6x show routes --json` on node.
func showRoutes(t *testing.T, l *lab.Lab, node string) []model.Route {
	t.Helper()
	out, err := l.Seg6x(node, "show", "routes", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var routes []model.Route
	if err := json.Unmarshal([]byte(out), &routes); err != nil {
		t.Fatal(err)
	}
	return routes
}

// tunnelMTU checks, in the same lab run, what a host learns from a packet too big for the tunnel:
// `ping -M do` gets "frag needed" from the tenant's gateway with the tunnel MTU that `seg6x show
// routes` states (fabric MTU 1500 minus tenant A's 80 and tenant B's 64 bytes of outer header), and
// the host's route cache then holds that MTU.
func tunnelMTU(t *testing.T, l *lab.Lab) {
	routes := showRoutes(t, l, "pe1")
	want := map[string]int{"A": 1420, "B": 1436}
	for _, r := range routes {
		if r.TunnelMTU != want[r.Tenant] || r.Egress != "fab" {
			t.Errorf("pe1 route %s tenant %s: egress %q tunnel MTU %d, want fab %d", r.Prefix, r.Tenant, r.Egress, r.TunnelMTU, want[r.Tenant])
		}
	}
	for _, h := range lab.Hosts() {
		if h.Site != 1 {
			continue
		}
		mtu := want[h.Tenant]
		// Forget what the bulk transfer taught the host, then send 8 bytes more than fits (after the
		// 8-byte ICMP echo and the 20-byte IPv4 headers).
		if _, err := l.IP(h.Name, "route", "flush", "cache"); err != nil {
			t.Fatal(err)
		}
		size := mtu - 28 + 8
		out, _ := l.Exec(h.Name, "ping", "-c", "1", "-W", "1", "-M", "do", "-s", strconv.Itoa(size), "198.18.2.2")
		if msg := fmt.Sprintf("From 198.18.1.1 icmp_seq=1 Frag needed and DF set (mtu = %d)", mtu); !strings.Contains(out, msg) {
			t.Errorf("%s: ping -M do -s %d: want %q, got:\n%s", h.Name, size, msg, out)
		}
		out, err := l.IP(h.Name, "route", "get", "198.18.2.2")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, fmt.Sprintf(" mtu %d", mtu)) {
			t.Errorf("%s: route cache holds no mtu %d:\n%s", h.Name, mtu, out)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b))
	return len(b), nil
}
