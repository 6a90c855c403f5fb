package api

// bgp.go: the Bgp RPC (the daemon's BGP speaker reports its sessions and routes), and the bgp and
// tenant vpn sections between the API's messages and the state package.

import (
	"context"
	"fmt"
	"net/netip"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/model"
)

// BGPReporter produces the BGP speaker's report (routes: with the learned and advertised routes).
type BGPReporter func(routes bool) *pb.BgpReply

// SetBGP attaches the daemon's BGP speaker.
func (s *Server) SetBGP(report BGPReporter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bgp = report
}

// BGPRouteCounter counts the speaker's learned routes: held, installed into tenants, refused (metrics).
type BGPRouteCounter func() (learned, installed, refused uint64)

// SetBGPRoutes attaches the count of the BGP speaker's learned routes.
func (s *Server) SetBGPRoutes(count BGPRouteCounter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes = count
}

func (s *Server) Bgp(ctx context.Context, req *pb.BgpRequest) (*pb.BgpReply, error) {
	s.mu.Lock()
	report := s.bgp
	s.mu.Unlock()
	if report == nil {
		return &pb.BgpReply{}, nil
	}
	return report(req.GetRoutes()), nil
}

func (p *parser) u8(field string, v uint32) uint8 {
	if v > 255 {
		p.fail(field, "%d is more than 255", v)
	}
	return uint8(v)
}

func vpnFromPB(p *parser, v *pb.TenantVpn) *model.VPN {
	if v == nil {
		return nil
	}
	out := &model.VPN{RD: v.GetRd(), ImportRT: v.GetImportRt(), ExportRT: v.GetExportRt(), Behavior: v.GetBehavior(),
		AdvertiseKernel: v.GetAdvertiseKernel(), Encap: v.GetEncap(), ImportMoreSpecific: v.GetImportMoreSpecific()}
	out.Locator = p.prefix("vpn.locator", v.GetLocator(), true)
	out.SID = p.addr("vpn.sid", v.GetSid(), true)
	out.Advertise = prefixes(p, "vpn.advertise", v.GetAdvertise())
	return out
}

func vpnToPB(v *model.VPN) *pb.TenantVpn {
	if v == nil {
		return nil
	}
	out := &pb.TenantVpn{Rd: v.RD, ImportRt: v.ImportRT, ExportRt: v.ExportRT, Behavior: v.Behavior,
		AdvertiseKernel: v.AdvertiseKernel, Encap: v.Encap, ImportMoreSpecific: v.ImportMoreSpecific, Locator: prefixString(v.Locator), Sid: addrString(v.SID),
		ServiceSid: addrString(v.ServiceSID)}
	for _, a := range v.Advertise {
		out.Advertise = append(out.Advertise, a.String())
	}
	return out
}

func bgpFromPB(b *pb.Bgp) (*model.BGP, error) {
	if b == nil {
		return nil, nil
	}
	p := &parser{obj: "bgp"}
	out := &model.BGP{ASN: b.GetAsn(), ListenPort: b.GetListenPort(), Transposition: b.GetTransposition(), SIDsInDomain: b.GetSidsInDomain(),
		GracefulRestart: model.GracefulRestart{Enabled: b.GetGracefulRestart().GetEnabled(),
			RestartTime: p.u16("graceful_restart.restart_time", b.GetGracefulRestart().GetRestartTime(), 65535)}}
	out.RouterID = p.addr("router_id", b.GetRouterId(), true)
	out.NextHop = p.addr("next_hop", b.GetNextHop(), true)
	out.Locator = p.prefix("locator", b.GetLocator(), true)
	out.BlockBits = p.u8("block_bits", b.GetBlockBits())
	out.FunctionBits = p.u8("function_bits", b.GetFunctionBits())
	for i, n := range b.GetNeighbors() {
		f := fmt.Sprintf("neighbors[%d].", i)
		out.Neighbors = append(out.Neighbors, model.Neighbor{Address: p.addr(f+"address", n.GetAddress(), false),
			ASN: n.GetAsn(), Password: n.GetPassword(), LocalAddress: p.addr(f+"local_address", n.GetLocalAddress(), true),
			Families: n.GetFamilies(), Description: n.GetDescription(), Port: p.u16(f+"port", n.GetPort(), 65535)})
	}
	return out, p.err()
}

func bgpToPB(b *model.BGP) *pb.Bgp {
	if b == nil {
		return nil
	}
	out := &pb.Bgp{Asn: b.ASN, RouterId: addrString(b.RouterID), ListenPort: b.ListenPort, NextHop: addrString(b.NextHop),
		Locator: prefixString(b.Locator), BlockBits: uint32(b.BlockBits), FunctionBits: uint32(b.FunctionBits),
		Transposition: b.Transposition, SidsInDomain: b.SIDsInDomain,
		GracefulRestart: &pb.BgpGracefulRestart{Enabled: b.GracefulRestart.Enabled,
			RestartTime: uint32(b.GracefulRestart.RestartTime)}}
	for _, n := range b.Neighbors {
		out.Neighbors = append(out.Neighbors, &pb.BgpNeighborConfig{Address: addrString(n.Address), Asn: n.ASN,
			Password: n.Password, LocalAddress: addrString(n.LocalAddress), Families: n.Families, Description: n.Description,
			Port: uint32(n.Port)})
	}
	return out
}

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func prefixString(p netip.Prefix) string {
	if !p.IsValid() {
		return ""
	}
	return p.String()
}
