package bgp

// pathstore_test.go: the importer's compact installed routes give back what change compares (mode,
// segments, source); shared segment lists are one copy.

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestInternerShares(t *testing.T) {
	var n interner
	sid := netip.MustParseAddr("fc00:2::1")
	s1, s2 := n.segList(sid), n.segList(sid)
	if len(s1) != 1 || s1[0] != sid || &s1[0] != &s2[0] || cap(s1) != 1 {
		t.Fatalf("segment lists %v %v (cap %d)", s1, s2, cap(s1))
	}
}

func TestInstalledRouteKeepsWhatChangeCompares(t *testing.T) {
	im := newImporter(New(nil, Options{}))
	src := netip.MustParseAddr("fc00:12::1")
	for _, r := range []model.Route{
		{Mode: model.ModePass},
		{Mode: model.ModeEncap, Segs: []netip.Addr{netip.MustParseAddr("fc00:2::1")}, Src: src},
		{Mode: model.ModeEncapRed, Segs: []netip.Addr{netip.MustParseAddr("fc00:2::1"), netip.MustParseAddr("fc00:3::1")}},
	} {
		got := im.expand(im.compact(&r))
		if got.Mode != r.Mode || !slices.Equal(got.Segs, r.Segs) || got.Src != r.Src {
			t.Errorf("%+v came back as %+v", r, got)
		}
	}
}
