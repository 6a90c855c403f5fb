package packet

// attach_test.go: attaching to an interface that cannot run the XDP program is refused with the reason
// and what to do instead (no raw errno), and nothing is attached; what the driver can do is read.

import (
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/internal/testsupport"
)

func TestAttachSaysWhatTheInterfaceCannotDo(t *testing.T) {
	testsupport.MustRun(t, "ip", "link", "add", "nox0", "type", "bridge")
	defer func() { _ = exec.Command("ip", "link", "del", "nox0").Run() }()
	testsupport.MustRun(t, "ip", "link", "set", "nox0", "up")

	for _, c := range []struct{ dev, want, also string }{
		{"nox0", "no native XDP", "--mode generic"}, // a bridge: xdp-features none
		{"big0", "MTU (9000)", "--mode tc"},         // a veth of MTU 9000: frames beyond a page
	} {
		_, err := rig.Store.Commit([]state.Op{{Kind: state.OpReplace, Interface: &state.Interface{Name: c.dev, Role: "fabric"}}}, false)
		if err == nil {
			_, _ = rig.Store.Commit([]state.Op{{Kind: state.OpDelete, Interface: &state.Interface{Name: c.dev}}}, false)
			t.Fatalf("attaching %s succeeded", c.dev)
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || !strings.Contains(msg, c.also) || strings.Contains(msg, "numerical result") {
			t.Fatalf("attaching %s: %q, want it to say %q and %q", c.dev, msg, c.want, c.also)
		}
		it, _ := net.InterfaceByName(c.dev)
		if dataplane.Attached(rig.Dir, it.Index) {
			t.Fatalf("%s has a pinned link after a refused attach", c.dev)
		}
	}

	fab0, err := net.InterfaceByName("fab0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := dataplane.ReadXDPFeatures(fab0.Index)
	if err != nil || !f.Known || !f.Native() || !f.MultiBuffer() {
		t.Fatalf("veth fab0's xdp-features: %v (%v), want basic, redirect and rx-sg known", f, err)
	}
}
