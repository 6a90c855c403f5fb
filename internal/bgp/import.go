package bgp

// import.go: learned VPN routes become tenants' encap routes. A best path whose route targets meet a
// tenant's vpn.import_rt (and whose family the tenant serves) is installed as the tenant's route to its
// prefix: H.Encaps (or H.Encaps.Red, vpn.encap) with the advertised service SID as the only segment,
// origin bgp, through the controller like every other change. Only prefixes whose paths changed are
// looked at; changes are committed in batches, and a batch that fails is retried route by route, so
// one route that cannot be installed (its prefix is the API's) does not hold up the others.
//
// The routes stay in the state across a daemon restart; after a start, those not learned again are
// removed once every neighbor has sent its end-of-RIB, or after the graceful-restart time (10 s
// without GR). A route learned since the start is removed as soon as it is withdrawn.

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/osrg/gobgp/v4/pkg/apiutil"
	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"

	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

// commitBatch bounds the operations of one commit (the data plane's write time per commit).
const commitBatch = 10000

// startupHold is how long, without graceful restart, routes from before a start wait for their
// neighbors' end-of-RIB.
const startupHold = 10 * time.Second

// learnedPath is a learned path as best, notes.go and the report read it (learnedstore.go keeps it
// in a smaller form). Its RTs are shared: read-only.
type learnedPath struct {
	route VPNRoute
	peer  netip.Addr
	stale bool
	err   string // unreadable: why
}

type importer struct {
	s         *Speaker
	learned   *learnedStore                              // best paths by destination (RD and prefix)
	installed map[string]map[netip.Prefix]installedRoute // tenant -> its routes of origin bgp (pathstore.go)
	rejected  map[string]map[netip.Prefix]string         // tenant -> prefix -> why it could not be installed
	dirty     map[netip.Prefix]bool
	tenantsFP string
	synced    bool // routes from before the start have been confirmed or removed
	// unconfirmed holds the routes found in the state at the start and not yet learned again: only
	// they wait for the end of the startup hold before they go (a route learned since goes at once).
	unconfirmed  map[string]map[netip.Prefix]bool
	local        map[string]localView               // tenant -> its own prefixes (preference.go)
	refused      map[string]map[netip.Prefix]string // tenant -> prefix -> why its learned route is not taken
	node         nodeView                           // what the SID checks know of the node (sidcheck.go)
	vpn          map[string]*model.VPN              // the tenants' vpn: sections of the last round
	shared       interner                           // segment lists (pathstore.go)
	attrs        routeAttrs                         // the installed routes' modes and sources (pathstore.go)
	counted      map[string]string                  // refusals of paths told to the speaker: key -> reason label (notes.go)
	countedLocal map[tenantPrefix]string            // refusals of a tenant's prefix told to the speaker (notes.go)
}

// tenantPrefix names a tenant's route.
type tenantPrefix struct {
	tenant string
	prefix netip.Prefix
}

func newImporter(s *Speaker) *importer {
	return &importer{s: s, learned: newLearnedStore(),
		installed: map[string]map[netip.Prefix]installedRoute{}, rejected: map[string]map[netip.Prefix]string{},
		dirty: map[netip.Prefix]bool{}, local: map[string]localView{}, refused: map[string]map[netip.Prefix]string{},
		counted: map[string]string{}, countedLocal: map[tenantPrefix]string{}}
}

// take records best-path changes.
func (im *importer) take(paths []*apiutil.Path) {
	for _, p := range paths {
		v, ok := p.Nlri.(*gobgp.LabeledVPNIPAddrPrefix)
		if !ok {
			continue // RTC membership and other families
		}
		rd := v.RD.String()
		key := func() string { return rd + " " + v.Prefix.String() } // the destination's
		pfx := v.Prefix.Masked()
		im.dirty[pfx] = true
		local := !p.PeerAddress.IsValid() || p.PeerAddress.IsUnspecified()
		if p.Withdrawal || local {
			im.learned.remove(rd, v.Prefix, key)
			continue
		}
		r, err := FromPath(p)
		if err != nil {
			r.Prefix, r.RD = pfx, fromGoBGP(rd)
			im.learned.putBad(rd, v.Prefix, key(), learnedPath{route: r, peer: p.PeerAddress, stale: p.Stale, err: err.Error()})
			continue
		}
		im.learned.put(rd, &r, p.PeerAddress, p.Stale)
	}
}

