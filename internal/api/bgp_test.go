package api

// bgp_test.go: the bgp section and a tenant's vpn section survive the API's messages both ways, and
// a bad address in them is refused naming its field.

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

func TestBGPThroughTheAPI(t *testing.T) {
	a, p := netip.MustParseAddr, netip.MustParsePrefix
	in := model.State{
		Tenants: []model.Tenant{{Name: "blue", Table: 100, Ports: []model.Port{},
			VPN: &model.VPN{RD: "65000:100", ImportRT: []string{"65000:100"}, ExportRT: []string{"65000:101"},
				Locator: p("fc00:1:8::/48"), SID: a("fc00:1:8:7::"), Behavior: "End.DT4", Advertise: []netip.Prefix{p("198.18.1.0/24")},
				AdvertiseKernel: true, Encap: model.ModeEncapRed}}},
		BGP: &model.BGP{ASN: 65001, RouterID: a("198.18.255.1"), ListenPort: -1, NextHop: a("fc00:1::1"), Locator: p("fc00:1::/48"),
			BlockBits: 40, FunctionBits: 12, Transposition: true,
			GracefulRestart: model.GracefulRestart{Enabled: true, RestartTime: 60},
			Neighbors: []model.Neighbor{{Address: a("fc00:9::1"), ASN: 65000, Password: "s3cret", LocalAddress: a("fc00:1::1"),
				Families: []string{model.FamilyVPNv4}, Description: "rr1", Port: 1179}}},
	}
	out, err := StateFromPB(StateToPB(&in))
	if err != nil {
		t.Fatal(err)
	}
	ji, _ := json.Marshal(in)
	jo, _ := json.Marshal(out)
	if string(ji) != string(jo) {
		t.Fatalf("through the API:\n got %s\nwant %s", jo, ji)
	}
	// An operation on the section, both ways.
	op, err := opFromPB(OpToPB(state.Op{Kind: model.OpReplace, BGP: in.BGP}))
	if err != nil || op.BGP == nil || op.BGP.Neighbors[0].Password != "s3cret" {
		t.Fatalf("bgp op through the API: %+v, %v", op, err)
	}
	op, err = opFromPB(OpToPB(state.Op{Kind: model.OpDelete, BGP: &model.BGP{}}))
	if err != nil || op.Kind != model.OpDelete || op.BGP == nil {
		t.Fatalf("bgp delete through the API: %+v, %v", op, err)
	}
	bad := StateToPB(&in)
	bad.Bgp.Neighbors[0].Address = "fc00::zz"
	bad.Tenants[0].Vpn.Locator = "fc00:1:8::"
	_, err = StateFromPB(bad)
	if err == nil || !strings.Contains(err.Error(), "neighbors[0].address") || !strings.Contains(err.Error(), "vpn.locator") {
		t.Fatalf("bad addresses: %v", err)
	}
}
