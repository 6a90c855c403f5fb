package state

// plan.go: turns a whole desired state (a config file) into the operations that make the running
// state equal to it. Only differences become operations; a tenant whose routes differ gets its
// whole route table replaced in one swap.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/netip"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

// Plan returns the operations that turn the running state into desired (validated, defaults filled).
// Objects of other origins (the kernel mirror's, BGP's) are outside a file's scope: never removed by it.
func (s *Store) Plan(desired *model.State) []Op {
	rt := s.rt
	var ops, dels []Op
	if desired.Options != rt.opts {
		o := desired.Options
		ops = append(ops, Op{Kind: model.OpReplace, Options: &o})
	}
	if !slices.Equal(desired.Domain.Locators, rt.domain.Locators) || !slices.Equal(desired.Domain.Sources, rt.domain.Sources) {
		d := cloneDomain(desired.Domain)
		ops = append(ops, Op{Kind: model.OpReplace, Domain: &d})
	}
	if !model.Same(desired.BGP, rt.bgp) {
		if desired.BGP != nil {
			ops = append(ops, Op{Kind: model.OpReplace, BGP: model.CloneBGP(desired.BGP)})
		} else {
			dels = append(dels, Op{Kind: model.OpDelete, BGP: &model.BGP{}})
		}
	}
	want := map[string]bool{}
	for i := range desired.Interfaces {
		it := desired.Interfaces[i]
		want[it.Name] = true
		if cur, ok := rt.ifaces[it.Name]; ok && cur.Mode == it.Mode && cur.Role == it.Role {
			continue
		}
		ops = append(ops, Op{Kind: model.OpReplace, Interface: &it})
	}
	for _, name := range slices.Sorted(maps.Keys(rt.ifaces)) { // sorted: the same file, the same plan
		if !want[name] {
			dels = append(dels, Op{Kind: model.OpDelete, Interface: &model.Interface{Name: name}})
		}
	}
	wantPol := map[string]bool{}
	for i := range desired.Policies {
		p := model.ClonePolicy(&desired.Policies[i])
		wantPol[p.Name] = true
		if cur := rt.named[p.Name]; cur != nil && model.Same(cur.Policy, p) {
			continue
		}
		ops = append(ops, Op{Kind: model.OpReplace, Policy: &p})
	}
	for _, name := range slices.Sorted(maps.Keys(rt.named)) {
		if n := rt.named[name]; !wantPol[name] && n.Origin == model.OriginConfig { // after the routes that use it are replaced
			dels = append(dels, Op{Kind: model.OpDelete, Policy: &model.Policy{Name: name}})
		}
	}
	routes := map[string][]model.Route{}
	for _, r := range desired.Routes {
		routes[r.Tenant] = append(routes[r.Tenant], r)
	}
	want = map[string]bool{}
	for i := range desired.Tenants {
		t := desired.Tenants[i]
		want[t.Name] = true
		cur := rt.tenants[t.Name]
		if cur == nil || !sameTenant(&cur.Tenant, &t) {
			ops = append(ops, Op{Kind: model.OpReplace, Tenant: &t})
		}
		if (cur == nil && len(routes[t.Name]) > 0) || (cur != nil && !rt.sameRoutes(cur, routes[t.Name])) {
			ops = append(ops, Op{Kind: model.OpReplace, TenantRoutes: &TenantRoutes{Tenant: t.Name, Routes: routes[t.Name]}})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(rt.tenants)) {
		t := rt.tenants[name]
		if want[name] || t.Origin != model.OriginConfig { // other origins' objects are not the file's
			continue
		}
		if t.routes.len() > 0 { // BGP's routes in it go with it
			ops = append(ops, Op{Kind: model.OpReplace, TenantRoutes: &TenantRoutes{Tenant: name, All: true}})
		}
		dels = append(dels, Op{Kind: model.OpDelete, Tenant: &model.Tenant{Name: name}})
	}
	// Plugins before the SIDs that run them; removed ones after (the SIDs that ran them go first).
	wantPlugin := map[string]bool{}
	for i := range desired.Plugins {
		p := desired.Plugins[i]
		wantPlugin[p.Name] = true
		sum := sha256.Sum256(p.Object)
		if cur := rt.plugins[p.Name]; cur != nil && cur.File == p.File && cur.Digest == hex.EncodeToString(sum[:]) {
			continue
		}
		ops = append(ops, Op{Kind: model.OpReplace, Plugin: &p})
	}
	for _, name := range slices.Sorted(maps.Keys(rt.plugins)) {
		if !wantPlugin[name] {
			dels = append(dels, Op{Kind: model.OpDelete, Plugin: &model.Plugin{Name: name}})
		}
	}
	wantSID := map[netip.Addr]bool{}
	for i := range desired.SIDs {
		sd := desired.SIDs[i]
		wantSID[sd.SID] = true
		if cur, ok := rt.sids[sd.SID]; ok {
			sd.ID, sd.Policy, sd.Bind = cur.ID, cur.Policy, cur.Bind
			if model.Same(cur, sd) {
				continue
			}
		}
		sd.ID, sd.Policy, sd.Bind = 0, 0, 0
		ops = append(ops, Op{Kind: model.OpReplace, SID: &sd})
	}
	for _, addr := range slices.SortedFunc(maps.Keys(rt.sids), netip.Addr.Compare) {
		if sd := rt.sids[addr]; !wantSID[addr] && sd.Origin == model.OriginConfig {
			ops = append(ops, Op{Kind: model.OpDelete, SID: &model.SID{SID: addr}})
		}
	}
	// Deletions of tenants and interfaces last: routes and SIDs that use them go first.
	slices.SortStableFunc(dels, func(a, b Op) int { return boolInt(a.Interface != nil) - boolInt(b.Interface != nil) })
	return append(ops, dels...)
}

func sameTenant(cur, want *model.Tenant) bool {
	if cur.Table != want.Table || cur.KernelFallback != want.KernelFallback || len(cur.Ports) != len(want.Ports) ||
		!slices.Equal(cur.Gateway, want.Gateway) || cur.MSSClamp != want.MSSClamp || !model.Same(cur.VPN, want.VPN) {
		return false
	}
	for i := range cur.Ports {
		if cur.Ports[i].Dev != want.Ports[i].Dev || cur.Ports[i].VLAN != want.Ports[i].VLAN {
			return false
		}
	}
	return true
}

// sameRoutes: the API's routes of tenant cur are want (other origins' routes are not the file's).
func (rt *runtime) sameRoutes(cur *tenantRT, want []model.Route) bool {
	if cur.routes.len()-cur.origins.len() != len(want) {
		return false
	}
	for i := range want {
		r := &want[i]
		p := rt.policyOfRoute(cur, r.Prefix)
		key := policyKey(r.Prefix.Addr().Is6(), r.Mode, r.Segs, r.Src, r.HopLimit)
		if r.Policy != "" {
			key = groupKey(r.Policy, boolInt(r.Prefix.Addr().Is6()))
		}
		if p == nil || cur.routeOrigin(r.Prefix) != model.OriginConfig || (r.Mode == model.ModePass) != (p == passPolicy) ||
			(p != passPolicy && p.key != key) ||
			!model.SameUSIDs(cur.usids[r.Prefix], r.USIDs) {
			return false
		}
	}
	return true
}

// clone deep-copies a state (through JSON: it is only used on whole desired states); plugins keep
// their objects (which JSON leaves out).
func clone(st *model.State) model.State {
	var c model.State
	b, _ := json.Marshal(st)
	_ = json.Unmarshal(b, &c)
	for i := range c.Plugins {
		c.Plugins[i].Object = st.Plugins[i].Object
	}
	return c
}
