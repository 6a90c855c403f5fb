package dataplane

// kernel.go: features of the running kernel the programs adapt to at load time, read from its BTF.

import (
	"sync"

	"github.com/cilium/ebpf/btf"
)

// DecapTunnelFlag is the bpf_skb_adjust_room flag that also removes the tunnel's GSO type
// (SKB_GSO_IPXIP6) and skb->encapsulation on decapsulation (BPF_F_ADJ_ROOM_DECAP_IPXIP6, in kernels
// after 6.18), or 0 when the running kernel has none: its decapsulated aggregates then keep
// those bits (docs/hypervisor.md says what that costs).
var DecapTunnelFlag = sync.OnceValue(func() uint64 {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return 0
	}
	for typ, err := range spec.All() {
		if err != nil {
			return 0
		}
		e, ok := typ.(*btf.Enum)
		if !ok || e.Name != "" {
			continue
		}
		for _, v := range e.Values {
			if v.Name == "BPF_F_ADJ_ROOM_DECAP_IPXIP6" {
				return v.Value
			}
		}
	}
	return 0
})
