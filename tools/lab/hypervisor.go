package lab

// hypervisor.go: the hypervisor lab, vm1 - hv1 - p - hv2 - vm2 in namespaces: two "VMs" behind veth
// with TSO, GSO and GRO on (as a hypervisor's tap or veth ports), two hypervisors encapsulating their
// VMs' traffic into SRv6 (H.Encaps towards the other side, End.DT4 at hv1 and End.DX4 at hv2 on the
// way back), a transit node p doing End between them, and a fabric of 1600-byte MTU (the VMs' 1500 plus the
// outer headers; native XDP on veth takes no larger MTU). Each mode configures
// the same forwarding with another data plane: plain IPv4 routing (no overlay), the kernel's seg6, or
// seg6x on its XDP or its tc hook (configured with `seg6x apply`, then a daemon on each node, as on a
// real hypervisor: its programs cache next hops). With WireSegments, p's egress ports have no segmentation offload,
// so a GSO aggregate is cut into MTU-sized packets there, at "the wire", and the receiving
// hypervisor's GRO puts them back together. `seg6x-lab hypervisor`, `seg6x-bench tcp` and
// test/lab/hypervisor_test.go use it.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seg6x/seg6x/tools/testsupport"
)

// Hypervisor lab modes.
const (
	HVPlain      = "plain"       // IPv4 routing, no overlay
	HVKernelSeg6 = "kernel_seg6" // the kernel's seg6 / seg6local
	HVSeg6xXDP   = "seg6x_xdp"   // seg6x, every port on XDP
	HVSeg6xTC    = "seg6x_tc"    // seg6x, every port on tc (tcx)
)

// HVModes are the modes in the order they are compared.
var HVModes = []string{HVPlain, HVKernelSeg6, HVSeg6xXDP, HVSeg6xTC}

// HVNodes are the namespaces of the hypervisor lab.
var HVNodes = []string{"vm1", "hv1", "p", "hv2", "vm2"}

// HV VM addresses.
const (
	HVVM1 = "198.18.1.2"
	HVVM2 = "198.18.2.2"
)

// Hypervisor is one instance of the hypervisor lab.
type Hypervisor struct {
	Prefix       string
	Dir          string // state root: <Dir>/<node>
	Bin          string // the seg6x binary run inside the namespaces
	Tool         string // the seg6x-lab binary: the VMs' bulk transfer helpers
	Log          io.Writer
	WireSegments bool // p's egress ports segment aggregates (no TSO/GSO there)
	Mode         string
}

// NewHypervisor returns a hypervisor lab whose namespaces start with prefix, using the seg6x binary
// bin and the seg6x-lab binary tool (its bulk transfer helpers, in the VMs).
func NewHypervisor(prefix, bin, tool string, log io.Writer) *Hypervisor {
	if log == nil {
		log = io.Discard
	}
	return &Hypervisor{Prefix: prefix, Dir: filepath.Join("/run/seg6x-lab", prefix), Bin: bin, Tool: tool, Log: log}
}

// NS is the namespace of a node.
func (h *Hypervisor) NS(node string) string { return h.Prefix + "-" + node }

// NodeDir is the seg6x instance directory of a router.
func (h *Hypervisor) NodeDir(node string) string { return filepath.Join(h.Dir, node) }

// Exec runs a command in a node's namespace.
func (h *Hypervisor) Exec(node string, args ...string) (string, error) {
	return testsupport.NetnsExec(h.NS(node), args...)
}

// Seg6x runs the seg6x CLI on a router's instance.
func (h *Hypervisor) Seg6x(node string, args ...string) (string, error) {
	return h.Exec(node, append([]string{h.Bin, "--dir", h.NodeDir(node)}, args...)...)
}

func (h *Hypervisor) ip(node string, lines ...string) error {
	return testsupport.IPLines(h.NS(node), lines...)
}

// Down removes every namespace and instance of the lab (also after a partial Up).
func (h *Hypervisor) Down() {
	h.daemons().stop()
	for _, n := range HVNodes {
		testsupport.DelNetns(h.NS(n))
		testsupport.UnmountInstance(h.NodeDir(n))
	}
	_ = os.RemoveAll(h.Dir)
}

