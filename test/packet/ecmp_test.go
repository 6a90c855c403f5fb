package packet

// ecmp_test.go: FIB lookups over ECMP routes. The headend's outer lookup carries the flow label it
// writes (and the inner ports), so flows of one policy spread over the next hops of a multipath route
// the way the kernel's multipath hash spreads them, with the next-hop cache on and off; under the L3
// hash policy each flow's path is the one the kernel itself picks when it forwards that packet.

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"os/exec"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/testsupport"
)

var (
	macVia2 = []byte{0x02, 0, 0, 0, 0x01, 0x02} // fc00:12::2, the fixtures' fabric neighbor
	macVia3 = []byte{0x02, 0, 0, 0, 0x01, 0x33} // fc00:12::3, the second next hop
)

// ecmpFabric makes fc00:2::/48 (the first SID of the fixtures' headend policies) a two-way multipath
// route on fab0 for the test's duration and sets the IPv6 multipath hash policy; it restores both.
func ecmpFabric(t *testing.T, policy string) {
	t.Helper()
	old, err := testsupport.Output("sysctl", "-n", "net.ipv6.fib_multipath_hash_policy")
	if err != nil {
		t.Fatal(err)
	}
	testsupport.MustRun(t, "sysctl", "-qw", "net.ipv6.fib_multipath_hash_policy="+policy)
	testsupport.MustRun(t, "ip", "-6", "neigh", "replace", "fc00:12::3", "lladdr", "02:00:00:00:01:33", "dev", "fab0", "nud", "permanent")
	testsupport.MustRun(t, "ip", "-6", "route", "replace", "fc00:2::/48", "nexthop", "via", "fc00:12::2", "dev", "fab0",
		"nexthop", "via", "fc00:12::3", "dev", "fab0")
	bumpNhGen(t) // what the daemon does on the route change it hears over netlink
	t.Cleanup(func() {
		defer bumpNhGen(t)
		_ = exec.Command("ip", "-6", "route", "replace", "fc00:2::/48", "via", "fc00:12::2", "dev", "fab0").Run()
		_ = exec.Command("ip", "-6", "neigh", "del", "fc00:12::3", "dev", "fab0").Run()
		_ = exec.Command("sysctl", "-qw", "net.ipv6.fib_multipath_hash_policy="+string(bytes.TrimSpace([]byte(old)))).Run()
	})
}

// bumpNhGen makes every cached next hop stale, as the daemon does on a route, link or neighbor change.
func bumpNhGen(t *testing.T) {
	t.Helper()
	var gen uint64
	m := dataplane.MapsOf(rig.Store).NhGen
	if err := m.Lookup(uint32(0), &gen); err != nil {
		t.Fatal(err)
	}
	if err := m.Update(uint32(0), gen+1, 0); err != nil {
		t.Fatal(err)
	}
}

// udpFlow is the fixture encap1_v4_udp's frame (VLAN-tagged IPv4 UDP from port 1000) from source port
// sport instead.
func udpFlow(f *fixtures.Fixture, sport uint16) []byte {
	in := append([]byte(nil), f.Input...)
	binary.BigEndian.PutUint16(in[14+4+20:], sport) // Ethernet, 802.1Q, IPv4, then UDP
	binary.BigEndian.PutUint16(in[14+4+20+6:], 0)   // no UDP checksum
	return in
}

// encapFlows runs n flows of f through prog and returns each one's encapsulated frame.
func encapFlows(t *testing.T, prog *ebpf.Program, f *fixtures.Fixture, n int) [][]byte {
	t.Helper()
	outs := make([][]byte, n)
	for i := range outs {
		g := *f
		g.Input = udpFlow(f, uint16(1000+i))
		res, err := rig.Run(prog, &g, 1)
		if err != nil {
			t.Fatal(err)
		}
		if dataplane.Actions[res.Action] != "XDP_REDIRECT" {
			t.Fatalf("flow %d: %s, want XDP_REDIRECT", i, dataplane.Actions[res.Action])
		}
		outs[i] = res.Output
	}
	return outs
}

// split counts the frames per next hop (by destination MAC); a frame to any other MAC fails the test.
func split(t *testing.T, outs [][]byte) (via2, via3 int) {
	t.Helper()
	for i, o := range outs {
		switch {
		case bytes.Equal(o[:6], macVia2):
			via2++
		case bytes.Equal(o[:6], macVia3):
			via3++
		default:
			t.Fatalf("flow %d left to %x, neither next hop", i, o[:6])
		}
	}
	return via2, via3
}

