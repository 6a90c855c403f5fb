package config

import (
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
