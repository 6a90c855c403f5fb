package state

// usid_test.go: SIDs served by prefix and the NEXT-C-SID flavor in the model: what is accepted (and
// the defaults filled in), what is refused with which message, and the data plane keys (a /128 is
// the exact table's key, a prefix its own; the same address with another length moves).

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestSIDsByPrefixAndFlavors(t *testing.T) {
	st := openTemp(t)
	un := model.SID{SID: mustAddr("fcbb:0:100::"), Bits: 48, Action: "End", Flavors: []string{"NEXT-CSID", "next-csid"}}
	ua := model.SID{SID: mustAddr("fcbb:0:100:e001::"), Bits: 64, Action: "End.X", NH6: mustAddr("fc00:12::2"),
		Flavors: []string{"next-csid"}, NFLen: 32}
	plain := model.SID{SID: mustAddr("fc00:1::1"), Bits: 128, Action: "End"}
	if _, err := st.Commit([]Op{{Kind: model.OpAdd, SID: &un}, {Kind: model.OpAdd, SID: &ua}, {Kind: model.OpAdd, SID: &plain}}, false); err != nil {
		t.Fatal(err)
	}
	got := map[string]model.SID{}
	for _, sd := range st.SIDs() {
		got[sd.Name()] = sd
	}
	if g := got["fcbb:0:100::/48"]; len(g.Flavors) != 1 || g.Flavors[0] != "next-csid" || g.LBLen != 32 || g.NFLen != 16 {
		t.Errorf("uN stored as %+v: want flavors [next-csid], lblen 32, nflen 16 (defaults)", g)
	}
	if g := got["fcbb:0:100:e001::/64"]; g.LBLen != 32 || g.NFLen != 32 {
		t.Errorf("uA stored as %+v: want lblen 32 (default), nflen 32", g)
	}
	if g, ok := got["fc00:1::1"]; !ok || g.Bits != 0 {
		t.Errorf("a /128 SID is an address (bits 0): %+v", got)
	}
	keys := fakeOf(st).table(TableSIDs)
	for _, k := range []string{"fcbb:0:100::/48", "fcbb:0:100:e001::/64", "fc00:1::1/128"} {
		if _, ok := keys[netip.MustParsePrefix(k)]; !ok {
			t.Errorf("data plane has no SID entry %s: %v", k, keys)
		}
	}
	// The same address as a /56: the /48 entry goes, the /56 one comes.
	un56 := un
	un56.Bits = 56
	if _, err := st.Commit([]Op{{Kind: model.OpReplace, SID: &un56}}, false); err != nil {
		t.Fatal(err)
	}
	if _, ok := keys[netip.MustParsePrefix("fcbb:0:100::/48")]; ok {
		t.Error("the /48 entry stayed after the SID became a /56")
	}
	if _, ok := keys[netip.MustParsePrefix("fcbb:0:100::/56")]; !ok {
		t.Error("no /56 entry")
	}
	checkImage(t, st)

	for _, tc := range []struct {
		sd   model.SID
		want string
	}{
		{model.SID{SID: mustAddr("fcbb:0:100:1::"), Bits: 48, Action: "End"}, "host bits set beyond /48; did you mean fcbb:0:100::/48"},
		{model.SID{SID: mustAddr("fcbb:0:200::"), Bits: 48, Action: "End.DT4", Table: 5, Flavors: []string{"next-csid"}}, "End.DT4 takes no flavors"},
		{model.SID{SID: mustAddr("fcbb:0:200::"), Bits: 48, Action: "End.X", NH6: mustAddr("fc00:12::2"), Flavors: []string{"usd"}},
			`"usd": End.X takes next-csid, psp, usp`},
		{model.SID{SID: mustAddr("fcbb:0:200::"), Bits: 48, Action: "End", Flavors: []string{"reduced"}}, `"reduced": End takes next-csid, psp, usp, usd`},
		{model.SID{SID: mustAddr("fcbb:0:200::"), Bits: 48, Action: "End", LBLen: 32}, "lblen and nflen are the lengths of the next-csid flavor"},
		{model.SID{SID: mustAddr("fcbb:0:200::"), Bits: 48, Action: "End", Flavors: []string{"next-csid"}, LBLen: 12}, "lblen: 12: a multiple of 8"},
		{model.SID{SID: mustAddr("fcbb:0:200::"), Bits: 48, Action: "End", Flavors: []string{"next-csid"}, LBLen: 120, NFLen: 16}, "more than 128 bits"},
	} {
		sd := tc.sd
		_, err := st.Commit([]Op{{Kind: model.OpAdd, SID: &sd}}, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want it to contain %q", tc.sd, err, tc.want)
		}
	}
}
