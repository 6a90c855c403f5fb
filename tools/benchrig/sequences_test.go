package benchrig

// sequences_test.go: RigOrder runs every scenario once, each where it can on the rig the one before
// left: the seg6x configurations together (the next-hop cache's first, a million routes last), a
// scenario set up as another right after it; and After allows nothing else.

import (
	"slices"
	"strings"
	"testing"
)

func TestRigOrderSharesRigsWhereScenariosAllow(t *testing.T) {
	all := Scenarios()
	byName := map[string]*Scenario{}
	for _, sc := range all {
		byName[sc.Name] = sc
	}
	order := RigOrder(all, nil)
	var names []string
	for _, sc := range order {
		names = append(names, sc.Name)
	}
	if len(order) != len(all) {
		t.Fatalf("%d scenarios in order, %d in all: %v", len(order), len(all), names)
	}
	for _, sc := range all {
		if !slices.Contains(order, sc) {
			t.Fatalf("%s missing from %v", sc.Name, names)
		}
	}
	// Where each scenario runs: on the rig the one before left, with or without its Setup.
	var shared, asIs []string
	for i := 1; i < len(order); i++ {
		ok, setup := order[i].After(order[i-1])
		switch {
		case ok && setup:
			shared = append(shared, order[i].Name)
		case ok:
			asIs = append(asIs, order[i].Name)
		}
	}
	if want := []string{"kernel_vxlan_both", "seg6x_vxlan_both"}; !slices.Equal(asIs, want) {
		t.Errorf("set up as the one before: %v, want %v (order %v)", asIs, want, names)
	}
	// Every seg6x configuration but the first of them on the rig the one before left.
	var configs []string
	for _, sc := range order {
		if sc.config != "" {
			configs = append(configs, sc.Name)
		}
	}
	if len(configs) < 10 || !slices.Equal(shared, configs[1:]) {
		t.Errorf("after another's configuration: %v, want %v", shared, configs[1:])
	}
	if !strings.HasSuffix(configs[0], "_nhcache") || configs[len(configs)-1] != "seg6x_encap_1m_routes" {
		t.Errorf("configurations in order %v: want those with the next-hop cache first, a million routes last", configs)
	}
	if ok, _ := byName["seg6x_encap_1sid"].After(byName["seg6x_encap_1m_routes"]); ok {
		t.Error("a scenario after a million routes on the same rig")
	}
	for _, pair := range [][2]string{{"kernel_ipv4", "bare_redirect"}, {"seg6x_vxlan_encap", "kernel_vxlan_encap"},
		{"seg6x_encap_1sid", "kernel_encap_1sid"}, {"kernel_encap_1sid", "seg6x_encap_1sid"}, {"seg6x_vxlan_decap", "seg6x_vxlan_encap"}} {
		if ok, _ := byName[pair[0]].After(byName[pair[1]]); ok {
			t.Errorf("%s on the rig %s left", pair[0], pair[1])
		}
	}
	if ok, setup := byName["seg6x_end"].After(byName["seg6x_end"]); !ok || setup {
		t.Errorf("seg6x_end after itself: %v, %v; want it as it is", ok, setup)
	}
	// A test that finds seg6x_wecmp3 set up goes on with a seg6x configuration of its own.
	some := []*Scenario{byName["bare_redirect"], byName["kernel_ipv4"], byName["seg6x_encap_1sid"]}
	if got := RigOrder(some, byName["seg6x_wecmp3"]); got[0].Name != "seg6x_encap_1sid" || len(got) != 3 {
		t.Errorf("after seg6x_wecmp3: %s first of %d", got[0].Name, len(got))
	}
}
