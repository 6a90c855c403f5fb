// Package lab builds the seg6x namespace lab: two tenants with overlapping IPv4 space on two sites,
// an encap/decap PE on each site, a transit node doing End between them, and VLAN-tagged access
// ports. The demo (`seg6x-lab demo`) and the integration test (test/lab) both use it.
package lab

// topology.go: what a lab is made of (topology), and the nodes, links, addresses and per-node
// seg6x configs of the main lab. The BGP lab's are in bgptopology.go.

import (
	"fmt"
	"strings"
)

// topology is one lab's namespaces, links and addresses, and how its routers are configured.
type topology struct {
	routers   []string            // seg6x routers, in configuration order, each with a daemon
	others    []string            // namespaces that are neither seg6x routers nor hosts (kernel transit, route reflector)
	hosts     []Host              // tenant hosts, each behind an access port of its PE
	links     [][5]string         // veth pairs: [nsA, devA, nsB, devB, MAC of devA]
	setup     map[string][]string // `ip -n <ns>` lines per router and other node, run once the links exist
	resolve   [][2]string         // (node, address): fabric neighbors pinged before traffic
	bulk      bool                // Traffic also runs a checked bulk TCP transfer per tenant (site 1 <-> site 2)
	configure func(*Lab) error    // the routers' seg6x state, before their daemons start
	rrKind    string              // "frr" or "gobgpd": a route reflector runs in the node "rr" (BGP lab)
	rtc       bool                // BGP lab: route target constraint on every session
	cPEs      []string            // BGP lab with rtc: the PEs serving tenant C (BGPTenantCPEs, then SetTenantC)
	extraA    map[string][]string // BGP lab: prefixes a PE advertises in tenant A besides its own (AdvertiseInA)
	jumbo     bool                // fabric and tenant A's access links of MTU 9000 (Options.Fabric)
}

// JumboMTU is the MTU of the fabric lab's uplinks and tenant A's access links.
const JumboMTU = 9000

// linkMTU is the MTU of link lk (0: the default, 1500): in the fabric lab, the uplinks and tenant A's
// access links.
func (t topology) linkMTU(lk [5]string) int {
	if !t.jumbo {
		return 0
	}
	if strings.HasPrefix(lk[1], "fab") || strings.HasPrefix(lk[3], "fab") {
		return JumboMTU
	}
	for _, h := range t.hosts {
		if h.Name == lk[2] && h.Tenant == "A" {
			return JumboMTU
		}
	}
	return 0
}

// mainTopology is the lab of `seg6x-lab up`: hA1 hB1 | pe1 | p | pe2 | hA2 hB2, static SRv6 policies,
// addressed with classic SIDs or (o.USID) with uSID containers (sidPlan).
func mainTopology(o Options) topology {
	plan := sidPlan{usid: o.USID, fabric: o.Fabric}
	t := topology{routers: routers, hosts: hosts, links: links, setup: setupLines(plan), bulk: true, jumbo: o.Fabric,
		resolve:   [][2]string{{"pe1", "fc00:a::2"}, {"p", "fc00:b::2"}, {"pe2", "fc00:b::1"}, {"p", "fc00:a::1"}},
		configure: func(l *Lab) error { return l.configure(plan) }}
	if o.Fabric {
		t.links = append(append([][5]string(nil), secondUplinks...), links...)
		t.resolve = append(t.resolve, [][2]string{{"pe1", "fc00:a2::2"}, {"p", "fc00:b2::2"}, {"pe2", "fc00:b2::1"}, {"p", "fc00:a2::1"}}...)
	}
	return t
}

// secondUplinks are the fabric lab's parallel links: pe1 fab2 - p w2 (fc00:a2::/64), p e2 - pe2 fab2
// (fc00:b2::/64).
var secondUplinks = [][5]string{
	{"pe1", "fab2", "p", "w2", "02:00:00:01:00:02"},
	{"p", "e2", "pe2", "fab2", "02:00:00:02:00:02"},
}

// Host is a tenant host behind an access port.
type Host struct {
	Name   string // namespace suffix
	Tenant string // "A" or "B"
	Site   int    // 1 or 2
	VLAN   uint16
	Addr   string // IPv4 with prefix length
	MAC    string
	PE     string // the PE it hangs off
	PEDev  string // the PE's interface towards it
	PEMAC  string
	GW     string
	Addr6  string // tenant A is dual-stack: IPv6 with prefix length ("" for IPv4-only tenant B)
	GW6    string
}

// siteHosts are the two hosts of a site behind its PE: tenant A (dual-stack, VLAN 100) and tenant B
// (IPv4 only, VLAN 200), both at 198.18.<site>.2/24 (the tenants overlap), gateway .1.
func siteHosts(site int, pe string) []Host {
	n := fmt.Sprint(site)
	mac := func(tenant, host string) string { return fmt.Sprintf("02:00:00:%02x:0%s:%s", site, tenant, host) }
	return []Host{
		{"hA" + n, "A", site, 100, "198.18." + n + ".2/24", mac("a", "02"), pe, "ta", mac("a", "01"), "198.18." + n + ".1",
			"2001:db8:" + n + "::2/64", "2001:db8:" + n + "::1"},
		{"hB" + n, "B", site, 200, "198.18." + n + ".2/24", mac("b", "02"), pe, "tb", mac("b", "01"), "198.18." + n + ".1", "", ""},
	}
}

