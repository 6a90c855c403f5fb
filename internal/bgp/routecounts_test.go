package bgp

// routecounts_test.go: RouteCounts counts the importer's learned paths, installed routes and
// refusals (no BGP server needed).

import (
	"net/netip"
	"testing"
)

func TestRouteCounts(t *testing.T) {
	s := New(nil, Options{})
	if n := s.RouteCounts(); n != (RouteCounts{}) {
		t.Fatalf("before Run: %+v", n)
	}
	s.imp = newImporter(s)
	p := func(s string) netip.Prefix { return netip.MustParsePrefix(s) }
	s.imp.learned.put("1:1", &VPNRoute{RD: "1:1", Prefix: p("198.18.0.0/24")}, netip.Addr{}, false)
	s.imp.learned.put("1:1", &VPNRoute{RD: "1:1", Prefix: p("198.18.1.0/24")}, netip.Addr{}, false)
	s.imp.learned.putBad("1:2", p("198.18.9.0/24"), "1:2 198.18.9.0/24", learnedPath{err: "no SRv6 service SID"})
	s.imp.installed["blue"] = map[netip.Prefix]installedRoute{p("198.18.0.0/24"): {}, p("198.18.1.0/24"): {}}
	s.imp.installed["red"] = map[netip.Prefix]installedRoute{p("198.18.0.0/24"): {}}
	s.imp.rejected["red"] = map[netip.Prefix]string{p("198.18.1.0/24"): "owned by the API"}
	if got, want := s.RouteCounts(), (RouteCounts{Learned: 3, Installed: 3, Refused: 2}); got != want {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
}
