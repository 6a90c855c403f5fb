// Package lab builds the seg6x namespace lab: two tenants with overlapping IPv4 space on two sites,
// an encap/decap PE on each site, a transit node doing End between them, and VLAN-tagged access
// ports. The demo (`seg6x lab demo`) and the integration test (test/lab) both use it.
package lab

// topology.go: the nodes, links, addresses and per-node seg6x configs of the lab.

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

var hosts = []Host{
	{"hA1", "A", 1, 100, "198.18.1.2/24", "02:00:00:01:0a:02", "pe1", "ta", "02:00:00:01:0a:01", "198.18.1.1", "2001:db8:1::2/64", "2001:db8:1::1"},
	{"hB1", "B", 1, 200, "198.18.1.2/24", "02:00:00:01:0b:02", "pe1", "tb", "02:00:00:01:0b:01", "198.18.1.1", "", ""},
	{"hA2", "A", 2, 100, "198.18.2.2/24", "02:00:00:02:0a:02", "pe2", "ta", "02:00:00:02:0a:01", "198.18.2.1", "2001:db8:2::2/64", "2001:db8:2::1"},
	{"hB2", "B", 2, 200, "198.18.2.2/24", "02:00:00:02:0b:02", "pe2", "tb", "02:00:00:02:0b:01", "198.18.2.1", "", ""},
}

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
var links = [][5]string{
	{"pe1", "fab", "p", "w", "02:00:00:01:00:01"},
	{"p", "e", "pe2", "fab", "02:00:00:02:00:01"},
	{"pe1", "ta", "hA1", "eth0", "02:00:00:01:0a:01"},
	{"pe1", "tb", "hB1", "eth0", "02:00:00:01:0b:01"},
	{"pe2", "ta", "hA2", "eth0", "02:00:00:02:0a:01"},
	{"pe2", "tb", "hB2", "eth0", "02:00:00:02:0b:01"},
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

// Hosts returns the lab's tenant hosts.
func Hosts() []Host { return append([]Host(nil), hosts...) }