// HVRouters are the nodes that forward (each a seg6x instance with its daemon in the seg6x modes).
var HVRouters = []string{"hv1", "p", "hv2"}

func (h *Hypervisor) daemons() daemonSet {
	logf := func(format string, args ...any) { fmt.Fprintf(h.Log, format+"\n", args...) }
	return daemonSet{h.Prefix, h.Dir, h.Bin, HVRouters, h.NS, h.NodeDir, h.Seg6x, logf}
}

// hvLinks: node, device, peer node, peer device, MTU.
var hvLinks = []struct {
	a, adev, b, bdev string
	mtu              int
}{
	{"vm1", "eth0", "hv1", "vm", 1500}, {"hv1", "fab", "p", "w", 1600}, {"p", "e", "hv2", "fab", 1600},
	{"hv2", "vm", "vm2", "eth0", 1500},
}

var hvAddrs = map[string][]string{
	"vm1": {"addr add 198.18.1.2/24 dev eth0", "route add default via 198.18.1.1"},
	"vm2": {"addr add 198.18.2.2/24 dev eth0", "route add default via 198.18.2.1"},
	"hv1": {"addr add 198.18.1.1/24 dev vm", "addr add 198.18.10.1/30 dev fab", "-6 addr add fc00:a::1/64 dev fab nodad",
		"-6 addr add fc00:1::100/128 dev lo", "-6 route add fc00:2::/48 via fc00:a::2", "-6 route add fc00:3::/48 via fc00:a::2",
		"route add 198.18.1.0/24 dev vm table 100"},
	"p": {"addr add 198.18.10.2/30 dev w", "addr add 198.18.10.5/30 dev e", "-6 addr add fc00:a::2/64 dev w nodad",
		"-6 addr add fc00:b::1/64 dev e nodad", "-6 addr add fc00:2::100/128 dev lo",
		"-6 route add fc00:1::/48 via fc00:a::1", "-6 route add fc00:3::/48 via fc00:b::2"},
	"hv2": {"addr add 198.18.2.1/24 dev vm", "addr add 198.18.10.6/30 dev fab", "-6 addr add fc00:b::2/64 dev fab nodad",
		"-6 addr add fc00:3::100/128 dev lo", "-6 route add fc00:1::/48 via fc00:b::1", "-6 route add fc00:2::/48 via fc00:b::1"},
}

// Up builds the namespaces, links and addresses with no forwarding of either overlay configured.
// Every veth has TSO, GSO and GRO on (GRO also gives veth the NAPI that XDP redirects into it need).
func (h *Hypervisor) Up() error {
	h.Down()
	for _, n := range HVNodes {
		if err := testsupport.AddNetns(h.NS(n)); err != nil {
			return err
		}
		if err := testsupport.MountInstance(h.NodeDir(n)); err != nil {
			return err
		}
	}
	for _, l := range hvLinks {
		if err := testsupport.Run("ip", "link", "add", "s6hvtmp0", "netns", h.NS(l.a), "type", "veth", "peer", "name",
			"s6hvtmp1", "netns", h.NS(l.b)); err != nil {
			return err
		}
		if err := h.ip(l.a, "link set s6hvtmp0 name "+l.adev, fmt.Sprintf("link set %s mtu %d up", l.adev, l.mtu)); err != nil {
			return err
		}
		if err := h.ip(l.b, "link set s6hvtmp1 name "+l.bdev, fmt.Sprintf("link set %s mtu %d up", l.bdev, l.mtu)); err != nil {
			return err
		}
		for _, end := range [][2]string{{l.a, l.adev}, {l.b, l.bdev}} {
			if _, err := h.Exec(end[0], "ethtool", "-K", end[1], "tso", "on", "gso", "on", "gro", "on"); err != nil {
				return fmt.Errorf("ethtool %s %s: %w", end[0], end[1], err)
			}
		}
	}
	if h.WireSegments {
		for _, dev := range []string{"w", "e"} {
			if _, err := h.Exec("p", "ethtool", "-K", dev, "tso", "off", "gso", "off"); err != nil {
				return err
			}
		}
	}
	for _, n := range HVNodes {
		if err := h.ip(n, "link set lo up"); err != nil {
			return err
		}
		if err := h.ip(n, hvAddrs[n]...); err != nil {
			return err
		}
		if err := testsupport.Sysctl(h.NS(n), "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1",
			"net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0", "net.ipv6.conf.all.seg6_enabled=1",
			"net.ipv6.conf.default.seg6_enabled=1"); err != nil {
			return err
		}
	}
	for _, n := range HVRouters {
		for _, dev := range []string{"fab", "w", "e", "vm"} {
			_ = testsupport.Sysctl(h.NS(n), "net.ipv6.conf."+dev+".seg6_enabled=1", "net.ipv4.conf."+dev+".rp_filter=0")
		}
	}
	// The fabric's IPv6 neighbors first (retrying while the new links settle).
	for _, nb := range [][2]string{{"hv1", "fc00:a::2"}, {"p", "fc00:b::2"}, {"hv2", "fc00:b::1"}, {"p", "fc00:a::1"}} {
		if _, err := h.Exec(nb[0], "ping", "-6", "-c", "1", "-w", "5", nb[1]); err != nil {
			return err
		}
	}
	return nil
}

