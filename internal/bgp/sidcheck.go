package bgp

// sidcheck.go: whether a learned route's service SID can be used as a tunnel destination. A peer
// (wrong or hostile) may send any 128 bits: link-local, multicast, loopback, unspecified or
// IPv4-mapped SIDs cannot leave the node as a destination; a SID inside one of the node's own
// locators, local SIDs or addresses, or one the FIB delivers to the node itself, would loop back
// into the node. Optionally (bgp.sids_in_domain) only SIDs inside the SR domain's locators are used.

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

// nodeView is what the SID checks know of the node, read once per import round.
type nodeView struct {
	own      []ownPrefix    // the node's locators and local SIDs
	domain   []netip.Prefix // the SR domain's locators (checked only with bgp.sids_in_domain)
	inDomain bool
	isLocal  func(netip.Addr) bool // the FIB delivers the address to this node (nil: not asked)
	seen     map[netip.Addr]string // answers of this round
}

// ownPrefix is a prefix of the node's SID space, with what it is.
type ownPrefix struct {
	p    netip.Prefix
	what string // "bgp.locator", "tenant blue's vpn.locator", "local SID fc00:1::/48"
}

// sidProblem says why sid cannot be a learned route's service SID ("" if it can).
func (n *nodeView) sidProblem(sid netip.Addr) string {
	if why, ok := n.seen[sid]; ok {
		return why
	}
	why := n.check(sid)
	if n.seen == nil {
		n.seen = map[netip.Addr]string{}
	}
	n.seen[sid] = why
	return why
}

// unusableSID says why sid can be no node's service SID, whatever the node ("" if it can be one).
func unusableSID(sid netip.Addr) string {
	bad := func(what string) string { return fmt.Sprintf("SID %s is %s: not a tunnel destination", sid, what) }
	switch {
	case !sid.IsValid() || sid.IsUnspecified():
		return "SID is unspecified (::): not a tunnel destination"
	case !sid.Is6():
		return bad("an IPv4 address")
	case sid.Is4In6():
		return bad("an IPv4-mapped address")
	case sid.IsLoopback():
		return bad("the loopback address")
	case sid.IsMulticast():
		return bad("a multicast address")
	case sid.IsLinkLocalUnicast():
		return bad("link-local")
	}
	return ""
}

func (n *nodeView) check(sid netip.Addr) string {
	if why := unusableSID(sid); why != "" {
		return why
	}
	for _, o := range n.own {
		if o.p.Contains(sid) {
			return fmt.Sprintf("SID %s is inside this node's %s (%s): it would come back here", sid, o.what, o.p)
		}
	}
	if n.isLocal != nil && n.isLocal(sid) {
		return fmt.Sprintf("SID %s is this node's own (the FIB delivers it locally): it would come back here", sid)
	}
	if n.inDomain {
		for _, d := range n.domain {
			if d.Contains(sid) {
				return ""
			}
		}
		return fmt.Sprintf("SID %s is outside the domain's locators (bgp.sids_in_domain)", sid)
	}
	return ""
}

// readNode gathers the node's own SID space (bgp.locator, the tenants' vpn.locator and service
// SIDs, the local SIDs) and the domain's locators.
func (im *importer) readNode(cfg *model.BGP, tenants []model.Tenant) nodeView {
	n := nodeView{isLocal: im.s.opts.IsLocal}
	if cfg == nil {
		return n
	}
	if cfg.Locator.IsValid() {
		n.own = append(n.own, ownPrefix{cfg.Locator, "bgp.locator"})
	}
	for _, t := range tenants {
		if v := t.VPN; v != nil {
			if v.Locator.IsValid() {
				n.own = append(n.own, ownPrefix{v.Locator, fmt.Sprintf("tenant %s's vpn.locator", t.Name)})
			}
			if v.ServiceSID.IsValid() {
				n.own = append(n.own, ownPrefix{netip.PrefixFrom(v.ServiceSID, 128), fmt.Sprintf("tenant %s's service SID", t.Name)})
			}
		}
	}
	im.s.ctl.Read(func(st *state.Store) {
		for _, sd := range st.SIDs() {
			n.own = append(n.own, ownPrefix{sd.Prefix(), "local SID " + sd.Name()})
		}
		n.domain = st.Domain().Locators
	})
	n.inDomain = cfg.SIDsInDomain
	return n
}

// same: n and o check SIDs alike (the answers of the FIB aside).
func (n *nodeView) same(o *nodeView) bool {
	return slices.Equal(n.own, o.own) && slices.Equal(n.domain, o.domain) && n.inDomain == o.inDomain
}
