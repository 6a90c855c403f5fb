package gsoprobe

// probe.go: attaching the observer to one interface with tcx, reading its per-CPU counters as one
// Stats, and naming gso_type bits with the running kernel's own SKB_GSO_* values.

import (
	"fmt"
	"math/bits"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
)

// Aggregate describes one GSO/GRO aggregate.
type Aggregate struct {
	Len     uint64 `json:"len"`      // skb->len
	GSOSize uint64 `json:"gso_size"` // skb_shinfo(skb)->gso_size
	GSOSegs uint64 `json:"gso_segs"` // skb_shinfo(skb)->gso_segs (0: the kernel will recount them)
	GSOType uint64 `json:"gso_type"` // skb_shinfo(skb)->gso_type; see GSOTypeNames
}

// Stats are a probe's counters summed over CPUs (maxima: the largest; LastAgg: the newest).
type Stats struct {
	SKBs       uint64 `json:"skbs"`
	Bytes      uint64 `json:"bytes"`      // sum of skb->len (at tc: from the Ethernet header)
	TCP        uint64 `json:"tcp"`        // TCP over IPv4/IPv6, also beneath one SRH
	SRH        uint64 `json:"srh"`        // IPv6 with a segment routing header next
	Aggregates uint64 `json:"aggregates"` // skbs with gso_size > 0 or gso_segs > 1
	AggBytes   uint64 `json:"agg_bytes"`  // sum of skb->len over aggregates
	GSOSegs    uint64 `json:"gso_segs"`   // sum of gso_segs over aggregates
	MaxLen     uint64 `json:"max_len"`    // largest skb->len
	MaxGSOSize uint64 `json:"max_gso_size"`
	MaxGSOSegs uint64 `json:"max_gso_segs"`
	// Encapsulation counts skbs with the kernel's skb->encapsulation set.
	Encapsulation uint64 `json:"encapsulation"`
	// TunnelGSO counts skbs with any of TunnelMask's bits in gso_type.
	TunnelGSO uint64 `json:"tunnel_gso"`
	// GSOTypeOr is gso_type OR-ed over all skbs.
	GSOTypeOr uint64    `json:"gso_type_or"`
	LastAgg   Aggregate `json:"last_agg"`
	// KernReadErrors counts failed reads of skb_shared_info (expected 0).
	KernReadErrors uint64 `json:"kern_read_errors"`
}

// Probe is the observer attached to one hook.
type Probe struct {
	objs GsoprobeObjects
	link link.Link
}

// Load attaches a probe to ifindex's tcx ingress (egress when egress is true) in the calling thread's
// network namespace, at the head of the hook so that it sees every skb before any other tcx program
// there changes, drops or redirects it. A caller in another namespace locks its OS thread and
// switches it first (testsupport.InNetns).
func Load(ifindex int, egress bool) (*Probe, error) {
	return LoadAt(ifindex, egress, link.Head())
}

// LoadAt is Load at anchor (nil: the tail of the hook, after every program already there).
func LoadAt(ifindex int, egress bool, anchor link.Anchor) (*Probe, error) {
	mask, err := TunnelMask()
	if err != nil {
		return nil, err
	}
	spec, err := LoadGsoprobe()
	if err != nil {
		return nil, err
	}
	if err := spec.Variables[GsoprobeVarTunnelGsoMask].Set(mask); err != nil {
		return nil, err
	}
	p := &Probe{}
	if err := spec.LoadAndAssign(&p.objs, nil); err != nil {
		return nil, err
	}
	attach := ebpf.AttachTCXIngress
	if egress {
		attach = ebpf.AttachTCXEgress
	}
	p.link, err = link.AttachTCX(link.TCXOptions{Interface: ifindex, Program: p.objs.Gsoprobe, Attach: attach, Anchor: anchor})
	if err != nil {
		p.objs.Close()
		return nil, fmt.Errorf("attach gsoprobe to ifindex %d: %w", ifindex, err)
	}
	return p, nil
}