// forget drops every learned path (the server stopped): their prefixes are looked at again.
func (im *importer) forget() {
	im.learned.prefixes(func(p netip.Prefix) { im.dirty[p] = true })
	im.learned, im.shared = newLearnedStore(), interner{}
}

// learnedPaths is every learned path, in the order of its key (RD and prefix as GoBGP writes them).
func (im *importer) learnedPaths() []learnedPath {
	type kp struct {
		key string
		lp  learnedPath
	}
	var all []kp
	im.learned.each(func(key string, lp learnedPath) { all = append(all, kp{key, lp}) })
	slices.SortFunc(all, func(a, b kp) int { return strings.Compare(a.key, b.key) })
	out := make([]learnedPath, len(all))
	for i := range all {
		out[i] = all[i].lp
	}
	return out
}

// eachLearned calls f with every learned path, in no order.
func (im *importer) eachLearned(f func(learnedPath)) {
	im.learned.each(func(_ string, lp learnedPath) { f(lp) })
}

// tenantsPrint changes whenever what decides imports changes (a tenant, its table or vpn: section).
func tenantsPrint(cfg *model.BGP, tenants []model.Tenant) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%t;", cfg != nil)
	for _, t := range tenants {
		fmt.Fprintf(&b, "%s/%d", t.Name, t.Table)
		if v := t.VPN; v != nil {
			fmt.Fprintf(&b, "/%v/%s/%s/%s", v.ImportRT, v.Behavior, v.Encap, v.ServiceSID)
		}
		b.WriteByte(';')
	}
	return b.String()
}

// sync installs and removes tenant routes for what was learned since the last call.
func (im *importer) sync(cfg *model.BGP, tenants []model.Tenant, learned []*apiutil.Path) {
	im.take(learned)
	vpn := map[string]*model.VPN{}
	for _, t := range tenants {
		if cfg != nil && t.VPN != nil {
			vpn[t.Name] = t.VPN
		}
	}
	im.vpn = vpn
	all := false
	if fp := tenantsPrint(cfg, tenants); fp != im.tenantsFP {
		im.tenantsFP, all = fp, true
		im.reload(tenants)
	}
	if node := im.readNode(cfg, tenants); !node.same(&im.node) {
		all = true
		im.node = node
	}
	im.node.seen = nil // the FIB may answer differently now
	localChanged := im.readLocal(tenants, vpn)
	if !im.synced && im.startupDone(cfg) {
		im.synced, all, im.unconfirmed = true, true, map[string]map[netip.Prefix]bool{}
	}
	prefixes := im.dirty
	if all {
		prefixes = map[netip.Prefix]bool{}
		im.learned.prefixes(func(p netip.Prefix) { prefixes[p] = true })
		for _, rs := range im.installed {
			for p := range rs {
				prefixes[p] = true
			}
		}
	}
	for p := range localChanged {
		prefixes[p] = true
	}
	im.coveringLocal(prefixes)
	im.dirty = map[netip.Prefix]bool{}
	for p := range prefixes {
		im.learned.of(p, func(key func() string, lp learnedPath) {
			label, note := im.pathRefusal(lp)
			if label != "" || len(im.counted) > 0 { // else countRefusal has nothing to do: no key needed
				k := key()
				countRefusal(im, im.counted, k, func() string { return k }, label, note)
			}
		})
	}
	names := map[string]bool{}
	for n := range vpn {
		names[n] = true
	}
	for n := range im.installed {
		names[n] = true
	}
	var src netip.Addr // the outer source: the node's advertised fabric address (else the kernel's choice)
	if cfg != nil {
		src = cfg.NextHop
	}
	var ops []state.Op
	for p := range prefixes {
		for name := range names {
			if op, ok := im.change(name, vpn[name], p, src); ok {
				ops = append(ops, op)
			}
		}
	}
	for lo := 0; lo < len(ops); lo += commitBatch {
		im.commit(ops[lo:min(lo+commitBatch, len(ops))])
	}
}

