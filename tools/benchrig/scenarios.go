package benchrig

// scenarios.go: what runs on the DUT in each scenario, the frames the generator sends, and what the
// sink must see for a frame to count.

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/seg6x/seg6x/tools/testsupport"
)

// Scenario is one DUT configuration with its traffic.
type Scenario struct {
	Name  string
	Desc  string
	Setup func(r *Rig) error
	// Frame builds the generator frame of flow f: n bytes without FCS, or the scenario's smallest
	// frame when n is below it (SRv6 input frames cannot be 60 bytes).
	Frame func(n, f int) []byte
	// Expect is the pattern of a correct output frame for input frames of length n (0: lengths vary,
	// length fields are not checked).
	Expect func(n int) pattern
	// Alt, when set, is a second correct output the sink accepts; the share of the good frames that
	// matched Expect is reported (first_output_share). The weighted-policy scenarios use it: Expect is
	// the weight-2 list's output, Alt any list's.
	Alt func(n int) pattern
	// Carried: frame sizes are those of the tenant frame the scenario carries (VXLAN), not of the
	// DUT's input frame, which may be longer (decap: the tenant frame plus its encapsulation).
	Carried bool
	// Bridged: a kernel scenario whose input frames the DUT's kernel bridges (VXLAN encap): they never
	// reach its IP layer, whose counters show what reached the kernel in the other kernel scenarios.
	Bridged bool
	// RevFrame and RevExpect, when set, make the scenario bidirectional: the generator also sends
	// RevFrame's frames into the DUT's egress (through the sink's interface), half of all frames, and
	// the generator's interface counts what comes back against RevExpect. Rates are both ways summed.
	RevFrame  func(n, f int) []byte
	RevExpect func(n int) pattern
	// Fragments: each input frame leaves as two frames, Expect the first and Alt the second (outer
	// IPv6 fragments); a frame counts as delivered when both did (the smaller of the two counts).
	Fragments bool
	// Sizes, when set, are the only frame sizes the scenario runs at (others are skipped).
	Sizes []int
	// config, when set, is the DUT's whole seg6x configuration, which Setup applies first; Setup
	// touches nothing else on the DUT but seg6x's state (scale.go adds routes): such a scenario can
	// run on the rig another such one was set up on (After). many: Setup installs so many routes
	// that removing them takes longer than making the DUT anew.
	config string
	many   bool
	// setUpAs names the scenario whose Setup this one's is: on a rig set up for that one, this one
	// needs no Setup of its own (After).
	setUpAs string
}

var (
	hostSrc  = netip.MustParseAddr("198.18.0.2")
	encapSrc = netip.MustParseAddr("fc00:b0::1")
	vlanIn   = uint16(10) // tenant VLAN on the DUT's ingress (seg6x headend scenarios)
	vlanOut  = uint16(20) // VLAN pushed after decap (End.DX4 / End.DT4 scenarios)
)

func flowDst(f int) netip.Addr { return netip.AddrFrom4([4]byte{198, 19, 1, byte(1 + f%250)}) }

func sid(s string) netip.Addr { return netip.MustParseAddr(s) }

// plain is an untagged (or tagged) IPv4/UDP frame of length n.
func plain(n, f int, vlan uint16) []byte {
	h := testsupport.Ethernet(macDutIn[:], macGen[:], vlan, 0x0800)
	return append(h, ipv4UDP(hostSrc, flowDst(f), 64, uint16(1000+f), uint16(2000+f), n-len(h))...)
}

// srv6Frame is IPv6 + SRH (list in packet order, segments left sl) + IPv4/UDP, n bytes in all, or
// the smallest such frame when n is smaller: an inner 46-byte IPv4 packet, so that decapsulated
// frames are not shorter than Ethernet's 60-byte minimum.
func srv6Frame(n, f int, dst netip.Addr, list []netip.Addr, sl uint8) []byte {
	h := testsupport.Ethernet(macDutIn[:], macGen[:], 0, 0x86DD)
	srh := testsupport.SRH(4, list, sl)
	innerLen := max(n-len(h)-40-len(srh), 46)
	inner := ipv4UDP(hostSrc, flowDst(f), 64, uint16(1000+f), uint16(2000+f), innerLen)
	return append(h, testsupport.IPv6{Src: sid("fc00:9::1"), Dst: dst, NextHeader: 43, HopLimit: 64}.Packet(append(srh, inner...))...)
}

