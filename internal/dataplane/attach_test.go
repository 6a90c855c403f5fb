package dataplane_test

// attach_test.go: an interface moves between the XDP and the tc hook with a commit of its mode, and
// the pinned link follows (in a namespace of the test's own).

import (
	"fmt"
	"os"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
)

func TestAttachModes(t *testing.T) {
	testsupport.NeedRoot(t, "network namespaces, XDP")
	ns := fmt.Sprintf("seg6x-att-%d", os.Getpid())
	if err := testsupport.AddNetns(ns); err != nil {
		t.Fatal(err)
	}
	defer testsupport.DelNetns(ns)
	if err := testsupport.IPLines(ns, "link add hv0 type veth peer name hv1", "link set hv0 up", "link set hv1 up"); err != nil {
		t.Fatal(err)
	}
	err := testsupport.InNetns(ns, func() error {
		l, err := netlink.LinkByName("hv0")
		if err != nil {
			return err
		}
		idx := l.Attrs().Index
		dir := t.TempDir()
		st := openStore(t, dir, state.HostEnv{})
		for _, step := range []struct{ mode, hook string }{
			{"tc", "tc"}, {"xdp", "xdp"}, {"tc", "tc"}, {"generic", "xdp"}, {"", "xdp"},
		} {
			next := model.State{Interfaces: []model.Interface{{Name: "hv0", Mode: step.mode, Role: model.RoleFabric}}}
			if _, err := st.Apply(next, false); err != nil {
				return fmt.Errorf("mode %q: %w", step.mode, err)
			}
			hook, err := dataplane.Hook(dir, idx)
			if err != nil || hook != step.hook {
				return fmt.Errorf("mode %q: link hook %q (%v), want %q", step.mode, hook, err, step.hook)
			}
			if hook == "xdp" {
				l, err := netlink.LinkByIndex(idx)
				if err != nil {
					return err
				}
				want := uint32(nl.XDP_ATTACHED_DRV)
				if step.mode == "generic" {
					want = nl.XDP_ATTACHED_SKB
				}
				if x := l.Attrs().Xdp; x == nil || x.AttachMode != want {
					return fmt.Errorf("mode %q: XDP attach mode %+v, want %d", step.mode, x, want)
				}
			}
			got := st.Current().Interfaces
			if want := model.NormalizeMode(step.mode); len(got) != 1 || got[0].Mode != want {
				return fmt.Errorf("mode %q: running state %+v, want mode %q", step.mode, got, want)
			}
		}
		if _, err := st.Apply(model.State{}, false); err != nil {
			return err
		}
		if hook, _ := dataplane.Hook(dir, idx); hook != "" {
			return fmt.Errorf("detached, but a %s link is left", hook)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
