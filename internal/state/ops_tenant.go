package state

// ops_tenant.go: operations on tenants (and their ports).

import (
	"net/netip"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

func (s *Store) applyTenant(c *change, op Op) error {
	nt := *op.Tenant
	nt.Ports = slices.Clone(nt.Ports)
	nt.VPN = model.CloneVPN(nt.VPN)
	if nt.VPN != nil {
		nt.VPN.ServiceSID = netip.Addr{}
	}
	obj := model.TenantObj(&nt)
	cur := s.rt.tenants[nt.Name]
	if err := exists(op.Kind, cur != nil, obj); err != nil {
		return err
	}
	if cur != nil {
		if err := model.Owned(op.Origin, cur.Origin, obj); err != nil {
			return err
		}
	}
	nt.Origin = op.Origin
	c.touchTenant(s.rt, nt.Name)
	if op.Kind == model.OpDelete {
		if n := cur.routes.len(); n > 0 {
			return model.FieldErr(obj, "", "still has %d routes; delete them first (or replace its routes with none)", n)
		}
		s.setPorts(c, cur.Name, cur.Ports, nil)
		delete(s.rt.tenants, nt.Name)
		c.onUndo(func() { s.rt.tenants[cur.Name] = cur })
		c.note(op.Kind, true, obj)
		return nil
	}
	if err := model.Collect(func(add func(error)) { model.ValidateTenant(&nt, add) }); err != nil {
		return err
	}
	for i := range nt.Ports {
		idx, err := s.Env.Ifindex(nt.Ports[i].Dev)
		if err != nil {
			return model.FieldErr(obj, "dev", "%v", err)
		}
		nt.Ports[i].Ifindex = idx
	}
	for _, p := range nt.Ports {
		if owner, ok := s.rt.ports[model.Port{Dev: p.Dev, VLAN: p.VLAN}]; ok && owner != nt.Name {
			return model.FieldErr(obj, "port", "dev %s vlan %d already belongs to tenant %q", p.Dev, p.VLAN, owner)
		}
	}
	if nt.Table != 0 && nt.Origin != model.OriginKernel && (cur == nil || cur.Table != nt.Table) {
		for name, o := range s.rt.tenants {
			if name != nt.Name && o.Table == nt.Table && o.Origin != model.OriginKernel {
				return model.FieldErr(obj, "table", "%d already belongs to tenant %q (each tenant's routes are looked up in its own table)", nt.Table, name)
			}
		}
	}
	nt.ID = 0
	if cur == nil {
		id, err := s.rt.tableIDs.alloc()
		if err != nil {
			return model.FieldErr(obj, "", "%v", err)
		}
		t := &tenantRT{Tenant: nt, tableID: id, routes: newRouteIndex(0)}
		s.rt.tenants[nt.Name] = t
		s.setPorts(c, nt.Name, nil, nt.Ports)
		c.onUndo(func() { delete(s.rt.tenants, nt.Name); s.rt.tableIDs.release(id, false) })
		c.note(op.Kind, false, obj)
		return nil
	}
	if model.Same(cur.Tenant, nt) {
		return nil
	}
	old := cur.Tenant
	s.setPorts(c, nt.Name, cur.Ports, nt.Ports)
	cur.Tenant = nt
	c.onUndo(func() { cur.Tenant = old })
	c.note(op.Kind, true, obj)
	return nil
}

// setPorts moves the port index of tenant from ports old to ports new.
func (s *Store) setPorts(c *change, tenant string, old, new []model.Port) {
	for _, p := range old {
		k := model.Port{Dev: p.Dev, VLAN: p.VLAN}
		delete(s.rt.ports, k)
		c.onUndo(func() { s.rt.ports[k] = tenant })
	}
	for _, p := range new {
		k := model.Port{Dev: p.Dev, VLAN: p.VLAN}
		s.rt.ports[k] = tenant
		c.onUndo(func() { delete(s.rt.ports, k) })
	}
}