// expectEnd checks End's output of srv6Frame with fc00:e::1 next: that SID the destination, hop limit
// 63, segments left 0, the inner IPv4 packet behind the SRH, out of the DUT's egress to the sink.
func expectEnd() pattern {
	var p pattern
	p.expect(0, testsupport.Ethernet(macSink[:], macDutEg[:], 0, 0x86DD))
	p.expect(20, []byte{43, 63})
	d := sid("fc00:e::1").As16()
	p.expect(38, d[:])
	p.expect(54, []byte{4, 4, 4, 0, 1})
	p.expect(94, []byte{0x45})
	p.expect(94+16, []byte{198, 19, 1})
	return p
}

// uSID addressing of the rig (block fcbb:0::/32, 16-bit uSIDs, the kernel's lblen 32 / nflen 16): the
// DUT is uSID d00 with its uDT4 on the /64 of function e004; the next nodes' uSIDs e00 and f00 sit
// behind the sink (rig.go routes fcbb:0:e00::/48 there).
var (
	usidLocator   = netip.MustParsePrefix("fcbb:0:d00::/48")
	usidContainer = sid("fcbb:0:d00:e00:f00::") // the DUT's uN, then e00, then f00
	usidShifted   = sid("fcbb:0:e00:f00::")     // what leaves the DUT's uN
	usidDT4       = netip.MustParsePrefix("fcbb:0:d00:e004::/64")
)

// usidFrame is IPv6 with no SRH, destination dst (a uSID container), + IPv4/UDP, n bytes in all or
// the smallest such frame (an inner 46-byte IPv4 packet): what H.Encaps.Red with one container sends.
func usidFrame(n, f int, dst netip.Addr) []byte {
	h := testsupport.Ethernet(macDutIn[:], macGen[:], 0, 0x86DD)
	inner := ipv4UDP(hostSrc, flowDst(f), 64, uint16(1000+f), uint16(2000+f), max(n-len(h)-40, 46))
	return append(h, testsupport.IPv6{Src: sid("fc00:9::1"), Dst: dst, NextHeader: 4, HopLimit: 64}.Packet(inner)...)
}

// expectUSIDShift checks a uN's output: the container shifted by one uSID, hop limit 63, no SRH, the
// inner IPv4 packet untouched.
func expectUSIDShift(n int) pattern {
	var p pattern
	p.expect(0, testsupport.Ethernet(macSink[:], macDutEg[:], 0, 0x86DD))
	if n > 0 {
		p.expect(18, []byte{byte((n - 54) >> 8), byte(n - 54)})
	}
	p.expect(20, []byte{4, 63})
	src, dst := sid("fc00:9::1").As16(), usidShifted.As16()
	p.expect(22, src[:])
	p.expect(38, dst[:])
	p.expect(54, []byte{0x45})
	p.expect(62, []byte{64, 17})
	p.expect(70, []byte{198, 19, 1})
	return p
}

// expectIPv4 checks MACs, VLAN, and the IPv4 header fields that do not vary between flows.
func expectIPv4(off int, ttl uint8, vlan uint16) func(n int) pattern {
	return func(n int) pattern {
		var p pattern
		p.expect(0, testsupport.Ethernet(macSink[:], macDutEg[:], vlan, 0x0800))
		l3 := 14
		if vlan != 0 {
			l3 = 18
		}
		_ = off
		p.expect(l3, []byte{0x45})
		p.expect(l3+8, []byte{ttl, 17})
		s4 := hostSrc.As4()
		p.expect(l3+12, s4[:])
		p.expect(l3+16, []byte{198, 19, 1})
		return p
	}
}

