package lab

// bgplab.go: the BGP lab (`seg6x-lab up --bgp`, topology in bgptopology.go): building it (the PEs'
// configs, the route reflector, then the PEs' daemons, whose speakers connect to it), and reading what
// each PE learned: its routes of origin bgp (`seg6x show routes --json`) against what the other PEs
// advertise (their sites' prefixes with their tenants' service SIDs, `seg6x show tenants --json`).

import (
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/model"
	"google.golang.org/protobuf/encoding/protojson"
)

// NewBGP returns a BGP lab whose namespaces start with prefix and whose route reflector is rrKind
// ("frr" or "gobgpd"; any value does for Down), without route target constraint.
func NewBGP(prefix, bin, tool, rrKind string, log io.Writer) *Lab {
	l := New(prefix, bin, tool, log)
	l.topo = bgpTopology(BGPOptions{RR: rrKind})
	return l
}

// NewBGPWith returns the BGP lab of o whose namespaces start with prefix; it refuses a combination the
// lab cannot build (route target constraint with FRR).
func NewBGPWith(prefix, bin, tool string, o BGPOptions, log io.Writer) (*Lab, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	l := New(prefix, bin, tool, log)
	l.topo = bgpTopology(o)
	return l, nil
}

// RTC reports whether the lab's sessions use route target constraint (BGPOptions.RTC).
func (l *Lab) RTC() bool { return l.topo.rtc }

// RR is the route reflector this process started (nil before Up or in another process).
func (l *Lab) RR() *RR { return l.rr }

// SetTenantC makes pe serve tenant C (on) or not (in the lab with route target constraint): its
// whole config, with or without C, applied with `seg6x apply -f` to its running daemon. Joining, pe
// sends a membership route for 65000:300 and advertises 198.19.<n>.0/24; leaving, it withdraws both.
func (l *Lab) SetTenantC(pe string, on bool) error {
	n := slices.Index(l.topo.routers, pe) + 1
	if !l.topo.rtc || n == 0 {
		return fmt.Errorf("SetTenantC %s: only for a PE of the BGP lab with route target constraint", pe)
	}
	l.topo.cPEs = slices.DeleteFunc(l.topo.cPEs, func(p string) bool { return p == pe })
	if on {
		l.topo.cPEs = append(l.topo.cPEs, pe)
	}
	f := filepath.Join(l.Dir, pe+".yaml")
	if err := os.WriteFile(f, []byte(l.topo.bgpPEConfig(n)), 0o600); err != nil {
		return err
	}
	l.logf("lab %s: %s %s tenant C: seg6x apply -f %s", l.Prefix, pe, map[bool]string{true: "joins", false: "leaves"}[on], f)
	_, err := l.Seg6x(pe, "apply", "-f", f, "--prune") // leaving removes tenant C: meant
	return err
}

// AdvertiseInA makes pe advertise prefixes in tenant A besides its own (another site's, as a wrong
// or hostile PE would): its whole config applied with `seg6x apply -f` to its running daemon. None:
// its own prefixes only, again.
func (l *Lab) AdvertiseInA(pe string, prefixes ...string) error {
	n := slices.Index(l.topo.routers, pe) + 1
	if n == 0 || l.topo.rrKind == "" {
		return fmt.Errorf("AdvertiseInA %s: only for a PE of the BGP lab", pe)
	}
	if l.topo.extraA == nil {
		l.topo.extraA = map[string][]string{}
	}
	l.topo.extraA[pe] = prefixes
	f := filepath.Join(l.Dir, pe+".yaml")
	if err := os.WriteFile(f, []byte(l.topo.bgpPEConfig(n)), 0o600); err != nil {
		return err
	}
	l.logf("lab %s: %s advertises %v in tenant A besides its own: seg6x apply -f %s", l.Prefix, pe, prefixes, f)
	_, err := l.Seg6x(pe, "apply", "-f", f)
	return err
}

