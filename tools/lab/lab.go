package lab

// lab.go: bringing a lab (its topology: the main lab's or the BGP lab's) up and down. Every namespace
// is named <prefix>-<node>, every state directory lives under Dir, and Down removes all of it (also
// after a partial Up, and from another process than the one that ran Up).

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/seg6x/seg6x/tools/testsupport"
)

// Lab is one instance of the lab.
type Lab struct {
	Prefix string    // namespace name prefix
	Dir    string    // state root: <Dir>/<node> per router and per host
	Bin    string    // the seg6x binary run inside the namespaces
	Tool   string    // the seg6x-lab binary: the hosts' helpers (access ports, echo, bulk, probe)
	Log    io.Writer // progress output
	topo   topology
	rr     *RR // the route reflector this process started (BGP lab)
}

// New returns a lab whose namespaces start with prefix, using the seg6x binary bin and the seg6x-lab
// binary tool (its hidden helpers, on the hosts).
func New(prefix, bin, tool string, log io.Writer) *Lab {
	return NewWith(prefix, bin, tool, Options{}, log)
}

// NewWith is New for a variant of the main lab (Options).
func NewWith(prefix, bin, tool string, o Options, log io.Writer) *Lab {
	if log == nil {
		log = io.Discard
	}
	return &Lab{Prefix: prefix, Dir: filepath.Join("/run/seg6x-lab", prefix), Bin: bin, Tool: tool, Log: log, topo: mainTopology(o)}
}

// NS is the namespace name of a node.
func (l *Lab) NS(node string) string { return l.Prefix + "-" + node }

// NodeDir is the seg6x instance directory of a node.
func (l *Lab) NodeDir(node string) string { return filepath.Join(l.Dir, node) }

// withInstance are the nodes with a seg6x instance directory and its bpffs: the routers, and the
// hosts (the pins of their access ports).
func (l *Lab) withInstance() []string {
	n := append([]string(nil), l.topo.routers...)
	for _, h := range l.topo.hosts {
		n = append(n, h.Name)
	}
	return n
}

// Nodes are every namespace of the lab (without its prefix).
func (l *Lab) Nodes() []string { return append(l.withInstance(), l.topo.others...) }

// accessSysctls keep a PE's IPv6 off its tenant ports: IPv4-only tenants' ports have none, dual-stack
// tenants' ports have IPv6 on (for their routes and neighbors) but no address, not even link-local.
func (l *Lab) accessSysctls(node string) []string {
	var out []string
	for _, h := range l.topo.hosts {
		if h.PE != node {
			continue
		}
		if h.Addr6 == "" {
			out = append(out, "net.ipv6.conf."+h.PEDev+".disable_ipv6=1")
		} else {
			out = append(out, "net.ipv6.conf."+h.PEDev+".addr_gen_mode=1", "net.ipv6.conf."+h.PEDev+".accept_ra=0")
		}
	}
	return out
}

// IP runs `ip -n <ns of node> args...` and returns its output.
func (l *Lab) IP(node string, args ...string) (string, error) {
	return testsupport.IP(l.NS(node), args...)
}

// Exec runs a command inside a node's namespace and returns its output.
func (l *Lab) Exec(node string, args ...string) (string, error) {
	return testsupport.NetnsExec(l.NS(node), args...)
}

// Seg6x runs the seg6x CLI inside a router's namespace on that router's instance.
func (l *Lab) Seg6x(node string, args ...string) (string, error) {
	return l.Exec(node, append([]string{l.Bin, "--dir", l.NodeDir(node)}, args...)...)
}

func (l *Lab) logf(format string, args ...any) { fmt.Fprintf(l.Log, format+"\n", args...) }

// Up builds the whole lab and configures seg6x on every router. On error the caller runs Down.
func (l *Lab) Up() error {
	l.logf("lab %s: creating namespaces", l.Prefix)
	for _, n := range l.Nodes() {
		if err := testsupport.AddNetns(l.NS(n)); err != nil {
			return err
		}
	}
	for _, n := range l.withInstance() {
		// The bpffs is mounted here, in this mount namespace: one mounted by seg6x inside
		// `ip netns exec` would vanish (with every pin) when that command's mount namespace does.
		if err := testsupport.MountInstance(l.NodeDir(n)); err != nil {
			return err
		}
	}
	for _, lk := range l.topo.links {
		if err := testsupport.Run("ip", "link", "add", "s6xtmp0", "address", lk[4], "netns", l.NS(lk[0]), "type", "veth",
			"peer", "name", "s6xtmp1", "netns", l.NS(lk[2])); err != nil {
			return err
		}
		if _, err := l.IP(lk[0], "link", "set", "s6xtmp0", "name", lk[1]); err != nil {
			return err
		}
		if _, err := l.IP(lk[2], "link", "set", "s6xtmp1", "name", lk[3]); err != nil {
			return err
		}
		if mtu := l.topo.linkMTU(lk); mtu > 0 {
			if _, err := l.IP(lk[0], "link", "set", lk[1], "mtu", fmt.Sprint(mtu)); err != nil {
				return err
			}
			if _, err := l.IP(lk[2], "link", "set", lk[3], "mtu", fmt.Sprint(mtu)); err != nil {
				return err
			}
		}
	}
	for _, r := range append(append([]string(nil), l.topo.routers...), l.topo.others...) {
		if err := testsupport.Sysctl(l.NS(r), "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.conf.all.forwarding=1"); err != nil {
			return err
		}
		if err := testsupport.Sysctl(l.NS(r), l.accessSysctls(r)...); err != nil {
			return err
		}
		if err := testsupport.IPLines(l.NS(r), l.topo.setup[r]...); err != nil {
			return err
		}
	}
	for _, h := range l.topo.hosts {
		if err := l.setupHost(h); err != nil {
			return err
		}
	}
	// Resolve the fabric neighbors before traffic (the fast path hands the first packets to the
	// kernel otherwise; that fallback has its own packet tests).
	for _, p := range l.topo.resolve {
		if _, err := l.Exec(p[0], "ping", "-6", "-c", "1", "-W", "2", p[1]); err != nil {
			return err
		}
	}
	if err := l.topo.configure(l); err != nil {
		return err
	}
	return l.startDaemons()
}

