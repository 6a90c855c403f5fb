package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			`yaml: line 3: routes[0].prefix: netip.ParsePrefix("10.0.0.0/33"): prefix length out of range`},
		{"\t- x", "yaml: line 1: found character that cannot start any token"},
		{"tenants:\n  - name: a\n    colour: red\n", "yaml: unmarshal errors:\n  line 3: field colour not found in type state.Tenant"},
		{"sids:\n  - sid: fc00::1\n    action: End\n    nh6: not-an-address\n",
			`yaml: line 4: sids[0].nh6: ParseAddr("not-an-address"): unable to parse IP`},
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
