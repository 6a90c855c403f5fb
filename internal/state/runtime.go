package state

// runtime.go: the running state held in memory, indexed so that one change costs O(1) whatever the
// number of routes: tenants with their route tables (tenantroutes.go), SR policies shared by the
// routes that use the same segment list, local SIDs, and the id pools of the data plane.

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/seg6x/seg6x/internal/model"
)

// Limits of the data plane's id spaces and tables (bpf/consts.h); id 0 is never used.
const (
	MaxPolicies = 65536
	MaxSIDs     = 131072
	MaxRoutes4  = 4194304
	MaxRoutes6  = 1048576
	maxTables   = 1 << 31
)

// policy is one prebuilt outer header, shared by every route with the same segment list, source,
// mode, hop limit and inner family. Its id indexes the policies and policy_stats maps.
type policy struct {
	id       uint32
	key      string
	inner6   bool
	mode     string
	segs     []netip.Addr
	src      netip.Addr // as configured (invalid: the kernel's choice, usedSrc)
	usedSrc  netip.Addr
	hopLimit uint8
	refs     int
	// group: a named policy's group for one inner family (id carries GroupFlag), which routes point
	// at; not in the policy tables (policies.go).
	group *namedRT
}

// passPolicy is what a pass route points at: id 0, which the data plane treats as "no encap: hand
// the packet to the kernel". It is not in the policy tables and holds no references.
var passPolicy = &policy{id: 0, key: "pass", mode: model.ModePass}

// policyKey identifies an encapsulation in runtime.policies: binary (only compared, never shown),
// so it can never equal the text keys of passPolicy or of a group (groupKey).
func policyKey(inner6 bool, mode string, segs []netip.Addr, src netip.Addr, hop uint8) string {
	return string(appendPolicyKey(nil, inner6, mode, segs, src, hop))
}

// boolInt is 1 for true, 0 for false (a family or flag as an index or key byte).
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// appendPolicyKey appends policyKey's bytes to b (a lookup with them needs no string made).
func appendPolicyKey(b []byte, inner6 bool, mode string, segs []netip.Addr, src netip.Addr, hop uint8) []byte {
	b = append(b, byte(boolInt(inner6)), hop, byte(len(mode)))
	b = appendKeyAddr(append(b, mode...), src)
	for _, a := range segs {
		b = appendKeyAddr(b, a)
	}
	return b
}

// appendKeyAddr appends a length byte, then address a (none when invalid; a zone after it).
func appendKeyAddr(b []byte, a netip.Addr) []byte {
	n := len(b)
	b, _ = a.AppendBinary(append(b, 0))
	b[n] = byte(len(b) - n - 1)
	return b
}

// runtime is the whole running state.
type runtime struct {
	opts     model.Options
	domain   model.Domain
	bgp      *model.BGP
	ifaces   map[string]model.Interface
	tenants  map[string]*tenantRT
	ports    map[model.Port]string // (dev, vlan) -> tenant name
	sids     map[netip.Addr]model.SID
	policies map[string]*policy
	polByID  map[uint32]*policy
	polIDs   *idPool
	tableIDs *idPool
	sidIDs   *idPool
	nroutes  [2]int
	// Named policies (policies.go), their groups by id (with GroupFlag) and the group id pool.
	named     map[string]*namedRT
	groupByID map[uint32]*policy
	groupIDs  *idPool
	vxlans    map[string]model.VXLAN // by device (vxlan.go)
}

func newRuntime() *runtime {
	return &runtime{
		ifaces:   map[string]model.Interface{},
		tenants:  map[string]*tenantRT{},
		ports:    map[model.Port]string{},
		sids:     map[netip.Addr]model.SID{},
		policies: map[string]*policy{},
		polByID:  map[uint32]*policy{},
		polIDs:   newIDPool(MaxPolicies, "SR policies (distinct segment lists)"),
		tableIDs: newIDPool(maxTables, "route tables"),
		sidIDs:   newIDPool(MaxSIDs, "local SIDs"),

		named:     map[string]*namedRT{},
		groupByID: map[uint32]*policy{},
		groupIDs:  newIDPool(model.MaxGroups, "named policy groups (two per policy)"),
		vxlans:    map[string]model.VXLAN{},
	}
}

// Counts are the object counts of a running state.
type Counts struct {
	Interfaces int `json:"interfaces"`
	Tenants    int `json:"tenants"`
	Routes4    int `json:"routes4"`
	Routes6    int `json:"routes6"`
	Policies   int `json:"policies"`
	SIDs       int `json:"sids"`
}

func (r *runtime) counts() Counts {
	return Counts{Interfaces: len(r.ifaces), Tenants: len(r.tenants), Routes4: r.nroutes[0], Routes6: r.nroutes[1],
		Policies: len(r.polByID), SIDs: len(r.sids)}
}

