// Package fabrictest runs the seg6x daemon on a provider edge with two ECMP uplinks and checks what a
// fabric needs: flows spread over both uplinks, jumbo frames cross them whole, and failures of a link or a
// neighbor cost a bounded number of packets and blackhole no flow.
package fabrictest

// topo.go: the namespaces. A tenant host h (198.18.1.2, untagged) reaches pe's access port a0; pe
// encapsulates tenant red's traffic for 198.18.2.0/24 towards fc00:2::64, whose route has two next
// hops, fc00:a1::2 over u1a and fc00:a2::2 over u2a, both ends of p (u1b, u2b). p only receives: the
// test reads the frames it gets on each uplink (flow and sequence number from the inner payload).
// Two topologies under a daemon with its defaults, links of MTU 1500 and of 9000, are shared by the
// tests in turn (shared, take); TestMain tears down what is left of them.

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seg6x/seg6x/tools/testsupport"
)

const (
	tenantPrefix = "198.18.2.0/24"
	firstSID     = "fc00:2::64"
	encapSrc     = "fc00:1::1"
	udpDport     = 9
)

var uplinks = []string{"u1", "u2"}

// fabric is one topology with its daemon.
type fabric struct {
	t         *testing.T // the test using it
	h, pe, p  string
	tmp       string // its temporary directory: the instance (dir) and the configuration (cfg)
	dir, bin  string
	cfg       string
	d         *testsupport.Daemon
	logs      *testsupport.LogBuffer
	a0MAC     net.HardwareAddr
	h0MAC     net.HardwareAddr
	send      int            // h's AF_PACKET socket on h0
	h0Index   int            // h0's ifindex (in h)
	recv      map[string]int // p's AF_PACKET socket per uplink (u1, u2)
	daemonArg []string
	kernel    bool        // the kernel's own seg6 encapsulates, no seg6x (the reference)
	payload   int         // UDP payload bytes of frame's frames (0: 16)
	sent      atomic.Bool // a frame went through it
	gone      bool        // down already
}

// jumboMTU is the MTU of every link (the access link and both uplinks) of the jumbo topology.
const jumboMTU = 9000

// sharedArgs are the shared topologies' daemon arguments: the default next-hop cache time, named
// because TestFlowsSpreadOverUplinks runs with it.
var sharedArgs = []string{"--nexthop-cache-ms", "1000"}

// sharedFabrics are the shared topologies by MTU (0: the default).
var sharedFabrics = map[int]*fabric{}

// shared returns the topology with links of MTU mtu (0: the default) that tests share, building it the
// first time. A test leaves it as it found it (frames of a flow take the same uplink, neighbors
// resolved); one that fails takes it down, and the next test builds its own.
func shared(t *testing.T, mtu int) *fabric {
	t.Helper()
	f := sharedFabrics[mtu]
	if f == nil {
		f = build(t, false, mtu, sharedArgs)
		sharedFabrics[mtu] = f
	}
	f.t = t
	t.Cleanup(func() {
		if t.Failed() && sharedFabrics[mtu] == f {
			delete(sharedFabrics, mtu)
			f.end(t)
		}
	})
	return f
}

// take is shared for a test that changes the topology: it goes at the test's end.
func take(t *testing.T, mtu int) *fabric {
	t.Helper()
	f := sharedFabrics[mtu]
	delete(sharedFabrics, mtu)
	if f == nil {
		f = build(t, false, mtu, sharedArgs)
	}
	f.t = t
	t.Cleanup(func() { f.end(t) })
	return f
}

// upKernel builds the same namespaces with the kernel's own seg6 encapsulation of the tenant prefix
// (a main-table route on pe, `ip sr tunsrc` the same source) and no seg6x, with the kernel's neighbor
// and link-down defaults: the reference the failure cases are compared with.
func upKernel(t *testing.T) *fabric {
	t.Helper()
	f := build(t, true, 0, nil)
	t.Cleanup(func() { f.end(t) })
	return f
}

// fabrics counts the topologies built: each has namespaces of its own.
var fabrics int

