package state

// runtime.go: the running state held in memory, indexed so that one change costs O(1) whatever the
// number of routes: tenants with their route tables (tenantroutes.go), SR policies shared by the
// routes that use the same segment list (policyrefs.go), local SIDs, and the id pools of the data
// plane (idpool.go).

import (
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/pluginobj"
)

// Limits of the data plane's id spaces and tables (bpf/consts.h); id 0 is never used.
const (
	MaxPolicies = 65536
	MaxSIDs     = 131072
	MaxRoutes4  = 4194304
	MaxRoutes6  = 1048576
	maxTables   = 1 << 31
)

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
	// Plugins by name (ops_plugin.go), their program slots, and the plugin SIDs' configurations by
	// bind (a configuration's bytes never change under its bind: a new one gets a new bind).
	plugins     map[string]*pluginRT
	pluginSlots *idPool
	pluginBinds *idPool
	pluginCfg   map[uint32][]byte
	// pluginPolicies are the named policies each bind's settings name (ENCAP may use only those).
	pluginPolicies map[uint32][]pluginPolicy
	objects        func(digest string) ([]byte, error) // a saved plugin object (Store.loadObject)
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

		plugins:     map[string]*pluginRT{},
		pluginSlots: newIDPool(pluginobj.Slots, "plugins (one slot is kept for a replacement)"),
		pluginBinds: newIDPool(pluginobj.Binds, "plugin SIDs"),
		pluginCfg:   map[uint32][]byte{},

		pluginPolicies: map[uint32][]pluginPolicy{},
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
	for _, name := range slices.Sorted(maps.Keys(r.plugins)) {
		p := r.plugins[name].Plugin
		p.Object = nil
		s.Plugins = append(s.Plugins, p)
	}
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
