package bgp

// extcomm_test.go: what the state's check of route distinguishers and route targets accepts (it does
// not import GoBGP), GoBGP parses and writes back unchanged (through extcomm.go's asplain/asdot
// rewriting), so a vpn: section that validates is never refused or altered at export. The state is
// stricter where GoBGP takes values the wire cannot carry (it would truncate 4200000000:70000's number
// to 16 bits).

import (
	"net/netip"
	"strings"
	"testing"

	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"

	"github.com/seg6x/seg6x/internal/model"
)

func TestStateAndGoBGPAgreeOnRDsAndRTs(t *testing.T) {
	accepted := 0
	for _, s := range []string{
		"65000:100", "0:0", "65535:4294967295", "65536:65535", "4294967295:1", "4200000000:70000",
		"198.18.255.1:100", "198.18.255.1:65535", "198.18.255.1:65536", "65000", ":1", "65000:", "a:1",
		"65000:-1", "fc00::1:1", "4294967296:1", "1.2.3:4", "65000:1:2",
	} {
		st := model.State{Tenants: []model.Tenant{{Name: "t", Table: 1,
			VPN: &model.VPN{RD: s, ImportRT: []string{s}, Locator: netip.MustParsePrefix("fc00:1::/48")}}}}
		err := model.Validate(&st)
		stateOK := err == nil || !strings.Contains(err.Error(), "vpn.rd")
		if !stateOK {
			continue
		}
		accepted++
		rd, rdErr := gobgp.ParseRouteDistinguisher(toGoBGP(s))
		rt, rtErr := gobgp.ParseRouteTarget(toGoBGP(s))
		if rdErr != nil || rtErr != nil || fromGoBGP(rd.String()) != s || fromGoBGP(rt.String()) != s {
			t.Errorf("%q: the state accepts it, GoBGP: RD %v (%v), RT %v (%v)", s, rd, rdErr, rt, rtErr)
		}
	}
	if accepted != 7 {
		t.Fatalf("the state accepted %d of the samples, want the 7 valid ones", accepted)
	}
}