// kernelChoice sends frame (an encapsulated packet as seg6x wrote it) into fab0 from its peer, addressed
// to fab0, so that the kernel forwards it over the same multipath route, and returns the destination
// MAC of the copy the kernel sends out of fab0 (read on fab1).
func kernelChoice(t *testing.T, sock int, fab1 *net.Interface, frame []byte) []byte {
	t.Helper()
	in := append([]byte(nil), frame...)
	copy(in[0:6], []byte{0x02, 0, 0, 0, 0x01, 0x00}) // fab0's address
	copy(in[6:12], []byte{0x02, 0, 0, 0, 0x01, 0x77})
	sa := &unix.SockaddrLinklayer{Ifindex: fab1.Index, Halen: 6}
	copy(sa.Addr[:], in[0:6])
	if err := unix.Sendto(sock, in, 0, sa); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		n, from, err := unix.Recvfrom(sock, buf, 0)
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ll, ok := from.(*unix.SockaddrLinklayer)
		if !ok || ll.Pkttype == unix.PACKET_OUTGOING || n < len(in) {
			continue
		}
		// The forwarded copy: same outer addresses and flow label, hop limit one less.
		if bytes.Equal(buf[14:18], in[14:18]) && bytes.Equal(buf[22:54], in[22:54]) && buf[21] == in[21]-1 {
			return append([]byte(nil), buf[:6]...)
		}
	}
	t.Fatalf("the kernel did not forward the frame %x", in[:60])
	return nil
}

// TestECMPHeadendFollowsTheKernel: 256 UDP flows of one tenant route, encapsulated towards a first SID
// whose route has two next hops. Under the L3 hash policy (0) each flow leaves through the next hop the
// kernel picks when it forwards that same encapsulated packet; under the L4 policy (1) the flows spread
// by their inner ports. Under both each next hop carries 35-65% of the flows. The next-hop cache (per policy and flow)
// gives every flow the same next hop as the FIB, filled and answered.
func TestECMPHeadendFollowsTheKernel(t *testing.T) {
	const flows = 256
	cached, _, f := loadWithCache(t, time.Minute, "encap1_v4_udp")
	defer cached.Close()
	fab1, err := net.InterfaceByName("fab1")
	if err != nil {
		t.Fatal(err)
	}
	sock, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_IPV6)))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sock)
	if err := unix.Bind(sock, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_IPV6), Ifindex: fab1.Index}); err != nil {
		t.Fatal(err)
	}
	tv := unix.Timeval{Usec: 200000}
	if err := unix.SetsockoptTimeval(sock, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}

	for _, policy := range []string{"0", "1"} {
		t.Run("hash-policy-"+policy, func(t *testing.T) {
			defer testsupport.OnOneCPU(t)() // the cache is per CPU: fill and answer on the same one
			ecmpFabric(t, policy)
			plain := encapFlows(t, nil, f, flows)
			filled := encapFlows(t, cached.Seg6xXdp, f, flows)
			answered := encapFlows(t, cached.Seg6xXdp, f, flows) // every flow's slot holds its answer now
			for i := range plain {
				if !bytes.Equal(plain[i], filled[i]) || !bytes.Equal(plain[i], answered[i]) {
					t.Fatalf("flow %d: cache off %x, filling %x, answered from it %x", i, plain[i][:6], filled[i][:6], answered[i][:6])
				}
			}
			labels := map[string]bool{}
			for _, o := range plain {
				labels[string(o[15:18])] = true
			}
			if len(labels) < flows-2 {
				t.Fatalf("%d distinct outer flow labels over %d flows", len(labels), flows)
			}
			via2, via3 := split(t, plain)
			t.Logf("hash policy %s: %d flows via fc00:12::2, %d via fc00:12::3", policy, via2, via3)
			if via2*100 < flows*35 || via3*100 < flows*35 {
				t.Fatalf("hash policy %s: %d / %d flows over the two next hops: not spread", policy, via2, via3)
			}
			if policy != "0" {
				return // the kernel forwarding an encapsulated packet hashes no ports: its flows share one path
			}
			for i, o := range plain {
				if k := kernelChoice(t, sock, fab1, o); !bytes.Equal(k, o[:6]) {
					t.Fatalf("flow %d (label %x): seg6x sent it to %x, the kernel forwards it to %x", i, o[15:18], o[:6], k)
				}
			}
		})
	}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// TestKernelPathNamesEveryNextHop: the path `seg6x show routes` gives a route towards a multipath
// first SID names the interface of every next hop and the smallest MTU among them (a flow may take
// any); a single-path route keeps its one egress.
func TestKernelPathNamesEveryNextHop(t *testing.T) {
	src, sid := netip.MustParseAddr("fc00:1::1"), netip.MustParseAddr("fc00:2::64")
	p, err := state.KernelPath(sid, src)
	if err != nil {
		t.Fatal(err)
	}
	if p.Egress != "fab0" || p.MTU != 3500 {
		t.Fatalf("single path: %+v, want fab0 with MTU 3500", p)
	}
	testsupport.MustRun(t, "ip", "-6", "route", "replace", "fc00:2::/48", "nexthop", "via", "fc00:12::2", "dev", "fab0",
		"nexthop", "via", "fc00:f::2", "dev", "tf0")
	defer func() {
		_ = exec.Command("ip", "-6", "route", "replace", "fc00:2::/48", "via", "fc00:12::2", "dev", "fab0").Run()
	}()
	if p, err = state.KernelPath(sid, src); err != nil {
		t.Fatal(err)
	}
	if p.Egress != "fab0,tf0" || p.MTU != 1500 {
		t.Fatalf("two next hops: %+v, want fab0,tf0 with MTU 1500 (tf0's)", p)
	}
}

