package packet

// explain_preview_test.go: `seg6x apply -f F --explain FRAME` runs a frame under a state not yet
// applied (state.Store.Preview, then dataplane.NewImageExplainer on private maps). For every fixture
// frame it must agree byte for byte with what the product program does once that state is really
// applied; the edits must change the frames they touch; the preview leaves the live instance alone.

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"reflect"
	"slices"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/fixtures"
)

// previewExplainer explains frames as they would go under desired.
func previewExplainer(t *testing.T, desired model.State) *dataplane.Explainer {
	t.Helper()
	var im *state.Image
	var opts state.ProgramOptions
	if _, err := rig.Store.Preview(desired, func(next *state.Store) { im, opts = next.Image(), next.ProgramOptions() }); err != nil {
		t.Fatal(err)
	}
	x, err := dataplane.NewImageExplainer(im, opts, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Close)
	return x
}

func TestExplainUnderANewState(t *testing.T) {
	fs, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	orig := rig.Store.Current()
	next := rig.Store.Current()
	for i := range next.Routes {
		if r := &next.Routes[i]; r.Tenant == "blue" && r.Prefix == netip.MustParsePrefix("198.18.2.0/24") {
			r.Segs = []netip.Addr{netip.MustParseAddr("fc00:2::99")}
		}
	}
	next.SIDs = slices.DeleteFunc(next.SIDs, func(s model.SID) bool { return s.SID == netip.MustParseAddr("fc00:1::65") })
	imageBefore, genBefore := rig.Store.Image(), rig.Store.Gen()

	x := previewExplainer(t, next)
	if !reflect.DeepEqual(rig.Store.Image(), imageBefore) || rig.Store.Gen() != genBefore {
		t.Fatal("the preview changed the running state")
	}
	type outcome struct {
		action uint32
		out    []byte
	}
	preview := map[string]outcome{}
	before := map[string]outcome{}
	for i := range fs {
		f := &fs[i]
		e := explainFixture(t, x, f)
		preview[f.Name] = outcome{e.Ret, e.Out}
		res, err := rig.Run(nil, f, 1)
		if err != nil {
			t.Fatal(err)
		}
		before[f.Name] = outcome{res.Action, res.Output}
	}

	// Now apply it for real and run the product program; put the fixture state back afterwards.
	if _, err := rig.Store.Apply(next, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := rig.Store.Apply(orig, false); err != nil {
			t.Errorf("restoring the fixture state: %v", err)
		}
	})
	changed := map[string]bool{}
	for i := range fs {
		f := &fs[i]
		res, err := rig.Run(nil, f, 1)
		if err != nil {
			t.Fatal(err)
		}
		p := preview[f.Name]
		if p.action != res.Action || (res.Action != dataplane.XDPDrop && !bytes.Equal(p.out, res.Output)) {
			t.Errorf("%s: explain under the preview gave action %d\n%s\nthe applied state gives %d\n%s", f.Name,
				p.action, hex.EncodeToString(p.out), res.Action, hex.EncodeToString(res.Output))
		}
		b := before[f.Name]
		if b.action != res.Action || !bytes.Equal(b.out, res.Output) {
			changed[f.Name] = true
		}
	}
	// The edits reach the frames they touch: blue's 198.18.2.0/24 goes to the new SID, End.DX4 is gone.
	for _, name := range []string{"encap1_v4_udp", "end_dx4", "end_then_dx4_chain"} {
		if !changed[name] {
			t.Errorf("%s: same outcome before and after the change; the test does not test the preview", name)
		}
	}
	if o := preview["encap1_v4_udp"].out; !bytes.Contains(o, netip.MustParseAddr("fc00:2::99").AsSlice()) {
		t.Errorf("encap1_v4_udp under the preview does not carry the new SID fc00:2::99: %x", o)
	}
	// ... and not the others (another tenant's same prefix, other SIDs).
	for _, name := range []string{"encap_other_tenant", "encap2_v4_tcp_tos", "end", "end_dt4_vlan", "end_dx6", "encap1_v6"} {
		if changed[name] {
			t.Errorf("%s: changed, but the edits do not touch it", name)
		}
	}
}
