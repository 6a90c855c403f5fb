package config

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestParseRoundTrip(t *testing.T) {
	in := `
interfaces:
  - name: eth0
tenants:
  - name: blue
    table: 100
    ports: [{dev: eth1, vlan: 100}]
routes:
  - tenant: blue
    prefix: 198.18.2.0/24
    mode: encap.red
    segs: [fc00:2::1, fc00:3::64]
    src: fc00:1::1
    hoplimit: 9
sids:
  - sid: fc00:1::65
    action: End.DX4
    nh4: 198.18.9.2
`
	s, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Routes[0].Segs[1].String(); got != "fc00:3::64" {
		t.Fatalf("segs[1] = %s", got)
	}
	if s.Routes[0].HopLimit != 9 || s.Routes[0].Mode != "encap.red" || s.Tenants[0].Ports[0].VLAN != 100 {
		t.Fatalf("parsed %+v", s)
	}
	if s.SIDs[0].NH4.String() != "198.18.9.2" {
		t.Fatalf("nh4 = %v", s.SIDs[0].NH4)
	}
	out, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Parse(strings.NewReader(string(out)))
	if err != nil {
		t.Fatalf("re-parse of\n%s: %v", out, err)
	}
	if s2.Routes[0].Prefix != s.Routes[0].Prefix || s2.SIDs[0].SID != s.SIDs[0].SID {
		t.Fatalf("round trip changed the state:\n%s", out)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"routes:\n  - tenant: a\n    prefix: 10.0.0.0/33\n", "10.0.0.0/33"},
		{"sids:\n  - sid: not-an-address\n    action: End\n", "not-an-address"},
		{"tenants:\n  - name: a\n    colour: red\n", "colour"},
	} {
		_, err := Parse(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want mention of %q", tc.in, err, tc.want)
		}
	}
}

// TestLoadErrorMessage pins whole messages for a bad file: the path, "yaml: " once, the line, and
// for a bad value its key path.
func TestLoadErrorMessage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ in, want string }{
		{"routes:\n  - tenant: a\n    prefix: 10.0.0.0/33\n",
			`yaml: line 3: routes[0].prefix: "10.0.0.0/33" is not a prefix: prefix length out of range`},
		{"\t- x", "yaml: line 1: found character that cannot start any token"},
		{"tenants:\n  - {name: blue, table: 101.9}\n", "yaml: line 2: tenants[0].table: 101.9 is not an integer"},
		{"routes:\n  - tenant: blue\n    prefix: 198.18.2.0/24\n    hoplimit: 6.4e1\n", "yaml: line 4: routes[0].hoplimit: 6.4e1 is not an integer"},
		{"sids:\n  - {sid: \"fc00:1::64\", action: End.DT4, tenant: blue, vlan: 100.0}\n", "yaml: line 2: sids[0].vlan: 100.0 is not an integer"},
		{"tenants:\n  - name: a\n    colour: red\n",
			"yaml: unmarshal errors:\n  line 3: unknown key colour (a tenant has: gateway, kernel_fallback, mss_clamp, name, ports, table, vpn)"},
		{"sids:\n  - {sid: \"fc00::1\", action: End, bogus: 1}\n",
			"yaml: line 2: unknown key bogus (a sid has: action, config, flavors, lblen, nflen, nh4, nh6, plugin, segs, sid, src, table, tenant, vlan)"},
		{"tenants:\n  - {name: a, table: abc}\n", "yaml: unmarshal errors:\n  line 2: abc is not an integer from 0 to 4294967295"},
		{"tenants:\n  - {name: a, ports: [{dev: x, vlan: 70000}]}\n", "yaml: unmarshal errors:\n  line 2: 70000 is not an integer from 0 to 65535"},
		{"interfaces: {name: x}\n", "yaml: unmarshal errors:\n  line 1: a mapping is not a list of interfaces"},
		{"sids:\n  - sid: fc00::1\n    action: End\n    nh6: not-an-address\n",
			`yaml: line 4: sids[0].nh6: "not-an-address" is not an address: unable to parse IP`},
		// The sid comes through a merge: SID's UnmarshalYAML reads merged keys as plain fields, so
		// the merged mapping alone decodes without this error; the path still names the sid.
		{"sids:\n  - <<: &base\n      sid: fc00::1/zz\n      action: End\n",
			`yaml: line 3: sids[0].sid: "fc00::1/zz" is not an address: unexpected character, want colon (at "/zz")`},
	} {
		path := filepath.Join(dir, "bad.yaml")
		if err := os.WriteFile(path, []byte(tc.in), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if want := path + ": " + tc.want; err == nil || err.Error() != want {
			t.Errorf("Load of %q:\n got: %v\nwant: %s", tc.in, err, want)
		}
	}
}

