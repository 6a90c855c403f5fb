package dataplane

// attach.go: attaching the XDP program to interfaces through pinned bpf_links, so the fast path keeps
// running after the seg6x process exits.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cilium/ebpf/link"
)

// Mode is how the XDP program is attached: "native" (driver) or "generic" (skb).
type Mode string

const (
	ModeNative  Mode = "native"
	ModeGeneric Mode = "generic"
)

func linkPath(dir string, ifindex int) string {
	return filepath.Join(PinDir(dir), "links", strconv.Itoa(ifindex))
}

// Attached reports whether instance dir has a pinned XDP link on ifindex.
func Attached(dir string, ifindex int) bool {
	_, err := os.Stat(linkPath(dir, ifindex))
	return err == nil
}

// Attach attaches the program to ifindex (or updates the program of an existing link) and pins the
// link. Making the interface a redirect target (tx_ports) is the state package's job.
func Attach(dir string, objs *Seg6xObjects, ifindex int, mode Mode) error {
	flags := link.XDPDriverMode
	switch mode {
	case ModeGeneric:
		flags = link.XDPGenericMode
	case ModeNative, "":
	default:
		return fmt.Errorf("mode %q: want native or generic", mode)
	}
	path := linkPath(dir, ifindex)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if Attached(dir, ifindex) {
		l, err := link.LoadPinnedLink(path, nil)
		if err == nil {
			defer l.Close()
			return l.Update(objs.Seg6xXdp)
		}
		_ = os.Remove(path) // stale pin (interface gone); attach afresh
	}
	l, err := link.AttachXDP(link.XDPOptions{Program: objs.Seg6xXdp, Interface: ifindex, Flags: flags})
	if err != nil {
		return fmt.Errorf("attach XDP to ifindex %d (%s mode): %w", ifindex, mode, err)
	}
	defer l.Close()
	if err := l.Pin(path); err != nil {
		return fmt.Errorf("pin link: %w", err)
	}
	return nil
}

// Detach removes the pinned link of ifindex, which detaches the program.
func Detach(dir string, ifindex int) error {
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
