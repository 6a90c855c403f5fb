package dataplane

// xdpfeatures.go: what an interface's driver says it can do with XDP (the netdev generic netlink
// family's xdp-features, as `ynl --family netdev --do dev-get` shows them), read before attaching so
// that an interface that cannot run the program is refused with a reason instead of a raw errno.

import (
	"encoding/binary"
	"fmt"
	"strings"
	"syscall"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The netdev family's attributes and commands (include/uapi/linux/netdev.h).
const (
	netdevCmdDevGet       = 1
	netdevAttrIfindex     = 1
	netdevAttrXDPFeatures = 3
	netdevFamilyVersion   = 1
	netdevFamilyName      = "netdev"
	xdpFeatureBasic       = 1 << 0 // XDP_PASS, XDP_DROP, XDP_ABORTED, XDP_TX in the driver
	xdpFeatureRedirect    = 1 << 1 // XDP_REDIRECT from it
	xdpFeatureNdoXmit     = 1 << 2 // a redirect target (frames redirected into it are sent)
	xdpFeatureXskZerocopy = 1 << 3
	xdpFeatureHwOffload   = 1 << 4
	xdpFeatureRxSG        = 1 << 5 // multi-buffer frames in (jumbo MTU, GRO/LRO)
	xdpFeatureNdoXmitSG   = 1 << 6 // multi-buffer frames as a redirect target
)

// XDPFeatures is an interface's xdp-features bitmask. Known is false when the kernel did not say
// (older than 6.3, or no netdev family): nothing can be concluded then.
type XDPFeatures struct {
	Mask  uint64
	Known bool
}

// Native reports native (driver) XDP, redirecting out of the interface included.
func (f XDPFeatures) Native() bool {
	return f.Mask&(xdpFeatureBasic|xdpFeatureRedirect) == xdpFeatureBasic|xdpFeatureRedirect
}

// RedirectTarget reports whether frames redirected into the interface are sent.
func (f XDPFeatures) RedirectTarget() bool { return f.Mask&xdpFeatureNdoXmit != 0 }

// MultiBuffer reports whether the driver hands multi-buffer frames (larger than a page) to XDP.
func (f XDPFeatures) MultiBuffer() bool { return f.Mask&xdpFeatureRxSG != 0 }

// String names the features, as `seg6x show interfaces` lists them.
func (f XDPFeatures) String() string {
	if !f.Known {
		return "unknown"
	}
	var names []string
	for _, n := range []struct {
		bit  uint64
		name string
	}{{xdpFeatureBasic, "basic"}, {xdpFeatureRedirect, "redirect"}, {xdpFeatureNdoXmit, "target"},
		{xdpFeatureRxSG, "rx-sg"}, {xdpFeatureNdoXmitSG, "target-sg"}, {xdpFeatureXskZerocopy, "xsk-zerocopy"},
		{xdpFeatureHwOffload, "offload"}} {
		if f.Mask&n.bit != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}

// ReadXDPFeatures asks the kernel of the current network namespace for ifindex's xdp-features (one
// netdev dev-get request on a generic netlink socket of its own).
func ReadXDPFeatures(ifindex int) (XDPFeatures, error) {
	fam, err := netlink.GenlFamilyGet(netdevFamilyName)
	if err != nil {
		return XDPFeatures{}, nil // no netdev family: a kernel that does not report them
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_GENERIC)
	if err != nil {
		return XDPFeatures{}, err
	}
	defer unix.Close(fd)
	tv := unix.Timeval{Sec: 2}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return XDPFeatures{}, err
	}
	// nlmsghdr (16), genlmsghdr (4), NETDEV_A_DEV_IFINDEX (8)
	req := make([]byte, 28)
	binary.NativeEndian.PutUint32(req[0:], 28)
	binary.NativeEndian.PutUint16(req[4:], fam.ID)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(req[8:], 1)
	req[16], req[17] = netdevCmdDevGet, netdevFamilyVersion
	binary.NativeEndian.PutUint16(req[20:], 8)
	binary.NativeEndian.PutUint16(req[22:], netdevAttrIfindex)
	binary.NativeEndian.PutUint32(req[24:], uint32(ifindex))
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return XDPFeatures{}, fmt.Errorf("xdp-features of ifindex %d: %w", ifindex, err)
	}
	buf := make([]byte, 8192)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return XDPFeatures{}, fmt.Errorf("xdp-features of ifindex %d: %w", ifindex, err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return XDPFeatures{}, fmt.Errorf("xdp-features of ifindex %d: %w", ifindex, err)
	}
	for _, m := range msgs {
		if m.Header.Type == unix.NLMSG_ERROR && len(m.Data) >= 4 {
			if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
				return XDPFeatures{}, fmt.Errorf("xdp-features of ifindex %d: %w", ifindex, unix.Errno(-e))
			}
			continue
		}
		if m.Header.Type != fam.ID || len(m.Data) < 4 {
			continue
		}
		for b := m.Data[4:]; len(b) >= 4; {
			l, typ := int(binary.NativeEndian.Uint16(b)), binary.NativeEndian.Uint16(b[2:])&0x3FFF
			if l < 4 || l > len(b) {
				break
			}
			if typ == netdevAttrXDPFeatures && l >= 12 {
				return XDPFeatures{Mask: binary.NativeEndian.Uint64(b[4:12]), Known: true}, nil
			}
			b = b[min((l+3)&^3, len(b)):]
		}
	}
	return XDPFeatures{}, nil
}
