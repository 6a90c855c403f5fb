package mirror

// vxlan_follow.go: the kernel's VXLAN side as the mirror follows it: every link (dumped
// again on each link event: VXLAN devices, bridges, bridge ports) and both forwarding tables (dumped
// on resync, then kept entry by entry from AF_BRIDGE neighbour events).

import (
	"fmt"
	"os"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// vxlanKernel is the mirror's copy of the kernel's links and bridge forwarding entries.
type vxlanKernel struct {
	links map[int]*kernelLink
	fdb   map[string]*fdbEntry // by fdbEntry.key()
}

func newVXLANKernel() *vxlanKernel {
	return &vxlanKernel{links: map[int]*kernelLink{}, fdb: map[string]*fdbEntry{}}
}

// readLinks reads every link again.
func (k *vxlanKernel) readLinks() error {
	msgs, err := dumpNetlink("link", unix.RTM_GETLINK, unix.RTM_NEWLINK, nl.NewIfInfomsg(unix.AF_UNSPEC))
	if err != nil {
		return err
	}
	links := map[int]*kernelLink{}
	nf := netfilterCalls()
	for _, b := range msgs {
		l, err := parseLink(b)
		if err != nil {
			return err
		}
		if l.Bridge != nil {
			l.Bridge.NFCall = l.Bridge.NFCall || nf
		}
		links[l.Ifindex] = l
	}
	k.links = links
	return nil
}

// netfilterCalls reports whether this namespace's bridges hand IP and ARP frames to netfilter
// (net.bridge.bridge-nf-call-*: 1 by default wherever br_netfilter is loaded or built in). Then the
// kernel's bridge checks IPv4 headers, trims Ethernet padding and runs the FORWARD chains on bridged
// frames, which the fast path does not. Read at every link dump (there is no event for a sysctl).
func netfilterCalls() bool {
	for _, f := range []string{"bridge-nf-call-iptables", "bridge-nf-call-ip6tables", "bridge-nf-call-arptables"} {
		if b, err := os.ReadFile("/proc/sys/net/bridge/" + f); err == nil && strings.TrimSpace(string(b)) != "0" {
			return true
		}
	}
	return false
}

// readFDB reads both forwarding tables again.
func (k *vxlanKernel) readFDB() error {
	msgs, err := dumpNetlink("bridge fdb", unix.RTM_GETNEIGH, unix.RTM_NEWNEIGH, &netlink.Ndmsg{Family: unix.AF_BRIDGE})
	if err != nil {
		return err
	}
	fdb := map[string]*fdbEntry{}
	for _, b := range msgs {
		e, err := parseFDB(b, false)
		if err != nil {
			return fmt.Errorf("bridge fdb dump: %w", err)
		}
		if e != nil {
			fdb[e.key()] = e
		}
	}
	k.fdb = fdb
	return nil
}

// neigh applies one RTM_NEWNEIGH / RTM_DELNEIGH; it reports whether a forwarding entry changed (the
// IPv4 / IPv6 neighbours of the same group are not the mirror's).
func (k *vxlanKernel) neigh(msg []byte, deleted bool) (bool, error) {
	e, err := parseFDB(msg, deleted)
	if err != nil || e == nil {
		return false, err
	}
	if deleted {
		_, had := k.fdb[e.key()]
		delete(k.fdb, e.key())
		return had, nil
	}
	k.fdb[e.key()] = e
	return true, nil
}