// expectEncap checks the outer IPv6 header, the SRH and the inner IPv4 destination.
// hlim and ttl are the outer hop limit and inner TTL: seg6x forwards the inner packet (TTL 63) and
// sets the configured hop limit (64); the kernel encapsulates on input, leaves the inner TTL alone and
// its IPv6 forwarding then decrements the outer hop limit (63).
func expectEncap(list []netip.Addr, first netip.Addr, sl uint8, srh bool, inTagged bool, hlim, ttl byte) func(n int) pattern {
	return func(n int) pattern {
		var p pattern
		p.expect(0, testsupport.Ethernet(macSink[:], macDutEg[:], 0, 0x86DD))
		inner := n - 14
		if inTagged {
			inner -= 4
		}
		ext := 0
		nh := byte(4)
		if srh {
			ext = 8 + 16*len(list)
			nh = 43
		}
		if n > 0 {
			p.expect(18, []byte{byte((inner + ext) >> 8), byte(inner + ext)})
		}
		p.expect(20, []byte{nh, hlim})
		s := encapSrc.As16()
		p.expect(22, s[:])
		d := first.As16()
		p.expect(38, d[:])
		off := 54
		if srh {
			p.expect(54, []byte{4, byte(2 * len(list)), 4, sl, byte(len(list) - 1)})
			for i, a := range list {
				b := a.As16()
				p.expect(62+16*i, b[:])
			}
			off = 54 + ext
		}
		p.expect(off, []byte{0x45})
		p.expect(off+8, []byte{ttl, 17})
		p.expect(off+16, []byte{198, 19, 1})
		return p
	}
}

func reverse(a []netip.Addr) []netip.Addr {
	out := make([]netip.Addr, len(a))
	for i := range a {
		out[len(a)-1-i] = a[i]
	}
	return out
}

func segsN(n int) []netip.Addr {
	s := make([]netip.Addr, n)
	for i := range s {
		s[i] = sid(fmt.Sprintf("fc00:e::%x", i+1))
	}
	return s
}

// seg6xApply makes a YAML document the DUT's whole seg6x state (--prune: on a rig another scenario
// set up, what that one configured and this one does not is removed; a new rig has nothing to remove).
func seg6xApply(r *Rig, yaml string) error {
	f := filepath.Join(r.Dir, "dut.yaml")
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		return err
	}
	return r.Seg6x("apply", "--prune", "-f", f)
}

// seg6xConfigured makes sc's Setup apply yaml as the DUT's whole seg6x state, and nothing else.
func seg6xConfigured(sc *Scenario, yaml string) *Scenario {
	sc.config = yaml
	sc.Setup = func(r *Rig) error { return seg6xApply(r, yaml) }
	return sc
}

func seg6xEncap(n int, mode string) *Scenario {
	segs := segsN(n)
	names := make([]string, n)
	for i, s := range segs {
		names[i] = `"` + s.String() + `"`
	}
	red := mode == "encap.red"
	list := segs
	if red {
		list = segs[1:]
	}
	name := fmt.Sprintf("seg6x_encap_%dsid", n)
	desc := fmt.Sprintf("seg6x H.Encaps, %d SID(s), tagged tenant IPv4", n)
	if red {
		name, desc = fmt.Sprintf("seg6x_encap_red_%dsid", n), fmt.Sprintf("seg6x H.Encaps.Red, %d SIDs", n)
	}
	return seg6xConfigured(&Scenario{
		Name: name, Desc: desc,
		Frame:  func(n, f int) []byte { return plain(n, f, vlanIn) },
		Expect: expectEncap(reverse(list), segs[0], uint8(n-1), len(list) > 0, true, 64, 63),
	}, fmt.Sprintf(`interfaces: [{name: %s}, {name: %s}]
tenants: [{name: t, table: 100, ports: [{dev: %s, vlan: %d}]}]
routes: [{tenant: t, prefix: 198.19.1.0/24, mode: %s, segs: [%s], src: "%s"}]
`, devDutIn, devDutEg, devDutIn, vlanIn, mode, strings.Join(names, ", "), encapSrc))
}

// The 3-way weighted policy (weighted segment lists): one SID per list, fc00:e::1 (weight 2), ::2 and ::3 (weight 1).
var wecmpSegs, wecmpWeights = SIDs(0, 3), []int{2, 1, 1}

// anyList relaxes the encap pattern of the list fc00:e::1 (one SID, an SRH) to the output of any
// one-SID list fc00:e::N (N < 256), such as wecmpSegs: the last byte of the outer destination and of
// the SRH's segment are not checked.
func anyList(p pattern) pattern {
	p.ignore(53)
	p.ignore(62 + 15)
	return p
}

