package mirror

// saddr.go: the outer source address the kernel's End.B6.Encaps writes when `ip sr tunsrc` is unset.
// The kernel (set_tun_src, net/ipv6/seg6_iptunnel.c) asks ipv6_dev_get_saddr for the first segment
// with the device of the seg6local route itself, not the device that segment is routed out of, so
// the answer can differ from the source of `ip route get <segment>`. No netlink request returns
// it (a route get with that oif is a strict lookup, and fails when the segment is not routed out of
// that device), so it is computed here as net/ipv6/addrconf.c computes it: RFC 6724 source address
// selection over the node's addresses, with that device as the outgoing interface.

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// hostAddr is one IPv6 address of the node, as the kernel keeps it.
type hostAddr struct {
	addr    netip.Addr
	plen    int
	ifindex int
	flags   uint32 // IFA_F_*
}

// addrLabel is one entry of the kernel's address label table (`ip addrlabel`).
type addrLabel struct {
	prefix  netip.Prefix
	ifindex int // 0: every interface
	class   int // addrMapped, addrCompat, addrLoopback or 0: the address kind the entry is limited to
	label   uint32
}

// hostAddrs is what source address selection reads: the node's IPv6 addresses and label table in the
// kernel's order, and per-interface settings.
type hostAddrs struct {
	addrs  []hostAddr  // by interface (index order), each interface's in its own order
	labels []addrLabel // in the kernel's order: the first entry that matches gives the label
	// conf returns net.ipv6.conf.<interface>.<key> (ifindex 0: "all").
	conf func(ifindex int, key string) int
	err  error // reading them failed
	// chosen remembers each answer of source: one translation asks it for every encap route, most
	// of them with the same first segment and device.
	chosen map[sourceKey]sourceAnswer
}

type sourceKey struct {
	oif int
	dst netip.Addr
}

type sourceAnswer struct {
	src netip.Addr
	why string
}

// Kinds of addresses (__ipv6_addr_type) the label table and rule 3 tell apart.
const (
	addrMapped   = 1 // ::ffff:0:0/96
	addrCompat   = 2 // ::/96 other than :: and ::1
	addrLoopback = 3 // ::1
)

// Scopes as the kernel ranks them (__ipv6_addr_src_scope).
const (
	scopeLinkLocal = 0x2
	scopeSiteLocal = 0x5
	scopeGlobal    = 0xe
)

func addrClass(a netip.Addr) int {
	b := a.As16()
	if binary.BigEndian.Uint64(b[:8]) != 0 {
		return 0
	}
	switch w2, w3 := binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[12:]); {
	case w2 == 0xffff:
		return addrMapped
	case w2 != 0:
		return 0
	case w3 == 1:
		return addrLoopback
	case w3 != 0:
		return addrCompat
	}
	return 0
}

// srcScope is the scope the kernel gives a unicast address (multicast: the scope in the address).
func srcScope(a netip.Addr) int {
	b := a.As16()
	switch {
	case b[0] == 0xff:
		return int(b[1] & 0x0f)
	case b[0]&0xe0 != 0 && b[0]&0xe0 != 0xe0, b[0]&0xfe == 0xfc:
		return scopeGlobal
	case b[0] == 0xfe && b[1]&0xc0 == 0x80:
		return scopeLinkLocal
	case b[0] == 0xfe && b[1]&0xc0 == 0xc0:
		return scopeSiteLocal
	case addrClass(a) == addrLoopback:
		return scopeLinkLocal
	}
	return scopeGlobal
}

// label is the label of address a on interface ifindex (ipv6_addr_label).
func (h *hostAddrs) label(a netip.Addr, ifindex int) uint32 {
	c := addrClass(a)
	for _, l := range h.labels {
		if (l.ifindex == 0 || l.ifindex == ifindex) && (l.class == 0 || l.class == c) && l.prefix.Contains(a) {
			return l.label
		}
	}
	return 0xffffffff
}

