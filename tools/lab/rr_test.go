package lab

// rr_test.go: each kind of route reflector in a namespace between two PEs (gobgpd clients in
// namespaces of their own): both sessions reach Established, pe1's VPNv4 and VPNv6 paths are
// reflected to pe2 with their IPv6 next hop (one the reflector has no route to), and Stop leaves no
// process, listener or control socket. A start that fails says why and leaves nothing running.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestRR(t *testing.T) {
	testsupport.NeedRoot(t, "namespaces")
	for _, kind := range []string{"frr", "gobgpd"} {
		t.Run(kind, func(t *testing.T) {
			bins := []string{"gobgpd", "gobgp"} // the PEs
			if kind == "frr" {
				bins = append(bins, filepath.Join(frrBin, "zebra"), filepath.Join(frrBin, "bgpd"), "vtysh")
			}
			for _, b := range bins {
				if _, err := exec.LookPath(b); err != nil {
					t.Skipf("%s not installed (scripts/deps.sh installs it)", b)
				}
			}
			testRR(t, kind)
		})
	}
}

// Addresses: the reflector's lo fc00:90::1; links rr-pe1 fc00:91::/64 and rr-pe2 fc00:92::/64.
const (
	rrtListen = "fc00:90::1"
	rrtPE1    = "fc00:91::2"
	rrtPE2    = "fc00:92::2"
	rrtNH     = "fc00:1::1" // pe1's next hop: no route to it at the reflector
)

func testRR(t *testing.T, kind string) {
	ns := func(n string) string { return "s6rrt-" + kind + "-" + n }
	rrNS, pe1NS, pe2NS := ns("rr"), ns("pe1"), ns("pe2")
	testsupport.DelNetns(rrNS, pe1NS, pe2NS) // leftovers of a killed run
	t.Cleanup(func() { testsupport.DelNetns(rrNS, pe1NS, pe2NS) })
	if err := testsupport.AddNetns(rrNS, pe1NS, pe2NS); err != nil {
		t.Fatal(err)
	}
	for i, pe := range []string{pe1NS, pe2NS} {
		dev := fmt.Sprintf("pe%d", i+1)
		testsupport.MustRun(t, "ip", "link", "add", dev, "netns", rrNS, "type", "veth", "peer", "name", "rr", "netns", pe)
		if err := testsupport.IPLines(pe, "link set lo up", "link set rr up",
			fmt.Sprintf("-6 addr add fc00:9%d::2/64 dev rr nodad", i+1),
			fmt.Sprintf("-6 route add %s/128 via fc00:9%d::1", rrtListen, i+1)); err != nil {
			t.Fatal(err)
		}
		if err := testsupport.IPLines(rrNS, "link set "+dev+" up", fmt.Sprintf("-6 addr add fc00:9%d::1/64 dev %s nodad", i+1, dev)); err != nil {
			t.Fatal(err)
		}
	}
	if err := testsupport.IPLines(rrNS, "link set lo up", "-6 addr add "+rrtListen+"/128 dev lo"); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	c := RRConfig{Kind: kind, NS: rrNS, Dir: filepath.Join(dir, "rr"), ASN: 65000, RouterID: "10.255.0.1",
		Listen: rrtListen, Clients: []string{rrtPE1, rrtPE2}}

	// A start that fails (a listen address the namespace does not have) returns an error with the
	// log and leaves nothing running.
	bad := c
	bad.Dir, bad.Listen = filepath.Join(dir, "bad"), "fc00:90::99"
	defer func(d time.Duration) { rrStartTimeout = d }(rrStartTimeout)
	rrStartTimeout = 3 * time.Second
	r, err := StartRR(bad)
	r.Stop() // nil after a failed start: nothing to do
	if err == nil {
		t.Fatal("StartRR with a listen address not in the namespace succeeded")
	}
	if !strings.Contains(err.Error(), "exited") || !strings.Contains(err.Error(), "--- ") || !strings.Contains(err.Error(), bad.Dir) {
		t.Fatalf("StartRR's error does not say which daemon exited, with the tail of its log: %v", err)
	}
	t.Logf("failed start, as it should: %.160s", err)
	if pids := procsWith(bad.Dir); len(pids) > 0 {
		t.Fatalf("a failed start left processes %v", pids)
	}
	rrStartTimeout = 30 * time.Second

	rr, err := StartRR(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rr.Stop)
	pe1 := startPE(t, pe1NS, filepath.Join(dir, "pe1"), "10.255.0.2", rrtPE1)
	pe2 := startPE(t, pe2NS, filepath.Join(dir, "pe2"), "10.255.0.3", rrtPE2)

	waitFor(t, "both sessions Established at the reflector", func() (bool, string) {
		s, err := rr.Sessions()
		return err == nil && s[rrtPE1] == "Established" && s[rrtPE2] == "Established", fmt.Sprint(s, err)
	})
	for _, pe := range []string{pe1, pe2} {
		peers, err := gobgpNeighbors(pe)
		if err != nil || len(peers) != 1 || peers[0].Address != rrtListen || peers[0].State != "Established" {
			t.Fatalf("the PE at %s sees %+v, %v; want its one session to %s Established", pe, peers, err, rrtListen)
		}
	}

	for _, a := range [][]string{
		{"-a", "vpnv4", "198.18.1.0/24", "label", "16", "rd", "65000:1", "rt", "65000:1", "nexthop", rrtNH},
		{"-a", "vpnv6", "2001:db8:1::/64", "label", "16", "rd", "65000:1", "rt", "65000:1", "nexthop", rrtNH},
	} {
		testsupport.MustRun(t, "gobgp", append([]string{"--target", pe1, "global", "rib", "add"}, a...)...)
	}
	for _, f := range []string{"vpnv4", "vpnv6"} {
		waitFor(t, f+": one prefix received from pe1, none from pe2", func() (bool, string) {
			n, err := rr.Received(f)
			return err == nil && n[rrtPE1] == 1 && n[rrtPE2] == 0 && len(n) == 2, fmt.Sprint(n, err)
		})
	}
	for f, key := range map[string]string{"vpnv4": "65000:1:198.18.1.0/24", "vpnv6": "65000:1:2001:db8:1::/64"} {
		waitFor(t, f+" "+key+" reflected to pe2 with next hop "+rrtNH, func() (bool, string) {
			nh, err := ribNextHops(pe2, f)
			return err == nil && len(nh) == 1 && nh[key] == rrtNH, fmt.Sprint(nh, err)
		})
	}

	pids := procsWith(c.Dir)
	if want := map[string]int{"frr": 2, "gobgpd": 1}[kind]; len(pids) != want {
		t.Fatalf("processes running with %s: %v, want %d", c.Dir, pids, want)
	}
	rr.Stop()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("process %d still there after Stop (kill 0: %v)", pid, err)
		}
	}
	if out := testsupport.MustRun(t, "ip", "netns", "exec", rrNS, "ss", "-Hltn", "sport = :179"); strings.TrimSpace(out) != "" {
		t.Errorf("something still listens on 179 after Stop: %s", out)
	}
	if s, err := rr.Sessions(); err == nil {
		t.Errorf("Sessions answers after Stop: %v", s)
	}
	rr.Stop() // twice is fine
}

