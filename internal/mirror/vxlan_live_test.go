package mirror

// vxlan_live_test.go: the VXLAN parsers on this kernel's own messages: a namespace with a bridge, a
// VXLAN device over IPv6 and forwarding entries of every shape FRR or `bridge fdb` installs, dumped
// over netlink and parsed (root only).

import (
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/tools/testsupport"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// dump sends a netlink dump request of typ with header hdr inside ns and returns the payloads.
func dump(t *testing.T, ns string, typ int, hdr nl.NetlinkRequestData) [][]byte {
	t.Helper()
	var out [][]byte
	err := testsupport.InNetns(ns, func() error {
		req := nl.NewNetlinkRequest(typ, unix.NLM_F_DUMP)
		req.AddData(hdr)
		msgs, err := req.Execute(unix.NETLINK_ROUTE, 0)
		out = msgs
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestVXLANFromTheKernel(t *testing.T) {
	testsupport.NeedRoot(t, "network namespaces")
	ns := fmt.Sprintf("s6vx%d", os.Getpid()%10000)
	if err := testsupport.AddNetns(ns); err != nil {
		t.Fatal(err)
	}
	defer testsupport.DelNetns(ns)
	if err := testsupport.IPLines(ns,
		"link add u0 type veth peer name u1",
		"-6 addr add 2001:db8:1::a/64 dev u0 nodad",
		"link set u0 up",
		"link add br0 type bridge",
		"link add vx0 type vxlan id 100 local 2001:db8:1::a dstport 4789 nolearning",
		"link add vx1 type vxlan external",
		"link set vx0 master br0",
		"link set br0 up", "link set vx0 up",
	); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{
		"fdb append 00:00:00:00:00:00 dev vx0 dst 2001:db8:1::b",
		"fdb append 00:00:00:00:00:00 dev vx0 dst 2001:db8:1::c",
		"fdb replace 02:00:00:00:0e:03 dev vx0 dst 2001:db8:1::b master self extern_learn dynamic",
		"fdb add 02:00:00:00:0e:05 dev vx0 dst 2001:db8:1::b vni 4242 port 4790 via u0 self permanent",
	} {
		if _, err := testsupport.Output("bridge", append([]string{"-n", ns}, strings.Fields(l)...)...); err != nil {
			t.Fatalf("bridge %s: %v", l, err)
		}
	}

	devs := map[string]*kernelVXLAN{}
	for _, m := range dump(t, ns, unix.RTM_GETLINK, nl.NewIfInfomsg(unix.AF_UNSPEC)) {
		v, err := parseVXLANLink(m)
		if err != nil {
			t.Fatal(err)
		}
		if v != nil {
			devs[v.Name] = v
		}
	}
	vx0, vx1 := devs["vx0"], devs["vx1"]
	if len(devs) != 2 || vx0 == nil || vx1 == nil {
		t.Fatalf("VXLAN devices: %+v", devs)
	}
	if vx0.VNI != 100 || vx0.Local != netip.MustParseAddr("2001:db8:1::a") || vx0.Port != 4789 || vx0.Learning || vx0.Master == 0 ||
		!vx0.Up || vx0.refusal() != "" {
		t.Fatalf("vx0: %+v, refusal %q", vx0, vx0.refusal())
	}
	if !vx1.CollectMD || !strings.Contains(vx1.refusal(), "external") || vx1.Port != 8472 {
		t.Fatalf("vx1: %+v, refusal %q", vx1, vx1.refusal())
	}

	var bum, vxl, brt []*fdbEntry
	for _, m := range dump(t, ns, unix.RTM_GETNEIGH, &netlink.Ndmsg{Family: unix.AF_BRIDGE}) {
		e, err := parseFDB(m, false)
		if err != nil {
			t.Fatal(err)
		}
		if e == nil || e.Ifindex != vx0.Ifindex {
			continue
		}
		switch {
		case e.bridgeTable():
			brt = append(brt, e)
		case isZeroMAC(e.MAC):
			bum = append(bum, e)
		default:
			vxl = append(vxl, e)
		}
	}
	if len(bum) != 2 || bum[0].key() == bum[1].key() || bum[0].refusal() != "" {
		t.Fatalf("default remotes: %+v", bum)
	}
	var via, frr *fdbEntry
	for _, e := range vxl {
		switch e.MAC.String() {
		case "02:00:00:00:0e:05":
			via = e
		case "02:00:00:00:0e:03":
			frr = e
		}
	}
	if via == nil || via.VNI != 4242 || via.Port != 4790 || via.Via == 0 || !strings.Contains(via.refusal(), "via") {
		t.Fatalf("entry with vni/port/via: %+v", via)
	}
	if frr == nil || frr.Dst != netip.MustParseAddr("2001:db8:1::b") || frr.Flags&unix.NTF_EXT_LEARNED == 0 || frr.refusal() != "" {
		t.Fatalf("FRR-shaped VXLAN entry: %+v", frr)
	}
	found := false
	for _, e := range brt {
		found = found || e.MAC.String() == "02:00:00:00:0e:03" && e.Master == vx0.Master
	}
	if !found {
		t.Fatalf("FRR-shaped bridge entry missing among %d bridge entries", len(brt))
	}
}
