package dataplane

// multibuf.go: what the program must know of the attached interfaces for multi-buffer frames:
// whose frames may span buffers (rx_frags: the program reads the whole length of every frame
// arriving there; on the others only of a frame that says it is longer than its first buffer,
// bpf/ctx_xdp.h ctx_whole_len), and whose driver cannot send a multi-buffer frame redirected to it
// (tx_no_sg: the daemon sends such frames, bpf/egress.h). Written when an interface is attached and
// again when links change.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"

	"github.com/seg6x/seg6x/internal/model"
)

// mtuOneBuffer is the largest MTU whose frames (with two VLAN tags) every XDP driver receives in one
// buffer: drivers that run XDP give a frame at least 2 KB, most a page.
const mtuOneBuffer = 1500

// rxFragsOf is the rx_frags entry of an interface of this MTU attached in mode (0: none): generic
// XDP sees GRO aggregates whatever the MTU; tc reads an skb's length.
func rxFragsOf(mtu int, mode Mode) uint32 {
	switch {
	case mode == ModeTC:
		return 0
	case mode == ModeGeneric:
		return uint32(Seg6xRxFragsModeRX_FRAGS_GENERIC)
	case mtu > mtuOneBuffer:
		return uint32(Seg6xRxFragsModeRX_FRAGS_NATIVE)
	}
	return 0
}

// txNoSG tells whether the driver of ifindex says it cannot send a multi-buffer frame redirected to
// it (xdp-features without ndo-xmit-sg); a kernel that does not say gets the benefit of the doubt.
func txNoSG(ifindex int) bool {
	f, err := ReadXDPFeatures(ifindex)
	return err == nil && f.Known && f.Mask&xdpFeatureNdoXmitSG == 0
}

// pinnedMap opens the pinned map name of instance dir's current layout.
func pinnedMap(dir, name string) (*ebpf.Map, error) {
	return ebpf.LoadPinnedMap(filepath.Join(MapPinDir(dir), name), nil)
}

// setEntry makes ifindex's entry in the pinned map name v (0: no entry) and, when that changed it,
// makes the ports the program cached stale (they carry rx_frags). A layout without the map (none
// pinned yet) has nothing to set.
func setEntry(dir, name string, ifindex int, v uint32) (changed bool, err error) {
	m, err := pinnedMap(dir, name)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer m.Close()
	var had uint32
	if m.Lookup(uint32(ifindex), &had) != nil {
		had = 0
	}
	if had == v {
		return false, nil
	}
	if v != 0 {
		err = m.Put(uint32(ifindex), v)
	} else if err = m.Delete(uint32(ifindex)); errors.Is(err, ebpf.ErrKeyNotExist) {
		err = nil
	}
	if err != nil {
		return false, fmt.Errorf("%s of ifindex %d: %w", name, ifindex, err)
	}
	g, err := pinnedMap(dir, "cache_gen")
	if err != nil {
		return true, err
	}
	defer g.Close()
	return true, bumpGen(g)
}

// MultiBuf is what the program knows of an attached interface for multi-buffer frames.
type MultiBuf struct {
	MTU     int
	RxFrags uint32 // its rx_frags entry (0: frames fit one buffer)
	TxNoSG  bool   // its driver cannot send a multi-buffer frame redirected to it
	Name    string
	Changed bool // RefreshMultiBuf: the entries changed
}

// markMultiBuf sets ifindex's entries for attaching it in mode at its current MTU.
func markMultiBuf(dir string, ifindex int, mode Mode) error {
	_, err := setMultiBuf(dir, ifindex, mode)
	return err
}

func setMultiBuf(dir string, ifindex int, mode Mode) (MultiBuf, error) {
	l, err := netlink.LinkByIndex(ifindex)
	if err != nil {
		return MultiBuf{}, fmt.Errorf("read the MTU of ifindex %d: %w", ifindex, err)
	}
	mb := MultiBuf{MTU: l.Attrs().MTU, Name: l.Attrs().Name, RxFrags: rxFragsOf(l.Attrs().MTU, mode), TxNoSG: txNoSG(ifindex)}
	c1, err := setEntry(dir, "rx_frags", ifindex, mb.RxFrags)
	if err != nil {
		return mb, err
	}
	noSG := uint32(0)
	if mb.TxNoSG {
		noSG = 1
	}
	c2, err := setEntry(dir, "tx_no_sg", ifindex, noSG)
	mb.Changed = c1 || c2
	return mb, err
}

// clearMultiBuf removes ifindex's entries (a detach).
func clearMultiBuf(dir string, ifindex int) error {
	_, err1 := setEntry(dir, "rx_frags", ifindex, 0)
	_, err2 := setEntry(dir, "tx_no_sg", ifindex, 0)
	return errors.Join(err1, err2)
}

// RefreshMultiBuf brings the entries of the attached interfaces up to date with their MTUs and
// drivers' features (the daemon calls it when links change) and returns those whose entries changed.
// Interfaces that are gone are left to the re-apply that follows their ifindex.
func RefreshMultiBuf(dir string, ifaces []model.Interface) ([]MultiBuf, error) {
	var changed []MultiBuf
	var errs []error
	for _, it := range ifaces {
		if it.Ifindex == 0 || !Attached(dir, it.Ifindex) {
			continue
		}
		if _, err := netlink.LinkByIndex(it.Ifindex); err != nil {
			continue // gone: its re-apply (a new ifindex) or detach sets its entries
		}
		mb, err := setMultiBuf(dir, it.Ifindex, Mode(it.Mode))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", it.Name, err))
		} else if mb.Changed {
			mb.Name = it.Name
			changed = append(changed, mb)
		}
	}
	return changed, errors.Join(errs...)
}

// MultiBufMarks names ifindex's entries, as `seg6x show interfaces` lists them: rx-whole (rx_frags),
// tx-via-daemon (tx_no_sg), comma-separated; empty for neither (or no maps pinned yet).
func MultiBufMarks(dir string, ifindex int) string {
	var marks []string
	for _, e := range []struct{ m, name string }{{"rx_frags", "rx-whole"}, {"tx_no_sg", "tx-via-daemon"}} {
		m, err := pinnedMap(dir, e.m)
		if err != nil {
			continue
		}
		var v uint32
		if m.Lookup(uint32(ifindex), &v) == nil && v != 0 {
			marks = append(marks, e.name)
		}
		m.Close()
	}
	return strings.Join(marks, ",")
}
