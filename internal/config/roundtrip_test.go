package config

// roundtrip_test.go: Marshal then Parse gives back the same state, over every field of every object
// kind; a field added to the model without a value in the fixture below fails the test.

import (
	"bytes"
	"net/netip"
	"reflect"
	"regexp"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

// everyField is a valid state with every YAML field of every object kind set, to a value other than
// its default (so Validate's defaults cannot hide a lost field), in at least one object; it also
// sets resolved fields (yaml:"-"), which Marshal must leave out.
func everyField() model.State {
	a, p := netip.MustParseAddr, netip.MustParsePrefix
	return model.State{
		Options: model.Options{NextHopCacheMs: 20},
		Domain: model.Domain{
			Locators: []netip.Prefix{p("fc00:1::/48"), p("fc00:2::/48")},
			Sources:  []netip.Prefix{p("fc00::/16")},
		},
		Interfaces: []model.Interface{
			{Name: "eth0", Mode: "generic", Role: model.RoleFabric, Ifindex: 3},
			{Name: "eth1", Mode: "native", Role: model.RoleAccess, Ifindex: 4},
		},
		Tenants: []model.Tenant{
			{Name: "blue", Table: 100, Ports: []model.Port{{Dev: "eth1", VLAN: 100, Ifindex: 4}, {Dev: "eth1"}},
				KernelFallback: true, Gateway: []netip.Addr{a("198.18.1.1"), a("2001:db8:a::1")}, MSSClamp: "1400",
				ID: 1, Origin: model.OriginKernel,
				VPN: &model.VPN{RD: "65000:100", ImportRT: []string{"65000:100", "198.18.255.1:7"}, ExportRT: []string{"65000:101"},
					Locator: p("fc00:1:8::/48"), SID: a("fc00:1:8:7::"), Behavior: "End.DT4", Advertise: []netip.Prefix{p("198.18.1.0/24")},
					AdvertiseKernel: true, Encap: model.ModeEncapRed, ServiceSID: a("fc00:1:8:7::")}},
			{Name: "green", Table: 101, Ports: []model.Port{{Dev: "eth1", VLAN: 200}}, MSSClamp: model.MSSClampAuto,
				VPN: &model.VPN{RD: "4200000000:1", ExportRT: []string{"65000:200"}, Behavior: "End.DT46", Encap: model.ModeEncap}},
		},
		Routes: []model.Route{
			{Tenant: "blue", Prefix: p("198.18.2.0/24"), Mode: model.ModeEncapRed, Segs: []netip.Addr{a("fc00:2::1"), a("fc00:3::64")},
				Src: a("fc00:1::1"), HopLimit: 9, ID: 5, UsedSrc: a("fc00:1::1"), Egress: "eth0", TunnelMTU: 1400},
			{Tenant: "blue", Prefix: p("2001:db8:b::/48"), Mode: model.ModeEncap, Segs: []netip.Addr{a("fc00:2::1")}, HopLimit: 64},
			{Tenant: "green", Prefix: p("10.0.0.0/8"), Mode: model.ModePass},
			{Tenant: "green", Prefix: p("10.2.0.0/16"), Policy: "east"},
			{Tenant: "green", Prefix: p("10.1.0.0/16"), Mode: model.ModeEncapRed,
				USIDs: &model.USIDList{Block: p("fcbb:0::/32"), NF: 32, IDs: []string{"100", "e004"}}, HopLimit: 64},
		},
		SIDs: []model.SID{
			{SID: a("fc00:1::64"), Action: "End.DT4", Table: 100, Tenant: "blue", VLAN: 100, ID: 3, Origin: model.OriginKernel},
			{SID: a("fc00:1::65"), Action: "End.DX4", NH4: a("198.18.9.2"), VLAN: 200},
			{SID: a("fc00:1::66"), Action: "End.X", NH6: a("fc00:9::1")},
			{SID: a("fc00:1::67"), Action: "End.DX6", NH6: a("2001:db8::2")},
			{SID: a("fcbb:0:100::"), Bits: 48, Action: "End", Flavors: []string{"next-csid"}, LBLen: 32, NFLen: 16},
			{SID: a("fc00:1::7"), Action: "End.B6.Encaps", Segs: []netip.Addr{a("fc00:5::1"), a("fc00:6::64")}, Src: a("fc00:1::1"),
				Policy: 4},
			{SID: a("fc00:1::d"), Action: "plugin", Plugin: "ttlgate", Tenant: "blue", Config: map[string]string{"min_ttl": "5"}},
		},
		Plugins: []model.Plugin{{Name: "ttlgate", File: "/usr/lib/seg6x/plugins/ttlgate.o"}},
		Policies: []model.Policy{{Name: "east", Mode: model.ModeEncapRed, Src: a("fc00:1::1"), HopLimit: 9, Origin: model.OriginKernel,
			Lists: []model.SegList{{Segs: []netip.Addr{a("fc00:2::1")}, Weight: 2, Down: true, PolicyID: [2]uint32{3, 4}},
				{USIDs: &model.USIDList{Block: p("fcbb:0::/32"), NF: 16, IDs: []string{"100"}}, Weight: 1}}}},
		BGP: &model.BGP{ASN: 65001, RouterID: a("198.18.255.1"), ListenPort: -1, NextHop: a("fc00:1::1"), Locator: p("fc00:1::/48"),
			BlockBits: 40, FunctionBits: 12, Transposition: true,
			GracefulRestart: model.GracefulRestart{Enabled: true, RestartTime: 60},
			Neighbors: []model.Neighbor{{Address: a("fc00:9::1"), ASN: 65000, Password: "s3cret", LocalAddress: a("fc00:1::1"),
				Families: []string{model.FamilyVPNv4}, Description: "rr1", Port: 1179}, {Address: a("fc00:9::2"), ASN: 65000,
				Families: []string{model.FamilyVPNv4, model.FamilyVPNv6, model.FamilyRTC}}}},
	}
}

// resolvedKey matches a key of the fields the model tags yaml:"-" (their JSON names).
var resolvedKey = regexp.MustCompile(`(?m)^[ -]*(ifindex|id|origin|used_src|egress|tunnel_mtu|service_sid|policy_id|digest|bind):`)

func TestMarshalRoundTripEveryField(t *testing.T) {
	in := everyField()
	set := map[string]bool{}
	fieldsSet(reflect.ValueOf(in), set)
	if len(set) < 30 {
		t.Fatalf("only %d fields found in the model: %v", len(set), set)
	}
	for f, ok := range set {
		if !ok {
			t.Errorf("%s is not set in everyField(): give it a non-default value in some object", f)
		}
	}
	want := everyField() // Validate fills defaults in place: not in the state that is written
	if err := model.Validate(&want); err != nil {
		t.Fatalf("the fixture is not valid: %v", err)
	}
	out, err := Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("Marshal's output does not parse: %v\n%s", err, out)
	}
	if err := model.Validate(&got); err != nil {
		t.Fatalf("Marshal's output is not valid: %v\n%s", err, out)
	}
	want = normal(want)
	if got = normal(got); !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip changed the state\nYAML:\n%s\ngot:  %+v\nwant: %+v", out, got, want)
	}
	again, err := Marshal(got)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("Marshal of the parsed state differs (%v):\n%s\n---\n%s", err, out, again)
	}
	if m := resolvedKey.Find(out); m != nil {
		t.Errorf("Marshal wrote %q, a resolved field:\n%s", m, out)
	}
}

