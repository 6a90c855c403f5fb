package dataplane

// rxfrags.go: which attached interfaces may receive multi-buffer frames (the rx_frags map). The XDP
// program reads the whole length of every frame arriving on those (a helper call per frame); on the
// others only of a frame that says it is longer than its first buffer (bpf/ctx_xdp.h ctx_whole_len).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"

	"github.com/seg6x/seg6x/internal/state"
)

// mtuOneBuffer is the largest MTU whose frames (with two VLAN tags) every XDP driver receives in one
// buffer: drivers that run XDP give a frame at least 2 KB, most a page.
const mtuOneBuffer = 1500

// rxMayFrag tells whether frames arriving on an interface of this MTU attached in mode may span more
// than one buffer: generic XDP sees GRO aggregates whatever the MTU; tc reads an skb's length.
func rxMayFrag(mtu int, mode Mode) bool {
	switch mode {
	case ModeTC:
		return false
	case ModeGeneric:
		return true
	}
	return mtu > mtuOneBuffer
}

// pinnedMap opens the pinned map name of instance dir's current layout.
func pinnedMap(dir, name string) (*ebpf.Map, error) {
	return ebpf.LoadPinnedMap(filepath.Join(MapPinDir(dir), name), nil)
}

// setRxFrags makes ifindex's rx_frags entry say on (off: no entry) and, when that changed it, makes
// the ports the program cached stale (they carry the flag). A layout without the map (none pinned yet)
// has nothing to set.
func setRxFrags(dir string, ifindex int, on bool) (changed bool, err error) {
	m, err := pinnedMap(dir, "rx_frags")
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer m.Close()
	var v uint32
	had := m.Lookup(uint32(ifindex), &v) == nil
	if had == on {
		return false, nil
	}
	if on {
		err = m.Put(uint32(ifindex), uint32(1))
	} else if err = m.Delete(uint32(ifindex)); errors.Is(err, ebpf.ErrKeyNotExist) {
		err = nil
	}
	if err != nil {
		return false, fmt.Errorf("rx_frags of ifindex %d: %w", ifindex, err)
	}
	g, err := pinnedMap(dir, "cache_gen")
	if err != nil {
		return true, err
	}
	defer g.Close()
	return true, bumpGen(g)
}

// markRxFrags sets ifindex's rx_frags entry for attaching it in mode at its current MTU.
func markRxFrags(dir string, ifindex int, mode Mode) error {
	l, err := netlink.LinkByIndex(ifindex)
	if err != nil {
		return fmt.Errorf("read the MTU of ifindex %d: %w", ifindex, err)
	}
	_, err = setRxFrags(dir, ifindex, rxMayFrag(l.Attrs().MTU, mode))
	return err
}

// RxFragsChange is an attached interface whose rx_frags entry changed: at MTU, frames may now span
// buffers (On) or not.
type RxFragsChange struct {
	Name string
	MTU  int
	On   bool
}

// RefreshRxFrags brings the rx_frags entries of the attached interfaces up to date with their MTUs
// (the daemon calls it when links change) and returns those whose entry changed. Interfaces that are
// gone are left to the re-apply that follows their ifindex.
func RefreshRxFrags(dir string, ifaces []state.Interface) ([]RxFragsChange, error) {
	var changed []RxFragsChange
	var errs []error
	for _, it := range ifaces {
		if it.Ifindex == 0 || !Attached(dir, it.Ifindex) {
			continue
		}
		l, err := netlink.LinkByIndex(it.Ifindex)
		if err != nil {
			continue
		}
		on := rxMayFrag(l.Attrs().MTU, Mode(it.Mode))
		c, err := setRxFrags(dir, it.Ifindex, on)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", it.Name, err))
		} else if c {
			changed = append(changed, RxFragsChange{Name: it.Name, MTU: l.Attrs().MTU, On: on})
		}
	}
	return changed, errors.Join(errs...)
}