func (l *Lab) setupHost(h Host) error {
	// IPv4-only hosts (tenant B) have no IPv6; tenant A's have a static address, route and gateway
	// neighbor and nothing automatic: no link-local address, router or neighbor solicitations.
	sysctls := []string{"net.ipv6.conf.all.disable_ipv6=1"}
	if h.Addr6 != "" {
		sysctls = []string{"net.ipv6.conf.eth0.addr_gen_mode=1", "net.ipv6.conf.eth0.accept_ra=0", "net.ipv6.conf.eth0.accept_dad=0"}
	}
	if err := testsupport.Sysctl(l.NS(h.Name), sysctls...); err != nil {
		return err
	}
	lines := []string{
		"link set lo up",
		"link set eth0 address " + h.MAC,
		"link set eth0 up",
		"addr add " + h.Addr + " dev eth0",
		"route add default via " + h.GW + " dev eth0",
		"neigh add " + h.GW + " lladdr " + h.PEMAC + " dev eth0 nud permanent",
	}
	if h.Addr6 != "" {
		lines = append(lines, "-6 addr add "+h.Addr6+" dev eth0 nodad",
			"-6 route add default via "+h.GW6+" dev eth0",
			"-6 neigh add "+h.GW6+" lladdr "+h.PEMAC+" dev eth0 nud permanent")
	}
	if err := testsupport.IPLines(l.NS(h.Name), lines...); err != nil {
		return err
	}
	// GRO gives the veth NAPI, which frames XDP-redirected into it need. Checksum offload off: a
	// veth would otherwise hand the PE frames with CHECKSUM_PARTIAL (checksum not yet written),
	// which no wire ever carries. VLAN insertion offload off: the access port's tag (skb metadata)
	// is written into the frame before the stack segments a GSO aggregate (software GSO, as a VM's
	// virtio NIC hands its host 64 KB buffers), so every segment leaves tagged and MTU-sized.
	if _, err := l.Exec(h.Name, "ethtool", "-K", "eth0", "gro", "on", "tx", "off", "txvlan", "off", "gso", "on"); err != nil {
		return err
	}
	if _, err := l.Exec(h.Name, l.Tool, "port", "--dev", "eth0", "--vlan", fmt.Sprint(h.VLAN),
		"--pin", filepath.Join(l.NodeDir(h.Name), "bpf")); err != nil {
		return err
	}
	return nil
}

// configure gives the main lab's routers their seg6x state (sidplan.go): pe1 by CLI commands, p and
// pe2 by YAML files.
func (l *Lab) configure(plan sidPlan) error {
	l.logf("lab %s: pe1 configured with CLI commands:", l.Prefix)
	for _, c := range plan.peCommands() {
		l.logf("  seg6x %s", strings.Join(c, " "))
		if _, err := l.Seg6x("pe1", c...); err != nil {
			return err
		}
	}
	for node, y := range map[string]string{"p": plan.pYAML(), "pe2": plan.pe2YAML()} {
		f := filepath.Join(l.Dir, node+".yaml")
		if err := os.WriteFile(f, []byte(y), 0o600); err != nil {
			return err
		}
		l.logf("lab %s: %s configured with seg6x apply -f %s", l.Prefix, node, f)
		if _, err := l.Seg6x(node, "apply", "-f", f); err != nil {
			return err
		}
	}
	return nil
}

// Down removes every namespace and state directory of the lab; it is safe to call more than once
// and after a partial Up.
func (l *Lab) Down() {
	l.stopDaemons()
	if l.topo.rrKind != "" {
		l.rr.Stop()
		l.rr = nil
		StopRRDir(l.NodeDir("rr")) // one started by another process (`seg6x-lab up --bgp`)
	}
	for _, n := range l.Nodes() {
		testsupport.DelNetns(l.NS(n))
		testsupport.UnmountInstance(l.NodeDir(n))
	}
	_ = os.RemoveAll(l.Dir)
}