// build makes the namespaces, links of MTU mtu (0: the default), and the daemon or the kernel's seg6;
// the caller takes it down (end), or build does if it fails.
func build(t *testing.T, kernel bool, mtu int, daemonArgs []string) *fabric {
	t.Helper()
	fabrics++
	id := fmt.Sprintf("%d%c", os.Getpid()%10000, 'a'+(fabrics-1)%26)
	f := &fabric{t: t, h: "s6fh" + id, pe: "s6fpe" + id, p: "s6fp" + id, bin: testsupport.BuildSeg6x(t),
		logs: &testsupport.LogBuffer{}, recv: map[string]int{}, daemonArg: daemonArgs, kernel: kernel}
	var err error
	if f.tmp, err = os.MkdirTemp("", "seg6x-fabric-"); err != nil {
		t.Fatal(err)
	}
	f.dir = filepath.Join(f.tmp, "pe")
	testsupport.DelNetns(f.h, f.pe, f.p)
	if err := testsupport.AddNetns(f.h, f.pe, f.p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			f.end(t)
		}
	})
	run := func(args ...string) {
		t.Helper()
		testsupport.MustRun(t, "ip", args...)
	}
	run("link", "add", "h0", "netns", f.h, "type", "veth", "peer", "name", "a0", "netns", f.pe)
	for _, u := range uplinks {
		run("link", "add", u+"a", "netns", f.pe, "type", "veth", "peer", "name", u+"b", "netns", f.p)
	}
	must := func(ns string, lines ...string) {
		t.Helper()
		if err := testsupport.IPLines(ns, lines...); err != nil {
			t.Fatal(err)
		}
	}
	if mtu > 0 {
		m := fmt.Sprint(mtu)
		must(f.h, "link set h0 mtu "+m)
		must(f.pe, "link set a0 mtu "+m, "link set u1a mtu "+m, "link set u2a mtu "+m)
		must(f.p, "link set u1b mtu "+m, "link set u2b mtu "+m)
	}
	must(f.h, "link set lo up", "link set h0 up", "addr add 198.18.1.2/24 dev h0", "route add default via 198.18.1.1")
	if err := testsupport.Sysctl(f.pe, "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.conf.all.forwarding=1"); err != nil {
		t.Fatal(err)
	}
	must(f.pe, "link set lo up", "-6 addr add "+encapSrc+"/128 dev lo", "link set a0 up", "addr add 198.18.1.1/24 dev a0",
		"link set u1a up", "link set u2a up", "-6 addr add fc00:a1::1/64 dev u1a nodad", "-6 addr add fc00:a2::1/64 dev u2a nodad")
	for _, dev := range []string{"a0", "u1a", "u2a"} {
		if err := testsupport.Sysctl(f.pe, "net.ipv4.conf."+dev+".forwarding=1", "net.ipv6.conf."+dev+".forwarding=1"); err != nil {
			t.Fatal(err)
		}
	}
	for _, dev := range []string{"u1a", "u2a"} {
		// The uplinks keep their addresses while down (docs/fabric.md), and a neighbor that stops
		// answering is found within seconds: reachable for 0.5-1.5 s, then a probe after 1 s, three
		// unicast probes 300 ms apart (the kernel's defaults: 15-45 s, 5 s, 3 x 1 s). An entry being
		// resolved sends 20 multicast probes (6 s; the default 3) before it fails: the gateway of an
		// uplink that was down 2 s is resolved as soon as the uplink is back and has its link-local
		// address again (up to 1.3 s), not at the kernel's next periodic probe of managed entries (every
		// 5 s, host-wide) as a failed entry would be.
		if err := testsupport.Sysctl(f.pe, "net.ipv6.conf."+dev+".keep_addr_on_down=1",
			"net.ipv6.neigh."+dev+".base_reachable_time_ms=1000", "net.ipv6.neigh."+dev+".delay_first_probe_time=1",
			"net.ipv6.neigh."+dev+".retrans_time_ms=300", "net.ipv6.neigh."+dev+".mcast_solicit=20"); err != nil {
			t.Fatal(err)
		}
	}
	if err := testsupport.Sysctl(f.p, "net.ipv6.conf.u1b.keep_addr_on_down=1", "net.ipv6.conf.u2b.keep_addr_on_down=1"); err != nil {
		t.Fatal(err) // a peer router keeps its addresses through a link flap
	}
	must(f.p, "link set lo up", "link set u1b up", "link set u2b up", "-6 addr add fc00:a1::2/64 dev u1b nodad",
		"-6 addr add fc00:a2::2/64 dev u2b nodad")
	for _, u := range uplinks {
		// Frames XDP redirects into a veth arrive only where its peer runs NAPI (GRO on); the kernel's
		// own forwarding needs none (and would merge frames of a flow there).
		if kernel {
			break
		}
		if _, err := testsupport.NetnsExec(f.p, "ethtool", "-K", u+"b", "gro", "on"); err != nil {
			t.Fatal(err)
		}
	}
	f.ecmpRoute()
	f.a0MAC = f.mac(f.pe, "a0")
	f.h0MAC = f.mac(f.h, "h0")
	must(f.h, "neigh replace 198.18.1.1 lladdr "+f.a0MAC.String()+" dev h0 nud permanent")

	f.cfg = filepath.Join(f.tmp, "seg6x.yaml")
	cfg := `interfaces: [{name: a0, role: access}, {name: u1a, role: fabric}, {name: u2a, role: fabric}]
tenants: [{name: red, table: 100, ports: [{dev: a0}]}]
routes:
  - {tenant: red, prefix: ` + tenantPrefix + `, segs: ["` + firstSID + `"], src: "` + encapSrc + `"}
`
	if err := os.WriteFile(f.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := testsupport.MountInstance(f.dir); err != nil {
		t.Fatal(err)
	}
	if kernel {
		must(f.pe, "sr tunsrc set "+encapSrc, "route add "+tenantPrefix+" encap seg6 mode encap segs "+firstSID+" dev lo")
		for _, gw := range []string{"fc00:a1::2", "fc00:a2::2"} { // resolved before the stream, as seg6x's are
			if _, err := testsupport.NetnsExec(f.pe, "ping", "-c", "2", "-i", "0.2", "-W", "1", gw); err != nil {
				t.Fatalf("pe cannot reach %s: %v", gw, err)
			}
		}
		f.openSockets()
		return f
	}
	f.start()
	f.openSockets()
	f.waitNeighbors()
	return f
}