// hvYAML is each router's seg6x config; hook is "" (XDP) or "tc".
func hvYAML(node, hook string) string {
	m := ""
	if hook != "" {
		m = ", mode: " + hook
	}
	switch node {
	case "hv1":
		return fmt.Sprintf(`interfaces: [{name: vm, role: access%[1]s}, {name: fab, role: fabric%[1]s}]
tenants: [{name: t, table: 100, ports: [{dev: vm}]}]
routes: [{tenant: t, prefix: 198.18.2.0/24, segs: ["fc00:2::1", "fc00:3::a"], src: "fc00:1::100"}]
sids: [{sid: "fc00:1::a", action: End.DT4, tenant: t}]
`, m)
	case "p":
		return fmt.Sprintf("interfaces: [{name: w, role: fabric%[1]s}, {name: e, role: fabric%[1]s}]\n"+
			"sids: [{sid: \"fc00:2::1\", action: End}]\n", m)
	default:
		return fmt.Sprintf(`interfaces: [{name: vm, role: access%[1]s}, {name: fab, role: fabric%[1]s}]
tenants: [{name: t, table: 100, ports: [{dev: vm}]}]
routes: [{tenant: t, prefix: 198.18.1.0/24, segs: ["fc00:2::1", "fc00:1::a"], src: "fc00:3::100"}]
sids: [{sid: "fc00:3::a", action: End.DX4, nh4: 198.18.2.2}]
`, m)
	}
}

