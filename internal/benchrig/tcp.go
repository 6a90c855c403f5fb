package benchrig

// tcp.go: single-flow TCP (iperf3) from a host through an encap node, a transit node and a decap
// node to another host: over seg6x, over the kernel's seg6, and over plain IPv4 routing (no overlay).

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

	"github.com/seg6x/seg6x/internal/testsupport"
)

// TCPResult is one mode of `seg6x bench tcp`.
type TCPResult struct {
	Mode       string  `json:"mode"` // plain | kernel_seg6 | seg6x
	Gbps       float64 `json:"gbps"`
	Retransmit int     `json:"retransmits"`
	VsPlain    float64 `json:"ratio_to_plain"`
}

type tcpLab struct {
	prefix, bin, dir string
}

func (t *tcpLab) ns(n string) string { return t.prefix + "-" + n }

func (t *tcpLab) ip(node string, line string) error { return testsupport.IPLines(t.ns(node), line) }

func (t *tcpLab) exec(node string, args ...string) error {
	_, err := testsupport.NetnsExec(t.ns(node), args...)
	return err
}

var tcpNodes = []string{"h1", "pe1", "p", "pe2", "h2"}

func (t *tcpLab) down() {
	for _, n := range tcpNodes {
		testsupport.DelNetns(t.ns(n))
		testsupport.UnmountInstance(filepath.Join(t.dir, n))
	}
	_ = os.RemoveAll(t.dir)
}

// up builds the path h1 - pe1 - p - pe2 - h2 with IPv4 and IPv6 addressing and no forwarding
// configuration of either overlay.
func (t *tcpLab) up() error {
	for _, n := range tcpNodes {
		if err := testsupport.AddNetns(t.ns(n)); err != nil {
			return err
		}
		if err := testsupport.MountInstance(filepath.Join(t.dir, n)); err != nil {
			return err
		}
	}
	links := [][4]string{{"h1", "eth0", "pe1", "ha"}, {"pe1", "fab", "p", "w"}, {"p", "e", "pe2", "fab"}, {"pe2", "ha", "h2", "eth0"}}
	for _, l := range links {
		if err := testsupport.Run("ip", "link", "add", "s6ttmp0", "netns", t.ns(l[0]), "type", "veth", "peer", "name", "s6ttmp1", "netns", t.ns(l[2])); err != nil {
			return err
		}
		if err := t.ip(l[0], "link set s6ttmp0 name "+l[1]); err != nil {
			return err
		}
		if err := t.ip(l[2], "link set s6ttmp1 name "+l[3]); err != nil {
			return err
		}
		if l[1] == "fab" || l[1] == "e" { // fabric links carry 1500-byte tenant packets plus the outer headers
			if err := t.ip(l[0], "link set "+l[1]+" mtu 1600"); err != nil {
				return err
			}
			if err := t.ip(l[2], "link set "+l[3]+" mtu 1600"); err != nil {
				return err
			}
		}
	}
	cfg := map[string][]string{
		"h1": {"addr add 198.18.1.2/24 dev eth0", "route add default via 198.18.1.1"},
		"h2": {"addr add 198.18.2.2/24 dev eth0", "route add default via 198.18.2.1"},
		"pe1": {"addr add 198.18.1.1/24 dev ha", "addr add 198.18.10.1/30 dev fab", "-6 addr add fc00:a::1/64 dev fab nodad",
			"-6 addr add fc00:1::100/128 dev lo", "-6 route add fc00:2::/48 via fc00:a::2", "-6 route add fc00:3::/48 via fc00:a::2"},
		"p": {"addr add 198.18.10.2/30 dev w", "addr add 198.18.10.5/30 dev e", "-6 addr add fc00:a::2/64 dev w nodad",
			"-6 addr add fc00:b::1/64 dev e nodad", "-6 route add fc00:1::/48 via fc00:a::1", "-6 route add fc00:3::/48 via fc00:b::2"},
		"pe2": {"addr add 198.18.2.1/24 dev ha", "addr add 198.18.10.6/30 dev fab", "-6 addr add fc00:b::2/64 dev fab nodad",
			"-6 addr add fc00:3::100/128 dev lo", "-6 route add fc00:1::/48 via fc00:b::1", "-6 route add fc00:2::/48 via fc00:b::1"},
	}
	for _, n := range tcpNodes {
		if err := t.ip(n, "link set lo up"); err != nil {
			return err
		}
		out, _ := testsupport.IP(t.ns(n), "-o", "link", "show")
		for _, dev := range []string{"eth0", "ha", "fab", "w", "e"} {
			if strings.Contains(out, ": "+dev+"@") {
				if err := t.ip(n, "link set "+dev+" up"); err != nil {
					return err
				}
			}
		}
		if err := testsupport.IPLines(t.ns(n), cfg[n]...); err != nil {
			return err
		}
		if err := testsupport.Sysctl(t.ns(n), "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.conf.all.forwarding=1",
			"net.ipv6.conf.all.seg6_enabled=1", "net.ipv6.conf.default.seg6_enabled=1", "net.ipv4.conf.all.rp_filter=0"); err != nil {
			return err
		}
	}
	for _, n := range []string{"pe1", "p", "pe2"} {
		for _, dev := range []string{"fab", "w", "e", "ha"} {
			_ = testsupport.Sysctl(t.ns(n), "net.ipv6.conf."+dev+".seg6_enabled=1")
		}
	}
	// Resolve the fabric's IPv6 neighbors first (retrying while the new links settle).
	for _, nb := range [][2]string{{"pe1", "fc00:a::2"}, {"p", "fc00:b::2"}, {"pe2", "fc00:b::1"}, {"p", "fc00:a::1"}} {
		if err := t.exec(nb[0], "ping", "-6", "-c", "1", "-w", "5", nb[1]); err != nil {
			return err
		}
	}
	// Hosts: GRO gives their veth NAPI (frames XDP-redirected into a veth need it); no offloads, so
	// every mode carries MTU-sized segments as a wire would.
	for _, h := range []string{"h1", "h2"} {
		if err := t.exec(h, "ethtool", "-K", "eth0", "gro", "on", "tx", "off", "tso", "off", "gso", "off"); err != nil {
			return err
		}
	}
	return nil
}

