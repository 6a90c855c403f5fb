package bgp

// sever.go: ends this process's BGP sessions the way a crash does (the TCP connections shut, no
// NOTIFICATION, no last UPDATE), so that peers with graceful restart keep this node's routes.
//
// Why not GoBGP's StopBgp with AllowGracefulRestart alone: it drops each neighbor's Adj-RIB-In
// before closing the session, and when that neighbor's route target constraint (RTC) routes go, its
// interest in this node's route targets goes with them, so GoBGP sends it a withdrawal of every VPN
// route of this node on the still-open session: the peer then removes them instead of keeping them.
// Shutting the sockets first leaves nothing to send them on.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// tcpConn is one line of /proc/net/tcp{,6}.
type tcpConn struct {
	local, remote netip.AddrPort
	established   bool
	inode         uint64
}

// severSessions shuts (both directions) this process's established TCP connections to peers
// (address -> the peer's port) and the ones peers opened to listenPort (<= 0: none). It returns how
// many it shut.
func severSessions(peers map[netip.Addr]uint16, listenPort int32) (int, error) {
	inodes := map[uint64]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		conns, err := readTCP(f)
		if err != nil {
			return 0, err
		}
		for _, c := range conns {
			port, isPeer := peers[c.remote.Addr().Unmap()]
			if !c.established || !isPeer {
				continue
			}
			if c.remote.Port() == port || (listenPort > 0 && int32(c.local.Port()) == listenPort) {
				inodes[c.inode] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0, nil
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range fds {
		link, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		ino, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]"), 10, 64)
		if err != nil || !inodes[ino] {
			continue
		}
		fd, _ := strconv.Atoi(e.Name())
		if unix.Shutdown(fd, unix.SHUT_RDWR) == nil {
			n++
		}
	}
	return n, nil
}

func readTCP(path string) ([]tcpConn, error) {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil // no IPv4 or no IPv6 in this kernel
		}
		return nil, err
	}
	defer f.Close()
	var out []tcpConn
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 {
			continue
		}
		local, err1 := procAddrPort(fs[1])
		remote, err2 := procAddrPort(fs[2])
		inode, err3 := strconv.ParseUint(fs[9], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("%s: unreadable line %q", path, sc.Text())
		}
		out = append(out, tcpConn{local: local, remote: remote, established: fs[3] == "01", inode: inode})
	}
	return out, sc.Err()
}

// procAddrPort reads "0100007F:0050" (IPv4) or 32 hex digits ":port" (IPv6): the address is printed
// as 32-bit words, each the number the host reads from the network bytes; the port as a number.
func procAddrPort(s string) (netip.AddrPort, error) {
	a, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil || (len(a) != 8 && len(a) != 32) {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	b := make([]byte, len(a)/2)
	for w := 0; w < len(a); w += 8 {
		v, err := strconv.ParseUint(a[w:w+8], 16, 32)
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
		}
		binary.NativeEndian.PutUint32(b[w/2:], uint32(v))
	}
	addr, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}
