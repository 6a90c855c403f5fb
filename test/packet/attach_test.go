package packet

// attach_test.go: attaching to an interface that cannot run the XDP program is refused with the reason
// and what to do instead (no raw errno), and nothing is attached; what the driver can do is read; a
// jumbo interface runs the multi-buffer programs natively.

import (
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
)

func TestAttachSaysWhatTheInterfaceCannotDo(t *testing.T) {
	testsupport.MustRun(t, "ip", "link", "add", "nox0", "type", "bridge")
	defer func() { _ = exec.Command("ip", "link", "del", "nox0").Run() }()
	testsupport.MustRun(t, "ip", "link", "set", "nox0", "up")

	// A bridge: xdp-features none.
	_, err := rig.Store.Commit([]state.Op{{Kind: model.OpReplace, Interface: &model.Interface{Name: "nox0", Role: "fabric"}}}, false)
	if err == nil {
		_, _ = rig.Store.Commit([]state.Op{{Kind: model.OpDelete, Interface: &model.Interface{Name: "nox0"}}}, false)
		t.Fatal("attaching nox0 succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "no native XDP") || !strings.Contains(msg, "--mode generic") || strings.Contains(msg, "operation not supported") {
		t.Fatalf("attaching nox0: %q, want it to say why and what to do", msg)
	}
	nox, _ := net.InterfaceByName("nox0")
	if dataplane.Attached(rig.Dir, nox.Index) {
		t.Fatal("nox0 has a pinned link after a refused attach")
	}
	var v uint32
	if dataplane.MapsOf(rig.Store).TxNoSg.Lookup(uint32(nox.Index), &v) == nil {
		t.Fatal("nox0 has a tx_no_sg entry after a refused attach")
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

// The programs are multi-buffer (xdp.frags): a veth of MTU 9000, whose frames do not fit a page, runs
// them in native mode (without xdp.frags the kernel refuses the attach with ERANGE).
func TestJumboInterfaceRunsNativeXDP(t *testing.T) {
	l, err := netlink.LinkByName("big0")
	if err != nil {
		t.Fatal(err)
	}
	if l.Attrs().MTU != 9000 {
		t.Fatalf("big0's MTU is %d, want 9000", l.Attrs().MTU)
	}
	if x := l.Attrs().Xdp; x == nil || x.AttachMode != nl.XDP_ATTACHED_DRV {
		t.Fatalf("big0: XDP %+v, want attached in driver mode", x)
	}
	if !dataplane.Attached(rig.Dir, l.Attrs().Index) {
		t.Fatal("big0 has no pinned link")
	}
}