// wecmpScenarios are a route over the 3-way weighted policy in seg6x (a named policy: the headend
// picks the list by the flow hash, 64 slots) and in the kernel (an IPv4 multipath route with a seg6
// encap per next hop, weights 2/1/1, hashed by its fib_multipath_hash_policy, L3 by default).
// Many flows spread over the lists; one flow stays on one.
func wecmpScenarios() []*Scenario {
	first := wecmpSegs[:1]
	kernelOut := expectEncap(first, first[0], 0, true, false, 63, 64)
	seg6xOut := expectEncap(first, first[0], 0, true, true, 64, 63)
	var lists, hops []string
	for i, s := range wecmpSegs {
		lists = append(lists, fmt.Sprintf(`{segs: ["%s"], weight: %d}`, s, wecmpWeights[i]))
		hops = append(hops, "nexthop", "encap", "seg6", "mode", "encap", "segs", s.String(), "dev", devDutEg,
			"weight", fmt.Sprint(wecmpWeights[i]))
	}
	return []*Scenario{
		{
			Name: "kernel_wecmp3", Desc: "kernel multipath route, 3 seg6 H.Encaps next hops weighted 2/1/1 (untagged)",
			Setup: func(r *Rig) error {
				if err := r.AttachDutPass(); err != nil {
					return err
				}
				if err := r.DutIP("sr", "tunsrc", "set", encapSrc.String()); err != nil {
					return err
				}
				return r.DutIP(append([]string{"route", "replace", "198.19.1.0/24"}, hops...)...)
			},
			Frame:  func(n, f int) []byte { return plain(n, f, 0) },
			Expect: kernelOut, Alt: func(n int) pattern { return anyList(kernelOut(n)) },
		},
		seg6xConfigured(&Scenario{
			Name: "seg6x_wecmp3", Desc: "seg6x H.Encaps over a named policy of 3 lists weighted 2/1/1, tagged tenant IPv4",
			Frame:  func(n, f int) []byte { return plain(n, f, vlanIn) },
			Expect: seg6xOut, Alt: func(n int) pattern { return anyList(seg6xOut(n)) },
		}, fmt.Sprintf(`interfaces: [{name: %s}, {name: %s}]
tenants: [{name: t, table: 100, ports: [{dev: %s, vlan: %d}]}]
policies: [{name: w3, src: "%s", lists: [%s]}]
routes: [{tenant: t, prefix: 198.19.1.0/24, policy: w3}]
`, devDutIn, devDutEg, devDutIn, vlanIn, encapSrc, strings.Join(lists, ", "))),
	}
}