// waitNeighbors waits (at most 10 s) until pe has resolved both uplinks' gateways: the daemon makes
// them managed entries, which the kernel resolves.
func (f *fabric) waitNeighbors() {
	f.t.Helper()
	var out string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out, _ = testsupport.IP(f.pe, "-6", "neigh", "show")
		ok := 0
		for _, line := range strings.Split(out, "\n") {
			if (strings.HasPrefix(line, "fc00:a1::2 ") || strings.HasPrefix(line, "fc00:a2::2 ")) && strings.Contains(line, "managed") &&
				strings.Contains(line, "REACHABLE") {
				ok++
			}
		}
		if ok == 2 {
			return
		}
	}
	f.t.Fatalf("pe's gateways are not resolved managed entries after 10 s:\n%s", out)
}

// ecmpRoute (re)installs the two-way multipath route towards the first SID.
func (f *fabric) ecmpRoute() {
	f.t.Helper()
	if _, err := testsupport.IP(f.pe, "-6", "route", "replace", "fc00:2::/48", "nexthop", "via", "fc00:a1::2", "dev", "u1a",
		"nexthop", "via", "fc00:a2::2", "dev", "u2a"); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fabric) start() {
	f.t.Helper()
	var err error
	args := append([]string{"--config", f.cfg}, f.daemonArg...)
	if f.d, err = testsupport.StartDaemon(f.bin, f.pe, f.dir, f.logs, args...); err != nil {
		f.t.Fatalf("%v:\n%s", err, f.logs)
	}
}

// end takes f down at the end of t, with the daemon's last lines if t failed.
func (f *fabric) end(t *testing.T) {
	if t.Failed() && !f.gone {
		t.Logf("daemon log (last lines):\n%s", f.logs.Tail(40))
	}
	f.down()
}

// down stops the daemon, detaches it and deletes the namespaces (once).
func (f *fabric) down() {
	if f.gone {
		return
	}
	f.gone = true
	if f.d != nil {
		f.d.Signal(syscall.SIGTERM)
		f.d = nil
	}
	if f.send > 0 {
		unix.Close(f.send)
	}
	for _, s := range f.recv {
		unix.Close(s)
	}
	_ = testsupport.Run("ip", "netns", "exec", f.pe, f.bin, "--dir", f.dir, "detach", "--all", "--purge")
	testsupport.UnmountInstance(f.dir)
	testsupport.DelNetns(f.h, f.pe, f.p)
	_ = os.RemoveAll(f.tmp)
}

func (f *fabric) mac(ns, dev string) net.HardwareAddr {
	f.t.Helper()
	var hw net.HardwareAddr
	err := testsupport.InNetns(ns, func() error {
		it, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		hw = it.HardwareAddr
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return hw
}

// openSockets opens h's sending socket and p's receiving ones (sockets stay in the namespace they were
// made in).
func (f *fabric) openSockets() {
	f.t.Helper()
	open := func(ns, dev string, proto uint16) int {
		var fd int
		err := testsupport.InNetns(ns, func() error {
			it, err := net.InterfaceByName(dev)
			if err != nil {
				return err
			}
			if fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(proto))); err != nil {
				return err
			}
			if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(proto), Ifindex: it.Index}); err != nil {
				return err
			}
			tv := unix.Timeval{Usec: 20000}
			return unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		})
		if err != nil {
			f.t.Fatal(err)
		}
		return fd
	}
	f.send = open(f.h, "h0", 0) // protocol 0: sends only, receives nothing
	if err := testsupport.InNetns(f.h, func() error {
		it, err := net.InterfaceByName("h0")
		if err == nil {
			f.h0Index = it.Index
		}
		return err
	}); err != nil {
		f.t.Fatal(err)
	}
	for _, u := range uplinks {
		f.recv[u] = open(f.p, u+"b", unix.ETH_P_IPV6)
		if err := unix.SetsockoptInt(f.recv[u], unix.SOL_SOCKET, unix.SO_RCVBUF, 8<<20); err != nil {
			f.t.Fatal(err)
		}
	}
}

