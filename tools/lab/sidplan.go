package lab

// sidplan.go: the main lab's SIDs, policies and per-router seg6x configs, in two addressings of the
// same tenants. Classic: one SID per service, two-segment lists through p's End. uSID (RFC 9800,
// `seg6x-lab demo --usid`): one uSID container per policy, through p's uN to the far PE's uDT4/uDT6.
// pe1 is configured with CLI commands and pe2 and p with YAML files, so the lab exercises both front
// ends (both end in the same Apply).

import (
	"fmt"
	"strings"
)

// Options are the variants of the main lab.
type Options struct {
	// USID addresses the lab with uSID containers (block fcbb:0::/32, 16-bit uSIDs, the kernel's
	// lblen 32 / nflen 16): p serves its uN locator fcbb:0:200::/48 (End, flavor next-csid) besides
	// its classic End, each PE serves uDT4 and uDT6 for tenant A and uDT4 for tenant B on /64s of its
	// locator, and every policy is one container, e.g. fcbb:0:200:300:e004:: (p's uN, then pe2's uDT4).
	USID bool
	// Fabric gives each hop two parallel uplinks (pe1 fab/fab2 to p w/w2, p e/e2 to pe2 fab/fab2),
	// every locator routed over both (ECMP, the kernel's multipath hash), all of MTU 9000, and tenant
	// A's access links MTU 9000 (tenant B's stay 1500): frames beyond a page reach XDP as multi-buffer
	// frames.
	Fabric bool
}

// sidPlan names the lab's SIDs. Nodes are numbered pe1 1, p 2, pe2 3: classic locators fc00:<n>::/48,
// uSID locators fcbb:0:<n>00::/48 (uSID 0x100, 0x200, 0x300).
type sidPlan struct{ usid, fabric bool }

// service is one tenant service a PE serves (its decapsulation SID) and the families of the routes
// the other PE sends to it.
type service struct {
	tenant   string
	families []int  // 4, 6
	fn       string // classic: the SID's last group (fc00:<n>::<fn>); uSID: the function (fcbb:0:<n>00:<fn>::/64)
	action   string
	params   func(site int) [][2]string // after the action, in CLI order (YAML: the same keys)
}

func tenantTable(t string) func(int) [][2]string {
	vlan := map[string]string{"A": "100", "B": "200"}[t]
	return func(int) [][2]string { return [][2]string{{"tenant", t}, {"vlan", vlan}} }
}

// services are what each PE serves. Classic: tenant A (dual-stack) End.DT46 on table 100, tenant B
// End.DX4 to its host. uSID: tenant A uDT4 (e004) and uDT6 (e006), tenant B uDT4 (e104, table 200).
func (s sidPlan) services() []service {
	if s.usid {
		return []service{
			{"A", []int{4}, "e004", "End.DT4", tenantTable("A")},
			{"A", []int{6}, "e006", "End.DT6", tenantTable("A")},
			{"B", []int{4}, "e104", "End.DT4", tenantTable("B")},
		}
	}
	return []service{
		{"A", []int{4, 6}, "a", "End.DT46", tenantTable("A")},
		{"B", []int{4}, "b", "End.DX4", func(site int) [][2]string {
			return [][2]string{{"nh4", fmt.Sprintf("198.18.%d.2", site)}, {"vlan", "200"}}
		}},
	}
}

// siteNode is the node number of a site's PE.
func siteNode(site int) int { return 2*site - 1 }

// locators are node n's locators (routed to it by the other nodes).
func (s sidPlan) locators(n int) []string {
	l := []string{fmt.Sprintf("fc00:%d::/48", n)}
	if s.usid {
		l = append(l, fmt.Sprintf("fcbb:0:%d00::/48", n))
	}
	return l
}

// domain are the SR domain's locators, as one CLI argument.
func (s sidPlan) domain() string {
	d := "fc00:1::/48,fc00:2::/48,fc00:3::/48"
	if s.usid {
		d += ",fcbb:0::/32"
	}
	return d
}

// sid is service sv's SID at node n.
func (s sidPlan) sid(sv service, n int) string {
	if s.usid {
		return fmt.Sprintf("fcbb:0:%d00:%s::/64", n, sv.fn)
	}
	return fmt.Sprintf("fc00:%d::%s", n, sv.fn)
}

// segs is the segment list to service sv at node n: through p's End, or one container through p's uN.
func (s sidPlan) segs(sv service, n int) []string {
	if s.usid {
		return []string{fmt.Sprintf("fcbb:0:200:%d00:%s::", n, sv.fn)}
	}
	return []string{"fc00:2::1", s.sid(sv, n)}
}

// route is one encap route of a PE.
type route struct{ tenant, prefix, mode, segs, src string }

// routes are site's PE's routes to the other site's services. Tenant A is H.Encaps'ed, tenant B
// H.Encaps.Red'ed (with one container: no SRH at all).
func (s sidPlan) routes(site int) []route {
	other := 3 - site
	var out []route
	for _, sv := range s.services() {
		mode := map[string]string{"A": "encap", "B": "encap.red"}[sv.tenant]
		for _, fam := range sv.families {
			prefix := fmt.Sprintf("198.18.%d.0/24", other)
			if fam == 6 {
				prefix = fmt.Sprintf("2001:db8:%d::/64", other)
			}
			out = append(out, route{sv.tenant, prefix, mode, strings.Join(s.segs(sv, siteNode(other)), ","), fmt.Sprintf("fc00:%d::1", siteNode(site))})
		}
	}
	return out
}