// Scenarios returns every scenario in report order.
func Scenarios() []*Scenario {
	sidEnd, sidDX4, sidDT4 := sid("fc00:d::1"), sid("fc00:d::65"), sid("fc00:d::64")
	out := []*Scenario{
		{
			Name: "bare_redirect", Desc: "bare XDP redirect (MAC swap only): the rig's limit",
			Setup: func(r *Rig) error { return r.AttachDutBare() },
			Frame: func(n, f int) []byte { return plain(n, f, 0) }, Expect: expectIPv4(14, 64, 0),
		},
		{
			Name: "kernel_ipv4", Desc: "kernel IPv4 forwarding",
			Setup: func(r *Rig) error { return r.AttachDutPass() },
			Frame: func(n, f int) []byte { return plain(n, f, 0) }, Expect: expectIPv4(14, 63, 0),
		},
		{
			Name: "kernel_encap_1sid", Desc: "kernel seg6 H.Encaps, 1 SID (untagged: no VLAN devices here)",
			Setup: func(r *Rig) error {
				if err := r.AttachDutPass(); err != nil {
					return err
				}
				if err := r.DutIP("sr", "tunsrc", "set", encapSrc.String()); err != nil {
					return err
				}
				return r.DutIP("route", "replace", "198.19.1.0/24", "encap", "seg6", "mode", "encap", "segs", "fc00:e::1", "dev", devDutEg)
			},
			Frame:  func(n, f int) []byte { return plain(n, f, 0) },
			Expect: expectEncap([]netip.Addr{sid("fc00:e::1")}, sid("fc00:e::1"), 0, true, false, 63, 64),
		},
		{
			Name: "kernel_end_dx4", Desc: "kernel End.DX4",
			Setup: func(r *Rig) error {
				if err := r.AttachDutPass(); err != nil {
					return err
				}
				return r.DutIP("-6", "route", "add", sidDX4.String()+"/128", "encap", "seg6local", "action", "End.DX4", "nh4", "198.19.0.3", "dev", devDutIn)
			},
			Frame:  func(n, f int) []byte { return srv6Frame(n, f, sidDX4, []netip.Addr{sidDX4}, 0) },
			Expect: expectIPv4(14, 63, 0),
		},
		{
			Name: "kernel_end_then_dx4", Desc: "kernel End then End.DX4 (two nodes' work on one DUT)",
			Setup: func(r *Rig) error {
				if err := r.AttachDutPass(); err != nil {
					return err
				}
				if err := r.DutIP("-6", "route", "add", sidEnd.String()+"/128", "encap", "seg6local", "action", "End", "dev", devDutIn); err != nil {
					return err
				}
				return r.DutIP("-6", "route", "add", sidDX4.String()+"/128", "encap", "seg6local", "action", "End.DX4", "nh4", "198.19.0.3", "dev", devDutIn)
			},
			Frame:  func(n, f int) []byte { return srv6Frame(n, f, sidEnd, []netip.Addr{sidDX4, sidEnd}, 1) },
			Expect: expectIPv4(14, 63, 0),
		},
	}
	for _, n := range []int{1, 2, 4, 8} {
		out = append(out, seg6xEncap(n, "encap"))
	}
	out = append(out, seg6xEncap(2, "encap.red"))
	out = append(out, scaleScenario("seg6x_encap_10routes", 10), scaleScenario("seg6x_encap_1m_routes", 1000000))
	out = append(out, withNextHopCache(seg6xEncap(1, "encap"), "seg6x_encap_1sid_nhcache", "seg6x H.Encaps, 1 SID"))
	out = append(out,
		seg6xConfigured(&Scenario{
			Name: "seg6x_end", Desc: "seg6x End",
			Frame: func(n, f int) []byte {
				return srv6Frame(n, f, sidEnd, []netip.Addr{sid("fc00:e::1"), sidEnd}, 1)
			},
			Expect: func(int) pattern { return expectEnd() },
		}, fmt.Sprintf("interfaces: [{name: %s}, {name: %s}]\nsids: [{sid: \"%s\", action: End}]\n", devDutIn, devDutEg, sidEnd)),
		seg6xConfigured(&Scenario{
			Name: "seg6x_end_then_dx4", Desc: "seg6x End then End.DX4 on the same node (one pass)",
			Frame:  func(n, f int) []byte { return srv6Frame(n, f, sidEnd, []netip.Addr{sidDX4, sidEnd}, 1) },
			Expect: expectIPv4(14, 63, 0),
		}, fmt.Sprintf("interfaces: [{name: %s}, {name: %s}]\nsids: [{sid: \"%s\", action: End}, {sid: \"%s\", action: End.DX4, nh4: 198.19.0.3}]\n",
			devDutIn, devDutEg, sidEnd, sidDX4)),
		seg6xConfigured(&Scenario{
			Name: "seg6x_end_dx4_vlan", Desc: "seg6x End.DX4, VLAN pushed",
			Frame:  func(n, f int) []byte { return srv6Frame(n, f, sidDX4, []netip.Addr{sidDX4}, 0) },
			Expect: expectIPv4(18, 63, vlanOut),
		}, fmt.Sprintf("interfaces: [{name: %s}, {name: %s}]\nsids: [{sid: \"%s\", action: End.DX4, nh4: 198.19.0.3, vlan: %d}]\n", devDutIn, devDutEg, sidDX4, vlanOut)),
		seg6xConfigured(&Scenario{
			Name: "seg6x_end_dt4_vlan", Desc: "seg6x End.DT4 (table 100), VLAN pushed",
			Frame:  func(n, f int) []byte { return srv6Frame(n, f, sidDT4, []netip.Addr{sidDT4}, 0) },
			Expect: expectIPv4(18, 63, vlanOut),
		}, fmt.Sprintf("interfaces: [{name: %s}, {name: %s}]\nsids: [{sid: \"%s\", action: End.DT4, table: 100, vlan: %d}]\n", devDutIn, devDutEg, sidDT4, vlanOut)),
		// uSID (RFC 9800): uN shifting a container, uDT4 on a /64 of the locator, each beside the kernel.
		&Scenario{
			Name: "kernel_un", Desc: "kernel uN: End flavors next-csid on fcbb:0:d00::/48, container shifted (no SRH)",
			Setup: func(r *Rig) error {
				if err := r.AttachDutPass(); err != nil {
					return err
				}
				return r.DutIP("-6", "route", "add", usidLocator.String(), "encap", "seg6local", "action", "End",
					"flavors", "next-csid", "lblen", "32", "nflen", "16", "dev", devDutIn)
			},
			Frame:  func(n, f int) []byte { return usidFrame(n, f, usidContainer) },
			Expect: expectUSIDShift,
		},
		seg6xConfigured(&Scenario{
			Name: "seg6x_un", Desc: "seg6x uN: End flavors next-csid on fcbb:0:d00::/48, container shifted (no SRH)",
			Frame:  func(n, f int) []byte { return usidFrame(n, f, usidContainer) },
			Expect: expectUSIDShift,
		}, fmt.Sprintf("interfaces: [{name: %s}, {name: %s}]\nsids: [{sid: \"%s\", action: End, flavors: [next-csid]}]\n",
			devDutIn, devDutEg, usidLocator)),
		&Scenario{
			// The kernel's End.DT4 needs a VRF device for its table; this kernel has none
			// (CONFIG_NET_VRF off, no modules). Its End.DX4 on the same prefix decapsulates the same
			// frames and forwards the inner packet by one IPv4 lookup.
			Name: "kernel_udx4", Desc: "kernel End.DX4 on the uSID /64 fcbb:0:d00:e004::/64 (reference for uDT4: no VRF here)",
			Setup: func(r *Rig) error {
				if err := r.AttachDutPass(); err != nil {
					return err
				}
				return r.DutIP("-6", "route", "add", usidDT4.String(), "encap", "seg6local", "action", "End.DX4", "nh4", "198.19.0.3", "dev", devDutIn)
			},
			Frame:  func(n, f int) []byte { return usidFrame(n, f, usidDT4.Addr()) },
			Expect: expectIPv4(14, 63, 0),
		},
		seg6xConfigured(&Scenario{
			Name: "seg6x_udt4_vlan", Desc: "seg6x uDT4: End.DT4 (table 100) on fcbb:0:d00:e004::/64, VLAN pushed (no SRH)",
			Frame:  func(n, f int) []byte { return usidFrame(n, f, usidDT4.Addr()) },
			Expect: expectIPv4(18, 63, vlanOut),
		}, fmt.Sprintf("interfaces: [{name: %s}, {name: %s}]\nsids: [{sid: \"%s\", action: End.DT4, table: 100, vlan: %d}]\n",
			devDutIn, devDutEg, usidDT4, vlanOut)),
	)
	var cached []*Scenario
	for _, sc := range out {
		if sc.Name == "seg6x_end_dx4_vlan" || sc.Name == "seg6x_end_dt4_vlan" {
			cached = append(cached, withNextHopCache(sc, sc.Name+"_nhcache", sc.Desc))
		}
	}
	out = append(out, cached...)
	out = append(out, wecmpScenarios()...)
	return append(out, vxlanScenarios()...)
}

// withNextHopCache is a copy of scenario sc (set up by a seg6x configuration: seg6xConfigured) named
// name with the next-hop cache on (nexthop_cache_ms 1000, as the daemon runs by default: the rig's
// other seg6x scenarios run without it), set in the same configuration.
func withNextHopCache(sc *Scenario, name, desc string) *Scenario {
	c := *sc
	c.Name, c.Desc = name, desc+", next-hop cache on (nexthop_cache_ms 1000)"
	return seg6xConfigured(&c, sc.config+"options: {nexthop_cache_ms: 1000}\n")
}
