package dataplane_test

// encode_test.go: the outer header the encoder builds for each mode and segment count (RFC 8986
// H.Encaps / H.Encaps.Red layouts), and that its length is the overhead the model states.

import (
	"net/netip"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

func TestEncapOverheadIsTheEncodedHeader(t *testing.T) {
	for _, mode := range []string{model.ModeEncap, model.ModeEncapRed} {
		for n := 1; n <= model.MaxSegments; n++ {
			p := state.PolicySpec{Mode: mode, Src: netip.MustParseAddr("fc00:1::1"), HopLimit: 64}
			for i := 0; i < n; i++ {
				p.Segs = append(p.Segs, netip.AddrFrom16([16]byte{0xfc, 0, 0, 2, 15: byte(i + 1)}))
			}
			h, err := dataplane.OuterHeader(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := state.EncapOverhead(mode, n); got != int(h.HdrLen) {
				t.Errorf("%s, %d SIDs: EncapOverhead %d, encoded header %d bytes", mode, n, got, h.HdrLen)
			}
		}
	}
}

func TestOuterHeaderLayouts(t *testing.T) {
	a := netip.MustParseAddr
	segs := []netip.Addr{a("fc00:2::1"), a("fc00:3::1"), a("fc00:4::1")}
	for _, tc := range []struct {
		mode              string
		segs              int
		wantLen           int
		wantNH, wantSL    byte
		wantLast, wantExt byte
	}{
		{model.ModeEncap, 3, 40 + 8 + 48, 43, 2, 2, 6},
		{model.ModeEncapRed, 3, 40 + 8 + 32, 43, 2, 1, 4},
		{model.ModeEncapRed, 1, 40, 4, 0, 0, 0},
		{model.ModeEncap, 1, 40 + 8 + 16, 43, 0, 0, 2},
	} {
		ss := segs[:tc.segs]
		pol, err := dataplane.OuterHeader(state.PolicySpec{Mode: tc.mode, Segs: ss, Src: a("fc00:1::1"), HopLimit: 64})
		if err != nil {
			t.Fatal(err)
		}
		h := pol.Hdr[:pol.HdrLen]
		if int(pol.HdrLen) != tc.wantLen || h[6] != tc.wantNH {
			t.Fatalf("%s/%d: len %d nh %d", tc.mode, tc.segs, pol.HdrLen, h[6])
		}
		if netip.AddrFrom16([16]byte(h[24:40])) != segs[0] {
			t.Fatalf("%s/%d: destination is not the first SID", tc.mode, tc.segs)
		}
		if tc.wantNH == 43 {
			if h[40] != 4 || h[41] != tc.wantExt || h[42] != 4 || h[43] != tc.wantSL || h[44] != tc.wantLast {
				t.Fatalf("%s/%d: SRH %x", tc.mode, tc.segs, h[40:48])
			}
			// Segment List[0] is the last SID.
			if netip.AddrFrom16([16]byte(h[48:64])) != ss[len(ss)-1] {
				t.Fatalf("%s/%d: Segment List[0] is not the last SID", tc.mode, tc.segs)
			}
		}
	}
}

// TestSIDEntryFlavors: each flavor sets its own bit of sid_entry.flags, and only next-csid the lengths.
func TestSIDEntryFlavors(t *testing.T) {
	for _, tc := range []struct {
		flavors []string
		flags   dataplane.Seg6xSidFlags
		lb, nf  uint8
	}{
		{nil, 0, 0, 0},
		{[]string{"psp"}, dataplane.Seg6xSidFlagsSID_F_PSP, 0, 0},
		{[]string{"usp", "usd"}, dataplane.Seg6xSidFlagsSID_F_USP | dataplane.Seg6xSidFlagsSID_F_USD, 0, 0},
		{[]string{"next-csid", "psp"}, dataplane.Seg6xSidFlagsSID_F_NEXT_CSID | dataplane.Seg6xSidFlagsSID_F_PSP, 4, 2},
	} {
		sd := model.SID{SID: netip.MustParseAddr("fc00:1::4"), Action: "End", Flavors: tc.flavors}
		if sd.HasFlavor(model.FlavorNextCSID) {
			sd.LBLen, sd.NFLen = 32, 16
		}
		e := dataplane.SIDEntry(state.SIDSpec{SID: sd})
		if e.Flags != uint8(tc.flags) || e.LbBytes != tc.lb || e.NfBytes != tc.nf {
			t.Errorf("%v: flags %#x lb %d nf %d, want %#x %d %d", tc.flavors, e.Flags, e.LbBytes, e.NfBytes, tc.flags, tc.lb, tc.nf)
		}
	}
}
