package bgp

// report.go: what `seg6x bgp show` prints, through the API's Bgp call: the sessions (GoBGP's view of
// each neighbor, with what the speaker adds: flaps, the last error, the families not sent and why,
// the routes refused) and the routes learned (with the tenant each went into, or why none) and
// advertised; and the count of refused routes by reason.

import (
	"context"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	api "github.com/osrg/gobgp/v4/api"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
)

var familyNames = map[api.Family_Afi]map[api.Family_Safi]string{
	api.Family_AFI_IP:  {api.Family_SAFI_MPLS_VPN: "vpnv4", api.Family_SAFI_ROUTE_TARGET_CONSTRAINTS: "rtc"},
	api.Family_AFI_IP6: {api.Family_SAFI_MPLS_VPN: "vpnv6"},
}

// Report is the speaker's state for the API (routes: with the learned and advertised routes).
func (s *Speaker) Report(routes bool) *pb.BgpReply {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	out := &pb.BgpReply{}
	s.mu.Lock()
	out.Commits, out.FailedCommits, out.LastError = s.stats.Commits, s.stats.FailedCommits, s.stats.LastError
	s.mu.Unlock()
	out.RefusedRoutes = s.refusedTotals()
	for _, rs := range s.imp.installed {
		out.Imported += uint64(len(rs))
	}
	if s.srv == nil {
		return out
	}
	out.Running, out.Asn, out.RouterId = true, s.global.ASN, s.global.RouterID.String()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.ListPeer(ctx, &api.ListPeerRequest{EnableAdvertised: true}, func(p *api.Peer) {
		out.Neighbors = append(out.Neighbors, neighborReport(p))
	})
	slices.SortFunc(out.Neighbors, func(a, b *pb.BgpNeighbor) int { return strings.Compare(a.Address, b.Address) })
	s.addSessions(out.Neighbors)
	if !routes {
		return out
	}
	for _, lp := range s.imp.learnedPaths() {
		r := lp.route
		br := &pb.BgpRoute{Rd: r.RD, Prefix: r.Prefix.String(), Rts: r.RTs, NextHop: addrString(r.NextHop), Sid: addrString(r.SID),
			Behavior: r.Behavior, Peer: lp.peer.String(), Stale: lp.stale, Reason: lp.err}
		br.Tenant, br.Reason = s.imp.usedBy(lp)
		out.Learned = append(out.Learned, br)
	}
	for _, e := range exportList(s.exports) {
		r := e.route
		out.Advertised = append(out.Advertised, &pb.BgpRoute{Rd: r.RD, Prefix: r.Prefix.String(), Rts: r.RTs,
			NextHop: addrString(r.NextHop), Sid: r.SID.String(), Behavior: r.Behavior, Tenant: e.tenant})
	}
	return out
}

// addSessions adds to GoBGP's view of each neighbor what the speaker keeps of its sessions, and how
// many of the routes learned from it went into no tenant (s.syncMu held).
func (s *Speaker) addSessions(ns []*pb.BgpNeighbor) {
	refused := map[netip.Addr]uint64{}
	s.imp.eachLearned(func(lp learnedPath) {
		if !s.imp.inTenant(lp) {
			refused[lp.peer]++
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range ns {
		a, err := netip.ParseAddr(n.Address)
		if err != nil {
			continue
		}
		n.Refused = refused[a]
		ss := s.sessions[a]
		if ss == nil {
			continue
		}
		n.Flaps, n.LastError = ss.flaps, ss.lastErr
		if !ss.lastErrAt.IsZero() {
			n.LastErrorUnixMs = ss.lastErrAt.UnixMilli()
		}
		if len(ss.notSent) > 0 {
			n.NotSent = maps.Clone(ss.notSent)
		}
	}
}

// usedBy names the tenants a learned path went into, or why it went into none.
func (im *importer) usedBy(lp learnedPath) (tenant, reason string) {
	if lp.err != "" {
		return "", lp.err
	}
	var in, why []string
	for name, rs := range im.installed {
		if installedFrom(rs, lp) {
			in = append(in, name)
		}
	}
	for name, m := range im.rejected {
		if w, ok := m[lp.route.Prefix]; ok {
			why = append(why, name+": "+w)
		}
	}
	slices.Sort(in)
	slices.Sort(why)
	switch {
	case len(in) > 0 || len(why) > 0:
		return strings.Join(in, ","), strings.Join(why, "; ")
	default:
		return "", im.whyUnused(lp) // notes.go
	}
}

// installedFrom: a tenant's routes rs hold the one learned path lp gives.
func installedFrom(rs map[netip.Prefix]installedRoute, lp learnedPath) bool {
	r, ok := rs[lp.route.Prefix]
	return ok && len(r.Segs) == 1 && r.Segs[0] == lp.route.SID
}

// inTenant: learned path lp went into some tenant (cheaper than usedBy: no reasons).
func (im *importer) inTenant(lp learnedPath) bool {
	if lp.err != "" {
		return false
	}
	for _, rs := range im.installed {
		if installedFrom(rs, lp) {
			return true
		}
	}
	return false
}

func neighborReport(p *api.Peer) *pb.BgpNeighbor {
	n := &pb.BgpNeighbor{Address: p.GetConf().GetNeighborAddress(), Asn: p.GetConf().GetPeerAsn(),
		Description: p.GetConf().GetDescription(),
		State:       strings.ToLower(strings.TrimPrefix(p.GetState().GetSessionState().String(), "SESSION_STATE_"))}
	if p.GetState().GetSessionState() == api.PeerState_SESSION_STATE_ESTABLISHED {
		if up := p.GetTimers().GetState().GetUptime(); up != nil {
			n.EstablishedUnixMs = up.AsTime().UnixMilli()
		}
	}
	// Negotiated: configured here and offered by the peer (its multiprotocol capabilities).
	remote := map[string]bool{}
	peerGR := false
	for _, c := range p.GetState().GetRemoteCap() {
		if mp := c.GetMultiProtocol(); mp != nil {
			remote[familyNames[mp.GetFamily().GetAfi()][mp.GetFamily().GetSafi()]] = true
		}
		peerGR = peerGR || c.GetGracefulRestart() != nil
	}
	for _, as := range p.GetAfiSafis() {
		st := as.GetState()
		f := st.GetFamily()
		name := familyNames[f.GetAfi()][f.GetSafi()]
		if name == "" || !st.GetEnabled() || !remote[name] {
			continue
		}
		n.Families = append(n.Families, name)
		if name == "rtc" {
			n.Rtc = true
			continue
		}
		n.Received += st.GetReceived()
		n.Accepted += st.GetAccepted()
		n.Advertised += st.GetAdvertised()
	}
	n.GracefulRestart = p.GetGracefulRestart().GetEnabled() && peerGR
	n.PeerRestarting = p.GetGracefulRestart().GetPeerRestarting()
	return n
}

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}