// source is the address ipv6_dev_get_saddr(net, dev oif, dst, IPV6_PREFER_SRC_PUBLIC) returns, or
// why there is none. The rules, in order (ipv6_get_saddr_eval): the same address, the smallest
// scope that reaches dst, not deprecated (nor optimistic, unless it may be used), on oif, the same
// label as dst, public rather than temporary, ORCHID with ORCHID, the longest prefix shared with dst
// (at most the address's own prefix length), not optimistic; on a tie the first address met wins.
// Home addresses (Mobile IPv6) are not ranked: kernels built without CONFIG_IPV6_MIP6 (this one, and
// those with it as a module) do not rank them either. VRF (l3mdev) domains are not modelled.
func (h *hostAddrs) source(oif int, dst netip.Addr) (netip.Addr, string) {
	if h != nil && h.err == nil {
		k := sourceKey{oif, dst}
		a, ok := h.chosen[k]
		if !ok {
			a.src, a.why = h.selectSource(oif, dst)
			if h.chosen == nil {
				h.chosen = map[sourceKey]sourceAnswer{}
			}
			h.chosen[k] = a
		}
		return a.src, a.why
	}
	return h.selectSource(oif, dst)
}

// selectSource is source, computed.
func (h *hostAddrs) selectSource(oif int, dst netip.Addr) (netip.Addr, string) {
	if h == nil || h.err != nil {
		err := fmt.Errorf("addresses not read")
		if h != nil {
			err = h.err
		}
		return netip.Addr{}, fmt.Sprintf("the kernel's source address for %s: %v", dst, err)
	}
	dscope, dlabel := srcScope(dst), h.label(dst, oif)
	onlyOIF := oif != 0 && (dst.IsMulticast() || dscope <= scopeLinkLocal || h.conf(oif, "use_oif_addrs_only") > 0)
	var best netip.Addr
	var hi [9]int
	for _, a := range h.addrs {
		if onlyOIF && a.ifindex != oif {
			continue
		}
		if a.flags&unix.IFA_F_TENTATIVE != 0 && a.flags&unix.IFA_F_OPTIMISTIC == 0 || a.addr.IsUnspecified() || a.addr.IsMulticast() {
			continue
		}
		var s [9]int
		s[0] = b2i(a.addr == dst)
		if sc := srcScope(a.addr); sc >= dscope {
			s[1] = -sc
		} else {
			s[1] = sc - 128
		}
		avoid := uint32(unix.IFA_F_DEPRECATED)
		if a.flags&unix.IFA_F_OPTIMISTIC != 0 && !h.useOptimistic(a.ifindex) {
			avoid |= unix.IFA_F_OPTIMISTIC
		}
		s[2] = b2i(addrClass(a.addr) != 0 || a.flags&avoid == 0)
		s[3] = b2i(oif == 0 || a.ifindex == oif)
		s[4] = b2i(h.label(a.addr, a.ifindex) == dlabel)
		s[5] = b2i(a.flags&unix.IFA_F_TEMPORARY == 0)
		s[6] = b2i(orchid(a.addr) == orchid(dst))
		s[7] = min(commonPrefix(a.addr, dst), a.plen)
		s[8] = b2i(a.flags&unix.IFA_F_OPTIMISTIC == 0)
		if !best.IsValid() || beats(s, hi) {
			best, hi = a.addr, s
		}
	}
	if !best.IsValid() {
		return best, fmt.Sprintf("no IPv6 address the kernel would take as the outer source for %s", dst)
	}
	return best, ""
}

// useOptimistic is ipv6_use_optimistic_addr: optimistic DAD and use_optimistic both on (for all
// interfaces or this one).
func (h *hostAddrs) useOptimistic(ifindex int) bool {
	on := func(key string) bool { return h.conf(0, key) > 0 || h.conf(ifindex, key) > 0 }
	return on("optimistic_dad") && on("use_optimistic")
}

