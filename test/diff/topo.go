package difftest

// topo.go: one differential topology: src namespace -> DUT (kernel SRv6 config) -> dst namespace,
// with fixed MAC addresses so that two copies produce comparable frames.

import (
	"fmt"
	"strings"

	"github.com/seg6x/seg6x/tools/testsupport"
)

var (
	macD0 = "02:d0:00:00:00:01" // DUT ingress
	macS0 = "02:d0:00:00:00:02" // source host
	macD1 = "02:d0:00:00:00:03" // DUT egress
	macE0 = "02:d0:00:00:00:04" // next hop / capture
	macE1 = "02:d0:00:00:00:05" // a second neighbor on d1 (uA's adjacency), also received on e0
)

func segList(n, from int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("fc00:e::%x", from+i)
	}
	return strings.Join(s, ",")
}

// kernelConfig is the DUT's SRv6 configuration, as an operator would type it (ip ...).
func kernelConfig() []string {
	return []string{
		"sr tunsrc set fc00:a0::1",
		"route add 198.18.20.0/24 encap seg6 mode encap segs " + segList(1, 1) + " dev d1",
		"route add 198.18.21.0/24 encap seg6 mode encap segs " + segList(2, 1) + " dev d1",
		"route add 198.18.22.0/24 encap seg6 mode encap segs " + segList(4, 1) + " dev d1",
		"route add 198.18.23.0/24 encap seg6 mode encap segs " + segList(16, 1) + " dev d1",
		"route add 198.18.24.0/24 encap seg6 mode encap.red segs " + segList(1, 1) + " dev d1",
		"route add 198.18.25.0/24 encap seg6 mode encap.red segs " + segList(3, 1) + " dev d1",
		"route add 198.18.26.0/24 via 198.19.0.2 dev d1", // plain route, no encap
		// dev d0: the kernel takes the outer source on d0 (without tunsrc), though the segment is routed out of d1.
		"route add 198.18.27.0/24 encap seg6 mode encap segs " + segList(2, 1) + " dev d0",
		"route add 198.18.20.128/25 via 198.19.0.2 dev d1", // more specific than a seg6 route
		"-6 route add 2001:db8:20::/48 encap seg6 mode encap segs " + segList(1, 1) + " dev d1",
		"-6 route add 2001:db8:21::/48 encap seg6 mode encap.red segs " + segList(2, 1) + " dev d1",
		"-6 route add fc00:d::1/128 encap seg6local action End dev d0",
		"-6 route add fc00:d::2/128 encap seg6local action End.X nh6 fc00:e1::2 dev d0",
		"-6 route add fc00:d::3/128 encap seg6local action End.T table 200 dev d0",
		"-6 route add fc00:d::4/128 encap seg6local action End.DX4 nh4 198.19.0.3 dev d0",
		"-6 route add fc00:d::5/128 encap seg6local action End.DX6 nh6 fc00:e1::2 dev d0",
		"-6 route add fc00:d::6/128 encap seg6local action End.DT6 table 100 dev d0",
		"-6 route add fc00:d::7/128 encap seg6local action End flavors psp dev d0",
		"-6 route add fc00:d::8/128 encap seg6local action End.B6.Encaps srh segs fc00:e::a,fc00:e::b dev d0",
		// uSID (NEXT-C-SID): this node's uN in locator block fcbb:0::/32 (node 0x0100), its uA
		// (function 0xe001, to the second neighbor on d1), a uN that also asks for PSP (the kernel
		// runs next-csid only), and a uN in a 48-bit block 2001:db8:0::/48.
		"-6 route add fcbb:0:100::/48 encap seg6local action End flavors next-csid lblen 32 nflen 16 dev d0",
		"-6 route add fcbb:0:100:e001::/64 encap seg6local action End.X nh6 fc00:e1::3 flavors next-csid lblen 32 nflen 32 dev d0",
		"-6 route add fcbb:0:101::/48 encap seg6local action End flavors psp,next-csid lblen 32 nflen 16 dev d0",
		"-6 route add 2001:db8:0:100::/64 encap seg6local action End flavors next-csid lblen 48 nflen 16 dev d0",
	}
}

