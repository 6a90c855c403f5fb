package state

// classify_test.go: the side of the SR domain boundary of every (interface, VLAN), the ports map
// entries written from it, and the checks of roles and of the domain (no root needed).

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestClassifySides(t *testing.T) {
	ifaces := []model.Interface{
		{Name: "fab", Role: model.RoleFabric, Ifindex: 2},
		{Name: "acc", Role: model.RoleAccess, Ifindex: 3},
		{Name: "mix", Role: model.RoleAuto, Ifindex: 4},  // an API tenant port: access
		{Name: "core", Role: model.RoleAuto, Ifindex: 5}, // no tenant: fabric
		{Name: "kern", Role: model.RoleAuto, Ifindex: 6}, // only a kernel mirror tenant port: as the kernel
	}
	tenants := []model.Tenant{
		{Name: "blue", Ports: []model.Port{{Dev: "mix", VLAN: 100, Ifindex: 4}, {Dev: "fab", VLAN: 400, Ifindex: 2}}},
		{Name: "kernel-main", Origin: model.OriginKernel, Ports: []model.Port{{Dev: "kern", Ifindex: 6}, {Dev: "acc", VLAN: 7, Ifindex: 3}}},
	}
	got := map[string]string{}
	for _, pc := range model.Classify(ifaces, tenants, nil) {
		got[pc.Dev+" "+vlanText(pc.VLAN)] = pc.Side + "/" + pc.Tenant
	}
	want := map[string]string{
		"fab 0": "fabric/", "fab any": "fabric/", "fab 400": "access/blue",
		"acc any": "access/", "acc 7": "access/kernel-main",
		"mix any": "access/", "mix 100": "access/blue",
		"core 0": "fabric/", "core any": "fabric/",
		"kern any": "fabric/", "kern 0": "fabric/kernel-main",
	}
	if len(got) != len(want) {
		t.Errorf("got %d classes %v, want %d", len(got), got, len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
}

func vlanText(v int) string {
	if v == model.VLANAny {
		return "any"
	}
	return strconv.Itoa(v)
}

func TestPortImageFlags(t *testing.T) {
	ifaces := []model.Interface{{Name: "fab", Role: model.RoleFabric, Ifindex: 2}, {Name: "acc", Role: model.RoleAuto, Ifindex: 3}}
	tenants := []model.Tenant{{Name: "blue", KernelFallback: true, Ports: []model.Port{{Dev: "acc", VLAN: 100, Ifindex: 3}}}}
	part := func(string) PortSpec { return tenantSpec(77, &[2][129]uint32{}, &model.Tenant{KernelFallback: true}) }
	for _, sources := range []bool{false, true} {
		im := portImage(ifaces, tenants, nil, part, sources)
		check := func(ifindex uint32, vlan uint16, want PortSpec) {
			t.Helper()
			v, ok := im[PortKey{Ifindex: ifindex, VLAN: vlan}]
			if !ok {
				t.Fatalf("sources %v: no entry for (%d, %d)", sources, ifindex, vlan)
			}
			if v != want {
				t.Errorf("sources %v: (%d, %d): %+v, want %+v", sources, ifindex, vlan, v, want)
			}
		}
		fabric := PortSpec{SIDs: true, SIDSources: sources}
		check(2, VLANAnyKey, fabric)
		check(2, 0, fabric)
		check(3, VLANAnyKey, PortSpec{Boundary: true})
		check(3, 100, PortSpec{Boundary: true, Tenant: true, KernelFallback: true, TableID: 77})
		if len(im) != 4 {
			t.Errorf("sources %v: %d entries, want 4: %v", sources, len(im), im)
		}
	}
}

func TestRoleAndDomainValidation(t *testing.T) {
	s := model.State{
		Interfaces: []model.Interface{{Name: "eth0", Role: "core"}},
		Domain: model.Domain{
			Locators: []netip.Prefix{mustPrefix("fc00:1::/48"), mustPrefix("198.18.0.0/15"), mustPrefix("fc00:1::/48")},
			Sources:  []netip.Prefix{netip.PrefixFrom(mustAddr("fc00::1"), 16)},
		},
	}
	err := model.Validate(&s)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`interface "eth0": role: "core" is not auto, fabric or access`,
		`domain: locators[1]: 198.18.0.0/15 is not an IPv6 prefix`,
		`domain: locators[2]: fc00:1::/48 listed twice`,
		`domain: sources[0]: host bits set; did you mean fc00::/16`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	ok := model.State{Interfaces: []model.Interface{{Name: "eth0"}}, Domain: model.Domain{Locators: []netip.Prefix{mustPrefix("fc00::/16")}}}
	if err := model.Validate(&ok); err != nil {
		t.Fatal(err)
	}
	if ok.Interfaces[0].Role != model.RoleAuto {
		t.Errorf("default role %q, want auto", ok.Interfaces[0].Role)
	}
}
