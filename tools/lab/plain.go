package lab

// plain.go: the reference for the lab's bulk figure: plain kernel IP routing on the same namespaces,
// links and hosts, without seg6x.

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seg6x/seg6x/tools/testsupport"
)

// PlainBulk detaches seg6x from every router (seg6x detach --all), routes tenant A's two sites as
// plain IPv4 through pe1, p and pe2 (each PE's tenant A port an access port of the tenant's VLAN,
// IPv4 routes over the IPv6 fabric next hops), and runs Traffic's checked bulk TCP transfer between
// tenant A's hosts. It leaves the lab that way: run it last, before Down.
func (l *Lab) PlainBulk() (BulkResult, error) {
	var a []Host
	for _, h := range l.topo.hosts {
		if h.Tenant == "A" {
			a = append(a, h)
		}
	}
	if len(a) != 2 || len(l.topo.routers) != 3 {
		return BulkResult{}, fmt.Errorf("plain routing: the main lab's tenant A hosts and routers are needed")
	}
	for _, r := range l.topo.routers {
		if _, err := l.Seg6x(r, "detach", "--all"); err != nil {
			return BulkResult{}, fmt.Errorf("plain routing: detach %s: %w", r, err)
		}
	}
	// fabric: each PE's fabric address and p's address on that link (setupLines).
	fabric := map[int][2]string{1: {"fc00:a::1", "fc00:a::2"}, 2: {"fc00:b::2", "fc00:b::1"}}
	var pLines []string
	for _, h := range a {
		other := a[0]
		if other.Name == h.Name {
			other = a[1]
		}
		prefix := func(x Host) string { return netip.MustParsePrefix(x.Addr).Masked().String() }
		// The PE's port to the host becomes an access port as the host's is (the lab's tc program: this
		// kernel may have no VLAN devices), addressed as the tenant's gateway.
		if _, err := l.Exec(h.PE, l.Tool, "port", "--dev", h.PEDev, "--vlan", fmt.Sprint(h.VLAN),
			"--pin", filepath.Join(l.NodeDir(h.PE), "bpf", "lab-port")); err != nil {
			return BulkResult{}, fmt.Errorf("plain routing: access port on %s: %w", h.PE, err)
		}
		lines := []string{
			"route del " + prefix(h) + " dev tb", // tenant B's End.DX4 next hop holds the same prefix
			"addr add " + h.GW + "/24 dev " + h.PEDev,
			"neigh replace " + strings.Split(h.Addr, "/")[0] + " lladdr " + h.MAC + " dev " + h.PEDev + " nud permanent",
			"route add " + prefix(other) + " via inet6 " + fabric[h.Site][1] + " dev fab",
		}
		if err := testsupport.IPLines(l.NS(h.PE), lines...); err != nil {
			return BulkResult{}, fmt.Errorf("plain routing on %s: %w", h.PE, err)
		}
		dev := map[int]string{1: "w", 2: "e"}[h.Site]
		pLines = append(pLines, "route add "+prefix(h)+" via inet6 "+fabric[h.Site][0]+" dev "+dev)
	}
	if err := testsupport.IPLines(l.NS("p"), pLines...); err != nil {
		return BulkResult{}, fmt.Errorf("plain routing on p: %w", err)
	}
	from, to := a[0], a[1]
	if from.Site != 1 {
		from, to = to, from
	}
	srv := exec.Command("ip", "netns", "exec", l.NS(to.Name), l.Tool, "bulk-server", "--port", strconv.Itoa(BulkPort),
		"--duration", "90s")
	if err := srv.Start(); err != nil {
		return BulkResult{}, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	time.Sleep(500 * time.Millisecond) // let it bind
	l.logf("plain routing (no seg6x): %s <-> %s: checked bulk TCP, %d MB each way", from.Name, to.Name, BulkBytes>>20)
	out, err := l.Exec(from.Name, l.Tool, "bulk", "--dst", fmt.Sprintf("%s:%d", strings.Split(to.Addr, "/")[0], BulkPort),
		"--bytes", strconv.Itoa(BulkBytes), "--seed", "99", "--timeout", "60s")
	var br BulkResult
	if jerr := json.Unmarshal([]byte(out), &br); jerr != nil {
		return BulkResult{}, fmt.Errorf("plain routing: bulk client: %v %v", err, jerr)
	}
	br.Tenant, br.From, br.To = "A", from.Name, to.Name
	return br, nil
}
