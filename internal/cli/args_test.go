package cli

import (
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestParseRoute(t *testing.T) {
	r, err := parseRoute("198.18.2.0/24", strings.Fields("tenant blue encap seg6 mode encap.red segs fc00:2::1,fc00:3::64 src fc00:1::1 hoplimit 9"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Tenant != "blue" || r.Mode != "encap.red" || len(r.Segs) != 2 || r.Segs[1].String() != "fc00:3::64" ||
		r.Src.String() != "fc00:1::1" || r.HopLimit != 9 || r.Prefix.String() != "198.18.2.0/24" {
		t.Fatalf("parsed %+v", r)
	}
	for _, tc := range []struct{ prefix, args, want string }{
		{"198.18.2.0/24", "segs fc00::1", "tenant: missing"},
		{"198.18.2.0/24", "tenant b", "segs: missing"},
		{"198.18.2.0/24", "tenant b encap mpls segs fc00::1", `encap: "mpls" is not seg6`},
		{"198.18.2.0/24", "tenant b segs fc00::1,zz", `segs[1]: "zz" is not an IP address`},
		{"198.18.2.0/33", "tenant b segs fc00::1", "prefix"},
		{"198.18.2.0/24", "tenant b segs fc00::1 hoplimit 0", "hoplimit"},
		{"198.18.2.0/24", "tenant b segs fc00::1 colour red", `unknown keyword "colour"`},
		{"198.18.2.0/24", "tenant b tenant c segs fc00::1", "tenant given twice"},
		{"198.18.2.0/24", "tenant", "tenant: missing value"},
	} {
		_, err := parseRoute(tc.prefix, strings.Fields(tc.args))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseRoute(%s %s) = %v, want %q", tc.prefix, tc.args, err, tc.want)
		}
	}
}

func TestParseSIDAndTenant(t *testing.T) {
	s, err := parseSID("fc00:1::65", strings.Fields("action End.DX4 nh4 198.18.9.2 vlan 200"))
	if err != nil || s.Action != "End.DX4" || s.NH4.String() != "198.18.9.2" || s.VLAN != 200 {
		t.Fatalf("parseSID: %+v %v", s, err)
	}
	if _, err := parseSID("fc00:1::65", strings.Fields("nh4 198.18.9.2")); err == nil || !strings.Contains(err.Error(), "action: missing") {
		t.Errorf("missing action: %v", err)
	}
	if _, err := parseSID("fc00:1::65", strings.Fields("action End vlan 5000")); err == nil || !strings.Contains(err.Error(), "vlan") {
		t.Errorf("vlan 5000: %v", err)
	}
	tn, err := parseTenant("red", strings.Fields("table 200 dev eth1 vlan 200 dev eth2"))
	if err != nil || tn.Table != 200 || len(tn.Ports) != 2 || tn.Ports[0].VLAN != 200 || tn.Ports[1].VLAN != 0 {
		t.Fatalf("parseTenant: %+v %v", tn, err)
	}
	if _, err := parseTenant("red", strings.Fields("vlan 1 vlan 2 dev eth1")); err == nil {
		t.Error("two vlans for one dev accepted")
	}
}

// A segment list written as uSIDs: the list runs until the next keyword, nf is optional, uSIDs may
// be separated by commas; the checks are the state's (through the API), parsing only splits.
func TestParseRouteUSIDs(t *testing.T) {
	r, err := parseRoute("198.18.3.0/24", strings.Fields("tenant blue encap seg6 mode encap.red usids fcbb:0::/32 100 200 300 e004 src fc00:1::1"))
	if err != nil {
		t.Fatal(err)
	}
	if r.USIDs == nil || r.USIDs.String() != "fcbb::/32 100 200 300 e004" || len(r.Segs) != 0 || r.Src.String() != "fc00:1::1" || r.Mode != "encap.red" {
		t.Fatalf("parsed %+v usids %+v", r, r.USIDs)
	}
	r, err = parseRoute("198.18.3.0/24", strings.Fields("usids fcbb:0::/32 nf 32 1,abcdef01 e004 tenant blue"))
	if err != nil || r.Tenant != "blue" || r.USIDs.NF != 32 || strings.Join(r.USIDs.IDs, " ") != "1 abcdef01 e004" {
		t.Fatalf("nf 32, tenant after the list: %+v %v", r.USIDs, err)
	}
	for _, tc := range []struct{ args, want string }{
		{"tenant b usids", "usids: missing"},
		{"tenant b usids fcbb:0:: 100", `usids: block: "fcbb:0::" is not a prefix`},
		{"tenant b usids fcbb:0::/32 nf x 100", `usids: nf: "x" is not a number`},
		{"tenant b usids fcbb:0::/32 100 segs fc00::1", "segs and usids: give one of them"},
		{"tenant b usids fcbb:0::/32 100 usids fcbb:0::/32 200", "usids given twice"},
		{"tenant b", "segs: missing (segs SID[,SID...] or usids BLOCK"},
	} {
		_, err := parseRoute("198.18.3.0/24", strings.Fields(tc.args))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseRoute(%s) = %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	p, err := parsePolicy("east", strings.Fields("mode encap.red hoplimit 9 list fc00:2::1 weight 2 down list fc00:3::1,fc00:4::64"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "east" || p.Mode != "encap.red" || p.HopLimit != 9 || len(p.Lists) != 2 || p.Lists[0].Weight != 2 || !p.Lists[0].Down ||
		len(p.Lists[1].Segs) != 2 || p.Lists[1].Down || p.Lists[1].Weight != 0 {
		t.Errorf("%+v", p)
	}
	for args, want := range map[string]string{
		"":                           "list: missing",
		"list fc00:2::1 weight 0":    `weight: "0" is not a positive number`,
		"list fc00:2::1 src fc00::1": `"src": want mode, src, hoplimit (before the lists)`,
		"list zz":                    "lists[0].segs[0]",
		"weight 2":                   `"weight": want`,
	} {
		if _, err := parsePolicy("x", strings.Fields(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", args, err, want)
		}
	}
}

// A VLAN ID out of range gets the one message every front end gives (state.VLANProblem): the CLI,
// the YAML file and the API alike.
func TestVLANMessage(t *testing.T) {
	for _, in := range []string{"5000", "abc", "-1"} {
		_, err := parseVLAN(in)
		if want := "vlan: " + in + " is not a VLAN ID (1-4094; 0: untagged)"; err == nil || err.Error() != want {
			t.Errorf("parseVLAN(%q): %v, want %q", in, err, want)
		}
	}
	for _, in := range []string{"0", "1", "4094"} {
		if _, err := parseVLAN(in); err != nil {
			t.Errorf("parseVLAN(%q): %v", in, err)
		}
	}
	errs := model.Validate(&model.State{Tenants: []model.Tenant{{Name: "a", Ports: []model.Port{{Dev: "x", VLAN: 5000}}}}})
	if errs == nil || !strings.Contains(errs.Error(), `tenant "a": vlan: 5000 is not a VLAN ID (1-4094; 0: untagged)`) {
		t.Errorf("a port's VLAN 5000 in a file: %v", errs)
	}
}

func TestTenantTableZeroRefused(t *testing.T) {
	if _, err := parseTenant("b", []string{"table", "0"}); err == nil || err.Error() != "table: "+model.ZeroTable {
		t.Errorf("table 0: %v", err)
	}
	if tn, err := parseTenant("b", nil); err != nil || tn.Table != 0 {
		t.Errorf("no table: %v", err)
	}
}
