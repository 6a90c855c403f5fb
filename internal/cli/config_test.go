package cli

// config_test.go: config export's file, from a state as the API hands it over, parses back to the
// running state without the kernel mirror's objects (no root: no instance is opened).

import (
	"bytes"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"
	"github.com/seg6x/seg6x/internal/config"
	"github.com/seg6x/seg6x/internal/model"
)

func TestExportYAML(t *testing.T) {
	a, p := netip.MustParseAddr, netip.MustParsePrefix
	running := model.State{
		Options:    model.Options{NextHopCacheMs: 20},
		Domain:     model.Domain{Locators: []netip.Prefix{p("fc00:1::/48")}, Sources: []netip.Prefix{p("fc00::/16")}},
		Interfaces: []model.Interface{{Name: "eth0", Mode: "native", Role: model.RoleFabric, Ifindex: 3}},
		Tenants: []model.Tenant{
			{Name: "blue", Table: 100, Ports: []model.Port{{Dev: "eth0", VLAN: 100, Ifindex: 3}},
				Gateway: []netip.Addr{a("198.18.1.1")}, MSSClamp: "auto", ID: 1},
			{Name: "k100", Table: 200, Ports: []model.Port{{Dev: "eth0", VLAN: 300}}, KernelFallback: true, ID: 2, Origin: model.OriginKernel},
		},
		Routes: []model.Route{
			{Tenant: "blue", Prefix: p("198.18.2.0/24"), Mode: model.ModeEncap, Segs: []netip.Addr{a("fc00:2::64")},
				Src: a("fc00:1::1"), HopLimit: 9, ID: 4, UsedSrc: a("fc00:1::1"), Egress: "eth0", TunnelMTU: 1420},
			{Tenant: "blue", Prefix: p("198.18.3.0/24"), Mode: model.ModeEncapRed, Segs: []netip.Addr{a("fcbb:0:100:200:300:e004::")},
				USIDs: &model.USIDList{Block: p("fcbb::/32"), NF: 16, IDs: []string{"100", "200", "300", "e004"}}, HopLimit: 64, ID: 5},
			{Tenant: "k100", Prefix: p("10.0.0.0/8"), Mode: model.ModePass},
		},
		SIDs: []model.SID{
			{SID: a("fc00:1::65"), Action: "End.DX4", NH4: a("198.18.9.2"), VLAN: 100, ID: 1},
			{SID: a("fc00:1::66"), Action: "End.X", NH6: a("fc00:9::1"), ID: 2},
			{SID: a("fc00:1::67"), Action: "End.DT4", Table: 200, ID: 3, Origin: model.OriginKernel},
		},
	}
	// What fetchState gets: the state through the API's messages.
	cur, _, err := api.StateFromChunks([]*pb.StateChunk{{State: api.StateToPB(&running), Generation: 7}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := exportYAML(cur, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "# seg6x config export: the running state at generation 7") ||
		!strings.Contains(string(b), "# left out: 3 objects of the kernel mirror") {
		t.Errorf("no header or no count of what was left out:\n%s", b)
	}
	got, err := config.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the export does not parse: %v\n%s", err, b)
	}
	want := running
	want.Interfaces = []model.Interface{{Name: "eth0", Mode: "native", Role: model.RoleFabric}}
	want.Tenants = []model.Tenant{{Name: "blue", Table: 100, Ports: []model.Port{{Dev: "eth0", VLAN: 100}},
		Gateway: []netip.Addr{a("198.18.1.1")}, MSSClamp: "auto"}}
	want.Routes = []model.Route{{Tenant: "blue", Prefix: p("198.18.2.0/24"), Mode: model.ModeEncap,
		Segs: []netip.Addr{a("fc00:2::64")}, Src: a("fc00:1::1"), HopLimit: 9},
		// Written back as uSIDs only: the containers follow from them when the file is applied.
		{Tenant: "blue", Prefix: p("198.18.3.0/24"), Mode: model.ModeEncapRed,
			USIDs: &model.USIDList{Block: p("fcbb::/32"), NF: 16, IDs: []string{"100", "200", "300", "e004"}}, HopLimit: 64}}
	want.SIDs = []model.SID{{SID: a("fc00:1::65"), Action: "End.DX4", NH4: a("198.18.9.2"), VLAN: 100},
		{SID: a("fc00:1::66"), Action: "End.X", NH6: a("fc00:9::1")}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("export parses to\n%+v\nwant\n%+v\nfile:\n%s", got, want, b)
	}
}
