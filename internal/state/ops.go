package state

// ops.go: the operations a commit is made of (add, replace or delete one object, or replace a
// tenant's whole route table), how one is dispatched to its kind's file (ops_*.go), and the checks
// made once every operation of a commit is in. Each applies to the in-memory state through the
// commit's change record (change.go), from which the map writes are computed (writes.go).

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

// Op is one change. Exactly one object field is set; for OpDelete only its key fields matter.
type Op struct {
	Kind         model.OpKind
	Origin       model.Origin // who asks (origins.go): it may only change objects of its own origin
	Options      *model.Options
	Domain       *model.Domain
	Interface    *model.Interface
	Tenant       *model.Tenant
	Route        *model.Route
	RouteSet     *RouteSet
	SID          *model.SID
	TenantRoutes *TenantRoutes
	BGP          *model.BGP // OpReplace or OpDelete (the whole section)
	Policy       *model.Policy
	VXLAN        *model.VXLAN // the kernel mirror's only (vxlan.go)
	Plugin       *model.Plugin
}

// RouteSet is one route per prefix, each with every other field of Route (whose Prefix is not used):
// the operation is applied to each in turn, as if each were an operation of its own.
type RouteSet struct {
	Route    model.Route
	Prefixes []netip.Prefix
}

// TenantRoutes replaces every route of a tenant in one step: traffic sees the old table or the new
// one, never a mix (the data plane switches table versions with one write per tenant port).
type TenantRoutes struct {
	Tenant string
	Routes []model.Route
	// All replaces the routes of every origin (the tenant's owner, removing it); otherwise only the
	// asking origin's routes are replaced and the others' stay.
	All bool
}

// applyAll applies every operation of a commit to change c in turn (an error names the operation:
// OpError), then the checks made once all are in (finish).
func (s *Store) applyAll(c *change, ops []Op) error {
	for i := 0; i < len(ops); {
		// A run of Route operations that differ only in their prefix (a client loading routes one
		// operation each) is taken as one set: the same checks, diff and errors (routeRun).
		if j := routeRun(ops, i); j > i+1 {
			var prefixes []netip.Prefix
			for k := i; k < j; k++ {
				prefixes = append(prefixes, ops[k].Route.Prefix)
			}
			if k, err := s.applyRoutes(c, ops[i], *ops[i].Route, prefixes); err != nil {
				return &OpError{Index: i + k, Op: ops[i+k], Err: err}
			}
			i = j
			continue
		}
		if err := s.apply(c, ops[i]); err != nil {
			return &OpError{Index: i, Op: ops[i], Err: err}
		}
		i++
	}
	return s.finish(c)
}

// apply performs one operation on the in-memory state (s.rt), recording it in c.
func (s *Store) apply(c *change, op Op) error {
	n := 0
	for _, set := range []bool{op.Options != nil, op.Domain != nil, op.Interface != nil, op.Tenant != nil, op.Route != nil,
		op.RouteSet != nil, op.SID != nil, op.TenantRoutes != nil, op.BGP != nil, op.Policy != nil, op.VXLAN != nil,
		op.Plugin != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("an operation carries exactly one object, this one has %d", n)
	}
	if op.Kind < model.OpAdd || op.Kind > model.OpDelete {
		return fmt.Errorf("unknown operation kind %d", int(op.Kind))
	}
	switch {
	case op.Options != nil:
		return s.applyOptions(c, op)
	case op.Domain != nil:
		return s.applyDomain(c, op)
	case op.Interface != nil:
		return s.applyInterface(c, op)
	case op.Tenant != nil:
		return s.applyTenant(c, op)
	case op.Route != nil:
		return s.applyRoute(c, op)
	case op.RouteSet != nil:
		return s.applyRouteSet(c, op)
	case op.SID != nil:
		return s.applySID(c, op)
	case op.BGP != nil:
		return s.applyBGP(c, op)
	case op.Policy != nil:
		return s.applyPolicy(c, op)
	case op.VXLAN != nil:
		return s.applyVXLAN(c, op)
	case op.Plugin != nil:
		return s.applyPlugin(c, op)
	default:
		return s.applyTenantRoutes(c, op)
	}
}

func exists(kind model.OpKind, had bool, obj string) error {
	if kind == model.OpAdd && had {
		return model.FieldErr(obj, "", "already exists (use replace to change it)")
	}
	if kind == model.OpDelete && !had {
		return model.FieldErr(obj, "", "does not exist")
	}
	return nil
}

// finish checks what can only be checked once every operation of a commit is in: references from
// SIDs to tenants, and that no deleted tenant is still referenced. It also marks for rewriting the
// SIDs whose tenant's table changed. Problems are reported by tenant name, then SID address (not
// in map order: the same commit always gets the same message).
func (s *Store) finish(c *change) error {
	if err := s.vpnSIDs(c); err != nil {
		return err
	}
	var errs model.Errors
	add := func(err error) { errs = append(errs, err) }
	tenant := func(name string) *model.Tenant {
		if t := s.rt.tenants[name]; t != nil {
			return &t.Tenant
		}
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(c.tenants)) {
		b, t := c.tenants[name], s.rt.tenants[name]
		gone := b.had && t == nil
		tableChanged := b.had && t != nil && t.Table != b.t.Table
		if !gone && !tableChanged {
			continue
		}
		var users []netip.Addr
		for addr, sd := range s.rt.sids {
			if sd.Tenant == name {
				users = append(users, addr)
			}
		}
		slices.SortFunc(users, netip.Addr.Compare)
		for _, addr := range users {
			if gone {
				add(model.FieldErr(fmt.Sprintf("tenant %q", name), "", "SID %s still uses it", addr))
			} else if _, ok := c.sids[addr]; !ok {
				c.sids[addr] = sidBefore{had: true, sid: s.rt.sids[addr]}
			}
		}
	}
	for _, addr := range slices.SortedFunc(maps.Keys(c.sids), netip.Addr.Compare) {
		sd, ok := s.rt.sids[addr]
		if !ok {
			continue
		}
		model.ValidateSIDParams(&sd, tenant, add)
	}
	s.rebindMoved(c, add)
	s.rebindPolicyUsers(c, add)
	s.checkPluginUsers(c, add)
	if len(errs) == 0 {
		return nil
	}
	return errs
}
