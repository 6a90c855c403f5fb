package state

// recordjson_test.go: the direct JSON of route records is encoding/json's, byte for byte, and a
// journal line reads back; policy keys tell every field apart; route names.

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestRecordJSONIsEncodingJSON(t *testing.T) {
	p := netip.MustParsePrefix("198.18.0.1/32")
	p6 := netip.MustParsePrefix("2001:db8::/64")
	recs := []record{
		{Route: &savedRoute{T: "t0", P: p, Pol: 7}},
		{Route: &savedRoute{T: "t0", P: p6}}, // pass: no pol
		{Route: &savedRoute{T: "t0", P: p, Pol: 1 | model.GroupFlag, O: model.OriginBGP}},
		{Route: &savedRoute{T: `a<b>&"c\` + "\n\u00e9", P: p, Pol: 3}}, // escaped through encoding/json
		{Route: &savedRoute{T: "t0", P: p, Pol: 3, U: &model.USIDList{Block: netip.MustParsePrefix("fcbb::/32"), IDs: []string{"e004"}}}},
		{Route: &savedRoute{T: "t0"}}, // no prefix
		{RouteDel: &savedRoute{T: "t0", P: p}},
		{Route: &savedRoute{T: "t0", P: p}, RouteDel: &savedRoute{T: "t0", P: p6}}, // not one record kind
		{Table: &savedTable{T: "t0", ID: 9}},
		{PolicyDel: 4},
		{Gen: 12},
	}
	for _, rec := range recs {
		want, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRecord([]byte("x"), &rec)
		if err != nil || string(got) != "x"+string(want) {
			t.Errorf("appendRecord = %s, %v; want x%s", got, err, want)
		}
	}
	line, err := appendJournalLine(nil, 5, func(emit func(record)) {
		for _, rec := range recs {
			emit(rec)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var jl journalLine
	if err := json.Unmarshal(line, &jl); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if jl.Gen != 5 || !reflect.DeepEqual(jl.Recs, recs) {
		t.Errorf("journal line reads back as %+v", jl)
	}
}

func TestPolicyKeyTellsFieldsApart(t *testing.T) {
	a, b := mustAddr("fc00:2::1"), mustAddr("fc00:2::2")
	src := mustAddr("fc00:1::1")
	base := policyKey(false, model.ModeEncap, []netip.Addr{a, b}, src, 64)
	if policyKey(false, model.ModeEncap, []netip.Addr{a, b}, src, 64) != base {
		t.Fatal("the same policy gave two keys")
	}
	others := []string{
		policyKey(true, model.ModeEncap, []netip.Addr{a, b}, src, 64),
		policyKey(false, model.ModeEncapRed, []netip.Addr{a, b}, src, 64),
		policyKey(false, model.ModeEncap, []netip.Addr{b, a}, src, 64),
		policyKey(false, model.ModeEncap, []netip.Addr{a}, src, 64),
		policyKey(false, model.ModeEncap, []netip.Addr{a, b, src}, netip.Addr{}, 64),
		policyKey(false, model.ModeEncap, []netip.Addr{a, b}, netip.Addr{}, 64),
		policyKey(false, model.ModeEncap, []netip.Addr{a, b}, src.WithZone("eth0"), 64),
		policyKey(false, model.ModeEncap, []netip.Addr{a, b}, mustAddr("198.18.0.1"), 64),
		policyKey(false, model.ModeEncap, []netip.Addr{a, b}, src, 63),
		passPolicy.key, groupKey("x", 0),
	}
	seen := map[string]int{base: -1}
	for i, k := range others {
		if j, dup := seen[k]; dup {
			t.Errorf("key %d is key %d: %q", i, j, k)
		}
		seen[k] = i
	}
}

func TestRouteObj(t *testing.T) {
	for r, want := range map[*model.Route]string{
		{Tenant: "blue", Prefix: mustPrefix("198.18.2.0/24")}:   "route 198.18.2.0/24 tenant blue",
		{Tenant: "blue", Prefix: mustPrefix("2001:db8:1::/48")}: "route 2001:db8:1::/48 tenant blue",
		{Tenant: "t", Prefix: netip.Prefix{}}:                   "route invalid Prefix tenant t",
	} {
		if got := model.RouteObj(r); got != want {
			t.Errorf("routeObj = %q, want %q", got, want)
		}
	}
}