// Configure sets the lab's forwarding up in mode (HVModes) and checks that the VMs reach each other.
func (h *Hypervisor) Configure(mode string) error {
	h.Mode = mode
	switch mode {
	case HVPlain:
		if err := h.ip("hv1", "route add 198.18.2.0/24 via 198.18.10.2"); err != nil {
			return err
		}
		if err := h.ip("p", "route add 198.18.1.0/24 via 198.18.10.1", "route add 198.18.2.0/24 via 198.18.10.6"); err != nil {
			return err
		}
		if err := h.ip("hv2", "route add 198.18.1.0/24 via 198.18.10.5"); err != nil {
			return err
		}
	case HVKernelSeg6:
		if err := h.ip("hv1", "sr tunsrc set fc00:1::100",
			"route add 198.18.2.0/24 encap seg6 mode encap segs fc00:2::1,fc00:3::a dev fab",
			"-6 route add fc00:1::a/128 encap seg6local action End.DX4 nh4 198.18.1.2 dev vm"); err != nil {
			return err
		}
		if err := h.ip("p", "-6 route add fc00:2::1/128 encap seg6local action End dev w"); err != nil {
			return err
		}
		if err := h.ip("hv2", "sr tunsrc set fc00:3::100",
			"route add 198.18.1.0/24 encap seg6 mode encap segs fc00:2::1,fc00:1::a dev fab",
			"-6 route add fc00:3::a/128 encap seg6local action End.DX4 nh4 198.18.2.2 dev vm"); err != nil {
			return err
		}
	case HVSeg6xXDP, HVSeg6xTC:
		hook := ""
		if mode == HVSeg6xTC {
			hook = "tc"
		} else {
			// A frame XDP redirects leaves with the checksum state of the bytes alone: a VM's
			// offloaded (not yet computed) TCP checksum would arrive wrong. So with XDP, VMs compute
			// their checksums, which turns their TSO off too: they send MTU-sized segments.
			for _, vm := range []string{"vm1", "vm2"} {
				if out, err := h.Exec(vm, "ethtool", "-K", "eth0", "tx", "off"); err != nil {
					return fmt.Errorf("%s: ethtool: %v: %s", vm, err, out)
				}
			}
		}
		for _, n := range HVRouters {
			f := filepath.Join(h.Dir, n+".yaml")
			if err := os.WriteFile(f, []byte(hvYAML(n, hook)), 0o600); err != nil {
				return err
			}
			if out, err := h.Seg6x(n, "apply", "-f", f); err != nil {
				return fmt.Errorf("%s: seg6x apply: %v: %s", n, err, out)
			}
		}
		// As on a real hypervisor, a daemon runs on each node: its programs cache next hops.
		if err := h.daemons().start(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("mode %q: want one of %s", mode, strings.Join(HVModes, ", "))
	}
	// The VMs resolve their gateways, the hypervisors their VMs (the first packets go through the kernel).
	for _, v := range [][2]string{{"vm1", HVVM2}, {"vm2", HVVM1}} {
		if out, err := h.Exec(v[0], "ping", "-c", "2", "-i", "0.2", "-W", "2", v[1]); err != nil {
			return fmt.Errorf("%s: %s does not reach %s: %v: %s", mode, v[0], v[1], err, out)
		}
	}
	fmt.Fprintf(h.Log, "hypervisor lab up in mode %s\n", mode)
	return nil
}

// Transfer runs one checked bulk transfer of n bytes each way between the VMs (vm1 connects to vm2),
// bounded by timeout, and returns its result.
func (h *Hypervisor) Transfer(n int64, timeout time.Duration) (BulkResult, error) {
	srv := exec.Command("ip", "netns", "exec", h.NS("vm2"), h.Tool, "bulk-server",
		"--port", strconv.Itoa(BulkPort), "--duration", (timeout + 5*time.Second).String())
	if err := srv.Start(); err != nil {
		return BulkResult{}, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	var out string
	var err error
	for i := 0; i < 50; i++ { // until the server listens
		out, err = h.Exec("vm1", h.Tool, "bulk", "--dst", fmt.Sprintf("%s:%d", HVVM2, BulkPort),
			"--bytes", strconv.FormatInt(n, 10), "--timeout", timeout.String())
		if err != nil || !strings.Contains(out, "connection refused") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return BulkResult{}, fmt.Errorf("bulk: %v: %s", err, out)
	}
	var res BulkResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		return res, fmt.Errorf("bulk output %q: %w", out, err)
	}
	res.From, res.To, res.Tenant = "vm1", "vm2", "t"
	return res, nil
}

// TCPCounters are a VM's TCP counters (its namespace's /proc/net/snmp and netstat).
type TCPCounters struct {
	OutSegs, RetransSegs, InCsumErrors uint64
}

// TCP reads a node's TCP counters.
func (h *Hypervisor) TCP(node string) (TCPCounters, error) {
	out, err := h.Exec(node, "cat", "/proc/net/snmp")
	if err != nil {
		return TCPCounters{}, err
	}
	var names, vals []string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "Tcp:") {
			continue
		}
		if names == nil {
			names = strings.Fields(line)
		} else {
			vals = strings.Fields(line)
		}
	}
	var c TCPCounters
	for i := 1; i < len(names) && i < len(vals); i++ {
		v, _ := strconv.ParseUint(vals[i], 10, 64)
		switch names[i] {
		case "OutSegs":
			c.OutSegs = v
		case "RetransSegs":
			c.RetransSegs = v
		case "InCsumErrors":
			c.InCsumErrors = v
		}
	}
	return c, nil
}

// LinkPackets is the number of packets a node's device has sent (tx) or received.
func (h *Hypervisor) LinkPackets(node, dev string, tx bool) (uint64, error) {
	dir := "rx_packets"
	if tx {
		dir = "tx_packets"
	}
	out, err := h.Exec(node, "cat", "/sys/class/net/"+dev+"/statistics/"+dir)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(out), 10, 64)
}