func (t *tcpLab) configure(mode string) error {
	switch mode {
	case "plain":
		for _, l := range [][2]string{{"pe1", "route add 198.18.2.0/24 via 198.18.10.2"}, {"p", "route add 198.18.1.0/24 via 198.18.10.1"},
			{"p", "route add 198.18.2.0/24 via 198.18.10.6"}, {"pe2", "route add 198.18.1.0/24 via 198.18.10.5"}} {
			if err := t.ip(l[0], l[1]); err != nil {
				return err
			}
		}
	case "kernel_seg6":
		for _, l := range [][2]string{
			{"pe1", "sr tunsrc set fc00:1::100"},
			{"pe1", "route add 198.18.2.0/24 encap seg6 mode encap segs fc00:2::1,fc00:3::a dev fab"},
			{"pe1", "-6 route add fc00:1::a/128 encap seg6local action End.DX4 nh4 198.18.1.2 dev fab"},
			{"p", "-6 route add fc00:2::1/128 encap seg6local action End dev w"},
			{"pe2", "sr tunsrc set fc00:3::100"},
			{"pe2", "route add 198.18.1.0/24 encap seg6 mode encap segs fc00:2::1,fc00:1::a dev fab"},
			{"pe2", "-6 route add fc00:3::a/128 encap seg6local action End.DX4 nh4 198.18.2.2 dev fab"},
		} {
			if err := t.ip(l[0], l[1]); err != nil {
				return err
			}
		}
	case "seg6x":
		ymls := map[string]string{
			"pe1": `interfaces: [{name: ha}, {name: fab}]
tenants: [{name: t, table: 100, ports: [{dev: ha}]}]
routes: [{tenant: t, prefix: 198.18.2.0/24, segs: ["fc00:2::1", "fc00:3::a"], src: "fc00:1::100"}]
sids: [{sid: "fc00:1::a", action: End.DX4, nh4: 198.18.1.2}]
`,
			"p": "interfaces: [{name: w}, {name: e}]\nsids: [{sid: \"fc00:2::1\", action: End}]\n",
			"pe2": `interfaces: [{name: ha}, {name: fab}]
tenants: [{name: t, table: 100, ports: [{dev: ha}]}]
routes: [{tenant: t, prefix: 198.18.1.0/24, segs: ["fc00:2::1", "fc00:1::a"], src: "fc00:3::100"}]
sids: [{sid: "fc00:3::a", action: End.DX4, nh4: 198.18.2.2}]
`,
		}
		for _, n := range []string{"pe1", "p", "pe2"} {
			f := filepath.Join(t.dir, n+".yaml")
			if err := os.WriteFile(f, []byte(ymls[n]), 0o600); err != nil {
				return err
			}
			if err := t.exec(n, t.bin, "--dir", filepath.Join(t.dir, n), "apply", "-f", f); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("mode %q", mode)
	}
	// The hosts resolve their gateways; the PEs their hosts (the first packets go through the kernel).
	if err := t.exec("h1", "ping", "-c", "2", "-i", "0.2", "-W", "1", "198.18.2.2"); err != nil {
		return fmt.Errorf("%s: no connectivity before iperf3: %w", mode, err)
	}
	return nil
}

// iperf3 runs one single-flow TCP test of d from h1 to h2.
func (t *tcpLab) iperf3(d time.Duration) (float64, int, error) {
	srv := exec.Command("ip", "netns", "exec", t.ns("h2"), "iperf3", "-s", "-1")
	if err := srv.Start(); err != nil {
		return 0, 0, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	time.Sleep(300 * time.Millisecond)
	out, err := exec.Command("ip", "netns", "exec", t.ns("h1"), "iperf3", "-c", "198.18.2.2", "-t",
		strconv.Itoa(int(d.Seconds())), "-J").Output()
	if err != nil {
		return 0, 0, fmt.Errorf("iperf3: %v: %s", err, out)
	}
	var res struct {
		End struct {
			SumSent struct {
				Retransmits int `json:"retransmits"`
			} `json:"sum_sent"`
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return 0, 0, fmt.Errorf("iperf3 output: %w", err)
	}
	return res.End.SumReceived.BitsPerSecond / 1e9, res.End.SumSent.Retransmits, nil
}

// RunTCP measures each mode on a fresh path.
func RunTCP(bin string, d time.Duration, log io.Writer) ([]TCPResult, error) {
	var out []TCPResult
	for _, mode := range []string{"plain", "kernel_seg6", "seg6x"} {
		t := &tcpLab{prefix: "s6t", bin: bin, dir: filepath.Join("/run/seg6x-bench", "tcp")}
		t.down()
		err := t.up()
		if err == nil {
			err = t.configure(mode)
		}
		var gbps float64
		var retr int
		if err == nil {
			gbps, retr, err = t.iperf3(d)
		}
		t.down()
		if err != nil {
			return out, fmt.Errorf("%s: %w", mode, err)
		}
		fmt.Fprintf(log, "%-12s %.2f Gbps (%d retransmits)\n", mode, gbps, retr)
		out = append(out, TCPResult{Mode: mode, Gbps: gbps, Retransmit: retr})
	}
	for i := range out {
		if out[0].Gbps > 0 {
			out[i].VsPlain = out[i].Gbps / out[0].Gbps
		}
	}
	return out, nil
}