// TestECMPAvoidsNextHopWithoutNeighbor: one next hop of the multipath route has no usable neighbor
// entry (FAILED, or gone: what the kernel knows of a neighbor that stopped answering). Every flow is
// encapsulated and sent to the other next hop by the fast path, none handed to the kernel (which would
// send the flows hashed to the dead next hop there, to be lost), with the cache off and on; once the
// neighbor is back, the flows spread over both again.
func TestECMPAvoidsNextHopWithoutNeighbor(t *testing.T) {
	defer testsupport.OnOneCPU(t)()
	const flows = 64
	cached, _, f := loadWithCache(t, time.Minute, "encap1_v4_udp")
	defer cached.Close()
	ecmpFabric(t, "0")
	encapFlows(t, cached.Seg6xXdp, f, flows) // the cache holds both next hops
	testsupport.MustRun(t, "ip", "-6", "neigh", "del", "fc00:12::3", "dev", "fab0")
	bumpNhGen(t) // the daemon's answer to the neighbor change
	for _, prog := range []*ebpf.Program{nil, cached.Seg6xXdp, cached.Seg6xXdp} {
		if via2, via3 := split(t, encapFlows(t, prog, f, flows)); via2 != flows || via3 != 0 {
			t.Fatalf("fc00:12::3 without a neighbor: %d flows via fc00:12::2, %d via fc00:12::3", via2, via3)
		}
	}
	testsupport.MustRun(t, "ip", "-6", "neigh", "replace", "fc00:12::3", "lladdr", "02:00:00:00:01:33", "dev", "fab0", "nud", "permanent")
	bumpNhGen(t)
	for _, prog := range []*ebpf.Program{nil, cached.Seg6xXdp} {
		if via2, via3 := split(t, encapFlows(t, prog, f, flows)); via2 == 0 || via3 == 0 {
			t.Fatalf("fc00:12::3 back: %d flows via fc00:12::2, %d via fc00:12::3", via2, via3)
		}
	}
}

// TestECMPTransitAvoidsNextHopWithoutNeighbor: End forwards towards a next SID whose route has two next
// hops. Flows (outer flow labels) spread over both; with one next hop's neighbor gone every flow goes
// to the other, none to the kernel, the cache off and on.
func TestECMPTransitAvoidsNextHopWithoutNeighbor(t *testing.T) {
	defer testsupport.OnOneCPU(t)()
	const flows = 64
	cached, _, f := loadWithCache(t, time.Minute, "end") // next SID fc00:3::64, the outer flow label at bytes 15..17
	defer cached.Close()
	testsupport.MustRun(t, "ip", "-6", "neigh", "replace", "fc00:12::3", "lladdr", "02:00:00:00:01:33", "dev", "fab0", "nud", "permanent")
	testsupport.MustRun(t, "ip", "-6", "route", "replace", "fc00:3::/48", "nexthop", "via", "fc00:12::2", "dev", "fab0",
		"nexthop", "via", "fc00:12::3", "dev", "fab0")
	bumpNhGen(t)
	defer func() {
		_ = exec.Command("ip", "-6", "route", "replace", "fc00:3::/48", "via", "fc00:12::2", "dev", "fab0").Run()
		_ = exec.Command("ip", "-6", "neigh", "del", "fc00:12::3", "dev", "fab0").Run()
		bumpNhGen(t)
	}()
	run := func(prog *ebpf.Program) [][]byte {
		t.Helper()
		outs := make([][]byte, flows)
		for i := range outs {
			g := *f
			g.Input = append([]byte(nil), f.Input...)
			g.Input[15] = g.Input[15]&0xF0 | byte(i>>8)&0x0F
			g.Input[16], g.Input[17] = byte(i*37), byte(i*101+1)
			res, err := rig.Run(prog, &g, 1)
			if err != nil {
				t.Fatal(err)
			}
			if dataplane.Actions[res.Action] != "XDP_REDIRECT" {
				t.Fatalf("flow %d: %s, want XDP_REDIRECT", i, dataplane.Actions[res.Action])
			}
			outs[i] = res.Output
		}
		return outs
	}
	if via2, via3 := split(t, run(nil)); via2 == 0 || via3 == 0 {
		t.Fatalf("both next hops up: %d flows via fc00:12::2, %d via fc00:12::3", via2, via3)
	}
	testsupport.MustRun(t, "ip", "-6", "neigh", "del", "fc00:12::3", "dev", "fab0")
	bumpNhGen(t)
	for _, prog := range []*ebpf.Program{nil, cached.Seg6xXdp, cached.Seg6xXdp} {
		if via2, via3 := split(t, run(prog)); via2 != flows || via3 != 0 {
			t.Fatalf("fc00:12::3 without a neighbor: %d flows via fc00:12::2, %d via fc00:12::3", via2, via3)
		}
	}
}
