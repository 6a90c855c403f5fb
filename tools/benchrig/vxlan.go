package benchrig

// vxlan.go: the VXLAN-over-IPv6 scenarios: the DUT as a VTEP with the kernel's bridge and
// VXLAN device, encapsulating tenant frames (ingress = bridge port, egress = underlay) or
// decapsulating them (ingress = underlay, egress = bridge port), by the kernel alone or accelerated
// by seg6x under `seg6x daemon --mirror-kernel`, which follows the same kernel configuration. Frame
// sizes are those of the carried (tenant) Ethernet frame in both directions: a decap input frame is
// 70 bytes longer (outer Ethernet, IPv6, UDP, VXLAN).

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/tools/testsupport"
	"golang.org/x/sys/unix"
)

const (
	vxVNI      = 100
	vxPort     = 4789
	vxOverhead = 14 + 40 + 8 + 8 // what encapsulation adds to a tenant frame
)

var (
	macFarEnc = [6]byte{0x02, 0xb0, 0, 0, 1, 1} // tenant host behind the far VTEP (encap: inner destination)
	macFarDec = [6]byte{0x02, 0xb0, 0, 0, 1, 2} // tenant host behind the far VTEP (decap: inner source)
	// Encap: the DUT's underlay is its egress (fc00:b1::1), the far VTEP the sink's side.
	vxEncLocal, vxEncRemote = sid("fc00:b1::1"), sid("fc00:b1::2")
	// Decap: the DUT's underlay is its ingress (fc00:b0::1), the far VTEP the generator's side.
	vxDecLocal, vxDecRemote = sid("fc00:b0::1"), sid("fc00:b0::2")
)

// vxlanTopo builds the DUT's bridge br0 with the tenant-facing port port and VXLAN device vx0 (VNI
// 100, local address local, destination port 4789, no learning on vx0, MTU 1500 so that 1518-byte
// frames are bridged) with the static entries EVPN would install: the far tenant MAC behind remote
// (self and master), the default remote list (remote), and the local tenant MAC on port.
func vxlanTopo(r *Rig, port string, local, remote netip.Addr, farMAC, localMAC [6]byte) error {
	ns := r.ns("dut")
	if err := testsupport.BridgeNetfilterOff(ns); err != nil {
		return err
	}
	if err := testsupport.IPLines(ns,
		"addr flush dev "+port,
		"link add br0 type bridge",
		"link add vx0 type vxlan id "+strconv.Itoa(vxVNI)+" local "+local.String()+" dstport "+strconv.Itoa(vxPort)+" nolearning",
		"link set vx0 mtu 1500",
		"link set vx0 master br0", "link set "+port+" master br0",
		"link set br0 up", "link set vx0 up",
	); err != nil {
		return err
	}
	// No IPv6 of their own on the bridge and its ports: no ND / MLD bridged among the frames under test.
	if err := testsupport.Sysctl(ns, "net.ipv6.conf."+port+".disable_ipv6=1", "net.ipv6.conf.br0.disable_ipv6=1",
		"net.ipv6.conf.vx0.disable_ipv6=1"); err != nil {
		return err
	}
	// replace, not add: the bridge may have learned the local MAC already from a frame of the sink's
	// (add then failed with "File exists" once in test/bench).
	for _, l := range []string{
		"replace " + macStr(farMAC) + " dev vx0 dst " + remote.String() + " self static",
		"replace " + macStr(farMAC) + " dev vx0 master static",
		"append 00:00:00:00:00:00 dev vx0 dst " + remote.String(),
		"replace " + macStr(localMAC) + " dev " + port + " master static",
	} {
		if out, err := testsupport.Output("bridge", append([]string{"-n", ns, "fdb"}, strings.Fields(l)...)...); err != nil {
			return fmt.Errorf("bridge fdb %s: %v %s", l, err, out)
		}
	}
	return nil
}

// vxlanDecapLink lets the generator's link carry decap input frames (1518 + 70 bytes).
func vxlanDecapLink(r *Rig) error {
	if err := r.DutIP("link", "set", devDutIn, "mtu", "3000"); err != nil {
		return err
	}
	_, err := testsupport.IP(r.ns("gen"), "link", "set", devGen, "mtu", "3000")
	return err
}

// vxlanFrame is a decap input: tenant frame inner in VXLAN/UDP/IPv6 from the far VTEP remote to the
// DUT's local, UDP source port by flow, a correct UDP checksum, in an Ethernet frame dst <- src.
func vxlanFrame(inner []byte, f int, dst, src [6]byte, remote, local netip.Addr) []byte {
	vx := append([]byte{0x08, 0, 0, 0, 0, 0, vxVNI, 0}, inner...)
	udp := testsupport.UDP(uint16(49152+f), vxPort, vx)
	binary.BigEndian.PutUint16(udp[6:], testsupport.L4Checksum(remote, local, 17, udp))
	h := testsupport.Ethernet(dst[:], src[:], 0, 0x86DD)
	return append(h, testsupport.IPv6{Src: remote, Dst: local, NextHeader: 17, HopLimit: 64}.Packet(udp)...)
}

