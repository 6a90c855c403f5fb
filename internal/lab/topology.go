// Package lab builds the seg6x namespace lab: two tenants with overlapping IPv4 space on two sites,
// an encap/decap PE on each site, a transit node doing End between them, and VLAN-tagged access
// ports. The demo (`seg6x lab demo`) and the integration test (test/lab) both use it.
package lab

// topology.go: what a lab is made of (topology), and the nodes, links, addresses and per-node
// seg6x configs of the main lab. The BGP lab's are in bgptopology.go.

import "fmt"

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
}

// mainTopology is the lab of `seg6x lab up`: hA1 hB1 | pe1 | p | pe2 | hA2 hB2, static SRv6 policies.
func mainTopology() topology {
	return topology{routers: routers, hosts: hosts, links: links, setup: setupLines(), bulk: true,
		resolve:   [][2]string{{"pe1", "fc00:a::2"}, {"p", "fc00:b::2"}, {"pe2", "fc00:b::1"}, {"p", "fc00:a::1"}},
		configure: (*Lab).configure}
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

// setup is run as `ip -n <ns> ...` lines per namespace after the links exist.
func setupLines() map[string][]string {
	return map[string][]string{
		"pe1": {
			"link set lo up", "link set fab up", "link set ta up", "link set tb up",
			"-6 addr add fc00:1::1/128 dev lo",
			"-6 addr add fc00:a::1/64 dev fab nodad",
			"-6 route add fc00:2::/48 via fc00:a::2 dev fab",
			"-6 route add fc00:3::/48 via fc00:a::2 dev fab",
			"route add 198.18.1.0/24 dev ta table 100", // tenant A: End.DT46 table
			"-6 route add 2001:db8:1::/64 dev ta table 100",
			"route add 198.18.1.0/24 dev tb", // tenant B: End.DX4 next hop
			"neigh add 198.18.1.2 lladdr 02:00:00:01:0a:02 dev ta nud permanent",
			"-6 neigh add 2001:db8:1::2 lladdr 02:00:00:01:0a:02 dev ta nud permanent",
			"neigh add 198.18.1.2 lladdr 02:00:00:01:0b:02 dev tb nud permanent",
		},
		"p": {
			"link set lo up", "link set w up", "link set e up",
			"-6 addr add fc00:2::1/128 dev lo",
			"-6 addr add fc00:a::2/64 dev w nodad",
			"-6 addr add fc00:b::1/64 dev e nodad",
			"-6 route add fc00:1::/48 via fc00:a::1 dev w",
			"-6 route add fc00:3::/48 via fc00:b::2 dev e",
		},
		"pe2": {
			"link set lo up", "link set fab up", "link set ta up", "link set tb up",
			"-6 addr add fc00:3::1/128 dev lo",
			"-6 addr add fc00:b::2/64 dev fab nodad",
			"-6 route add fc00:1::/48 via fc00:b::1 dev fab",
			"-6 route add fc00:2::/48 via fc00:b::1 dev fab",
			"route add 198.18.2.0/24 dev ta table 100",
			"-6 route add 2001:db8:2::/64 dev ta table 100",
			"route add 198.18.2.0/24 dev tb",
			"neigh add 198.18.2.2 lladdr 02:00:00:02:0a:02 dev ta nud permanent",
			"-6 neigh add 2001:db8:2::2 lladdr 02:00:00:02:0a:02 dev ta nud permanent",
			"neigh add 198.18.2.2 lladdr 02:00:00:02:0b:02 dev tb nud permanent",
		},
	}
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

// Configs are the seg6x state of each router. pe1 is configured with CLI commands and pe2 and p
// with YAML files, so the lab exercises both front ends (both end in the same Apply).
var pe1Commands = [][]string{
	{"attach", "fab", "--role", "fabric"},
	{"attach", "ta", "tb", "--role", "access"},
	{"domain", "set", "locators", "fc00:1::/48,fc00:2::/48,fc00:3::/48", "sources", "fc00::/16"},
	{"tenant", "add", "A", "table", "100", "vlan", "100", "dev", "ta", "gateway", "198.18.1.1", "gateway", "2001:db8:1::1", "mss-clamp", "auto"},
	{"tenant", "add", "B", "table", "200", "vlan", "200", "dev", "tb", "gateway", "198.18.1.1"},
	{"route", "add", "198.18.2.0/24", "tenant", "A", "encap", "seg6", "mode", "encap", "segs", "fc00:2::1,fc00:3::a", "src", "fc00:1::1"},
	{"route", "add", "2001:db8:2::/64", "tenant", "A", "encap", "seg6", "mode", "encap", "segs", "fc00:2::1,fc00:3::a", "src", "fc00:1::1"},
	{"route", "add", "198.18.2.0/24", "tenant", "B", "encap", "seg6", "mode", "encap.red", "segs", "fc00:2::1,fc00:3::b", "src", "fc00:1::1"},
	{"sid", "add", "fc00:1::a", "action", "End.DT46", "tenant", "A", "vlan", "100"},
	{"sid", "add", "fc00:1::b", "action", "End.DX4", "nh4", "198.18.1.2", "vlan", "200"},
}

const pYAML = `# p: transit node, End on its SID
interfaces: [{name: w, role: fabric}, {name: e, role: fabric}]
domain: {locators: ["fc00:1::/48", "fc00:2::/48", "fc00:3::/48"], sources: ["fc00::/16"]}
sids:
  - {sid: "fc00:2::1", action: End}
`

const pe2YAML = `# pe2: site 2 PE. Tenant A (dual-stack) decapsulates with End.DT46 (table 100), tenant B with End.DX4.
# fab faces the SR domain; ta and tb are access ports (role auto would say the same: tenants are on them).
interfaces: [{name: fab, role: fabric}, {name: ta}, {name: tb}]
domain:
  locators: ["fc00:1::/48", "fc00:2::/48", "fc00:3::/48"]   # the domain's SID space: refused from tenants
  sources: ["fc00::/16"]                                   # SIDs only from the domain's own addresses
# gateway: the address the hosts route through, source of the ICMP errors for packets too big for
# the tunnel (docs/mtu.md). Tenant A's TCP SYNs are clamped to an MSS that fits the tunnel; tenant B's
# hosts find the tunnel MTU by path MTU discovery, from those ICMP errors.
tenants:
  - {name: A, table: 100, ports: [{dev: ta, vlan: 100}], gateway: [198.18.2.1, "2001:db8:2::1"], mss_clamp: auto}
  - {name: B, table: 200, ports: [{dev: tb, vlan: 200}], gateway: [198.18.2.1]}
routes:
  - {tenant: A, prefix: 198.18.1.0/24, mode: encap, segs: ["fc00:2::1", "fc00:1::a"], src: "fc00:3::1"}
  - {tenant: A, prefix: "2001:db8:1::/64", mode: encap, segs: ["fc00:2::1", "fc00:1::a"], src: "fc00:3::1"}
  - {tenant: B, prefix: 198.18.1.0/24, mode: encap.red, segs: ["fc00:2::1", "fc00:1::b"], src: "fc00:3::1"}
sids:
  - {sid: "fc00:3::a", action: End.DT46, tenant: A, vlan: 100}
  - {sid: "fc00:3::b", action: End.DX4, nh4: 198.18.2.2, vlan: 200}
`

// Hosts returns the main lab's tenant hosts.
func Hosts() []Host { return append([]Host(nil), hosts...) }

// Hosts returns this lab's tenant hosts.
func (l *Lab) Hosts() []Host { return append([]Host(nil), l.topo.hosts...) }