// startupDone: every neighbor has sent its end-of-RIB, or the hold time since the start is over.
func (im *importer) startupDone(cfg *model.BGP) bool {
	if cfg == nil {
		return true
	}
	hold := startupHold
	if cfg.GracefulRestart.Enabled {
		hold = time.Duration(cfg.GracefulRestart.RestartTime) * time.Second
	}
	if time.Since(im.s.started) > hold {
		return true
	}
	im.s.mu.Lock()
	defer im.s.mu.Unlock()
	for _, n := range cfg.Neighbors {
		want := 0
		for _, f := range n.Families {
			if f != model.FamilyRTC {
				want++
			}
		}
		if im.s.eor[n.Address] < want {
			return false
		}
	}
	return true
}

// reload reads the routes of origin bgp the tenants hold (after a start, or a tenant change the
// state made on its own: a removed tenant took its routes with it).
func (im *importer) reload(tenants []model.Tenant) {
	first := im.unconfirmed == nil
	if first {
		im.unconfirmed = map[string]map[netip.Prefix]bool{}
	}
	im.installed = map[string]map[netip.Prefix]installedRoute{}
	im.s.ctl.Read(func(st *state.Store) {
		for _, t := range tenants {
			for p, r := range st.TenantRoutes(t.Name) {
				if r.Origin != model.OriginBGP {
					continue
				}
				if im.installed[t.Name] == nil {
					im.installed[t.Name] = map[netip.Prefix]installedRoute{}
				}
				im.installed[t.Name][p] = im.compact(&r)
				if first {
					if im.unconfirmed[t.Name] == nil {
						im.unconfirmed[t.Name] = map[netip.Prefix]bool{}
					}
					im.unconfirmed[t.Name][p] = true
				}
			}
		}
	})
	for name := range im.rejected {
		if !slices.ContainsFunc(tenants, func(t model.Tenant) bool { return t.Name == name }) {
			delete(im.rejected, name)
		}
	}
}

// best is the path tenant (with vpn v) should use to reach prefix p, if any.
func (im *importer) best(v *model.VPN, p netip.Prefix) (VPNRoute, bool) {
	var best learnedPath
	found := false
	im.learned.paths(p, func(lp learnedPath) { // readable ones
		if importable(v, &lp.route) && im.node.sidProblem(lp.route.SID) == "" && (!found || preferred(&lp, &best)) {
			best, found = lp, true
		}
	})
	return best.route, found
}

// preferred: a is used before b among PEs advertising the same prefix (deterministic): fresh before
// stale, then by RD, next hop, SID.
func preferred(a, b *learnedPath) bool {
	if a.stale != b.stale {
		return !a.stale
	}
	if c := strings.Compare(a.route.RD, b.route.RD); c != 0 {
		return c < 0
	}
	if c := a.route.NextHop.Compare(b.route.NextHop); c != 0 {
		return c < 0
	}
	return a.route.SID.Compare(b.route.SID) < 0
}

// importable: route r is for the tenant with vpn v (a route target it imports, a family it serves,
// not its own SID).
func importable(v *model.VPN, r *VPNRoute) bool {
	if (v.Behavior == EndDT4 && !r.Prefix.Addr().Is4()) || (v.Behavior == EndDT6 && r.Prefix.Addr().Is4()) {
		return false
	}
	if r.SID == v.ServiceSID {
		return false
	}
	for _, rt := range r.RTs {
		if slices.Contains(v.ImportRT, rt) {
			return true
		}
	}
	return false
}