// tenantFrame is an untagged tenant IPv4/UDP frame of n bytes from src to dst (MACs).
func tenantFrame(n, f int, dst, src [6]byte) []byte {
	h := testsupport.Ethernet(dst[:], src[:], 0, 0x0800)
	return append(h, ipv4UDP(hostSrc, flowDst(f), 64, uint16(1000+f), uint16(2000+f), max(n, 60)-len(h))...)
}

// expectVXLANEncap checks the encapsulated frame of an n-byte tenant frame: outer IPv6 (version;
// traffic class and flow label not checked) from the DUT's underlay address to the far VTEP, hop
// limit 64, UDP to port 4789 (source port and checksum not checked: each implementation hashes the
// flow its own way), VXLAN flags and VNI, then the tenant frame as it came (bridged: TTL unchanged).
func expectVXLANEncap(n int) pattern {
	var p pattern
	p.expect(0, testsupport.Ethernet(macSink[:], macDutEg[:], 0, 0x86DD))
	p.value[14], p.mask[14] = 0x60, 0xF0
	if n > 0 {
		p.expect(18, []byte{byte((n + 16) >> 8), byte(n + 16)})
		p.expect(58, []byte{byte((n + 16) >> 8), byte(n + 16)})
	}
	p.expect(20, []byte{17, 64})
	s, d := vxEncLocal.As16(), vxEncRemote.As16()
	p.expect(22, s[:])
	p.expect(38, d[:])
	p.expect(56, []byte{vxPort >> 8, vxPort & 0xFF})
	p.expect(62, []byte{0x08, 0, 0, 0, 0, 0, vxVNI, 0})
	p.expect(70, testsupport.Ethernet(macFarEnc[:], macGen[:], 0, 0x0800))
	p.expect(84, []byte{0x45})
	p.expect(92, []byte{64, 17})
	s4 := hostSrc.As4()
	p.expect(96, s4[:])
	p.expect(100, []byte{198, 19, 1})
	return p
}

// expectDecap checks a decapsulated tenant frame dst <- src: as it was carried, out of the bridge port.
func expectDecap(dst, src [6]byte) func(n int) pattern {
	return func(n int) pattern { return decapPattern(n, dst, src) }
}

func decapPattern(n int, dst, src [6]byte) pattern {
	var p pattern
	p.expect(0, testsupport.Ethernet(dst[:], src[:], 0, 0x0800))
	p.expect(14, []byte{0x45})
	if n > 0 {
		p.expect(16, []byte{byte((n - 14) >> 8), byte(n - 14)})
	}
	p.expect(22, []byte{64, 17})
	s4 := hostSrc.As4()
	p.expect(26, s4[:])
	p.expect(30, []byte{198, 19, 1})
	return p
}

// expectVXLANFragment checks fragment i (0 or 1) of the encapsulation of an n-byte tenant frame over
// a 1500-byte underlay, as the daemon cuts it: the first carries 1448 bytes of the UDP datagram (with
// its header and VXLAN's, then the tenant frame's start), the second the rest; the identification
// is random and not checked.
func expectVXLANFragment(i int) func(n int) pattern {
	return func(n int) pattern {
		const first = (1500 - 40 - 8) &^ 7
		var p pattern
		p.expect(0, testsupport.Ethernet(macSink[:], macDutEg[:], 0, 0x86DD))
		p.value[14], p.mask[14] = 0x60, 0xF0
		plen, frag := 8+first, []byte{17, 0, 0, 1}
		if i == 1 {
			plen, frag = 8+n+16-first, []byte{17, 0, first >> 8, first & 0xFF}
		}
		p.expect(18, []byte{byte(plen >> 8), byte(plen), 44, 64})
		s, d := vxEncLocal.As16(), vxEncRemote.As16()
		p.expect(22, s[:])
		p.expect(38, d[:])
		p.expect(54, frag)
		if i == 0 {
			p.expect(64, []byte{vxPort >> 8, vxPort & 0xFF, byte((n + 16) >> 8), byte(n + 16)})
			p.expect(70, []byte{0x08, 0, 0, 0, 0, 0, vxVNI, 0})
			p.expect(78, testsupport.Ethernet(macFarEnc[:], macGen[:], 0, 0x0800))
			p.expect(92, []byte{0x45})
		}
		return p
	}
}

