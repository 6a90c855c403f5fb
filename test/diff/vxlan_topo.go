package difftest

// vxlan_topo.go: one copy of the VXLAN differential topology, with fixed MAC
// addresses so that two copies produce comparable frames:
//
//	<p>-ten: t0 (the tenant MAC, "local" behind p0)       raw frames in, decapsulated frames out
//	   | veth
//	<p>-dut: p0 ─ br0 ─ vx0 (vxlan id 100 local 2001:db8:1::a dstport 4789 nolearning)
//	         u0 2001:db8:1::a/64 (underlay, MTU 1500, tx checksum offload off)
//	   | veth
//	<p>-cap: u1 2001:db8:1::b/64                          encapsulated frames out, VXLAN in
//
// Forwarding entries (bridge fdb): the remote MAC behind 2001:db8:1::b (self and master static), the
// default remote list 00:00:00:00:00:00 dst 2001:db8:1::b, the tenant MAC on p0 (master static).

import (
	"encoding/binary"
	"net"
	"strings"
	"time"

	"github.com/seg6x/seg6x/tools/testsupport"
	"golang.org/x/sys/unix"
)

var (
	vxMacT   = "02:d1:00:00:01:01" // t0: the tenant host behind p0 (master static on p0)
	vxMacP0  = "02:d1:00:00:00:01" // p0
	vxMacBr  = "02:d1:00:00:00:fe" // br0
	vxMacVx  = "02:d1:00:00:00:0e" // vx0
	vxMacU0  = "02:d1:00:00:a0:01" // u0, the DUT's underlay
	vxMacU1  = "02:d1:00:00:b0:01" // u1, the remote VTEP's underlay (capture)
	vxMacR   = "02:d1:00:00:02:02" // a tenant host behind the remote VTEP 2001:db8:1::b
	vxMacUnk = "02:d1:00:00:09:09" // known nowhere
	vxLocal  = "2001:db8:1::a"
	vxRemote = "2001:db8:1::b"
)

// vxTopo is one copy: namespaces <p>-ten, <p>-dut, <p>-cap.
type vxTopo struct{ p string }

func (t vxTopo) ns(role string) string { return t.p + "-" + role }

func (t vxTopo) up() error {
	t.down()
	ten, dut, cpt := t.ns("ten"), t.ns("dut"), t.ns("cap")
	if err := testsupport.AddNetns(ten, dut, cpt); err != nil {
		return err
	}
	// The bridge hands nothing to netfilter, as docs/vxlan.md asks for seg6x to accelerate it (and
	// the same in the kernel's copy, so that both bridges forward alike).
	if err := testsupport.BridgeNetfilterOff(dut); err != nil {
		return err
	}
	if err := testsupport.IPLines(dut,
		"link add p0 address "+vxMacP0+" type veth peer name t0 address "+vxMacT+" netns "+ten,
		"link add u0 address "+vxMacU0+" type veth peer name u1 address "+vxMacU1+" netns "+cpt,
		"link add br0 address "+vxMacBr+" type bridge",
		"link add vx0 address "+vxMacVx+" type vxlan id 100 local "+vxLocal+" dstport 4789 nolearning",
	); err != nil {
		return err
	}
	// No IPv6 on the bridge and its ports, none on the tenant: no ND / MLD of their own to be bridged
	// into the tunnel among the frames under test.
	if err := testsupport.Sysctl(dut, "net.ipv6.conf.all.forwarding=1", "net.ipv6.conf.p0.disable_ipv6=1",
		"net.ipv6.conf.br0.disable_ipv6=1", "net.ipv6.conf.vx0.disable_ipv6=1"); err != nil {
		return err
	}
	if err := testsupport.Sysctl(ten, "net.ipv6.conf.t0.disable_ipv6=1"); err != nil {
		return err
	}
	if err := testsupport.Sysctl(cpt, "net.ipv6.conf.u1.router_solicitations=0"); err != nil {
		return err
	}
	if err := testsupport.IPLines(dut,
		"link set vx0 master br0", "link set p0 master br0",
		"-6 addr add "+vxLocal+"/64 dev u0 nodad",
		"link set lo up", "link set u0 up", "link set br0 up", "link set vx0 up", "link set p0 up",
		"-6 neigh add "+vxRemote+" lladdr "+vxMacU1+" dev u0 nud permanent",
	); err != nil {
		return err
	}
	if err := testsupport.IPLines(cpt, "-6 addr add "+vxRemote+"/64 dev u1 nodad", "link set lo up", "link set u1 up",
		"-6 neigh add "+vxLocal+" lladdr "+vxMacU0+" dev u1 nud permanent"); err != nil {
		return err
	}
	if err := testsupport.IPLines(ten, "link set t0 up"); err != nil {
		return err
	}
	for _, l := range []string{
		"add " + vxMacR + " dev vx0 dst " + vxRemote + " self static",
		"add " + vxMacR + " dev vx0 master static",
		"append 00:00:00:00:00:00 dev vx0 dst " + vxRemote,
		"add " + vxMacT + " dev p0 master static",
	} {
		if _, err := testsupport.Output("bridge", append([]string{"-n", dut, "fdb"}, strings.Fields(l)...)...); err != nil {
			return err
		}
	}
	// Full UDP checksums from the kernel's VXLAN (not CHECKSUM_PARTIAL on veth); no GRO cells after
	// decapsulation (docs/design/vxlan-kernel.md 3.5); the veth peers receive what XDP redirects into
	// p0 / u0 only with GRO on.
	for _, c := range [][]string{{dut, "u0", "tx", "off"}, {dut, "vx0", "gro", "off"}, {ten, "t0", "gro", "on"}, {cpt, "u1", "gro", "on"}} {
		if _, err := testsupport.NetnsExec(c[0], "ethtool", "-K", c[1], c[2], c[3]); err != nil {
			return err
		}
	}
	return nil
}