// startPE runs a gobgpd in ns (its files in dir) with one iBGP session from local to the reflector,
// VPNv4 and VPNv6, and returns its gobgp target; the test's cleanup stops it.
func startPE(t *testing.T, ns, dir, routerID, local string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`[global.config]
  as = 65000
  router-id = %q
  local-address-list = [%q]

[[neighbors]]
  [neighbors.config]
    neighbor-address = %q
    peer-as = 65000
  [neighbors.transport.config]
    local-address = %q
  [neighbors.timers.config]
    connect-retry = 5
  [[neighbors.afi-safis]]
    [neighbors.afi-safis.config]
      afi-safi-name = "l3vpn-ipv4-unicast"
  [[neighbors.afi-safis]]
    [neighbors.afi-safis.config]
      afi-safi-name = "l3vpn-ipv6-unicast"
`, routerID, local, rrtListen, local)
	if err := os.WriteFile(filepath.Join(dir, "pe.toml"), []byte(conf), 0o640); err != nil {
		t.Fatal(err)
	}
	pe := &RR{c: RRConfig{Kind: "gobgpd", NS: ns, Dir: dir}}
	t.Cleanup(pe.Stop)
	if err := pe.start("pe", "gobgpd", gobgpdArgs(dir, "pe")...); err != nil {
		t.Fatal(err)
	}
	target := gobgpTarget(dir, "pe")
	waitFor(t, "the PE in "+ns+" answers", func() (bool, string) {
		_, err := gobgpNeighbors(target)
		return err == nil, fmt.Sprint(err)
	})
	return target
}

// ribNextHops maps each path of family f in the gobgpd's global RIB to its MP_REACH next hop.
func ribNextHops(target, f string) (map[string]string, error) {
	var rib map[string][]struct {
		Attrs []struct {
			Type    int    `json:"type"`
			Nexthop string `json:"nexthop"`
		} `json:"attrs"`
	}
	if err := outputJSON(&rib, "gobgp", "--target", target, "-j", "global", "rib", "-a", f); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for key, paths := range rib {
		for _, p := range paths {
			for _, a := range p.Attrs {
				if a.Type == 14 { // MP_REACH_NLRI
					out[key] = a.Nexthop
				}
			}
		}
	}
	return out, nil
}

// waitFor polls cond every 200 ms for up to 30 s; on timeout the test fails with cond's last detail.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var detail string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var ok bool
		if ok, detail = cond(); ok {
			return
		}
	}
	t.Fatalf("%s: not within 30 s; last: %s", what, detail)
}

// procsWith lists the processes whose command line mentions s.
func procsWith(s string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(string(b), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}