func beats(s, hi [9]int) bool {
	for i := range s {
		if s[i] != hi[i] {
			return s[i] > hi[i]
		}
	}
	return false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var orchidPrefix = netip.MustParsePrefix("2001:10::/28")

func orchid(a netip.Addr) bool { return orchidPrefix.Contains(a) }

func commonPrefix(a, b netip.Addr) int {
	x, y := a.As16(), b.As16()
	for i := range x {
		if d := x[i] ^ y[i]; d != 0 {
			n := 0
			for ; d&0x80 == 0; d <<= 1 {
				n++
			}
			return i*8 + n
		}
	}
	return 128
}

// readHostAddrs reads the node's IPv6 addresses and address label table.
func readHostAddrs() *hostAddrs {
	h := &hostAddrs{conf: cachedConf(ipv6Conf)}
	msgs, err := dumpNetlink("address", unix.RTM_GETADDR, unix.RTM_NEWADDR, nl.NewIfAddrmsg(unix.AF_INET6))
	if err != nil {
		return &hostAddrs{err: err}
	}
	for _, b := range msgs {
		if len(b) < unix.SizeofIfAddrmsg || b[0] != unix.AF_INET6 {
			continue
		}
		a := hostAddr{plen: int(b[1]), flags: uint32(b[2]), ifindex: int(binary.NativeEndian.Uint32(b[4:8]))}
		attrs, err := nl.ParseRouteAttr(b[unix.SizeofIfAddrmsg:])
		if err != nil {
			return &hostAddrs{err: fmt.Errorf("address: %w", err)}
		}
		var addr, local netip.Addr
		for _, at := range attrs {
			switch at.Attr.Type {
			case unix.IFA_ADDRESS:
				addr, _ = netip.AddrFromSlice(at.Value)
			case unix.IFA_LOCAL: // with a peer, IFA_ADDRESS is the peer's
				local, _ = netip.AddrFromSlice(at.Value)
			case unix.IFA_FLAGS:
				if len(at.Value) >= 4 {
					a.flags = binary.NativeEndian.Uint32(at.Value)
				}
			}
		}
		if local.IsValid() {
			addr = local
		}
		if a.addr = addr; addr.Is6() {
			h.addrs = append(h.addrs, a)
		}
	}
	msgs, err = dumpNetlink("address label", unix.RTM_GETADDRLABEL, unix.RTM_NEWADDRLABEL, &ifAddrLblMsg{family: unix.AF_INET6})
	if err != nil {
		return &hostAddrs{err: err}
	}
	for _, b := range msgs {
		if len(b) < sizeofIfAddrLblMsg || b[0] != unix.AF_INET6 {
			continue
		}
		l := addrLabel{ifindex: int(binary.NativeEndian.Uint32(b[4:8]))}
		attrs, err := nl.ParseRouteAttr(b[sizeofIfAddrLblMsg:])
		if err != nil {
			return &hostAddrs{err: fmt.Errorf("address label: %w", err)}
		}
		var p netip.Addr
		for _, at := range attrs {
			switch at.Attr.Type {
			case 1: // IFAL_ADDRESS
				p, _ = netip.AddrFromSlice(at.Value)
			case 2: // IFAL_LABEL
				if len(at.Value) >= 4 {
					l.label = binary.NativeEndian.Uint32(at.Value)
				}
			}
		}
		if !p.Is6() {
			continue
		}
		l.prefix = netip.PrefixFrom(p, int(b[2])).Masked()
		l.class = labelClass(l.prefix)
		h.labels = append(h.labels, l)
	}
	return h
}

// labelClass is the address kind a label entry is limited to, as ip6addrlbl_alloc sets it.
func labelClass(p netip.Prefix) int {
	switch c := addrClass(p.Addr()); {
	case c == addrMapped && p.Bits() == 96, c == addrCompat && p.Bits() == 96, c == addrLoopback && p.Bits() == 128:
		return c
	}
	return 0
}

// ifAddrLblMsg is struct ifaddrlblmsg (linux/if_addrlabel.h).
type ifAddrLblMsg struct{ family uint8 }

const sizeofIfAddrLblMsg = 12

func (m *ifAddrLblMsg) Len() int { return sizeofIfAddrLblMsg }

func (m *ifAddrLblMsg) Serialize() []byte {
	b := make([]byte, sizeofIfAddrLblMsg)
	b[0] = m.family
	return b
}

// cachedConf reads each setting once (the settings of one translation).
func cachedConf(read func(ifindex int, key string) int) func(int, string) int {
	type k struct {
		ifindex int
		key     string
	}
	seen := map[k]int{}
	return func(ifindex int, key string) int {
		v, ok := seen[k{ifindex, key}]
		if !ok {
			v = read(ifindex, key)
			seen[k{ifindex, key}] = v
		}
		return v
	}
}

// ipv6Conf reads net.ipv6.conf.<interface>.<key> of the current network namespace (0 when unreadable).
func ipv6Conf(ifindex int, key string) int {
	name := "all"
	if ifindex != 0 {
		it, err := net.InterfaceByIndex(ifindex)
		if err != nil {
			return 0
		}
		name = it.Name
	}
	b, err := os.ReadFile("/proc/sys/net/ipv6/conf/" + name + "/" + key)
	if err != nil {
		return 0
	}
	v, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return v
}