func (t vxTopo) down() { testsupport.DelNetns(t.ns("ten"), t.ns("dut"), t.ns("cap")) }

// sink binds UDP port 4789 in the capture namespace and never reads: VXLAN arriving there is
// absorbed instead of answered with ICMPv6 port unreachable.
func (t vxTopo) sink() (net.PacketConn, error) {
	var c net.PacketConn
	err := testsupport.InNetns(t.ns("cap"), func() (err error) { c, err = net.ListenPacket("udp6", "[::]:4789"); return err })
	return c, err
}

// bridgeOwnMulticast: a multicast frame from the bridge's own MAC (the IGMP / MLD reports it sends
// some seconds after coming up, at no fixed time), as it is or flooded into the tunnel (VXLAN over
// IPv6 without extension headers: the inner frame at 70). Never a frame under test: those keep
// their sources' MACs.
func bridgeOwnMulticast(f []byte) bool {
	own := func(e []byte) bool {
		return len(e) >= 14 && e[0]&1 == 1 && net.HardwareAddr(e[6:12]).String() == vxMacBr
	}
	if own(f) {
		return true
	}
	return len(f) >= 70+14 && f[12] == 0x86 && f[13] == 0xdd && f[14+6] == 17 &&
		binary.BigEndian.Uint16(f[14+40+2:]) == 4789 && own(f[70:])
}

// collectTagged is port.collect (capture.go) with the 802.1Q / 802.1ad tag the receiving kernel took
// out of the frame put back in (PACKET_AUXDATA, as tcpdump does): a veth's receive path moves a
// tag into the skb's metadata, and the bytes alone would hide it. Multicast destinations are kept
// when all is set. Frames from the bridge's own MAC are left out (bridgeOwnMulticast). If until is
// not nil, it waits past quiet (up to the 1 s in all) for as long as until(what came) does not hold.
func (p *port) collectTagged(quiet time.Duration, all bool, until func([][]byte) bool) [][]byte {
	return p.receiveTagged(quiet, 0, all, until)
}

// drainTagged returns the frames collectTagged would keep that are queued now, without waiting for more.
func (p *port) drainTagged(all bool) [][]byte { return p.receiveTagged(0, unix.MSG_DONTWAIT, all, nil) }

// receiveTagged is collectTagged, or drainTagged with flags MSG_DONTWAIT.
func (p *port) receiveTagged(quiet time.Duration, flags int, all bool, until func([][]byte) bool) [][]byte {
	_ = unix.SetsockoptInt(p.fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1)
	var out [][]byte
	if flags&unix.MSG_DONTWAIT == 0 {
		tv := unix.NsecToTimeval(quiet.Nanoseconds())
		_ = unix.SetsockoptTimeval(p.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	}
	buf, oob := make([]byte, 65536), make([]byte, 256)
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		n, oobn, _, from, err := unix.Recvmsg(p.fd, buf, oob, flags)
		if err == unix.EINTR || (err == unix.EAGAIN && until != nil && !until(out)) {
			continue // EINTR: as port.receive says
		}
		if err != nil {
			break
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		if n < 14 || (buf[0]&1 == 1 && !all) {
			continue
		}
		if bridgeOwnMulticast(buf[:n]) {
			continue
		}
		f := append([]byte(nil), buf[:n]...)
		if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, m := range msgs {
				if m.Header.Level != unix.SOL_PACKET || m.Header.Type != unix.PACKET_AUXDATA || len(m.Data) < 20 {
					continue
				}
				status := binary.NativeEndian.Uint32(m.Data[0:])
				tci, tpid := binary.NativeEndian.Uint16(m.Data[16:]), binary.NativeEndian.Uint16(m.Data[18:])
				if status&unix.TP_STATUS_VLAN_VALID == 0 {
					continue
				}
				if status&unix.TP_STATUS_VLAN_TPID_VALID == 0 {
					tpid = 0x8100
				}
				tag := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, tpid), tci)
				f = append(append(append([]byte(nil), f[:12]...), tag...), f[12:]...)
			}
		}
		out = append(out, f)
	}
	return out
}
