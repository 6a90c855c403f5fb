package daemon

// neighbors.go: keeps the neighbors the fast path forwards to under the kernel's reachability
// tracking, and next hops whose link is down out of the kernel's choice. Frames forwarded in XDP never
// use or confirm a neighbor entry, so the kernel would leave one STALE with the MAC it last learned for
// as long as only XDP sends to it: a neighbor that changes its MAC, or stops answering, would be sent
// to forever. Once a second, on the interfaces the instance has attached:
//   - the gateway of every route through them becomes a managed neighbor entry (NTF_EXT_MANAGED): the
//     kernel resolves it, probes it again whenever it goes stale, marks it FAILED when it stops
//     answering and resolves it again once it answers (also one that has no entry yet: the next hop of
//     a link that has just come up);
//   - any other entry on them the kernel left STALE is used once (NTF_USE), as the kernel's own
//     traffic would: it is probed, then REACHABLE again or FAILED;
//   - ignore_routes_with_linkdown is set (IPv4 and IPv6): a next hop whose link has lost its carrier is
//     not chosen among a route's next hops, by the fast path's lookups or the kernel's;
//   - net.ipv4.fib_multipath_use_neigh is set: the kernel does not send an IPv4 packet the fast path
//     handed it (no neighbor: decapsulated IPv4 over a multipath route) to a next hop whose neighbor
//     FAILED (IPv6 lookups of the fast path steer around those themselves).
// Each change to an entry or a setting is logged once.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/state"
)

// neighborKeepEvery is how often the attached interfaces' neighbors are looked at.
const neighborKeepEvery = time.Second

// gatewayRescanEvery bounds how long route gateways are taken from an old scan when no route change
// was announced (an overrun subscription, a route added while the watch restarted).
const gatewayRescanEvery = 30 * time.Second

// nbKey names a neighbor entry.
type nbKey struct {
	ifindex int
	addr    netip.Addr
}

// keeper holds what the neighbor keeper has seen and done.
type keeper struct {
	logf       func(string, ...any)
	gateways   map[nbKey]bool  // route gateways through attached interfaces, as last scanned
	managed    map[nbKey]bool  // entries this daemon made managed (logged once)
	warned     map[string]bool // errors logged already (a failing entry is tried every second)
	scanned    time.Time
	scannedFor map[int]string // the attached interfaces of the last scan
}

// keepNeighbors runs the keeper until ctx ends.
func keepNeighbors(ctx context.Context, ctl *core.Controller, logf func(string, ...any)) error {
	sub, err := nl.Subscribe(unix.NETLINK_ROUTE, unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_IPV6_ROUTE)
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	go func() { <-ctx.Done(); sub.Close() }()
	go func() {
		for {
			if _, _, err := sub.Receive(); err != nil && err != unix.ENOBUFS {
				return
			}
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}()
	k := &keeper{logf: logf, managed: map[nbKey]bool{}, warned: map[string]bool{}}
	go func() {
		t := time.NewTicker(neighborKeepEvery)
		defer t.Stop()
		routesChanged := true
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
				routesChanged = true
				continue
			case <-t.C:
			}
			attached := map[int]string{}
			ctl.Read(func(st *state.Store) {
				for _, it := range st.Interfaces() {
					if it.Ifindex != 0 {
						attached[it.Ifindex] = it.Name
					}
				}
			})
			if routesChanged || time.Since(k.scanned) > gatewayRescanEvery || !sameKeys(attached, k.scannedFor) {
				k.scanGateways(attached)
				routesChanged = false
			}
			k.tune(attached)
			k.keep(attached)
		}
	}()
	return nil
}

// scanGateways takes the gateway of every route (every table, both families) whose next hop leaves
// through an attached interface.
func (k *keeper) scanGateways(attached map[int]string) {
	gws := map[nbKey]bool{}
	add := func(ifindex int, gw net.IP) {
		if _, ok := attached[ifindex]; !ok || gw == nil {
			return
		}
		if a, ok := netip.AddrFromSlice(gw); ok {
			gws[nbKey{ifindex, a.Unmap()}] = true
		}
	}
	for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		rs, err := netlink.RouteListFiltered(fam, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
		if err != nil {
			k.warnOnce(fmt.Sprintf("neighbors: listing routes: %v", err))
			return // keep the last scan
		}
		for _, r := range rs {
			add(r.LinkIndex, r.Gw)
			if v, ok := r.Via.(*netlink.Via); ok && v != nil {
				add(r.LinkIndex, v.Addr)
			}
			for _, nh := range r.MultiPath {
				add(nh.LinkIndex, nh.Gw)
				if v, ok := nh.Via.(*netlink.Via); ok && v != nil {
					add(nh.LinkIndex, v.Addr)
				}
			}
		}
	}
	k.gateways, k.scanned, k.scannedFor = gws, time.Now(), attached
}

