package state

// resolve.go: what Apply needs from the host: interface indexes and the source address the kernel
// would pick towards a SID. An interface so tests can run without real devices.

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// Env resolves names and addresses on the host the data plane runs on.
type Env interface {
	Ifindex(dev string) (int, error)
	SourceFor(dst netip.Addr) (netip.Addr, error)
}

// HostEnv resolves through the kernel of the current network namespace.
type HostEnv struct{}

func (HostEnv) Ifindex(dev string) (int, error) {
	it, err := net.InterfaceByName(dev)
	if err != nil {
		return 0, fmt.Errorf("no such interface %q", dev)
	}
	return it.Index, nil
}

func (HostEnv) SourceFor(dst netip.Addr) (netip.Addr, error) {
	routes, err := netlink.RouteGet(dst.AsSlice())
	if err != nil || len(routes) == 0 {
		return netip.Addr{}, fmt.Errorf("no route to %s to choose a source address from; give src", dst)
	}
	src, ok := netip.AddrFromSlice(routes[0].Src)
	if !ok || !src.Is6() || src.IsUnspecified() {
		return netip.Addr{}, fmt.Errorf("the route to %s has no IPv6 source address; give src", dst)
	}
	return src.Unmap(), nil
}