// TestMarshalEmpty: nothing set writes nothing (an empty file is the empty state).
func TestMarshalEmpty(t *testing.T) {
	out, err := Marshal(model.State{Routes: []model.Route{}, Domain: model.Domain{Sources: []netip.Prefix{}}})
	if err != nil || string(out) != "{}\n" {
		t.Fatalf("Marshal(empty) = %q, %v", out, err)
	}
}

// fieldsSet records, for every YAML field of every struct type reachable from v (Type.Field), whether
// some value under v has it non-zero. An empty list still lists its element type's fields.
func fieldsSet(v reflect.Value, set map[string]bool) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		if ownEncoding(t) {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || f.Tag.Get("yaml") == "-" {
				continue
			}
			fv := v.Field(i)
			key := t.Name() + "." + f.Name
			set[key] = set[key] || !(fv.IsZero() || (fv.Kind() == reflect.Slice && fv.Len() == 0))
			fieldsSet(fv, set)
		}
	case reflect.Slice:
		if v.Len() == 0 {
			fieldsSet(reflect.Zero(v.Type().Elem()), set)
		}
		for i := 0; i < v.Len(); i++ {
			fieldsSet(v.Index(i), set)
		}
	}
}

// normal clears in place what a file cannot hold (yaml:"-" fields) and makes empty lists nil (a list
// left out and an empty one mean the same); it returns s.
func normal(s model.State) model.State {
	normalValue(reflect.ValueOf(&s).Elem())
	return s
}

func normalValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if ownEncoding(v.Type()) {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Tag.Get("yaml") == "-" && !(v.Type() == reflect.TypeFor[model.SID]() && f.Name == "Bits") { // Bits: the sid's /LEN
				v.Field(i).SetZero()
				continue
			}
			normalValue(v.Field(i))
		}
	case reflect.Slice:
		if v.Len() == 0 {
			v.SetZero()
		}
		for i := 0; i < v.Len(); i++ {
			normalValue(v.Index(i))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			normalValue(v.Elem())
		}
	}
}