// A route written as uSIDs in YAML: ids quoted or not, nf defaulted; the containers are its segs;
// written back as uSIDs only (no segs), which reads back the same.
func TestParseUSIDRoute(t *testing.T) {
	in := `
tenants: [{name: blue, table: 100}]
routes:
  - tenant: blue
    prefix: 198.18.2.0/24
    usids: {block: "fcbb:0::/32", ids: [100, "200", 300, E004]}
  - tenant: blue
    prefix: 198.18.3.0/24
    mode: encap.red
    usids: {block: "fcbb:0::/32", nf: 32, ids: [1, 2, 3, 4]}
`
	s, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Validate(&s); err != nil {
		t.Fatal(err)
	}
	r := s.Routes[0]
	if len(r.Segs) != 1 || r.Segs[0] != netip.MustParseAddr("fcbb:0:100:200:300:e004::") || r.USIDs.NF != 16 ||
		r.USIDs.String() != "fcbb::/32 100 200 300 e004" {
		t.Fatalf("route 0: segs %v usids %+v", r.Segs, r.USIDs)
	}
	if r := s.Routes[1]; len(r.Segs) != 2 || r.Segs[1] != netip.MustParseAddr("fcbb:0:0:4::") {
		t.Fatalf("route 1: segs %v", r.Segs)
	}
	out, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "segs") || strings.Count(string(out), "usids:") != 2 {
		t.Fatalf("written as:\n%s", out)
	}
	back, err := Parse(strings.NewReader(string(out)))
	if err == nil {
		err = model.Validate(&back)
	}
	if err != nil || !reflect.DeepEqual(back.Routes, s.Routes) {
		t.Fatalf("read back (%v):\n%+v\nwant %+v\n%s", err, back.Routes, s.Routes, out)
	}
	// A bad block is a YAML error with the key path; a bad uSID the route's field.
	if _, err := Parse(strings.NewReader("routes:\n  - tenant: blue\n    usids: {block: \"fcbb::/129\", ids: [1]}\n")); err == nil ||
		!strings.HasPrefix(err.Error(), `yaml: line 3: routes[0].usids.block: "fcbb::/129" is not a prefix`) {
		t.Errorf("bad block: %v", err)
	}
	bad, err := Parse(strings.NewReader("tenants: [{name: blue}]\nroutes:\n  - {tenant: blue, prefix: 10.0.0.0/8, usids: {block: \"fcbb::/32\", ids: [10000]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Validate(&bad); err == nil || !strings.Contains(err.Error(), "route 10.0.0.0/8 tenant blue: usids.ids[0]: 10000 does not fit in 16 bits") {
		t.Errorf("bad uSID: %v", err)
	}
}

// No error speaks Go: no type names (state.Tenant, uint16, netip.Addr) and no YAML tags (!!str).
func TestErrorsSpeakTheFile(t *testing.T) {
	for _, in := range []string{
		"tenants:\n  - {name: a, colour: red}\n", "tenants:\n  - {name: a, table: abc}\n", "tenants:\n  - {name: a, table: -1}\n",
		"tenants: {name: a}\n", "routes:\n  - {tenant: a, hoplimit: 300}\n", "routes:\n  - {tenant: a, segs: fc00::1}\n",
		"sids:\n  - {sid: \"fc00::1\", action: End, vlan: x}\n", "interfaces:\n  - {name: [a]}\n",
		"bgp: {asn: x}\n", "bgp: {neighbors: [{address: 1, asn: y}]}\n", "options: {nexthop_cache_ms: fast}\n",
		"policies:\n  - {name: p, lists: [{weight: heavy}]}\n", "domain: {locators: 7}\n",
	} {
		_, err := Parse(strings.NewReader(in))
		if err == nil {
			t.Errorf("Parse(%q) succeeded", in)
			continue
		}
		for _, goWord := range []string{"state.", "model.", "uint", "int8", "int16", "int32", "int64", "!!", "netip.", "[]"} {
			if strings.Contains(err.Error(), goWord) {
				t.Errorf("Parse(%q): %q speaks Go (%s)", in, err, goWord)
			}
		}
	}
}

// An error the state returns about an object of the file names the object's line and key path.
func TestPlaceNamesTheLine(t *testing.T) {
	text := "tenants:\n  - {name: blue, table: 1000}\n  - {name: red, table: 1001}\nroutes:\n  - {tenant: blue, prefix: 198.18.2.0/24, segs: [fc00:2::1]}\n" +
		"  - {tenant: red, prefix: \"2001:db8::/32\", segs: [fc00:2::1]}\nsids:\n  - {sid: \"fc00:1::64\", action: End.DT4, tenant: red}\n"
	s, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	f := &File{Name: "s.yaml", Text: []byte(text), State: s}
	for msg, want := range map[string]string{
		`operation 2 (replace): tenant "red": table: 1000 already belongs to tenant "blue"`: "line 3: tenants[1]",
		"route 2001:db8::/32 tenant red: mode: bad":                                         "line 6: routes[1]",
		"route 198.18.2.0/24 tenant blue: src: none":                                        "line 5: routes[0]",
		"sid fc00:1::64: tenant: unknown":                                                   "line 8: sids[0]",
		"route 198.18.9.0/24 tenant blue: not in the file":                                  "",
		"no object here": "",
	} {
		if got := f.Place(msg); got != want {
			t.Errorf("%q: %q, want %q", msg, got, want)
		}
	}
	if got := f.Explain(errors.New(`operation 2 (replace): tenant "red": table: 1000 already belongs to tenant "blue"`)).Error(); got != `s.yaml: line 3: tenants[1]: tenant "red": table: 1000 already belongs to tenant "blue"` {
		t.Errorf("Explain: %q", got)
	}
}

// A tenant's table written as 0 is refused with the line; left out, the tenant has none.
func TestZeroTableRefused(t *testing.T) {
	for _, in := range []string{"tenants:\n  - {name: a, table: 1000}\n  - {name: b, table: 0}\n", "tenants:\n  - {name: a, table: 1000}\n  - {name: b, table: 0x0}\n"} {
		if _, err := Parse(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "tenants[1].table: 0 is not a table") {
			t.Errorf("%q: %v", in, err)
		}
	}
	if s, err := Parse(strings.NewReader("tenants:\n  - {name: b}\n")); err != nil || s.Tenants[0].Table != 0 {
		t.Errorf("a tenant without a table: %v", err)
	}
}
