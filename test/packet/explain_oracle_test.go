package packet

// explain_oracle_test.go: the record of every fixture checked against what the fixture config says
// (an oracle computed here, independently of the program): the ingress port's tenant and table, the
// tenant's longest matching route and its policy, the local SID processed with its behavior and
// segments left as received, and the FIB result against the frame that left. Every behavior of the
// config and every record class must be met by some fixture.

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/tools/fixtures"
)

// parsedFrame is what the oracle reads of a frame.
type parsedFrame struct {
	vlan  uint16
	dst   netip.Addr // the outer IP destination (invalid: not IP)
	slRaw int        // the SRH's segments left (-1: no SRH)
}

func parseFrame(b []byte) parsedFrame {
	p := parsedFrame{slRaw: -1}
	off, et := 12, uint16(0)
	for tags := 0; ; tags++ {
		if len(b) < off+2 {
			return p
		}
		et = binary.BigEndian.Uint16(b[off:])
		if (et != 0x8100 && et != 0x88a8) || tags == 2 {
			break
		}
		if tags == 0 && len(b) >= off+4 {
			p.vlan = binary.BigEndian.Uint16(b[off+2:]) & 0xfff
		}
		off += 4
	}
	l3 := off + 2
	switch et {
	case 0x0800:
		if len(b) >= l3+20 {
			p.dst = netip.AddrFrom4([4]byte(b[l3+16 : l3+20]))
		}
	case 0x86dd:
		if len(b) < l3+40 {
			return p
		}
		p.dst = netip.AddrFrom16([16]byte(b[l3+24 : l3+40]))
		nh, at := b[l3+6], l3+40
		for i := 0; i < 8 && len(b) >= at+8; i++ {
			switch nh {
			case 0, 60: // hop-by-hop, destination options
				nh, at = b[at], at+8*(int(b[at+1])+1)
				continue
			case 43:
				if b[at+2] == 4 {
					p.slRaw = int(b[at+3])
				}
			}
			break
		}
	}
	return p
}

