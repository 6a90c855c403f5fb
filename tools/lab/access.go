package lab

// access.go: the lab's 802.1Q access ports (tools/bpf/access.bpf.c on a host's veth, through tcx links
// pinned so they outlive the command that attached them) and their counters.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/seg6x/seg6x/tools/lab/accessbpf"
)

// PortCounters are the access_stats of one access port.
type PortCounters struct {
	TxTagged    uint64 `json:"tx_tagged"`
	RxOK        uint64 `json:"rx_ok"`
	RxUntagged  uint64 `json:"rx_untagged"`
	RxWrongVLAN uint64 `json:"rx_wrong_vlan"`
	// RxPEMLD counts untagged MLDv2 reports from the PE's kernel (IPv6 is on on its tenant A port for
	// the tenant's routes, and forwarding joins the routers' groups): not tenant traffic, dropped.
	RxPEMLD uint64 `json:"rx_pe_mld"`
}

// AttachAccessPort makes dev an access port of VLAN vid, pinning links and counters under pin.
func AttachAccessPort(dev string, vid uint16, pin string) error {
	it, err := net.InterfaceByName(dev)
	if err != nil {
		return err
	}
	spec, err := accessbpf.LoadAccess()
	if err != nil {
		return err
	}
	if err := spec.Variables["access_vid"].Set(vid); err != nil {
		return err
	}
	var objs accessbpf.AccessObjects
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return err
	}
	defer objs.Close()
	if err := os.MkdirAll(pin, 0o700); err != nil {
		return err
	}
	for _, a := range []struct {
		prog   *ebpf.Program
		attach ebpf.AttachType
		name   string
	}{{objs.AccessIngress, ebpf.AttachTCXIngress, "access_in"}, {objs.AccessEgress, ebpf.AttachTCXEgress, "access_out"}} {
		l, err := link.AttachTCX(link.TCXOptions{Interface: it.Index, Program: a.prog, Attach: a.attach})
		if err != nil {
			return fmt.Errorf("attach %s to %s: %w", a.name, dev, err)
		}
		err = l.Pin(filepath.Join(pin, a.name))
		l.Close()
		if err != nil {
			return err
		}
	}
	return objs.AccessStats.Pin(filepath.Join(pin, "access_stats"))
}

// ReadAccessPort reads the counters pinned under pin.
func ReadAccessPort(pin string) (PortCounters, error) {
	var c PortCounters
	m, err := ebpf.LoadPinnedMap(filepath.Join(pin, "access_stats"), nil)
	if err != nil {
		return c, err
	}
	defer m.Close()
	vals := make([]uint64, 5)
	for i := range vals {
		if err := m.Lookup(uint32(i), &vals[i]); err != nil {
			return c, err
		}
	}
	return PortCounters{TxTagged: vals[0], RxOK: vals[1], RxUntagged: vals[2], RxWrongVLAN: vals[3], RxPEMLD: vals[4]}, nil
}
