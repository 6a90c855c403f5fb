package state

// vpnsid.go: the service SID of each tenant with a vpn: section. The node allocates it itself from the
// tenant's locator (the lowest free function), as a local SID of origin vpn (End.DT46, End.DT4 or
// End.DT6 into the tenant, tagged with its ports' VLAN), in the same commit as the tenant change that needs it; it is saved with
// the state, so it stays the same across restarts and config applies while the locator does.

import (
	"fmt"
	"maps"
	"math/big"
	"net/netip"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

// vpnSIDs gives every tenant touched by commit c (every tenant, if the bgp section changed) the
// service SID its vpn: section asks for, and removes the service SIDs no tenant asks for any more.
func (s *Store) vpnSIDs(c *change) error {
	if len(c.tenants) == 0 && !c.bgpTouched {
		return nil
	}
	have := map[string]model.SID{}
	for _, sd := range s.rt.sids {
		if sd.Origin == model.OriginVPN {
			have[sd.Tenant] = sd
		}
	}
	names := map[string]bool{}
	for name := range c.tenants {
		names[name] = true
	}
	if c.bgpTouched {
		for name := range s.rt.tenants {
			names[name] = true
		}
		for name := range have {
			names[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(names)) { // in name order: allocation is deterministic
		cur, had := have[name]
		want, err := s.wantVPNSID(name, cur, had)
		if err != nil {
			return err
		}
		if had && (!want.SID.IsValid() || want.SID != cur.SID) {
			if err := s.applySID(c, Op{Kind: model.OpDelete, Origin: model.OriginVPN, SID: &model.SID{SID: cur.SID}}); err != nil {
				return err
			}
		}
		if want.SID.IsValid() && (!had || want.SID != cur.SID || want.Action != cur.Action || want.VLAN != cur.VLAN) {
			if o, ok := s.rt.sids[want.SID]; ok && o.Origin == model.OriginVPN && o.Tenant != name {
				return model.FieldErr(fmt.Sprintf("tenant %q", name), "vpn.sid", "%s is the service SID of tenant %q", want.SID, o.Tenant)
			}
			if err := s.applySID(c, Op{Kind: model.OpReplace, Origin: model.OriginVPN, SID: &want}); err != nil {
				return fmt.Errorf("tenant %q: service SID: %w", name, err)
			}
		}
	}
	return nil
}

// wantVPNSID is the service SID tenant name should have (SID unset: none). cur is the one it has.
func (s *Store) wantVPNSID(name string, cur model.SID, had bool) (model.SID, error) {
	t := s.rt.tenants[name]
	if t == nil || t.VPN == nil {
		return model.SID{}, nil
	}
	obj := model.TenantObj(&t.Tenant)
	loc, fbits := t.VPN.Locator, uint8(model.DefaultFunctionBits)
	if b := s.rt.bgp; b != nil {
		fbits = b.FunctionBits
		if !loc.IsValid() {
			loc = b.Locator
		}
	}
	want := model.SID{Action: t.VPN.Behavior, Tenant: name, VLAN: portVLAN(t.Ports)}
	switch {
	case t.VPN.SID.IsValid():
		want.SID = t.VPN.SID
		if loc.IsValid() && !loc.Contains(want.SID) {
			return model.SID{}, model.FieldErr(obj, "vpn.sid", "%s is outside the locator %s", want.SID, loc)
		}
	case !loc.IsValid():
		return model.SID{}, model.FieldErr(obj, "vpn.locator", "no locator to allocate the service SID from (set vpn.locator, bgp.locator or vpn.sid)")
	case had && loc.Contains(cur.SID):
		want.SID = cur.SID
	default:
		a, err := s.freeFunction(loc, fbits)
		if err != nil {
			return model.SID{}, model.FieldErr(obj, "vpn.locator", "%v", err)
		}
		want.SID = a
	}
	return want, nil
}

// portVLAN is the VLAN a decapsulated packet of a tenant is tagged with: its ports' VLAN when they
// all have the same one (0: untagged, or the ports differ and the tenant's table decides alone).
func portVLAN(ports []model.Port) uint16 {
	var v uint16
	for i, p := range ports {
		if i > 0 && p.VLAN != v {
			return 0
		}
		v = p.VLAN
	}
	return v
}

// freeFunction returns the SID of the lowest function (from 1) of locator loc, fbits wide, that no
// local SID uses.
func (s *Store) freeFunction(loc netip.Prefix, fbits uint8) (netip.Addr, error) {
	if fbits == 0 || loc.Bits()+int(fbits) > 128 {
		return netip.Addr{}, fmt.Errorf("locator %s has no room for a %d-bit function", loc, fbits)
	}
	base := new(big.Int).SetBytes(loc.Addr().AsSlice())
	shift := uint(128 - loc.Bits() - int(fbits))
	limit := uint64(1)<<min(fbits, 63) - 1
	for fn := uint64(1); fn <= limit && fn <= MaxSIDs+1; fn++ {
		v := new(big.Int).Lsh(new(big.Int).SetUint64(fn), shift)
		v.Or(v, base)
		var b [16]byte
		v.FillBytes(b[:])
		a := netip.AddrFrom16(b)
		if _, used := s.rt.sids[a]; !used {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("every function of locator %s is in use", loc)
}