var hosts = append(siteHosts(1, "pe1"), siteHosts(2, "pe2")...)

// Routers of the lab, in the order they are configured.
var routers = []string{"pe1", "p", "pe2"}

// setupLines are run as `ip -n <ns> ...` lines per namespace after the links exist. Each router routes
// the other nodes' locators (plan.locators) to its fabric neighbor towards them.
func setupLines(plan sidPlan) map[string][]string {
	// via routes loc over the first (and, in the fabric lab, second) link: "nexthop via gw dev dev" each.
	via := func(loc, gw, dev, gw2, dev2 string) string {
		if !plan.fabric {
			return "-6 route add " + loc + " via " + gw + " dev " + dev
		}
		return "-6 route add " + loc + " nexthop via " + gw + " dev " + dev + " nexthop via " + gw2 + " dev " + dev2
	}
	// second is the address on the parallel link's subnet: fc00:a::1 -> fc00:a2::1.
	second := func(a string) string { return strings.Replace(a, "::", "2::", 1) }
	pe := func(site int, fab, peer string, others ...int) []string {
		n := fmt.Sprint(site)
		node := 2*site - 1 // pe1: node 1, pe2: node 3
		lines := []string{
			"link set lo up", "link set fab up", "link set ta up", "link set tb up",
			fmt.Sprintf("-6 addr add fc00:%d::1/128 dev lo", node),
			"-6 addr add " + fab + "/64 dev fab nodad",
		}
		if plan.fabric {
			lines = append(lines, "link set fab2 up", "-6 addr add "+second(fab)+"/64 dev fab2 nodad")
		}
		for _, o := range others {
			for _, loc := range plan.locators(o) {
				lines = append(lines, via(loc, peer, "fab", second(peer), "fab2"))
			}
		}
		return append(lines,
			"route add 198.18."+n+".0/24 dev ta table 100", // tenant A: End.DT46 (uSID lab: uDT4, uDT6) table
			"-6 route add 2001:db8:"+n+"::/64 dev ta table 100",
			"route add 198.18."+n+".0/24 dev tb",           // tenant B: End.DX4 next hop
			"route add 198.18."+n+".0/24 dev tb table 200", // and its table (uSID lab: uDT4)
			"neigh add 198.18."+n+".2 lladdr 02:00:00:0"+n+":0a:02 dev ta nud permanent",
			"-6 neigh add 2001:db8:"+n+"::2 lladdr 02:00:00:0"+n+":0a:02 dev ta nud permanent",
			"neigh add 198.18."+n+".2 lladdr 02:00:00:0"+n+":0b:02 dev tb nud permanent",
		)
	}
	p := []string{
		"link set lo up", "link set w up", "link set e up",
		"-6 addr add fc00:2::1/128 dev lo",
		"-6 addr add fc00:a::2/64 dev w nodad",
		"-6 addr add fc00:b::1/64 dev e nodad",
	}
	if plan.fabric {
		p = append(p, "link set w2 up", "link set e2 up", "-6 addr add fc00:a2::2/64 dev w2 nodad", "-6 addr add fc00:b2::1/64 dev e2 nodad")
	}
	for _, loc := range plan.locators(1) {
		p = append(p, via(loc, "fc00:a::1", "w", "fc00:a2::1", "w2"))
	}
	for _, loc := range plan.locators(3) {
		p = append(p, via(loc, "fc00:b::2", "e", "fc00:b2::2", "e2"))
	}
	return map[string][]string{"pe1": pe(1, "fc00:a::1", "fc00:a::2", 2, 3), "p": p, "pe2": pe(2, "fc00:b::2", "fc00:b::1", 1, 2)}
}

// links are veth pairs: [nsA, devA, nsB, devB, MAC of devA].
var links = append([][5]string{
	{"pe1", "fab", "p", "w", "02:00:00:01:00:01"},
	{"p", "e", "pe2", "fab", "02:00:00:02:00:01"},
}, hostLinks(hosts)...)

// hostLinks are the links from each host's PE port to its eth0.
func hostLinks(hs []Host) [][5]string {
	var out [][5]string
	for _, h := range hs {
		out = append(out, [5]string{h.PE, h.PEDev, h.Name, "eth0", h.PEMAC})
	}
	return out
}

// Hosts returns the main lab's tenant hosts.
func Hosts() []Host { return append([]Host(nil), hosts...) }

// Hosts returns this lab's tenant hosts.
func (l *Lab) Hosts() []Host { return append([]Host(nil), l.topo.hosts...) }