// topo is one copy: namespaces <p>-src, <p>-dut, <p>-dst; mtu (0: 1500 in, 3000 out) on every link;
// noTunsrc leaves `ip sr tunsrc` unset (the kernel then selects each outer source).
type topo struct {
	p        string
	mtu      int
	noTunsrc bool
}

func (t topo) ns(role string) string { return t.p + "-" + role }

func (t topo) up() error {
	t.down()
	if err := testsupport.AddNetns(t.ns("src"), t.ns("dut"), t.ns("dst")); err != nil {
		return err
	}
	in, out := "", " mtu 3000"
	if t.mtu > 0 {
		in, out = fmt.Sprintf(" mtu %d", t.mtu), fmt.Sprintf(" mtu %d", t.mtu)
	}
	steps := []string{
		"link add d0 address " + macD0 + in + " type veth peer name s0 address " + macS0 + in + " netns " + t.ns("src"),
		"link add d1 address " + macD1 + out + " type veth peer name e0 address " + macE0 + out + " netns " + t.ns("dst"),
		"link set lo up", "link set d0 up", "link set d1 up",
		"addr add 198.18.0.1/24 dev d0", "addr add 198.19.0.1/24 dev d1",
		"-6 addr add fc00:a0::1/64 dev d0 nodad", "-6 addr add fc00:e1::1/64 dev d1 nodad",
		"neigh add 198.18.0.2 lladdr " + macS0 + " dev d0 nud permanent",
		"-6 neigh add fc00:a0::2 lladdr " + macS0 + " dev d0 nud permanent",
		"neigh add 198.19.0.2 lladdr " + macE0 + " dev d1 nud permanent",
		"-6 neigh add fc00:e1::2 lladdr " + macE0 + " dev d1 nud permanent",
		"-6 neigh add fc00:e1::3 lladdr " + macE1 + " dev d1 nud permanent",
		"-6 route add fc00:e::/48 via fc00:e1::2 dev d1",
		"-6 route add fc00:e::/48 via fc00:e1::2 dev d1 table 200",
		"route add 198.19.1.0/24 via 198.19.0.2 dev d1",
		"route add 198.19.0.3/32 via 198.19.0.2 dev d1",
		"-6 route add 2001:db8:30::/48 via fc00:e1::2 dev d1",
		"-6 route add 2001:db8:31::/48 via fc00:e1::2 dev d1 table 100",
		// Where shifted uSID destinations go (End with NEXT-C-SID forwards by the main table).
		"-6 route add fcbb::/16 via fc00:e1::2 dev d1",
		"-6 route add 2001:db8::/48 via fc00:e1::2 dev d1",
	}
	for _, line := range kernelConfig() {
		if !t.noTunsrc || !strings.HasPrefix(line, "sr tunsrc ") {
			steps = append(steps, line)
		}
	}
	if err := testsupport.IPLines(t.ns("dut"), steps...); err != nil {
		return err
	}
	if err := testsupport.Sysctl(t.ns("dut"), "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.conf.all.forwarding=1",
		"net.ipv6.conf.all.seg6_enabled=1", "net.ipv6.conf.d0.seg6_enabled=1", "net.ipv4.conf.d0.forwarding=1",
		"net.ipv6.conf.d0.forwarding=1", "net.ipv4.conf.d1.forwarding=1", "net.ipv6.conf.d1.forwarding=1"); err != nil {
		return err
	}
	if err := testsupport.IPLines(t.ns("src"), "link set s0 up"); err != nil {
		return err
	}
	if err := testsupport.IPLines(t.ns("dst"), "link set e0 up"); err != nil {
		return err
	}
	// e0 receives what seg6x redirects into d1 only with GRO on (veth NAPI).
	_, err := testsupport.NetnsExec(t.ns("dst"), "ethtool", "-K", "e0", "gro", "on")
	return err
}

func (t topo) down() { testsupport.DelNetns(t.ns("src"), t.ns("dut"), t.ns("dst")) }
