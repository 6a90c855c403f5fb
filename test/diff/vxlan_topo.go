package difftest

// vxlan_topo.go: one copy of the VXLAN differential topology (issue 16): a tenant namespace (t0) on
// the DUT's bridge port p0, the DUT with bridge br0 = {p0, vx0} and its underlay u0 (MTU 1500), and a
// far-side namespace (e0) standing for the remote VTEP 2001:db8:1::b: it receives the encapsulated
// frames and sends the VXLAN ones. Static forwarding entries only (no learning changes anything), MAC
// addresses fixed, so that two copies produce comparable frames.

import (
	"fmt"

	"github.com/seg6x/seg6x/internal/testsupport"
)

var (
	vxMacT0    = "02:d1:00:00:00:01" // tenant host (a static MAC on p0)
	vxMacP0    = "02:d1:00:00:00:02"
	vxMacU0    = "02:d1:00:00:00:03" // DUT underlay
	vxMacE0    = "02:d1:00:00:00:04" // the remote VTEP's side of the underlay
	vxMacR     = "02:d1:00:00:00:b1" // a tenant MAC behind the remote VTEP
	vxMacOther = "02:d1:00:00:00:b2" // a MAC nobody has: flooded
	vxLocal    = "2001:db8:1::a"
	vxRemote   = "2001:db8:1::b"
)

type vxTopo struct{ p string }

func (t vxTopo) ns(role string) string { return t.p + "-" + role }

func (t vxTopo) up() error {
	t.down()
	if err := testsupport.AddNetns(t.ns("ten"), t.ns("dut"), t.ns("far")); err != nil {
		return err
	}
	// IPv6 only where the underlay needs it: no link-local addresses, router solicitations or MLD
	// reports crossing the overlay between the frames under test.
	for _, ns := range []string{t.ns("ten"), t.ns("dut"), t.ns("far")} {
		if err := testsupport.Sysctl(ns, "net.ipv6.conf.default.disable_ipv6=1"); err != nil {
			return err
		}
	}
	steps := []string{
		"link add p0 address " + vxMacP0 + " type veth peer name t0 address " + vxMacT0 + " netns " + t.ns("ten"),
		"link add u0 address " + vxMacU0 + " type veth peer name e0 address " + vxMacE0 + " netns " + t.ns("far"),
		"link add br0 address 02:d1:00:00:00:fe type bridge",
		"link add vx0 address 02:d1:00:00:00:0e type vxlan id 100 local " + vxLocal + " dstport 4789 nolearning",
		"link set vx0 master br0", "link set p0 master br0",
		"link set lo up", "link set br0 up", "link set vx0 up", "link set p0 up",
	}
	// Both copies alike: the bridge hands nothing to netfilter (else the kernel checks and trims
	// bridged IP frames, and seg6x leaves the bridge to it).
	if err := testsupport.BridgeNetfilterOff(t.ns("dut")); err != nil {
		return err
	}
	if err := testsupport.IPLines(t.ns("dut"), steps...); err != nil {
		return err
	}
	if err := testsupport.Sysctl(t.ns("dut"), "net.ipv6.conf.u0.disable_ipv6=0", "net.ipv6.conf.all.forwarding=1"); err != nil {
		return err
	}
	if err := testsupport.IPLines(t.ns("dut"), "-6 addr add "+vxLocal+"/64 dev u0 nodad", "link set u0 up",
		"-6 neigh add "+vxRemote+" lladdr "+vxMacE0+" dev u0 nud permanent"); err != nil {
		return err
	}
	if err := testsupport.IPLines(t.ns("ten"), "link set lo up", "link set t0 up"); err != nil {
		return err
	}
	if err := testsupport.IPLines(t.ns("far"), "link set lo up", "link set e0 up"); err != nil {
		return err
	}
	for _, l := range [][]string{
		{"append", "00:00:00:00:00:00", "dev", "vx0", "dst", vxRemote},
		{"add", vxMacR, "dev", "vx0", "dst", vxRemote, "self"},
		{"add", vxMacR, "dev", "vx0", "master", "static"},
		{"add", vxMacT0, "dev", "p0", "master", "static"},
	} {
		if out, err := testsupport.Output("bridge", append([]string{"-n", t.ns("dut"), "fdb"}, l...)...); err != nil {
			return fmt.Errorf("bridge fdb %v: %v %s", l, err, out)
		}
	}
	// The kernel's outer UDP checksum is finished only with transmit offload off; frames XDP
	// redirects into a veth are received only with the peer's GRO on.
	for _, c := range [][]string{
		{t.ns("dut"), "u0", "tx", "off"}, {t.ns("far"), "e0", "gro", "on"}, {t.ns("ten"), "t0", "gro", "on"},
	} {
		if out, err := testsupport.NetnsExec(c[0], "ethtool", "-K", c[1], c[2], c[3]); err != nil {
			return fmt.Errorf("ethtool %v: %v %s", c, err, out)
		}
	}
	return nil
}

func (t vxTopo) down() { testsupport.DelNetns(t.ns("ten"), t.ns("dut"), t.ns("far")) }