// keep makes the gateways managed entries and uses the other stale entries of attached interfaces.
func (k *keeper) keep(attached map[int]string) {
	ns, err := netlink.NeighList(0, netlink.FAMILY_ALL)
	if err != nil {
		k.warnOnce(fmt.Sprintf("neighbors: listing: %v", err))
		return
	}
	seen := map[nbKey]netlink.Neigh{} // every entry, attached interface or not: one not seen does not exist
	for _, n := range ns {
		if a, ok := netip.AddrFromSlice(n.IP); ok {
			seen[nbKey{n.LinkIndex, a.Unmap()}] = n
		}
	}
	for gw := range k.gateways {
		if _, ok := attached[gw.ifindex]; !ok {
			continue // detached since the scan
		}
		n, ok := seen[gw]
		if ok && (n.FlagsExt&netlink.NTF_EXT_MANAGED != 0 || n.State&(netlink.NUD_PERMANENT|netlink.NUD_NOARP) != 0 ||
			n.Flags&netlink.NTF_EXT_LEARNED != 0) {
			continue // managed already, or the operator's or another control plane's entry
		}
		if err := netlink.NeighSet(&netlink.Neigh{LinkIndex: gw.ifindex, Family: family(gw.addr), IP: gw.addr.AsSlice(),
			State: netlink.NUD_NONE, FlagsExt: netlink.NTF_EXT_MANAGED}); err != nil {
			k.warnOnce(fmt.Sprintf("neighbors: keeping %s on %s resolved: %v", gw.addr, attached[gw.ifindex], err))
			continue
		}
		if !k.managed[gw] {
			k.managed[gw] = true
			k.logf("neighbors: %s on %s (a route's gateway) is now a managed entry: the kernel keeps it resolved and probes it while the fast path forwards to it",
				gw.addr, attached[gw.ifindex])
		}
	}
	for key, n := range seen {
		if _, ok := attached[key.ifindex]; !ok || n.State != netlink.NUD_STALE || n.FlagsExt&netlink.NTF_EXT_MANAGED != 0 {
			continue
		}
		if err := netlink.NeighSet(&netlink.Neigh{LinkIndex: key.ifindex, Family: family(key.addr), IP: key.addr.AsSlice(),
			Flags: netlink.NTF_USE}); err != nil {
			k.warnOnce(fmt.Sprintf("neighbors: probing stale %s on %s: %v", key.addr, attached[key.ifindex], err))
		}
	}
}

// tune sets ignore_routes_with_linkdown on every attached interface, for both families, and (once
// there is one) fib_multipath_use_neigh.
func (k *keeper) tune(attached map[int]string) {
	for _, dev := range attached {
		for _, fam := range []string{"ipv4", "ipv6"} {
			k.set([]string{"net", fam, "conf", dev, "ignore_routes_with_linkdown"}, "a next hop whose link is down is not chosen")
		}
	}
	if len(attached) > 0 {
		k.set([]string{"net", "ipv4", "fib_multipath_use_neigh"}, "the kernel's IPv4 forwarding does not choose a next hop whose neighbor failed")
	}
}

// set makes the sysctl of path (its components: an interface name may hold dots) 1, and logs it with
// why when it was not.
func (k *keeper) set(path []string, why string) {
	name := strings.Join(path, ".")
	p := "/proc/sys/" + strings.Join(path, "/")
	b, err := os.ReadFile(p)
	if err != nil || strings.TrimSpace(string(b)) == "1" {
		return
	}
	if err := os.WriteFile(p, []byte("1"), 0o644); err != nil {
		k.warnOnce(fmt.Sprintf("neighbors: setting %s=1: %v", name, err))
		return
	}
	k.logf("set %s=1: %s (docs/fabric.md)", name, why)
}

// warnOnce logs msg the first time it occurs.
func (k *keeper) warnOnce(msg string) {
	if !k.warned[msg] {
		k.warned[msg] = true
		k.logf("%v", errors.New(msg)) // an error: logged as a warning (logfTo)
	}
}

func sameKeys(a, b map[int]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

func family(a netip.Addr) int {
	if a.Is4() {
		return netlink.FAMILY_V4
	}
	return netlink.FAMILY_V6
}
