package lab

// bgptopology.go: the BGP lab's nodes, links, addresses and per-PE seg6x configs. Three PEs (seg6x
// daemons with their BGP speaker), a transit node p (plain kernel IPv6 forwarding) as the hub, and a
// route reflector rr (FRR or gobgpd) hanging off p; two hosts per site, tenants A and B both at
// 198.18.<site>.2/24. The fabric is IPv6 only and has no IGP: static routes make every loopback and
// locator reachable. The PEs have no static tenant routes: what a site reaches of the others, it
// learned over BGP.
//
// Address plan (n = 1, 2, 3):
//
//	pe<n>   loopback fc00:<n>::1/128: BGP session source and advertised next hop; RD 198.18.255.<n>:100|200
//	        locator fc00:1<n>::/48: tenant A's and B's service SIDs (End.DT46) allocated from it
//	        fab fc00:a:<n>::2/64 -- p's pe<n> fc00:a:<n>::1/64
//	        ta: tenant A (VLAN 100, table 100), tb: tenant B (VLAN 200, table 200); hosts hA<n>, hB<n>
//	rr      loopback fc00:99::1/128 (BGP), router id 198.18.255.99; fab fc00:a:99::2/64 -- p's rr fc00:a:99::1/64
//	AS 65000 everywhere (iBGP, every PE a client of rr); route targets 65000:100 (A) and 65000:200 (B)
//
// With route target constraint (BGPOptions.RTC, gobgpd only): every PE's session to rr also carries
// the rtc family (RFC 4684), and tenant C (table 300, RD 198.18.255.<n>:300, route target 65000:300,
// no hosts or ports) exists on pe1 and pe2 only, each advertising 198.19.<n>.0/24 with its service
// SID of C. pe3 imports no 65000:300, so the reflector must send it none of C's routes.

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"text/template"
)

// BGP lab constants.
const (
	BGPASN      = 65000
	BGPRRAddr   = "fc00:99::1"
	BGPRRID     = "198.18.255.99"
	bgpSites    = 3
	bgpRRLink   = "fc00:a:99::"
	bgpTableA   = 100
	bgpTableB   = 200
	bgpRTPrefix = "65000:"
	bgpTableC   = 300
)

// BGPOptions choose a BGP lab's route reflector and whether its sessions use route target constraint.
type BGPOptions struct {
	RR  string // the route reflector: "frr" (FRR's bgpd) or "gobgpd"
	RTC bool   // rtc on every PE's session (RFC 4684) and tenant C on BGPTenantCPEs only; gobgpd only
}

// check refuses what the lab cannot build.
func (o BGPOptions) check() error {
	if o.RR != "frr" && o.RR != "gobgpd" {
		return fmt.Errorf("route reflector %q: want frr or gobgpd", o.RR)
	}
	if o.RTC && o.RR == "frr" {
		return errors.New("route target constraint needs gobgpd as the route reflector: FRR 8.4 has no RTC " +
			"address family (it would not negotiate rtc, and the lab's check that pe3 receives none of tenant C's routes would fail)")
	}
	return nil
}

// BGPTenantCPEs serve tenant C in the lab with route target constraint (BGPOptions.RTC) when it
// comes up; SetTenantC changes that.
var BGPTenantCPEs = []string{"pe1", "pe2"}

// BGPTenantCPrefix is the prefix PE n advertises into tenant C (BGPOptions.RTC).
func BGPTenantCPrefix(n int) string { return fmt.Sprintf("198.19.%d.0/24", n) }

// servesC reports whether pe serves tenant C in this lab.
func (t topology) servesC(pe string) bool { return t.rtc && slices.Contains(t.cPEs, pe) }

// BGPPEs are the BGP lab's PEs.
var BGPPEs = []string{"pe1", "pe2", "pe3"}

// BGPPEAddr is PE n's loopback: its BGP address and next hop.
func BGPPEAddr(n int) string { return fmt.Sprintf("fc00:%d::1", n) }

// BGPLocator is PE n's locator.
func BGPLocator(n int) string { return fmt.Sprintf("fc00:1%d::/48", n) }

// bgpTopology is the BGP lab of o (checked).
func bgpTopology(o BGPOptions) topology {
	t := topology{routers: BGPPEs, others: []string{"p", "rr"}, setup: map[string][]string{}, rrKind: o.RR, rtc: o.RTC,
		configure: (*Lab).configureBGP}
	if o.RTC {
		t.cPEs = slices.Clone(BGPTenantCPEs)
	}
	p := []string{"link set lo up"}
	var rrRoutes []string
	for n := 1; n <= bgpSites; n++ {
		pe, link := BGPPEs[n-1], fmt.Sprintf("fc00:a:%d::", n)
		t.hosts = append(t.hosts, siteHosts(n, pe)...)
		t.links = append(t.links, [5]string{pe, "fab", "p", pe, fmt.Sprintf("02:00:00:%02x:00:01", n)})
		t.resolve = append(t.resolve, [2]string{pe, link + "1"}, [2]string{"p", link + "2"})
		p = append(p, "link set "+pe+" up", "-6 addr add "+link+"1/64 dev "+pe+" nodad",
			"-6 route add "+BGPPEAddr(n)+"/128 via "+link+"2", "-6 route add "+BGPLocator(n)+" via "+link+"2")
		rrRoutes = append(rrRoutes, "-6 route add "+BGPPEAddr(n)+"/128 via "+bgpRRLink+"1")
		lines := []string{"link set lo up", "link set fab up", "-6 addr add " + BGPPEAddr(n) + "/128 dev lo",
			"-6 addr add " + link + "2/64 dev fab nodad", "-6 route add " + BGPRRAddr + "/128 via " + link + "1"}
		for m := 1; m <= bgpSites; m++ {
			if m != n {
				lines = append(lines, "-6 route add "+BGPPEAddr(m)+"/128 via "+link+"1", "-6 route add "+BGPLocator(m)+" via "+link+"1")
			}
		}
		t.setup[pe] = append(lines, tenantLines(t.hosts[len(t.hosts)-2:])...)
	}
	t.links = append(append(t.links, [5]string{"rr", "fab", "p", "rr", "02:00:00:99:00:01"}), hostLinks(t.hosts)...)
	t.setup["p"] = append(p, "link set rr up", "-6 addr add "+bgpRRLink+"1/64 dev rr nodad",
		"-6 route add "+BGPRRAddr+"/128 via "+bgpRRLink+"2")
	t.setup["rr"] = append([]string{"link set lo up", "link set fab up", "-6 addr add " + BGPRRAddr + "/128 dev lo",
		"-6 addr add " + bgpRRLink + "2/64 dev fab nodad"}, rrRoutes...)
	t.resolve = append(t.resolve, [2]string{"rr", bgpRRLink + "1"}, [2]string{"p", bgpRRLink + "2"})
	return t
}