// StartMirrorDaemon runs `seg6x daemon --mirror-kernel` on the DUT (its threads kept off the DUT's
// CPU), attaches the DUT's two interfaces through its API (one commit: half the time of one each)
// and waits until the mirror accelerates want forwarding entries.
func (r *Rig) StartMirrorDaemon(want int) error {
	d, err := testsupport.StartDaemon(r.Bin, r.ns("dut"), r.DutDir(), &r.daemonLog, "--mirror-kernel")
	if err != nil {
		return fmt.Errorf("%w\n%s", err, r.daemonLog.Tail(20))
	}
	r.daemon = d
	if err := pinProcess(d.Cmd.Process.Pid, genCPU); err != nil {
		return err
	}
	ctx := context.Background()
	var ops []*pb.Op
	for _, dev := range []string{devDutIn, devDutEg} {
		ops = append(ops, &pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_Interface{Interface: &pb.Interface{Name: dev}}})
	}
	if _, err := d.Client.Commit(ctx, &pb.CommitRequest{Ops: ops}); err != nil {
		return fmt.Errorf("attach %s and %s: %w", devDutIn, devDutEg, err)
	}
	var last *pb.KernelReply
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		k, err := d.Client.Kernel(ctx, &pb.KernelRequest{})
		if err != nil {
			return err
		}
		n := 0
		for _, e := range k.Fdb {
			if e.Accelerated {
				n++
			}
		}
		if n >= want {
			return nil
		}
		last = k
	}
	return fmt.Errorf("the mirror accelerated fewer than %d forwarding entries: %v %v\n%s", want, last.GetVxlans(), last.GetFdb(), r.daemonLog.Tail(20))
}

// bridgeReportsWait bounds waitBridgeReports: the reports leave within a second of the bridge
// coming up (igmpv3_unsolicited_report_interval).
const bridgeReportsWait = 3 * time.Second

// waitBridgeReports waits until the DUT's bridge has sent the IGMP reports a new bridge sends when it
// snoops multicast (it joins the all-snoopers group 224.0.0.106): as many as the namespace's IGMP
// robustness (igmp_qrv), the first at once, the others at random within a second. Flooded into the
// tunnel, such a report reaches the sink as a unicast frame it rejects: no trial may count it. The
// DUT's namespace sends no other IPv4 multicast, so its OutMcastPkts counts them. After
// bridgeReportsWait it gives up waiting (a kernel that reports otherwise): nothing fails for it.
func (r *Rig) waitBridgeReports() error {
	if on, err := testsupport.NetnsExec(r.ns("dut"), "cat", "/sys/class/net/br0/bridge/multicast_snooping"); err != nil || strings.TrimSpace(on) != "1" {
		return nil // no snooping (off, or not in this kernel): no reports
	}
	for deadline := time.Now().Add(bridgeReportsWait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var qrv, sent uint64
		if err := testsupport.InNetns(r.ns("dut"), func() error {
			b, err := os.ReadFile("/proc/sys/net/ipv4/igmp_qrv")
			if err != nil {
				return err
			}
			if qrv, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err != nil {
				return err
			}
			sent, err = netstat("netstat", "IpExt:", "OutMcastPkts")
			return err
		}); err != nil {
			return err
		}
		if sent >= qrv {
			return nil
		}
	}
	return nil
}

// netstat reads counter name of the group whose lines start with prefix (a line of names, then one of
// values) from /proc/thread-self/net/file (snmp or netstat): the calling thread's network namespace.
func netstat(file, prefix, name string) (uint64, error) {
	b, err := os.ReadFile("/proc/thread-self/net/" + file)
	if err != nil {
		return 0, err
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix+" ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], prefix+" ") {
			names, vals := strings.Fields(l), strings.Fields(lines[i+1])
			for j := range names {
				if names[j] == name && j < len(vals) {
					n, _ := strconv.ParseUint(vals[j], 10, 64)
					return n, nil
				}
			}
		}
	}
	return 0, nil
}

// FastPathFrames is the number of frames the DUT's seg6x (scenarios with a daemon) forwarded in XDP
// (XDP_REDIRECT) or encapsulated there and queued for its daemon to fragment (SLOW_VXLAN_FRAGMENT).
func (r *Rig) FastPathFrames() (uint64, error) {
	if r.daemon == nil {
		return 0, fmt.Errorf("no seg6x daemon on this rig")
	}
	s, err := r.daemon.Client.Stats(context.Background(), &pb.StatsRequest{})
	if err != nil {
		return 0, err
	}
	return s.Actions["XDP_REDIRECT"].GetPackets() + s.Reasons["SLOW_VXLAN_FRAGMENT"].GetPackets(), nil
}

// pinProcess keeps every thread of process pid (and the threads they start) on cpu.
func pinProcess(pid, cpu int) error {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return err
	}
	var set unix.CPUSet
	set.Set(cpu)
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			_ = unix.SchedSetaffinity(tid, &set)
		}
	}
	return nil
}