// frame is tenant red's UDP packet of flow (its source port) with sequence number seq.
func (f *fabric) frame(flow, seq int) []byte { return f.frameSized(flow, seq, max(f.payload, 16)) }

// frameSized is frame with n bytes of payload (n >= 16): after the flow and sequence number, bytes
// that depend on their position and the flow, which parse checks.
func (f *fabric) frameSized(flow, seq, n int) []byte {
	payload := make([]byte, n)
	for i := 16; i < n; i++ {
		payload[i] = byte(i*7 + flow)
	}
	copy(payload, "S6XF")
	binary.BigEndian.PutUint32(payload[4:], uint32(flow))
	binary.BigEndian.PutUint32(payload[8:], uint32(seq))
	ip := testsupport.IPv4{Src: netip.MustParseAddr("198.18.1.2"), Dst: netip.MustParseAddr("198.18.2.1"), TTL: 64, Proto: 17}.
		Packet(testsupport.UDP(uint16(10000+flow), udpDport, payload))
	return append(testsupport.Ethernet(f.a0MAC, f.h0MAC, 0, 0x0800), ip...)
}

// sendFrame sends one frame from h (the socket stays in h's namespace, whichever thread sends).
func (f *fabric) sendFrame(b []byte) error {
	f.sent.Store(true)
	sa := &unix.SockaddrLinklayer{Ifindex: f.h0Index, Halen: 6}
	copy(sa.Addr[:], b[:6])
	return unix.Sendto(f.send, b, 0, sa)
}

// arrival is one encapsulated frame p received: on which uplink, the flow and sequence number, its
// length and its UDP payload's length.
type arrival struct {
	uplink         string
	flow, seq      int
	size, payloadN int
}

// parse finds the flow and sequence number in an encapsulated frame (IPv6, SRH, IPv4, UDP, payload),
// and the payload's length; ok is false when the frame is not one of frameSized's, intact.
func parse(b []byte) (flow, seq, payloadN int, ok bool) {
	if len(b) < 14+40 || binary.BigEndian.Uint16(b[12:]) != 0x86DD {
		return 0, 0, 0, false
	}
	off, nh := 14+40, b[14+6]
	if nh == 43 {
		if len(b) < off+8 {
			return 0, 0, 0, false
		}
		nh = b[off]
		off += (int(b[off+1]) + 1) * 8
	}
	if nh != 4 || len(b) < off+20 {
		return 0, 0, 0, false
	}
	end := off + int(binary.BigEndian.Uint16(b[off+2:])) // the inner IPv4 packet's end
	off += int(b[off]&0x0F)*4 + 8
	if len(b) < off+12 || end > len(b) || end < off+16 || !strings.HasPrefix(string(b[off:off+4]), "S6XF") {
		return 0, 0, 0, false
	}
	flow = int(binary.BigEndian.Uint32(b[off+4:]))
	for i := 16; off+i < end; i++ {
		if b[off+i] != byte(i*7+flow) {
			return 0, 0, 0, false
		}
	}
	return flow, int(binary.BigEndian.Uint32(b[off+8:])), end - off, true
}

// drain reads what p has received on both uplinks until nothing arrives for quiet.
func (f *fabric) drain(quiet time.Duration) []arrival { return f.drainFor(quiet, -1, 0) }

// drainUntil reads what p receives until nothing arrives for 300 ms or, once want frames have, for
// 100 ms (time enough for any frame more).
func (f *fabric) drainUntil(want int) []arrival {
	return f.drainFor(300*time.Millisecond, want, 100*time.Millisecond)
}

// drainFor reads until nothing arrives for quiet, or for quietWant once want frames have (want < 0:
// never).
func (f *fabric) drainFor(quiet time.Duration, want int, quietWant time.Duration) []arrival {
	var got []arrival
	buf := make([]byte, 16384)
	last := time.Now()
	for time.Since(last) < quiet && (want < 0 || len(got) < want || time.Since(last) < quietWant) {
		any := false
		for _, u := range uplinks {
			for {
				n, from, err := unix.Recvfrom(f.recv[u], buf, unix.MSG_DONTWAIT)
				if err != nil {
					break
				}
				if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
					continue
				}
				if flow, seq, pn, ok := parse(buf[:n]); ok {
					got = append(got, arrival{u, flow, seq, n, pn})
					any = true
				}
			}
		}
		if any {
			last = time.Now()
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return got
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