// bgpTable is the PE's kernel table of a tenant: what End.DT46 decapsulates into and what
// vpn.advertise_kernel advertises.
func bgpTable(tenant string) int {
	if tenant == "A" {
		return bgpTableA
	}
	return bgpTableB
}

// tenantLines put each host's subnet into its tenant's kernel table at the PE, and its neighbor entry
// (the hosts answer no ARP or neighbor solicitation of the PE's: their gateway is seg6x).
func tenantLines(hs []Host) []string {
	var out []string
	for _, h := range hs {
		out = append(out, "link set "+h.PEDev+" up", fmt.Sprintf("route add %s dev %s table %d", subnet(h.Addr), h.PEDev, bgpTable(h.Tenant)),
			fmt.Sprintf("neigh add %s lladdr %s dev %s nud permanent", hostAddr(h.Addr), h.MAC, h.PEDev))
		if h.Addr6 != "" {
			out = append(out, fmt.Sprintf("-6 route add %s dev %s table %d", subnet(h.Addr6), h.PEDev, bgpTable(h.Tenant)),
				fmt.Sprintf("-6 neigh add %s lladdr %s dev %s nud permanent", hostAddr(h.Addr6), h.MAC, h.PEDev))
		}
	}
	return out
}

// bgpPEYAML is PE n's whole seg6x state, applied with `seg6x apply -f`: no routes, no SIDs of its own.
var bgpPEYAML = template.Must(template.New("pe").Parse(`# {{.PE}}: site {{.N}} PE of the BGP lab. No static routes: the other sites' prefixes are learned
# over BGP from the route reflector ({{.RR}}). Each tenant's service SID (End.DT46 into its table,
# tagged with its port's VLAN on the way out) is allocated from the locator and advertised with the
# prefixes of the tenant's kernel table (vpn.advertise_kernel).
interfaces: [{name: fab, role: fabric}, {name: ta}, {name: tb}]
domain:
  locators: [{{range $i, $l := .Locators}}{{if $i}}, {{end}}"{{$l}}"{{end}}]
  sources: ["fc00::/16"]
tenants:
  - name: A
    table: {{.TableA}}
    ports: [{dev: ta, vlan: 100}]
    gateway: [198.18.{{.N}}.1, "2001:db8:{{.N}}::1"]
    mss_clamp: auto
    vpn: {rd: "198.18.255.{{.N}}:100", import_rt: ["{{.RT}}100"], export_rt: ["{{.RT}}100"], advertise_kernel: true
      {{- if .ExtraA}}, advertise: [{{range $i, $p := .ExtraA}}{{if $i}}, {{end}}"{{$p}}"{{end}}]{{end}}}
  - name: B
    table: {{.TableB}}
    ports: [{dev: tb, vlan: 200}]
    gateway: [198.18.{{.N}}.1]
    vpn: {rd: "198.18.255.{{.N}}:200", import_rt: ["{{.RT}}200"], export_rt: ["{{.RT}}200"], advertise_kernel: true}
{{- if .C}}
  # Tenant C: only some PEs serve it (no hosts); with rtc the reflector sends the others none of its routes.
  - name: C
    table: {{.TableC}}
    vpn: {rd: "198.18.255.{{.N}}:300", import_rt: ["{{.RT}}300"], export_rt: ["{{.RT}}300"], advertise: ["{{.PrefixC}}"]}
{{- end}}
bgp:
  asn: {{.ASN}}
  router_id: 198.18.255.{{.N}}
  locator: "{{.Locator}}"
  next_hop: "{{.Addr}}"
  neighbors: [{address: "{{.RR}}", asn: {{.ASN}}, local_address: "{{.Addr}}", description: route reflector{{if .RTC}}, families: [vpnv4, vpnv6, rtc]{{end}}}]
`))

// bgpPEConfig renders PE n's config in topology t.
func (t topology) bgpPEConfig(n int) string {
	var locs []string
	for m := 1; m <= bgpSites; m++ {
		locs = append(locs, BGPLocator(m))
	}
	var b bytes.Buffer
	_ = bgpPEYAML.Execute(&b, map[string]any{"PE": BGPPEs[n-1], "N": n, "RR": BGPRRAddr, "Locators": locs,
		"TableA": bgpTableA, "TableB": bgpTableB, "RT": bgpRTPrefix, "ASN": BGPASN, "Locator": BGPLocator(n), "Addr": BGPPEAddr(n),
		"RTC": t.rtc, "C": t.servesC(BGPPEs[n-1]), "TableC": bgpTableC, "PrefixC": BGPTenantCPrefix(n),
		"ExtraA": t.extraA[BGPPEs[n-1]]})
	return b.String()
}