// uplinks are a node's fabric interfaces towards one neighbor: dev, and dev2 in the fabric lab.
func (s sidPlan) uplinks(dev string) []string {
	if s.fabric {
		return []string{dev, dev + "2"}
	}
	return []string{dev}
}

// uplinkYAML is a PE's fabric interfaces as YAML flow entries, each followed by ", ".
func (s sidPlan) uplinkYAML() string {
	var b strings.Builder
	for _, dev := range s.uplinks("fab") {
		b.WriteString("{name: " + dev + ", role: fabric}, ")
	}
	return b.String()
}

// peCommands configure pe1 with CLI commands.
func (s sidPlan) peCommands() [][]string {
	c := [][]string{
		append([]string{"attach"}, append(s.uplinks("fab"), "--role", "fabric")...),
		{"attach", "ta", "tb", "--role", "access"},
		{"domain", "set", "locators", s.domain(), "sources", "fc00::/16"},
		{"tenant", "add", "A", "table", "100", "vlan", "100", "dev", "ta", "gateway", "198.18.1.1", "gateway", "2001:db8:1::1", "mss-clamp", "auto"},
		{"tenant", "add", "B", "table", "200", "vlan", "200", "dev", "tb", "gateway", "198.18.1.1"},
	}
	for _, r := range s.routes(1) {
		c = append(c, []string{"route", "add", r.prefix, "tenant", r.tenant, "encap", "seg6", "mode", r.mode, "segs", r.segs, "src", r.src})
	}
	for _, sv := range s.services() {
		cmd := []string{"sid", "add", s.sid(sv, siteNode(1)), "action", sv.action}
		for _, kv := range sv.params(1) {
			cmd = append(cmd, kv[0], kv[1])
		}
		c = append(c, cmd)
	}
	return c
}

// yamlList quotes each element of a comma-separated list into a YAML flow sequence.
func yamlList(csv string) string {
	var q []string
	for _, x := range strings.Split(csv, ",") {
		q = append(q, `"`+x+`"`)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// pYAML is the transit node's config: End on its classic SID, and (uSID) uN on its locator.
func (s sidPlan) pYAML() string {
	y := "# p: transit node, End on its SID"
	if s.usid {
		y += " and uN (End with the NEXT-C-SID flavor, lblen 32 / nflen 16) on its uSID locator"
	}
	var ifs []string
	for _, dev := range append(s.uplinks("w"), s.uplinks("e")...) {
		ifs = append(ifs, "{name: "+dev+", role: fabric}")
	}
	y += "\ninterfaces: [" + strings.Join(ifs, ", ") + "]\n" +
		"domain: {locators: " + yamlList(s.domain()) + `, sources: ["fc00::/16"]}` + "\nsids:\n" +
		`  - {sid: "fc00:2::1", action: End}` + "\n"
	if s.usid {
		y += `  - {sid: "fcbb:0:200::/48", action: End, flavors: [next-csid]}` + "\n"
	}
	return y
}

// pe2YAML is site 2's PE config.
func (s sidPlan) pe2YAML() string {
	var b strings.Builder
	if s.usid {
		b.WriteString("# pe2: site 2 PE. Tenant A (dual-stack) decapsulates with uDT4 and uDT6 (table 100), tenant B with uDT4\n" +
			"# (table 200), each on a /64 of pe2's uSID locator fcbb:0:300::/48; the routes send one uSID container each.\n")
	} else {
		b.WriteString("# pe2: site 2 PE. Tenant A (dual-stack) decapsulates with End.DT46 (table 100), tenant B with End.DX4.\n")
	}
	b.WriteString(`# fab faces the SR domain; ta and tb are access ports (role auto would say the same: tenants are on them).
interfaces: [` + s.uplinkYAML() + `{name: ta}, {name: tb}]
domain:
  locators: ` + yamlList(s.domain()) + `   # the domain's SID space: refused from tenants
  sources: ["fc00::/16"]                                   # SIDs only from the domain's own addresses
# gateway: the address the hosts route through, source of the ICMP errors for packets too big for
# the tunnel (docs/mtu.md). Tenant A's TCP SYNs are clamped to an MSS that fits the tunnel; tenant B's
# hosts find the tunnel MTU by path MTU discovery, from those ICMP errors.
tenants:
  - {name: A, table: 100, ports: [{dev: ta, vlan: 100}], gateway: [198.18.2.1, "2001:db8:2::1"], mss_clamp: auto}
  - {name: B, table: 200, ports: [{dev: tb, vlan: 200}], gateway: [198.18.2.1]}
routes:
`)
	for _, r := range s.routes(2) {
		prefix := r.prefix
		if strings.Contains(prefix, ":") {
			prefix = `"` + prefix + `"`
		}
		fmt.Fprintf(&b, "  - {tenant: %s, prefix: %s, mode: %s, segs: %s, src: %q}\n", r.tenant, prefix, r.mode, yamlList(r.segs), r.src)
	}
	b.WriteString("sids:\n")
	for _, sv := range s.services() {
		fmt.Fprintf(&b, "  - {sid: %q, action: %s", s.sid(sv, siteNode(2)), sv.action)
		for _, kv := range sv.params(2) {
			fmt.Fprintf(&b, ", %s: %s", kv[0], kv[1])
		}
		b.WriteString("}\n")
	}
	return b.String()
}