// ifaceList and tenantList are the interfaces and tenants (ports included) as objects.
func (r *runtime) ifaceList() []model.Interface {
	out := make([]model.Interface, 0, len(r.ifaces))
	for _, it := range r.ifaces {
		out = append(out, it)
	}
	return out
}

func (r *runtime) tenantList() []model.Tenant {
	out := make([]model.Tenant, 0, len(r.tenants))
	for _, t := range r.tenants {
		out = append(out, t.Tenant)
	}
	return out
}

func cloneDomain(d model.Domain) model.Domain {
	return model.Domain{Locators: slices.Clone(d.Locators), Sources: slices.Clone(d.Sources)}
}

// vpnSIDs maps tenants to their service SIDs.
func (r *runtime) vpnSIDs() map[string]netip.Addr {
	out := map[string]netip.Addr{}
	for _, sd := range r.sids {
		if sd.Origin == model.OriginVPN {
			out[sd.Tenant] = sd.SID
		}
	}
	return out
}

// view is the tenant as shown (without its routes): copies of its lists, its table id and service SID.
func (t *tenantRT) view(vpnSIDs map[string]netip.Addr) model.Tenant {
	tt := t.Tenant
	tt.Ports = slices.Clone(t.Ports)
	tt.ID = t.tableID
	if tt.VPN = model.CloneVPN(t.VPN); tt.VPN != nil {
		tt.VPN.ServiceSID = vpnSIDs[t.Name]
	}
	return tt
}

// state returns the running state as a State (sorted), O(objects).
func (r *runtime) state() model.State {
	s := model.State{Options: r.opts, Domain: cloneDomain(r.domain), Interfaces: []model.Interface{}, Tenants: []model.Tenant{}, Routes: []model.Route{}, SIDs: []model.SID{},
		BGP: model.CloneBGP(r.bgp)}
	for _, it := range r.ifaces {
		s.Interfaces = append(s.Interfaces, it)
	}
	vpnSIDs := r.vpnSIDs()
	for _, t := range r.tenants {
		s.Tenants = append(s.Tenants, t.view(vpnSIDs))
		for p, id := range t.routes.all {
			s.Routes = append(s.Routes, routeView(t, p, r.policyOf(id)))
		}
	}
	for _, sd := range r.sids {
		s.SIDs = append(s.SIDs, sd)
	}
	for _, n := range r.named {
		s.Policies = append(s.Policies, n.view())
	}
	s.VXLANs = r.vxlanList()
	sortState(&s)
	return s
}

// sortState orders objects so show output and saved state are stable.
func sortState(s *model.State) {
	slices.SortFunc(s.Interfaces, func(a, b model.Interface) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Tenants, func(a, b model.Tenant) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Routes, func(a, b model.Route) int {
		if c := strings.Compare(a.Tenant, b.Tenant); c != 0 {
			return c
		}
		if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
			return c
		}
		return a.Prefix.Bits() - b.Prefix.Bits()
	})
	slices.SortFunc(s.SIDs, func(a, b model.SID) int { return a.SID.Compare(b.SID) })
	slices.SortFunc(s.Policies, func(a, b model.Policy) int { return strings.Compare(a.Name, b.Name) })
}

// quarantine is how long a released id stays unused: a packet that read the old id just before the
// change must not find the slot already holding something else.
const quarantine = 200 * time.Millisecond

// idPool hands out ids 1..limit-1, reusing released ids only after the quarantine.
type idPool struct {
	limit uint32
	next  uint32
	freed []freedID
	what  string
}

type freedID struct {
	id uint32
	at time.Time
}

func newIDPool(limit uint32, what string) *idPool { return &idPool{limit: limit, next: 1, what: what} }

func (p *idPool) alloc() (uint32, error) {
	if len(p.freed) > 0 && time.Since(p.freed[0].at) >= quarantine {
		id := p.freed[0].id
		p.freed = p.freed[1:]
		return id, nil
	}
	if p.next < p.limit {
		p.next++
		return p.next - 1, nil
	}
	if len(p.freed) > 0 {
		time.Sleep(quarantine - time.Since(p.freed[0].at))
		return p.alloc()
	}
	return 0, fmt.Errorf("no free id: at most %d %s", p.limit-1, p.what)
}

// release returns id to the pool; now=false makes it reusable at once (it was never visible).
func (p *idPool) release(id uint32, now bool) {
	if !now {
		// Never visible: first in line (freed stays ordered by release time, oldest first).
		p.freed = append([]freedID{{id: id}}, p.freed...)
		return
	}
	p.freed = append(p.freed, freedID{id: id, at: time.Now()})
}

// rebuild sets the pool after loading: used ids taken, every gap free.
func (p *idPool) rebuild(used map[uint32]bool) {
	p.next, p.freed = 1, nil
	for id := range used {
		if id >= p.next {
			p.next = id + 1
		}
	}
	for id := uint32(1); id < p.next; id++ {
		if !used[id] {
			p.freed = append(p.freed, freedID{id: id})
		}
	}
}