// vxlanScenarios are encap and decap by the kernel's VXLAN and by seg6x over the same kernel setup.
func vxlanScenarios() []*Scenario {
	encTopo := func(r *Rig) error {
		return vxlanTopo(r, devDutIn, vxEncLocal, vxEncRemote, macFarEnc, macGen)
	}
	decTopo := func(r *Rig) error {
		if err := vxlanDecapLink(r); err != nil {
			return err
		}
		return vxlanTopo(r, devDutEg, vxDecLocal, vxDecRemote, macFarDec, macSink)
	}
	encFrame := func(n, f int) []byte { return tenantFrame(n, f, macFarEnc, macGen) }
	decFrame := func(n, f int) []byte {
		return vxlanFrame(tenantFrame(n, f, macSink, macFarDec), f, macDutIn, macGen, vxDecRemote, vxDecLocal)
	}
	// Both ways over the encap topology: VXLAN from the far VTEP back into the DUT's underlay, for the
	// generator's MAC behind the bridge port.
	backFrame := func(n, f int) []byte {
		return vxlanFrame(tenantFrame(n, f, macGen, macFarEnc), f, macDutEg, macSink, vxEncRemote, vxEncLocal)
	}
	backExpect := expectDecap(macGen, macFarEnc)
	kernel := func(topo func(*Rig) error) func(*Rig) error {
		return func(r *Rig) error {
			if err := r.AttachDutPass(); err != nil {
				return err
			}
			return topo(r)
		}
	}
	seg6x := func(topo func(*Rig) error) func(*Rig) error {
		return func(r *Rig) error {
			if err := topo(r); err != nil {
				return err
			}
			// The far tenant MAC (vx0) and the local one (bridge port).
			if err := r.StartMirrorDaemon(2); err != nil {
				return err
			}
			// The daemon took about as long to start as the bridge takes to send its reports: what is
			// left of that wait is short. (The kernel's scenarios, ready at once, do not wait: their
			// first trials may count a report as a wrong frame.)
			return r.waitBridgeReports()
		}
	}
	fragTopo := func(r *Rig) error {
		if err := r.DutIP("link", "set", devDutEg, "mtu", "1500"); err != nil {
			return err
		}
		return encTopo(r)
	}
	return []*Scenario{
		{Name: "kernel_vxlan_encap", Desc: "kernel bridge + VXLAN over IPv6: tenant frame in, encapsulated to a static remote",
			Setup: kernel(encTopo), Frame: encFrame, Expect: expectVXLANEncap, Carried: true, Bridged: true},
		{Name: "seg6x_vxlan_encap", Desc: "seg6x (mirroring the kernel's bridge + VXLAN): tenant frame in, encapsulated",
			Setup: seg6x(encTopo), Frame: encFrame, Expect: expectVXLANEncap, Carried: true},
		{Name: "kernel_vxlan_decap", Desc: "kernel VXLAN over IPv6 + bridge: VXLAN in, tenant frame out of a bridge port",
			Setup: kernel(decTopo), Frame: decFrame, Expect: expectDecap(macSink, macFarDec), Carried: true},
		{Name: "seg6x_vxlan_decap", Desc: "seg6x (mirroring the kernel's VXLAN + bridge): VXLAN in, tenant frame out",
			Setup: seg6x(decTopo), Frame: decFrame, Expect: expectDecap(macSink, macFarDec), Carried: true},
		{Name: "kernel_vxlan_both", Desc: "kernel bridge + VXLAN over IPv6, both ways at once: half the frames encapsulated, half decapsulated",
			Setup: kernel(encTopo), Frame: encFrame, Expect: expectVXLANEncap, RevFrame: backFrame, RevExpect: backExpect,
			Carried: true, Bridged: true, setUpAs: "kernel_vxlan_encap"},
		{Name: "seg6x_vxlan_both", Desc: "seg6x (mirroring the kernel's bridge + VXLAN), both ways at once",
			Setup: seg6x(encTopo), Frame: encFrame, Expect: expectVXLANEncap, RevFrame: backFrame, RevExpect: backExpect, Carried: true,
			setUpAs: "seg6x_vxlan_encap"},
		// Requirement 3: 1518-byte frames over a 1500-byte underlay. The fast path encapsulates, the
		// daemon (on the generator's CPU, not the DUT's) cuts the outer packet in two; the kernel's
		// VXLAN carries none of them (docs/vxlan.md), so there is no kernel reference.
		{Name: "seg6x_vxlan_encap_frag", Desc: "seg6x VXLAN encap of 1518-byte frames over a 1500-byte underlay: outer IPv6 fragments cut by the daemon",
			Setup: seg6x(fragTopo), Frame: encFrame, Expect: expectVXLANFragment(0), Alt: expectVXLANFragment(1),
			Carried: true, Fragments: true, Sizes: []int{1518}},
	}
}