// Read sums the counters over CPUs.
func (p *Probe) Read() (Stats, error) {
	var per []GsoprobeProbeStats
	if err := p.objs.GsoprobeStats.Lookup(uint32(0), &per); err != nil {
		return Stats{}, err
	}
	return sum(per), nil
}

// Reset zeroes the counters.
func (p *Probe) Reset() error {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	return p.objs.GsoprobeStats.Put(uint32(0), make([]GsoprobeProbeStats, n))
}

// Close detaches the probe and frees it.
func (p *Probe) Close() error {
	err := p.link.Close()
	if cerr := p.objs.Close(); err == nil {
		err = cerr
	}
	return err
}

func sum(per []GsoprobeProbeStats) Stats {
	var s Stats
	var newest uint64
	for _, c := range per {
		s.SKBs += c.Skbs
		s.Bytes += c.Bytes
		s.TCP += c.Tcp
		s.SRH += c.Srh
		s.Aggregates += c.Aggregates
		s.AggBytes += c.AggBytes
		s.GSOSegs += c.GsoSegs
		s.MaxLen = max(s.MaxLen, c.MaxLen)
		s.MaxGSOSize = max(s.MaxGSOSize, c.MaxGsoSize)
		s.MaxGSOSegs = max(s.MaxGSOSegs, c.MaxGsoSegs)
		s.Encapsulation += c.Encapsulation
		s.TunnelGSO += c.TunnelGso
		s.GSOTypeOr |= c.GsoTypeOr
		s.KernReadErrors += c.KernReadErrors
		if c.Aggregates > 0 && c.LastAggNs >= newest {
			newest = c.LastAggNs
			s.LastAgg = Aggregate{Len: c.LastAggLen, GSOSize: c.LastAggGsoSize, GSOSegs: c.LastAggGsoSegs, GSOType: c.LastAggGsoType}
		}
	}
	return s
}

// TunnelBits are the SKB_GSO_* flags the probe counts as tunnel GSO types.
var TunnelBits = []string{"GRE", "GRE_CSUM", "IPXIP4", "IPXIP6", "UDP_TUNNEL", "UDP_TUNNEL_CSUM"}

// gsoBits are the running kernel's SKB_GSO_* flags (an anonymous enum whose bits moved between
// releases), by name without the prefix.
var gsoBits = sync.OnceValues(func() (map[string]uint32, error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return nil, err
	}
	m := map[string]uint32{}
	for typ, err := range spec.All() {
		if err != nil {
			return nil, err
		}
		e, ok := typ.(*btf.Enum)
		if !ok || e.Name != "" {
			continue
		}
		for _, v := range e.Values {
			if name, ok := strings.CutPrefix(v.Name, "SKB_GSO_"); ok {
				m[name] = uint32(v.Value)
			}
		}
		if len(m) > 0 {
			return m, nil
		}
	}
	return nil, fmt.Errorf("no SKB_GSO_* values in the kernel's BTF")
})

// GSOBits returns the running kernel's SKB_GSO_* flags by name without the prefix ("TCPV4", "IPXIP6").
func GSOBits() (map[string]uint32, error) { return gsoBits() }

// TunnelMask is the OR of TunnelBits on the running kernel.
func TunnelMask() (uint32, error) {
	m, err := gsoBits()
	if err != nil {
		return 0, err
	}
	var mask uint32
	for _, n := range TunnelBits {
		b, ok := m[n]
		if !ok {
			return 0, fmt.Errorf("kernel BTF has no SKB_GSO_%s", n)
		}
		mask |= b
	}
	return mask, nil
}

// GSOTypeNames names the bits of a gso_type with the running kernel's SKB_GSO_* values, lowest bit
// first; a bit without a name is shown in hex.
func GSOTypeNames(gsoType uint64) []string {
	m, _ := gsoBits()
	byBit := map[uint32]string{}
	for n, b := range m {
		byBit[b] = n
	}
	var names []string
	for t := uint32(gsoType); t != 0; t &= t - 1 {
		b := uint32(1) << bits.TrailingZeros32(t)
		if n, ok := byBit[b]; ok {
			names = append(names, n)
		} else {
			names = append(names, fmt.Sprintf("%#x", b))
		}
	}
	return names
}