func TestExplainRecordEveryFixture(t *testing.T) {
	fs, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := fixtures.Config()
	if err != nil {
		t.Fatal(err)
	}
	type portKey struct {
		dev  string
		vlan uint16
	}
	tenantOf := map[portKey]string{}
	for _, tn := range cfg.Tenants {
		for _, pt := range tn.Ports {
			tenantOf[portKey{pt.Dev, uint16(pt.VLAN)}] = tn.Name
		}
	}
	routes := map[string][]model.Route{} // by tenant, with their policy ids
	for _, r := range rig.Store.Current().Routes {
		routes[r.Tenant] = append(routes[r.Tenant], r)
	}
	lpm := func(tenant string, dst netip.Addr) *model.Route {
		var best *model.Route
		for i, r := range routes[tenant] {
			if r.Prefix.Contains(dst) && (best == nil || r.Prefix.Bits() > best.Prefix.Bits()) {
				best = &routes[tenant][i]
			}
		}
		return best
	}
	// The SID an address reaches: its /128, else the longest SID prefix covering it.
	running := rig.Store.SIDs()
	sidFor := func(a netip.Addr) *model.SID {
		var best *model.SID
		for i, s := range running {
			if s.Prefix().Contains(a) && (best == nil || s.Prefix().Bits() > best.Prefix().Bits()) {
				best = &running[i]
			}
		}
		return best
	}
	code := map[string]uint8{}
	for _, b := range model.Behaviors {
		code[b.Name] = b.Code
	}
	x, err := dataplane.NewExplainer(rig.Store.Dir, rig.Store.ProgramOptions(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	has := func(r *dataplane.Seg6xTraceRec, f dataplane.Seg6xTraceFlags) bool { return r.Flags&uint32(f) != 0 }
	seenBehavior := map[string]bool{}
	seenClass := map[uint8]bool{}
	for i := range fs {
		f := &fs[i]
		e := explainFixture(t, x, f)
		ifindex, _ := rig.Ifindex(f.Dev)
		r := &e.Record
		in := parseFrame(f.Input)
		seenClass[r.Class] = true
		// (A truncated tag is refused before its VLAN is read.)
		if r.Ifindex != ifindex || (r.Vlan != in.vlan && r.Class != uint8(dataplane.Seg6xTraceClassTRACE_MALFORMED)) {
			t.Errorf("%s: record ifindex %d vlan %d, want %d, %d", f.Name, r.Ifindex, r.Vlan, ifindex, in.vlan)
		}
		// The port: its tenant's table, or none.
		tenant := tenantOf[portKey{f.Dev, in.vlan}]
		wantTable := uint32(0)
		if tenant != "" {
			wantTable, _ = rig.Store.TableIDOf(tenant)
		}
		if has(r, dataplane.Seg6xTraceFlagsTRACE_F_PORT) && (r.Table != wantTable ||
			(tenant != "") != (r.PortFlags&uint32(dataplane.Seg6xPortFlagsPORT_F_TENANT) != 0)) {
			t.Errorf("%s: port flags %#x table %d; the config says tenant %q (table %d)", f.Name, r.PortFlags, r.Table, tenant, wantTable)
		}
		switch dataplane.Seg6xTraceClass(r.Class) {
		case dataplane.Seg6xTraceClassTRACE_TENANT:
			if tenant == "" {
				t.Errorf("%s: class tenant on a port without one", f.Name)
				break
			}
			want := lpm(tenant, in.dst)
			switch {
			case has(r, dataplane.Seg6xTraceFlagsTRACE_F_ROUTE) && want == nil:
				t.Errorf("%s: record names route %v/%d; tenant %s has none for %v", f.Name, addr16(r.RouteAddr), r.RoutePlen, tenant, in.dst)
			case has(r, dataplane.Seg6xTraceFlagsTRACE_F_ROUTE):
				got := netip.PrefixFrom(addr16(r.RouteAddr), int(r.RoutePlen))
				if got != want.Prefix || !policyOfRoute(rig.Store.Current().Policies, want, r.Policy) {
					t.Errorf("%s: route %v policy %d; the longest of tenant %s's routes for %v is %v, policy %d",
						f.Name, got, r.Policy, tenant, in.dst, want.Prefix, want.ID)
				}
			case f.Action == "XDP_REDIRECT" && want != nil && int(r.Reason) < dataplane.ReasonAnswerFirst:
				t.Errorf("%s: redirected without a route in the record (tenant %s, route %v)", f.Name, tenant, want.Prefix)
			}
		case dataplane.Seg6xTraceClassTRACE_SID:
			if !has(r, dataplane.Seg6xTraceFlagsTRACE_F_SID) {
				if f.Action != "XDP_DROP" {
					t.Errorf("%s: class sid without a SID, action %s", f.Name, f.Action)
				}
				break
			}
			sid := addr16(r.Sid) // the destination that reached it
			conf := sidFor(sid)
			if conf == nil || conf.ID != r.SidId {
				t.Errorf("%s: record SID %v (id %d); the config's SID for it is %+v", f.Name, sid, r.SidId, conf)
				break
			}
			action := conf.Action
			seenBehavior[action] = true
			if r.Behavior != code[action] {
				t.Errorf("%s: SID %v behavior %d, the config says %s (%d)", f.Name, sid, r.Behavior, action, code[action])
			}
			if !has(r, dataplane.Seg6xTraceFlagsTRACE_F_SRH_READ) {
				// Refused before the endpoint looked for the SRH (the IPv6 header, the chain's checks).
				if r.Reason == 0 || f.Action == "XDP_REDIRECT" {
					t.Errorf("%s: SRH not read, yet action %s reason %d", f.Name, f.Action, r.Reason)
				}
			} else if r.Chain == 0 {
				wantSL := uint8(0xff)
				if in.slRaw >= 0 {
					wantSL = uint8(in.slRaw)
				}
				if sid != in.dst || r.SlBefore != wantSL {
					t.Errorf("%s: SID %v segments left %d; the frame is for %v with segments left %d", f.Name, sid, r.SlBefore, in.dst, wantSL)
				}
			}
		case dataplane.Seg6xTraceClassTRACE_BOUNDARY:
			if r.PortFlags&uint32(dataplane.Seg6xPortFlagsPORT_F_BOUNDARY) == 0 || f.Action != "XDP_DROP" || r.Reason == 0 {
				t.Errorf("%s: class boundary, port flags %#x action %s reason %d", f.Name, r.PortFlags, f.Action, r.Reason)
			}
		case dataplane.Seg6xTraceClassTRACE_MALFORMED:
			if f.Action == "XDP_REDIRECT" || r.Reason == 0 {
				t.Errorf("%s: class malformed, action %s reason %d", f.Name, f.Action, r.Reason)
			}
		case dataplane.Seg6xTraceClassTRACE_NOT_OURS:
			if f.Action != "XDP_PASS" || has(r, dataplane.Seg6xTraceFlagsTRACE_F_ROUTE) || has(r, dataplane.Seg6xTraceFlagsTRACE_F_SID) {
				t.Errorf("%s: not ours, yet action %s flags %#x", f.Name, f.Action, r.Flags)
			}
		default:
			t.Errorf("%s: class %d", f.Name, r.Class)
		}
		// A forwarded frame leaves with the MACs of the FIB result the record names.
		if f.Action == "XDP_REDIRECT" && int(r.Reason) < dataplane.ReasonAnswerFirst {
			if !has(r, dataplane.Seg6xTraceFlagsTRACE_F_FIB) || r.FibRc != 0 || r.FibIfindex == 0 ||
				!bytes.Equal(f.Output[0:6], r.Dmac[:]) || !bytes.Equal(f.Output[6:12], r.Smac[:]) {
				t.Errorf("%s: FIB flags %#x rc %d egress %d MACs %x > %x; the frame left %x > %x", f.Name, r.Flags, r.FibRc,
					r.FibIfindex, r.Smac, r.Dmac, f.Output[6:12], f.Output[0:6])
			}
		}
	}
	for _, s := range cfg.SIDs {
		if !seenBehavior[s.Action] {
			t.Errorf("no fixture's record shows %s", s.Action)
		}
	}
	for c := dataplane.Seg6xTraceClassTRACE_NOT_OURS; c <= dataplane.Seg6xTraceClassTRACE_MALFORMED; c++ {
		if !seenClass[uint8(c)] {
			t.Errorf("no fixture's record has class %d", c)
		}
	}
}

// policyOfRoute: the record's policy is the route's, or for a route naming a weighted policy, one of
// that policy's lists for the packet's family (0: every list down).
func policyOfRoute(named []model.Policy, r *model.Route, got uint32) bool {
	if r.Policy == "" {
		return got == r.ID
	}
	fam := 0
	if r.Prefix.Addr().Is6() {
		fam = 1
	}
	for _, p := range named {
		if p.Name != r.Policy {
			continue
		}
		for _, l := range p.Lists {
			if got == l.PolicyID[fam] {
				return true
			}
		}
		return got == 0
	}
	return false
}
