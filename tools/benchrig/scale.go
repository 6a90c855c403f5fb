package benchrig

// scale.go: the route-scale scenarios: the same headend traffic with 10 routes and with a million
// routes installed. In both, the tenant's flows miss a /32 lookup and match a /24 (two exact-match
// lookups), so the difference is only the size of the route table.

import (
	"fmt"
	"net/netip"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// scaleRoutes adds to the headend config (seg6xEncap's, one route: applied first) routes up to
// `total` through the state API, from inside the DUT's namespace (interface names resolve there; no
// goroutines may run the commit elsewhere).
func scaleRoutes(r *Rig, total int) error {
	return testsupport.InNetns(r.ns("dut"), func() error {
		st, err := dataplane.OpenStore(r.DutDir(), state.HostEnv{}, state.OpenOptions{})
		if err != nil {
			return err
		}
		defer st.Close()
		src := encapSrc
		seg := []netip.Addr{sid("fc00:e::1")}
		var ops []state.Op
		route := func(tenant string, p netip.Prefix, segs []netip.Addr) {
			ops = append(ops, state.Op{Kind: model.OpReplace, Route: &model.Route{Tenant: tenant, Prefix: p, Segs: segs, Src: src}})
		}
		flush := func() error {
			if _, err := st.Commit(ops, false); err != nil {
				return err
			}
			ops = ops[:0]
			return nil
		}
		n := 1 // the config's 198.19.1.0/24
		// Tenant t: /32s over 198.18.0.0/15 except 198.19.1.0/24 (the flows miss them, then hit the /24).
		for i := 0; i < 1<<17 && n < total; i++ {
			a := netip.AddrFrom4([4]byte{198, 18 + byte(i>>16), byte(i >> 8), byte(i)})
			if a.As4()[1] == 19 && a.As4()[2] == 1 {
				continue
			}
			route("t", netip.PrefixFrom(a, 32), seg)
			n++
		}
		// Other tenants (on other VLANs) fill the table, over 1000 segment lists.
		for t := 1; n < total; t++ {
			name := fmt.Sprintf("f%d", t)
			ops = append(ops, state.Op{Kind: model.OpReplace, Tenant: &model.Tenant{Name: name, Table: 1000 + uint32(t),
				Ports: []model.Port{{Dev: devDutIn, VLAN: vlanIn + uint16(t)}}}})
			for i := 0; i < 1<<17 && n < total; i++ {
				a := netip.AddrFrom4([4]byte{198, 18 + byte(i>>16), byte(i >> 8), byte(i)})
				route(name, netip.PrefixFrom(a, 32), []netip.Addr{sid(fmt.Sprintf("fc00:2::%x", 1+i%1000))})
				n++
				if len(ops) >= 50000 {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		return flush()
	})
}

// scaleScenario is seg6xEncap(1, "encap") with total routes in all. Its seg6x configuration is that
// one's, its routes added to it, nothing else changed: it can follow another scenario on one rig.
func scaleScenario(name string, total int) *Scenario {
	sc := seg6xEncap(1, "encap")
	sc.Name = name
	sc.Desc = fmt.Sprintf("seg6x H.Encaps, 1 SID, %d routes installed (flows: a /32 miss, then a /24 hit)", total)
	sc.many = total > 100000
	sc.Setup = func(r *Rig) error {
		if err := seg6xApply(r, sc.config); err != nil {
			return err
		}
		return scaleRoutes(r, total)
	}
	return sc
}