// configureBGP applies each PE's config, lets p forward what the PEs redirect into its ports, and
// starts the route reflector (before the PEs' daemons, so their first connection finds it).
func (l *Lab) configureBGP() error {
	for n, pe := range l.topo.routers {
		f := filepath.Join(l.Dir, pe+".yaml")
		if err := os.WriteFile(f, []byte(l.topo.bgpPEConfig(n+1)), 0o600); err != nil {
			return err
		}
		l.logf("lab %s: %s configured with seg6x apply -f %s", l.Prefix, pe, f)
		if _, err := l.Seg6x(pe, "apply", "-f", f); err != nil {
			return err
		}
	}
	// p runs no XDP program: frames the PEs redirect into its veths need GRO (NAPI) there.
	for _, pe := range l.topo.routers {
		if _, err := l.Exec("p", "ethtool", "-K", pe, "gro", "on"); err != nil {
			return err
		}
	}
	var clients []string
	for n := range l.topo.routers {
		clients = append(clients, BGPPEAddr(n+1))
	}
	l.logf("lab %s: route reflector %s in %s at %s", l.Prefix, l.topo.rrKind, l.NS("rr"), BGPRRAddr)
	rr, err := StartRR(RRConfig{Kind: l.topo.rrKind, NS: l.NS("rr"), Dir: l.NodeDir("rr"), ASN: BGPASN, RouterID: BGPRRID,
		Listen: BGPRRAddr, Clients: clients})
	if err != nil {
		return err
	}
	l.rr = rr
	return nil
}

func subnet(addr string) string   { return netip.MustParsePrefix(addr).Masked().String() }
func hostAddr(addr string) string { return netip.MustParsePrefix(addr).Addr().String() }

// BGPRoutes are a PE's routes of origin bgp: tenant -> prefix -> segment list (comma-separated).
type BGPRoutes map[string]map[string]string

func (r BGPRoutes) add(tenant, prefix, segs string) {
	if r[tenant] == nil {
		r[tenant] = map[string]string{}
	}
	r[tenant][prefix] = segs
}

// String lists the routes sorted, "tenant prefix -> segs" each.
func (r BGPRoutes) String() string {
	var out []string
	for t, ps := range r {
		for p, s := range ps {
			out = append(out, t+" "+p+" -> "+s)
		}
	}
	slices.Sort(out)
	return "[" + strings.Join(out, "; ") + "]"
}

// Learned reads a PE's routes of origin bgp.
func (l *Lab) Learned(pe string) (BGPRoutes, error) {
	var routes []model.Route
	if err := l.seg6xJSON(pe, &routes, "show", "routes"); err != nil {
		return nil, err
	}
	out := BGPRoutes{}
	for _, r := range routes {
		if r.Origin != model.OriginBGP {
			continue
		}
		var segs []string
		for _, s := range r.Segs {
			segs = append(segs, s.String())
		}
		out.add(r.Tenant, r.Prefix.String(), strings.Join(segs, ","))
	}
	return out, nil
}

// ServiceSIDs reads a PE's tenants' service SIDs (tenant -> SID).
func (l *Lab) ServiceSIDs(pe string) (map[string]string, error) {
	var ts []model.Tenant
	if err := l.seg6xJSON(pe, &ts, "show", "tenants"); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, t := range ts {
		if t.VPN != nil && t.VPN.ServiceSID.IsValid() {
			out[t.Name] = t.VPN.ServiceSID.String()
		}
	}
	return out, nil
}

// BGPStatus is a PE speaker's report (`seg6x bgp show routes --json`).
func (l *Lab) BGPStatus(pe string) (*pb.BgpReply, error) {
	out, err := l.Seg6x(pe, "bgp", "show", "routes", "--json")
	if err != nil {
		return nil, err
	}
	var r pb.BgpReply
	if err := protojson.Unmarshal([]byte(out), &r); err != nil {
		return nil, fmt.Errorf("%s: bgp show routes --json: %w", pe, err)
	}
	return &r, nil
}

func (l *Lab) seg6xJSON(node string, v any, args ...string) error {
	out, err := l.Seg6x(node, append(args, "--json")...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		return fmt.Errorf("%s: seg6x %s --json: %w", node, strings.Join(args, " "), err)
	}
	return nil
}

