package daemontest

// vxlan_nhcache_test.go: VXLAN encapsulation under the daemon caches the underlay's next hop per
// remote VTEP (vx_nh) with the next-hop cache's rules: the daemon's generation bump on a netlink
// change makes the very next frames ask the FIB again.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestVXLANNextHopFollowsNeighborChanges(t *testing.T) {
	testsupport.NeedRoot(t, "namespaces, BPF")
	var sc *benchrig.Scenario
	for _, s := range benchrig.Scenarios() {
		if s.Name == "seg6x_vxlan_encap" {
			sc = s
		}
	}
	if sc == nil {
		t.Fatal("no seg6x_vxlan_encap scenario")
	}
	bin := testsupport.BuildSeg6x(t)
	allCPUs() // the scenario pins its daemon once started, not the thread that starts it
	r, err := benchrig.Up(fmt.Sprintf("s6vn%d", os.Getpid()%10000), bin)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Down()
	if err := sc.Setup(r); err != nil { // the daemon runs with its default next-hop cache (1000 ms)
		t.Fatal(err)
	}
	frames := [][]byte{sc.Frame(60, 0), sc.Frame(60, 1), sc.Frame(60, 2)}
	longest, err := r.Load(frames, sc.Expect(60))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ebpf.LoadPinnedMap(filepath.Join(dataplane.MapPinDir(r.DutDir()), "nh_gen"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	gen := func() uint64 {
		var v uint64
		if err := m.Lookup(uint32(0), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	neigh := func(mac string) {
		t.Helper()
		before := gen()
		testsupport.MustRun(t, "ip", "-n", r.DutNS(), "-6", "neigh", "replace", "fc00:b1::2", "lladdr", mac, "dev", "s6bd1", "nud", "permanent")
		for i := 0; i < 500 && gen() == before; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if gen() == before {
			t.Fatal("a neighbor change did not bump nh_gen")
		}
	}
	// 200 ms at 20 kpps, well inside the cache's 1000 ms: a stale entry would still be used.
	stream := func(what string, wantGood bool) {
		t.Helper()
		fast0, err := r.FastPathFrames()
		if err != nil {
			t.Fatal(err)
		}
		tr, err := r.Run(longest, 20000, 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		fast, err := r.FastPathFrames()
		if err != nil {
			t.Fatal(err)
		}
		if tr.Sent == 0 || fast-fast0 < tr.Sent || (wantGood && tr.Good != tr.Sent) || (!wantGood && (tr.Good != 0 || tr.Bad < tr.Sent)) {
			t.Fatalf("%s: sent %d, fast path %d, sink accepted %d, rejected %d", what, tr.Sent, fast-fast0, tr.Good, tr.Bad)
		}
	}
	out, err := exec.Command("ip", "-n", r.DutNS(), "-6", "neigh", "show", "fc00:b1::2", "dev", "s6bd1").Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) < 3 || f[1] != "lladdr" {
		t.Fatalf("neighbor fc00:b1::2: %q %v", out, err)
	}
	stream("before any change (fills the cache)", true)
	neigh("02:00:00:00:00:99")
	stream("right after the remote's next hop moved to another MAC", false)
	neigh(f[2])
	stream("right after it moved back", true)
}
