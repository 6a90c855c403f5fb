package daemontest

// vxlan_mirror_test.go: `seg6x daemon --mirror-kernel` follows the kernel's VXLAN side: an IPv6
// VXLAN device in a bridge, its default remotes and remote MACs, the bridge's local MACs; entries added, moved to another remote, deleted; a device the fast path could not
// serve (a second VXLAN port in the bridge) and back; a restart. Checked through the API's kernel
// report (what `seg6x show kernel` prints) and the CLI's text.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestMirrorFollowsVXLAN(t *testing.T) {
	testsupport.NeedRoot(t, "namespaces, BPF")
	bin := testsupport.BuildSeg6x(t)
	ns := fmt.Sprintf("s6vm%d", os.Getpid()%10000)
	if err := testsupport.AddNetns(ns); err != nil {
		t.Fatal(err)
	}
	defer testsupport.DelNetns(ns)
	if err := testsupport.IPLines(ns,
		"link add u0 type veth peer name u1",
		"-6 addr add 2001:db8:1::a/64 dev u0 nodad",
		"link set u0 up", "link set u1 up",
		"link add t0 type veth peer name t1",
		"link add br0 type bridge",
		"link add vx0 type vxlan id 100 local 2001:db8:1::a dstport 4789 nolearning",
		"link set vx0 master br0", "link set t0 master br0",
		"link set br0 up", "link set vx0 up", "link set t0 up", "link set t1 up",
	); err != nil {
		t.Fatal(err)
	}
	if err := testsupport.BridgeNetfilterOff(ns); err != nil {
		t.Fatal(err)
	}
	fdb := func(lines ...string) {
		t.Helper()
		for _, l := range lines {
			if out, err := testsupport.Output("bridge", append([]string{"-n", ns, "fdb"}, strings.Fields(l)...)...); err != nil {
				t.Fatalf("bridge fdb %s: %v %s", l, err, out)
			}
		}
	}
	fdb("append 00:00:00:00:00:00 dev vx0 dst 2001:db8:1::b",
		"append 00:00:00:00:00:00 dev vx0 dst 2001:db8:1::c",
		"add 02:00:00:00:0b:01 dev vx0 dst 2001:db8:1::b self",
		"add 02:00:00:00:0b:01 dev vx0 master static",
		"add 02:00:00:00:0a:01 dev t0 master static")

	dir := filepath.Join(t.TempDir(), "x")
	testsupport.ScratchInstance(t, dir)
	var logs testsupport.LogBuffer
	allCPUs()
	d, err := testsupport.StartDaemon(bin, ns, dir, &logs, "--mirror-kernel")
	if err != nil {
		t.Fatalf("%v:\n%s", err, logs.String())
	}
	defer func() { d.Signal(os.Kill) }()

	// wait polls the kernel report until ok accepts it (5 s).
	wait := func(what string, ok func(k *pb.KernelReply) bool) *pb.KernelReply {
		t.Helper()
		var k *pb.KernelReply
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if k, err = d.Client.Kernel(context.Background(), &pb.KernelRequest{}); err != nil {
				t.Fatal(err)
			}
			if ok(k) {
				return k
			}
		}
		t.Fatalf("%s: the kernel report never showed it:\nvxlans %v\nfdb %v\nnotes %v\n%s", what, k.Vxlans, k.Fdb, k.Notes, logs.Tail(20))
		return nil
	}
	dev := func(k *pb.KernelReply, name string) *pb.KernelVxlan {
		for _, v := range k.Vxlans {
			if v.Dev == name {
				return v
			}
		}
		return nil
	}
	entry := func(k *pb.KernelReply, mac, remote string) *pb.KernelFdb {
		for _, e := range k.Fdb {
			if e.Mac == mac && e.Remote == remote {
				return e
			}
		}
		return nil
	}
	followed := func(k *pb.KernelReply, mac, remote string) bool {
		e := entry(k, mac, remote)
		return e != nil && e.Followed && !e.Accelerated
	}

	k := wait("vx0 and its entries", func(k *pb.KernelReply) bool {
		v := dev(k, "vx0")
		return v != nil && v.Followed && followed(k, "02:00:00:00:0b:01", "2001:db8:1::b") &&
			followed(k, "00:00:00:00:00:00", "2001:db8:1::b") && followed(k, "00:00:00:00:00:00", "2001:db8:1::c") &&
			followed(k, "02:00:00:00:0a:01", "")
	})
	if v := dev(k, "vx0"); v.Vni != 100 || v.Local != "2001:db8:1::a" || v.Port != 4789 || v.Bridge != "br0" || v.Accelerated ||
		v.Object != `vxlan "vx0"` || !strings.Contains(v.Reason, "no port of bridge br0 is attached") {
		t.Fatalf("vx0 as reported: %v", v)
	}
	if e := entry(k, "02:00:00:00:0a:01", ""); e.Dev != "t0" || e.Bridge != "br0" {
		t.Fatalf("local MAC: %v", e)
	}

	// Entries the kernel learns or is given while the daemon runs: an FRR-shaped remote MAC, then
	// moved to another VTEP (a replace: no delete of the old one), a remote MAC the bridge does not
	// send to the tunnel, then deleted; a remote that is no VTEP (via another device) is refused.
	fdb("replace 02:00:00:00:0b:02 dev vx0 dst 2001:db8:1::b master self extern_learn")
	wait("new remote MAC", func(k *pb.KernelReply) bool { return followed(k, "02:00:00:00:0b:02", "2001:db8:1::b") })
	fdb("replace 02:00:00:00:0b:02 dev vx0 dst 2001:db8:1::c self")
	wait("moved remote MAC", func(k *pb.KernelReply) bool {
		return followed(k, "02:00:00:00:0b:02", "2001:db8:1::c") && entry(k, "02:00:00:00:0b:02", "2001:db8:1::b") == nil
	})
	fdb("add 02:00:00:00:0b:03 dev vx0 dst 2001:db8:1::c self",
		"add 02:00:00:00:0b:04 dev vx0 dst 2001:db8:1::c via u0 self")
	k = wait("unbridged and via entries", func(k *pb.KernelReply) bool {
		e3, e4 := entry(k, "02:00:00:00:0b:03", "2001:db8:1::c"), entry(k, "02:00:00:00:0b:04", "2001:db8:1::c")
		return e3 != nil && e4 != nil
	})
	if e := entry(k, "02:00:00:00:0b:03", "2001:db8:1::c"); !e.Followed || !strings.Contains(e.Reason, "does not send the MAC to the tunnel") {
		t.Fatalf("remote MAC without a bridge entry: %v", e)
	}
	if e := entry(k, "02:00:00:00:0b:04", "2001:db8:1::c"); e.Followed || !strings.Contains(e.Reason, "via") {
		t.Fatalf("remote through a given device: %v", e)
	}
	fdb("del 02:00:00:00:0b:03 dev vx0 self")
	wait("deleted remote MAC", func(k *pb.KernelReply) bool { return entry(k, "02:00:00:00:0b:03", "2001:db8:1::c") == nil })

	// A second VXLAN port makes the bridge the kernel's; removing it makes vx0 followed again.
	if err := testsupport.IPLines(ns, "link add vx9 type vxlan id 900 local 2001:db8:1::a dstport 4790 nolearning",
		"link set vx9 master br0"); err != nil {
		t.Fatal(err)
	}
	wait("second VXLAN port", func(k *pb.KernelReply) bool {
		v := dev(k, "vx0")
		e := entry(k, "02:00:00:00:0b:01", "2001:db8:1::b")
		return v != nil && !v.Followed && strings.Contains(v.Reason, "2 VXLAN ports") && e != nil && !e.Followed
	})
	if err := testsupport.IPLines(ns, "link del vx9"); err != nil {
		t.Fatal(err)
	}
	wait("vx0 followed again", func(k *pb.KernelReply) bool {
		v := dev(k, "vx0")
		return v != nil && v.Followed && followed(k, "02:00:00:00:0b:02", "2001:db8:1::c")
	})

	// The CLI prints the same report.
	out, err := exec.Command("ip", "netns", "exec", ns, bin, "--dir", dir, "show", "kernel").CombinedOutput()
	if err != nil {
		t.Fatalf("show kernel: %v\n%s", err, out)
	}
	for _, want := range []string{"VXLAN DEVICE", "vx0", "02:00:00:00:0b:02", "remote 2001:db8:1::c", "port t0", "remote through a given device (via)"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("show kernel lacks %q:\n%s", want, out)
		}
	}

	t.Logf("%s", out)
	// After a restart (and a change made while it was down) the daemon reads the kernel again.
	d.Signal(os.Interrupt)
	fdb("del 02:00:00:00:0b:02 dev vx0 self")
	if d, err = testsupport.StartDaemon(bin, ns, dir, &logs, "--mirror-kernel"); err != nil {
		t.Fatalf("%v:\n%s", err, logs.String())
	}
	wait("after restart", func(k *pb.KernelReply) bool {
		v := dev(k, "vx0")
		return v != nil && v.Followed && followed(k, "02:00:00:00:0b:01", "2001:db8:1::b") &&
			entry(k, "02:00:00:00:0b:02", "2001:db8:1::c") == nil
	})
}