// change is the operation that gives tenant name (vpn v, nil: none) the right route to p, if needed:
// the best learned path's, or (for a prefix the tenant holds itself that a learned route covers)
// one that hands p to the kernel.
func (im *importer) change(name string, v *model.VPN, p netip.Prefix, src netip.Addr) (state.Op, bool) {
	ir, had := im.installed[name][p]
	have := im.expand(ir)
	var want model.Route
	ok, note := false, ""
	if v != nil {
		r, learned := im.best(v, p)
		if learned {
			note = im.localNote(name, v, p)
		}
		switch {
		case im.local[name].prefixes[p]:
			if ok = learned || im.coveredByLearned(name, v, p); ok {
				want = model.Route{Tenant: name, Prefix: p, Mode: model.ModePass}
			}
		case learned && note == "":
			want, ok = model.Route{Tenant: name, Prefix: p, Mode: v.Encap, Segs: im.shared.segList(r.SID), Src: src}, true
		}
	}
	label := ""
	if note != "" {
		label = RefusedLocalPrefix
	}
	countRefusal(im, im.countedLocal, tenantPrefix{name, p}, func() string { return name + " " + p.String() }, label, note)
	if note != "" {
		if im.refused[name] == nil {
			im.refused[name] = map[netip.Prefix]string{}
		}
		im.refused[name][p] = note
	} else if m := im.refused[name]; m != nil {
		delete(m, p)
	}
	if ok {
		delete(im.unconfirmed[name], p) // learned again (an unchanged one needs no write)
	}
	switch {
	case ok && (!had || have.Mode != want.Mode || !slices.Equal(have.Segs, want.Segs) || have.Src != want.Src):
		r := want // on the heap only when it is returned
		return state.Op{Kind: model.OpReplace, Origin: model.OriginBGP, Route: &r}, true
	case !ok && had && (im.synced || v == nil || !im.unconfirmed[name][p]):
		return state.Op{Kind: model.OpDelete, Origin: model.OriginBGP, Route: &model.Route{Tenant: name, Prefix: p}}, true
	case !ok && !had:
		if m := im.rejected[name]; m != nil {
			delete(m, p)
		}
	}
	return state.Op{}, false
}

// commit applies ops (route by route if the batch fails) and records the outcome.
func (im *importer) commit(ops []state.Op) {
	_, err := im.s.ctl.Commit(ops, core.Options{Origin: model.OriginBGP})
	im.s.count(err == nil)
	if err == nil {
		for _, op := range ops {
			im.done(op, nil)
		}
		return
	}
	for _, op := range ops {
		_, err := im.s.ctl.Commit([]state.Op{op}, core.Options{Origin: model.OriginBGP})
		im.s.count(err == nil)
		im.done(op, err)
	}
}

func (im *importer) done(op state.Op, err error) {
	r := op.Route
	if err != nil {
		if im.rejected[r.Tenant] == nil {
			im.rejected[r.Tenant] = map[netip.Prefix]string{}
		}
		im.rejected[r.Tenant][r.Prefix] = err.Error()
		im.s.refused(RefusedNotInstallable, fmt.Sprintf("tenant %q prefix %s: %v", r.Tenant, r.Prefix, err))
		im.s.fail("bgp: tenant %q prefix %s: %v", r.Tenant, r.Prefix, err)
		return
	}
	if m := im.rejected[r.Tenant]; m != nil {
		delete(m, r.Prefix)
	}
	if op.Kind == model.OpDelete {
		delete(im.installed[r.Tenant], r.Prefix)
		if len(im.installed[r.Tenant]) == 0 {
			delete(im.installed, r.Tenant)
		}
		return
	}
	if im.installed[r.Tenant] == nil {
		im.installed[r.Tenant] = map[netip.Prefix]installedRoute{}
	}
	im.installed[r.Tenant][r.Prefix] = im.compact(r)
}

func (s *Speaker) count(ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Commits++
	if !ok {
		s.stats.FailedCommits++
	}
}