// Advertised is what pe's sites advertise, as a PE that learned them holds it: each of its hosts'
// subnets in the host's tenant, with pe's service SID of that tenant as the segment (sids: tenant ->
// SID, from ServiceSIDs); with route target constraint also tenant C's prefix if pe serves C.
func (l *Lab) Advertised(pe string, sids map[string]string) BGPRoutes {
	out := BGPRoutes{}
	if l.topo.servesC(pe) {
		out.add("C", BGPTenantCPrefix(slices.Index(BGPPEs, pe)+1), sids["C"])
	}
	for _, h := range l.topo.hosts {
		if h.PE != pe {
			continue
		}
		for _, a := range []string{h.Addr, h.Addr6} {
			if a != "" {
				out.add(h.Tenant, subnet(a), sids[h.Tenant])
			}
		}
	}
	return out
}

// WantLearned is what each PE of up must hold: exactly what the other PEs of up advertise into the
// tenants it serves.
func (l *Lab) WantLearned(up []string, sids map[string]map[string]string) map[string]BGPRoutes {
	want := map[string]BGPRoutes{}
	for _, pe := range up {
		want[pe] = BGPRoutes{}
		for _, o := range up {
			if o == pe {
				continue
			}
			for t, ps := range l.Advertised(o, sids[o]) {
				if t == "C" && !l.topo.servesC(pe) {
					continue
				}
				for p, s := range ps {
					want[pe].add(t, p, s)
				}
			}
		}
	}
	return want
}

// WaitBGP waits up to timeout until every PE of up holds exactly the routes the other PEs of up
// advertise with their service SIDs (PEs not in up are not asked: their daemons may be stopped). It
// returns how long that took; its error names every route missing, wrong or extra at the last look,
// and each PE's BGP sessions.
func (l *Lab) WaitBGP(up []string, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	sids := map[string]map[string]string{}
	for _, pe := range up {
		s, err := l.ServiceSIDs(pe)
		if err != nil {
			return 0, err
		}
		sids[pe] = s
	}
	want := l.WantLearned(up, sids)
	for {
		var diffs []string
		for _, pe := range up {
			got, err := l.Learned(pe)
			if err != nil {
				diffs = append(diffs, err.Error())
				continue
			}
			diffs = append(diffs, diffRoutes(pe, got, want[pe])...)
		}
		if len(diffs) == 0 {
			return time.Since(start), nil
		}
		if time.Since(start) > timeout {
			for _, pe := range up {
				diffs = append(diffs, l.sessionLine(pe))
			}
			return time.Since(start), fmt.Errorf("BGP: not converged after %s:\n  %s", timeout, strings.Join(diffs, "\n  "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// diffRoutes lists how got differs from want, one line per route.
func diffRoutes(pe string, got, want BGPRoutes) []string {
	var out []string
	for t, ps := range want {
		for p, s := range ps {
			if g, ok := got[t][p]; !ok {
				out = append(out, fmt.Sprintf("%s: tenant %s %s missing (want segment %s)", pe, t, p, s))
			} else if g != s {
				out = append(out, fmt.Sprintf("%s: tenant %s %s has segment %s, want %s", pe, t, p, g, s))
			}
		}
	}
	for t, ps := range got {
		for p, s := range ps {
			if _, ok := want[t][p]; !ok {
				out = append(out, fmt.Sprintf("%s: tenant %s %s -> %s should not be there", pe, t, p, s))
			}
		}
	}
	slices.Sort(out)
	return out
}

// sessionLine is a PE's BGP sessions and last error in one line.
func (l *Lab) sessionLine(pe string) string {
	r, err := l.BGPStatus(pe)
	if err != nil {
		return fmt.Sprintf("%s: bgp show: %v", pe, err)
	}
	var s []string
	for _, n := range r.Neighbors {
		s = append(s, fmt.Sprintf("%s %s (received %d, accepted %d, advertised %d)", n.Address, n.State, n.Received, n.Accepted, n.Advertised))
	}
	line := fmt.Sprintf("%s: BGP running %v, sessions: %s", pe, r.Running, strings.Join(s, ", "))
	if r.LastError != "" {
		line += "; last error: " + r.LastError
	}
	return line + "; log " + l.DaemonLog(pe)
}
