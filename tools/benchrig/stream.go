package benchrig

// stream.go: a steady, counted stream through the DUT while something else changes it (the daemon
// is killed and restarted, policies and route tables are replaced). The sink accepts one or two
// exact outputs; every frame sent must arrive as one of them.

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"time"
)

// HeadendConfig is a DUT config (YAML) with one tenant on the ingress port (VLAN vlanIn) whose
// route 198.19.1.0/24 is encapsulated with segs, plus filler extra routes.
func HeadendConfig(segs []netip.Addr, extra int) string {
	names := make([]string, len(segs))
	for i, s := range segs {
		names[i] = `"` + s.String() + `"`
	}
	var b strings.Builder
	fmt.Fprintf(&b, "interfaces: [{name: %s}, {name: %s}]\n", devDutIn, devDutEg)
	fmt.Fprintf(&b, "tenants: [{name: t, table: 100, ports: [{dev: %s, vlan: %d}]}]\nroutes:\n", devDutIn, vlanIn)
	fmt.Fprintf(&b, "  - {tenant: t, prefix: 198.19.1.0/24, segs: [%s], src: \"%s\"}\n", strings.Join(names, ", "), encapSrc)
	for i := 0; i < extra; i++ {
		fmt.Fprintf(&b, "  - {tenant: t, prefix: 198.18.%d.%d/32, segs: [%s], src: \"%s\"}\n", 100+i/250, i%250, names[0], encapSrc)
	}
	return b.String()
}

// SIDs returns n SIDs the DUT routes towards the sink (fc00:e::1, fc00:e::2, ...), from offset on.
func SIDs(offset, n int) []netip.Addr {
	s := make([]netip.Addr, n)
	for i := range s {
		s[i] = sid(fmt.Sprintf("fc00:e::%x", offset+i+1))
	}
	return s
}

// TenantPort is the DUT interface and VLAN of HeadendConfig's tenant.
func TenantPort() (dev string, vlan uint16) { return devDutIn, vlanIn }

// EncapSrc is the outer source HeadendConfig sets.
func EncapSrc() netip.Addr { return encapSrc }

// DutDir is the DUT's seg6x instance directory (its bpffs is mounted by Up).
func (r *Rig) DutDir() string { return filepath.Join(r.Dir, "dut") }

// DutNS is the DUT's network namespace.
func (r *Rig) DutNS() string { return r.ns("dut") }

// StreamResult counts one stream.
type StreamResult struct {
	Sent, Good, Bad uint64
	Matched         [2]uint64 // frames that matched the first / the second expected output
	LastBad         []byte
}

// Pattern is an output frame the sink accepts (some bytes checked, the rest free).
type Pattern = pattern

// EncapOutput is what HeadendConfig's tenant frames (64 bytes) become with the H.Encaps list segs.
func EncapOutput(segs []netip.Addr) Pattern {
	return expectEncap(reverse(segs), segs[0], uint8(len(segs)-1), true, true, 64, 63)(64)
}

// AnyOneSIDList is EncapOutput of any one-SID list among SIDs(0, 255): the lists of a weighted policy.
func AnyOneSIDList() Pattern { return anyList(EncapOutput(SIDs(0, 1))) }

// Stream sends tenant frames (64 bytes, 3 flows) into the DUT at rate for d and counts what the
// sink accepted as the H.Encaps output of segs (and of alt, if given). during runs while the stream
// flows; Stream returns once both are done.
func (r *Rig) Stream(segs, alt []netip.Addr, rate float64, d time.Duration, during func() error) (StreamResult, error) {
	pats := []pattern{EncapOutput(segs)}
	if len(alt) > 0 {
		pats = append(pats, EncapOutput(alt))
	}
	return r.StreamFlows([]int{0, 1, 2}, pats, rate, d, during)
}

// StreamFlows is Stream of the tenant flows flows (64-byte frames; flow f goes to 198.19.1.(1+f%250)
// from UDP port 1000+f), the sink accepting pats (one or two).
func (r *Rig) StreamFlows(flows []int, pats []Pattern, rate float64, d time.Duration, during func() error) (StreamResult, error) {
	var frames [][]byte
	for _, f := range flows {
		frames = append(frames, plain(64, f, vlanIn))
	}
	return r.streamFrames(frames, pats, rate, d, during)
}

// streamFrames sends frames at rate for d while during runs; the sink accepts pats (one or two).
func (r *Rig) streamFrames(frames [][]byte, pats []pattern, rate float64, d time.Duration, during func() error) (StreamResult, error) {
	longest, err := r.Load(frames, pats[0])
	if err != nil {
		return StreamResult{}, err
	}
	if err := r.Accept(pats...); err != nil {
		return StreamResult{}, err
	}
	before, err := r.sinkStats()
	if err != nil {
		return StreamResult{}, err
	}
	type out struct {
		t   Trial
		err error
	}
	done := make(chan out, 1)
	go func() {
		t, err := r.Run(longest, rate, d)
		done <- out{t, err}
	}()
	derr := during()
	o := <-done
	if o.err != nil {
		return StreamResult{}, o.err
	}
	after, err := r.sinkStats()
	if err != nil {
		return StreamResult{}, err
	}
	res := StreamResult{Sent: o.t.Sent, Good: after.Good - before.Good, Bad: after.Bad - before.Bad,
		Matched: [2]uint64{after.First - before.First, after.Second - before.Second}}
	if res.Bad > 0 {
		res.LastBad = r.LastBad()
	}
	return res, derr
}

// PluginEndConfig is a DUT config (YAML) whose ports are both the fabric's, with plugin name loaded
// from file and run on sidAddr (settings settings, KEY: VALUE).
func PluginEndConfig(name, file string, sidAddr netip.Addr, settings map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "interfaces: [{name: %s}, {name: %s}]\n", devDutIn, devDutEg)
	fmt.Fprintf(&b, "plugins: [{name: %s, file: %q}]\n", name, file)
	fmt.Fprintf(&b, "sids:\n  - sid: %q\n    action: plugin\n    plugin: %s\n    config: {", sidAddr, name)
	first := true
	for k, v := range settings {
		if !first {
			b.WriteString(", ")
		}
		first = false
		fmt.Fprintf(&b, "%s: %q", k, v)
	}
	b.WriteString("}\n")
	return b.String()
}

// EndFrames are, for each flow, a frame to sidAddr with segments left 1 and fc00:e::1 (routed to
// the sink) as the next segment, and the pattern of its output after End: the next segment as the
// destination, hop limit 63, out of the DUT's egress towards the sink.
func EndFrames(sidAddr netip.Addr, flows []int) ([][]byte, Pattern) {
	var frames [][]byte
	for _, f := range flows {
		frames = append(frames, srv6Frame(64, f, sidAddr, []netip.Addr{sid("fc00:e::1"), sidAddr}, 1))
	}
	return frames, expectEnd()
}

// StreamFrames sends frames (in turn) at rate for d while during runs; the sink accepts pats (one or
// two).
func (r *Rig) StreamFrames(frames [][]byte, pats []Pattern, rate float64, d time.Duration, during func() error) (StreamResult, error) {
	return r.streamFrames(frames, pats, rate, d, during)
}
