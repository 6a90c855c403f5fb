package dataplane

// attach.go: attaching the XDP or tc program to interfaces through pinned bpf_links, so the fast path
// keeps running after the seg6x process exits.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Mode is the hook the program is attached to: XDP "native" (driver) or "generic" (skb), or "tc"
// (tcx ingress: skbs after GRO, for hypervisors whose VMs send and receive GSO aggregates).
type Mode string

const (
	ModeNative  Mode = "native"
	ModeGeneric Mode = "generic"
	ModeTC      Mode = "tc"
)

func linkPath(dir string, ifindex int) string {
	return filepath.Join(PinDir(dir), "links", strconv.Itoa(ifindex))
}

// Attached reports whether instance dir has a pinned link on ifindex.
func Attached(dir string, ifindex int) bool {
	_, err := os.Stat(linkPath(dir, ifindex))
	return err == nil
}

// Attach attaches the program of mode to ifindex (or updates the program of an existing link of the
// same hook) and pins the link. Moving an interface from one hook to the other attaches the new link
// before the old one goes, so no packet meets neither program. Making the interface a redirect target
// (tx_ports) is the state package's job.
func Attach(dir string, progs *Programs, ifindex int, mode Mode) (err error) {
	switch mode {
	case ModeNative, ModeGeneric, ModeTC, "":
	default:
		return fmt.Errorf("mode %q: want native, generic or tc", mode)
	}
	prog, err := progs.For(mode)
	if err != nil {
		return err
	}
	// Before the program sees a frame: whether to read the whole length of every frame there, and
	// whether the driver sends multi-buffer frames redirected to it. A refused attach leaves none.
	wasAttached := Attached(dir, ifindex)
	if err := markMultiBuf(dir, ifindex, mode); err != nil {
		return err
	}
	defer func() {
		if err != nil && !wasAttached {
			err = errors.Join(err, clearMultiBuf(dir, ifindex))
		}
	}()
	path := linkPath(dir, ifindex)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	var old link.Link
	if Attached(dir, ifindex) {
		l, err := link.LoadPinnedLink(path, nil)
		if err != nil {
			_ = os.Remove(path) // stale pin (interface gone); attach afresh
		} else {
			defer l.Close()
			switch {
			case isTCX(l) != (mode == ModeTC):
				old = l // the other hook: replaced once the new link is in place
			case mode == ModeTC || xdpGeneric(ifindex) == (mode == ModeGeneric):
				return l.Update(prog)
			default:
				// XDP in the other mode (driver / generic): one XDP program per interface, so the
				// old link goes first (a short gap, as with ip link set ... xdp).
				if err := l.Unpin(); err != nil {
					return fmt.Errorf("unpin the old link of ifindex %d: %w", ifindex, err)
				}
				l.Close()
			}
		}
	}
	var l link.Link
	if mode == ModeTC {
		l, err = link.AttachTCX(link.TCXOptions{Program: prog, Interface: ifindex, Attach: ebpf.AttachTCXIngress})
		if err != nil {
			return fmt.Errorf("attach tc (tcx ingress) to ifindex %d: %w", ifindex, err)
		}
	} else {
		flags := link.XDPDriverMode
		if mode == ModeGeneric {
			flags = link.XDPGenericMode
		} else if err := nativeXDPUsable(ifindex); err != nil {
			return err
		}
		l, err = link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifindex, Flags: flags})
		if err != nil {
			return attachXDPError(ifindex, mode, err)
		}
	}
	defer l.Close()
	if old != nil {
		if err := old.Unpin(); err != nil {
			return fmt.Errorf("unpin the old link of ifindex %d: %w", ifindex, err)
		}
	}
	if err := l.Pin(path); err != nil {
		return fmt.Errorf("pin link: %w", err)
	}
	return nil
}

// nativeXDPUsable refuses, with what to do instead, an interface whose driver says (xdp-features) that
// it cannot run native XDP and redirect from it; when the kernel does not say, the attach itself tells.
func nativeXDPUsable(ifindex int) error {
	f, err := ReadXDPFeatures(ifindex)
	if err != nil || !f.Known || f.Native() {
		return nil
	}
	return fmt.Errorf("%s: its driver has no native XDP with redirect (xdp-features: %s): attach it with --mode generic "+
		"(XDP in the kernel's stack, slower) or --mode tc", devName(ifindex), f)
}

// attachXDPError turns the kernel's refusal of an XDP attach into what it means for this interface.
func attachXDPError(ifindex int, mode Mode, err error) error {
	name := devName(ifindex)
	switch {
	case errors.Is(err, unix.ERANGE):
		mtu := 0
		if l, lerr := netlink.LinkByIndex(ifindex); lerr == nil {
			mtu = l.Attrs().MTU
		}
		f, _ := ReadXDPFeatures(ifindex)
		return fmt.Errorf("%s: its MTU (%d) makes frames larger than its driver puts in one buffer, and the driver cannot "+
			"hand XDP a frame of several buffers (xdp-features: %s; multi-buffer needs rx-sg): lower the MTU "+
			"(1500 fits any driver), use a newer driver, or attach it with --mode tc", name, mtu, f)
	case errors.Is(err, unix.EOPNOTSUPP):
		return fmt.Errorf("%s: its driver has no native XDP: attach it with --mode generic (slower) or --mode tc", name)
	case errors.Is(err, unix.EBUSY), errors.Is(err, unix.EEXIST):
		return fmt.Errorf("%s: another XDP program is attached (ip link show %s): remove it first", name, name)
	}
	return fmt.Errorf("attach XDP to %s (%s mode): %w", name, mode, err)
}

// devName is ifindex's interface name, or the index itself.
func devName(ifindex int) string {
	if l, err := netlink.LinkByIndex(ifindex); err == nil {
		return l.Attrs().Name
	}
	return "ifindex " + strconv.Itoa(ifindex)
}

// xdpGeneric tells whether the XDP program on ifindex runs in generic (skb) mode.
func xdpGeneric(ifindex int) bool {
	l, err := netlink.LinkByIndex(ifindex)
	return err == nil && l.Attrs().Xdp != nil && l.Attrs().Xdp.AttachMode == nl.XDP_ATTACHED_SKB
}

// isTCX tells a tcx link from an XDP one.
func isTCX(l link.Link) bool {
	info, err := l.Info()
	return err == nil && info.Type == link.TCXType
}

// Detach removes the pinned link of ifindex, which detaches the program, and its multi-buffer
// entries (multibuf.go).
func Detach(dir string, ifindex int) error {
	if err := clearMultiBuf(dir, ifindex); err != nil {
		return err
	}
	path := linkPath(dir, ifindex)
	l, err := link.LoadPinnedLink(path, nil)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		_ = os.Remove(path)
		return nil
	}
	defer l.Close()
	return l.Unpin()
}

// ProgramID returns the id of the program attached through ifindex's pinned link (0 if none).
func ProgramID(dir string, ifindex int) (uint32, error) {
	l, err := link.LoadPinnedLink(linkPath(dir, ifindex), nil)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	defer l.Close()
	info, err := l.Info()
	if err != nil {
		return 0, err
	}
	return uint32(info.Program), nil
}

// Hook returns the hook of the pinned link of ifindex: "xdp", "tc", or "" when there is none.
func Hook(dir string, ifindex int) (string, error) {
	l, err := link.LoadPinnedLink(linkPath(dir, ifindex), nil)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		return "", err
	}
	defer l.Close()
	if isTCX(l) {
		return "tc", nil
	}
	return "xdp", nil
}
