package mirror

// mirror.go: the mirror's loop. Subscribe to route, rule, link and address events first, then
// dump; apply each event to the in-memory copy of the kernel's routes, translate, and commit the
// difference to the kernel-owned seg6x objects (origin kernel) through the core controller, as
// every front end does. A netlink overrun (ENOBUFS) or an interrupted dump starts a full resync.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Mirror follows the kernel's SRv6 configuration.
type Mirror struct {
	ctl  *core.Controller
	logf func(string, ...any)
	kick chan struct{}

	routes map[string]*kernelRoute
	rules  map[int][]netlink.Rule
	vx     *vxlanKernel // links and bridge forwarding entries (vxlan_follow.go)

	// addrs are the node's IPv6 addresses and labels for outer source selection (saddr.go), read again
	// only after an address event or a resync (addrsStale): a flood of route events must not dump
	// them for every batch.
	addrs      *hostAddrs
	addrsStale bool

	mu        sync.Mutex
	status    []RouteStatus
	vxStatus  []VXLANStatus
	fdbStatus []FDBStatus
	notes     []string
	stats     Stats
}

// Stats counts what the mirror did.
type Stats struct {
	Events     uint64    `json:"events"`
	Resyncs    uint64    `json:"resyncs"`
	Commits    uint64    `json:"commits"`
	Failed     uint64    `json:"failed_commits"`
	LastSync   time.Time `json:"last_sync"`
	LastError  string    `json:"last_error,omitempty"`
	LastCommit time.Time `json:"last_commit"`
}

// New makes a mirror that changes the state through ctl, as origin kernel.
func New(ctl *core.Controller, logf func(string, ...any)) *Mirror {
	return &Mirror{ctl: ctl, logf: logf, kick: make(chan struct{}, 1), routes: map[string]*kernelRoute{},
		rules: map[int][]netlink.Rule{}, vx: newVXLANKernel()}
}

// Kick makes the mirror re-translate (after the API changed interfaces or its own objects).
func (m *Mirror) Kick() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Status returns the per-route status, notes and counters of the last translation.
func (m *Mirror) Status() ([]RouteStatus, []string, Stats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]RouteStatus(nil), m.status...), append([]string(nil), m.notes...), m.stats
}

// VXLANStatus returns what became of each kernel VXLAN device and of each entry of their forwarding
// tables at the last translation.
func (m *Mirror) VXLANStatus() ([]VXLANStatus, []FDBStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]VXLANStatus(nil), m.vxStatus...), append([]FDBStatus(nil), m.fdbStatus...)
}

type event struct {
	msgs    []syscall.NetlinkMessage
	overrun bool
	err     error
}

// Run follows the kernel until ctx ends.
func (m *Mirror) Run(ctx context.Context) error {
	sub, err := nl.Subscribe(unix.NETLINK_ROUTE, unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_IPV6_ROUTE,
		unix.RTNLGRP_IPV4_RULE, unix.RTNLGRP_IPV6_RULE, unix.RTNLGRP_LINK, unix.RTNLGRP_NEIGH, unix.RTNLGRP_IPV6_IFADDR)
	if err != nil {
		return fmt.Errorf("netlink subscribe: %w", err)
	}
	// A large receive buffer makes overruns rare; they are still handled (resync below).
	// SEG6X_MIRROR_RCVBUF sets another size (tests use a tiny one to force overruns).
	rcvbuf := 32 << 20
	if v, err := strconv.Atoi(os.Getenv("SEG6X_MIRROR_RCVBUF")); err == nil && v > 0 {
		rcvbuf = v
	}
	_ = unix.SetsockoptInt(sub.GetFd(), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvbuf)
	events := make(chan event, 4096)
	send := func(ev event) bool {
		select {
		case events <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	go func() {
		defer close(events)
		for {
			msgs, _, err := sub.Receive()
			switch {
			case errors.Is(err, unix.ENOBUFS):
				if !send(event{overrun: true}) {
					return
				}
			case err != nil:
				if ctx.Err() == nil {
					m.logf("kernel mirror: netlink: %v; the mirror stops following the kernel", err)
				}
				return
			default:
				if !send(event{msgs: msgs}) {
					return
				}
			}
		}
	}()
	go func() { <-ctx.Done(); sub.Close() }()

	// Resyncs are scheduled, never lost: after an overrun the kernel may keep dropping messages
	// without a second error while the socket stays congested, so the resync waits until events
	// have been quiet for a moment (or at most a second) and is then confirmed by a second one
	// (which must find nothing to fix). A resync that fails (a dump interrupted again and again by
	// a flood of changes) or a commit the store refused is retried with a growing back-off. A
	// periodic resync is the backstop for anything else.
	const quiet, maxWait, every = 30 * time.Millisecond, time.Second, 60 * time.Second
	sch := &resyncSchedule{quiet: quiet, maxWait: maxWait}
	timer := time.NewTimer(time.Hour)
	arm := func() {
		if d, ok := sch.next(time.Now()); ok {
			timer.Reset(d)
		}
	}
	// resync runs one and records how it went in the schedule.
	resync := func(why string) {
		n, failed, err := m.resync(why)
		if err != nil {
			m.logf("kernel mirror: %v (retrying)", err)
		}
		sch.done(time.Now(), why, n, failed || err != nil)
		arm()
	}
	resync("start")
	periodic := time.NewTicker(every)
	defer periodic.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-m.kick:
			if _, failed := m.sync(); failed {
				sch.retry(time.Now())
				arm()
			}
		case <-periodic.C:
			resync("periodic")
		case <-timer.C:
			if why, ok := sch.due(time.Now()); ok {
				resync(why)
			} else {
				arm()
			}
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			lost, dirty, fdbOnly := m.handle(ev)
			for more := true; more; { // take whatever else is queued before committing
				select {
				case ev2, ok2 := <-events:
					if !ok2 {
						more = false
						break
					}
					l2, d2, f2 := m.handle(ev2)
					lost, dirty, fdbOnly = lost || l2, dirty || d2, fdbOnly && f2
				default:
					more = false
				}
			}
			now := time.Now()
			sch.event(now, lost)
			if sch.waiting() { // a resync will read everything anyway
				arm()
				continue
			}
			if dirty {
				sync := m.sync
				if fdbOnly { // forwarding entries learned or aged: the routes need no translation
					sync = m.syncVXLAN
				}
				if _, failed := sync(); failed {
					sch.retry(now)
					arm()
				}
			}
		}
	}
}

// handle applies one batch of messages; it reports whether something was lost (a resync is
// needed), whether a sync is, and whether only forwarding entries changed.
func (m *Mirror) handle(ev event) (lost, dirty, fdbOnly bool) {
	if ev.overrun || ev.err != nil {
		return true, true, false
	}
	fdbOnly = true
	m.mu.Lock()
	m.stats.Events += uint64(len(ev.msgs))
	m.mu.Unlock()
	for _, msg := range ev.msgs {
		switch msg.Header.Type {
		case unix.RTM_NEWROUTE, unix.RTM_DELROUTE:
			r, err := parseRoute(msg.Data)
			if err != nil {
				m.logf("kernel mirror: %v (resync)", err)
				return true, true, false
			}
			if r == nil {
				continue
			}
			if msg.Header.Type == unix.RTM_NEWROUTE {
				m.routes[r.key()] = r
			} else {
				delete(m.routes, r.key())
			}
			dirty, fdbOnly = true, false
		case unix.RTM_NEWRULE, unix.RTM_DELRULE:
			if err := m.readRules(); err != nil {
				return true, true, false
			}
			dirty, fdbOnly = true, false
		case unix.RTM_NEWLINK, unix.RTM_DELLINK:
			if err := m.readRules(); err != nil {
				return true, true, false
			}
			if err := m.vx.readLinks(); err != nil {
				m.logf("kernel mirror: %v (resync)", err)
				return true, true, false
			}
			dirty, fdbOnly = true, false
		case unix.RTM_NEWADDR, unix.RTM_DELADDR:
			// An IPv6 address added, removed or deprecated: an outer source may change (saddr.go).
			// Adding or removing one also changes routes; deprecating one does not.
			m.addrsStale = true
			dirty, fdbOnly = true, false
		case unix.RTM_NEWNEIGH, unix.RTM_DELNEIGH:
			changed, err := m.vx.neigh(msg.Data, msg.Header.Type == unix.RTM_DELNEIGH)
			if err != nil {
				m.logf("kernel mirror: forwarding entry: %v (resync)", err)
				return true, true, false
			}
			dirty = dirty || changed
		}
	}
	return false, dirty, fdbOnly
}

func (m *Mirror) readRules() error {
	rules := map[int][]netlink.Rule{}
	for _, fam := range []int{unix.AF_INET, unix.AF_INET6} {
		rs, err := netlink.RuleListFiltered(fam, nil, 0)
		if err != nil {
			return fmt.Errorf("rule dump: %w", err)
		}
		rules[fam] = rs
	}
	m.rules = rules
	return nil
}

// resync reads everything from the kernel again and makes the data plane match it; it returns the
// number of operations committed and whether any commit was refused.
func (m *Mirror) resync(why string) (int, bool, error) {
	m.addrsStale = true
	routes, err := dumpRoutes()
	if err == nil {
		err = m.readRules()
	}
	if err == nil {
		err = m.vx.readLinks()
	}
	if err != nil {
		m.setErr(err)
		return 0, false, err
	}
	m.routes = routes
	// The forwarding entries (VXLAN) are read apart: failing to read them must not stop the seg6
	// routes from being followed; the resync is retried (with the entries it had) until it works.
	fdbErr := m.vx.readFDB()
	m.mu.Lock()
	m.stats.Resyncs++
	m.mu.Unlock()
	n, failed := m.sync()
	if fdbErr != nil {
		m.setErr(fdbErr)
		return n, true, fdbErr
	}
	if why != "periodic" && why != "confirm" || n > 0 { // a check that finds nothing to fix stays quiet
		m.logf("kernel mirror: resync (%s): %d kernel routes, %d changes", why, len(routes), n)
	}
	return n, failed, nil
}

func (m *Mirror) setErr(err error) {
	m.mu.Lock()
	m.stats.LastError = time.Now().UTC().Format(time.RFC3339) + " " + err.Error()
	m.mu.Unlock()
}

// sync translates the kernel's routes and commits the difference; it returns the number of
// operations it committed and whether the store refused any.
func (m *Mirror) sync() (int, bool) {
	tunsrc := tunnelSource()
	var addrs *hostAddrs
	if !tunsrc.IsValid() && encapsulates(m.routes) {
		if m.addrs == nil || m.addrsStale || m.addrs.err != nil {
			m.addrs, m.addrsStale = readHostAddrs(), false
			if m.addrs.err != nil {
				m.setErr(m.addrs.err)
			}
		}
		addrs = m.addrs
	}
	var d *desired
	var failed []string
	var nops int
	m.ctl.Do(func(s *core.Session) {
		st := s.Store
		in := &input{routes: m.routes, rules: m.rules, ifaces: st.Interfaces(), userPorts: map[model.Port]string{},
			userSIDs: map[netip.Addr]bool{}, tunsrc: tunsrc, addrs: addrs}
		cur := currentKernel(st)
		for _, t := range st.Tenants() {
			if t.Origin != model.OriginKernel {
				for _, p := range t.Ports {
					in.userPorts[model.Port{Dev: p.Dev, VLAN: p.VLAN}] = t.Name
				}
			}
		}
		for _, sd := range st.SIDs() {
			if sd.Origin != model.OriginKernel {
				in.userSIDs[sd.SID] = true
			}
		}
		d = translate(in)
		d.vxlans, d.vxStatus, d.fdbStatus = vxlanObjects(m.vx.links, m.vx.fdb)
		ops := diffOps(cur, d)
		nops = len(ops)
		failed = m.commit(s, ops)
		stored(s.Store, d)
	})
	m.mu.Lock()
	m.status, m.notes = d.status, append(d.notes, failed...)
	m.vxStatus, m.fdbStatus = d.vxStatus, d.fdbStatus
	m.stats.LastSync = time.Now()
	m.mu.Unlock()
	return nops, len(failed) > 0
}

// encapsulates reports whether routes hold a seg6 encap route or a seg6local End.B6.Encaps, whose
// outer source may come from the node's addresses.
func encapsulates(routes map[string]*kernelRoute) bool {
	for _, r := range routes {
		if r.Local != nil && r.Local.Action == 10 || r.Encap == encapSeg6 {
			return true
		}
	}
	return false
}

// syncVXLAN is sync for a change of forwarding entries only: the VXLAN objects, not the routes.
func (m *Mirror) syncVXLAN() (int, bool) {
	var failed []string
	var nops int
	want := &desired{}
	m.ctl.Do(func(s *core.Session) {
		cur := &desired{vxlans: kernelVXLANs(s.Store)}
		want.vxlans, want.vxStatus, want.fdbStatus = vxlanObjects(m.vx.links, m.vx.fdb)
		ops := diffOps(cur, want)
		nops = len(ops)
		failed = m.commit(s, ops)
		stored(s.Store, want)
	})
	m.mu.Lock()
	m.vxStatus, m.fdbStatus = want.vxStatus, want.fdbStatus
	m.notes = append(slices.DeleteFunc(m.notes, func(n string) bool { return strings.HasPrefix(n, "vxlan ") }), failed...)
	m.stats.LastSync = time.Now()
	m.mu.Unlock()
	return nops, len(failed) > 0
}

// commit commits ops as origin kernel: in one step, or, when the store refuses the batch (a
// conflict), one by one; it returns the refusals.
func (m *Mirror) commit(s *core.Session, ops []state.Op) []string {
	if len(ops) == 0 {
		return nil
	}
	kernel := core.Options{Origin: model.OriginKernel}
	if _, err := s.Commit(ops, kernel); err == nil {
		m.counted(nil)
		return nil
	}
	var failed []string
	for _, op := range ops {
		if _, err := s.Commit([]state.Op{op}, kernel); err != nil {
			failed = append(failed, err.Error())
			m.counted(err)
		} else {
			m.counted(nil)
		}
	}
	return failed
}

func (m *Mirror) counted(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.stats.Failed++
		m.stats.LastError = time.Now().UTC().Format(time.RFC3339) + " " + err.Error()
		return
	}
	m.stats.Commits++
	m.stats.LastCommit = time.Now()
}

// currentKernel is what the data plane holds of the mirror's objects now.
func currentKernel(st *state.Store) *desired {
	cur := &desired{tenants: map[string]model.Tenant{}, routes: map[string]map[netip.Prefix]model.Route{}, sids: map[netip.Addr]model.SID{},
		vxlans: kernelVXLANs(st)}
	for _, t := range st.Tenants() {
		if t.Origin == model.OriginKernel {
			cur.tenants[t.Name] = t
			cur.routes[t.Name] = st.TenantRoutes(t.Name)
		}
	}
	for _, sd := range st.SIDs() {
		if sd.Origin == model.OriginKernel {
			cur.sids[sd.SID] = sd
		}
	}
	return cur
}

// kernelVXLANs is the mirror's VXLAN objects in the store, by device.
func kernelVXLANs(st *state.Store) map[string]model.VXLAN {
	out := map[string]model.VXLAN{}
	for _, v := range st.VXLANs() {
		if v.Origin == model.OriginKernel {
			out[v.Dev] = v
		}
	}
	return out
}

// diffOps turns cur into want: tenants first, then routes (one table swap when many change), SIDs,
// and the removals.
func diffOps(cur, want *desired) []state.Op {
	var ops, dels []state.Op
	k := model.OriginKernel
	// Tenants that go away first: a port moving to another kernel tenant must be free before it is
	// claimed (the data plane switches each port entry in one write either way).
	for name := range cur.tenants {
		if _, ok := want.tenants[name]; !ok {
			ops = append(ops, state.Op{Kind: model.OpReplace, Origin: k, TenantRoutes: &state.TenantRoutes{Tenant: name}},
				state.Op{Kind: model.OpDelete, Origin: k, Tenant: &model.Tenant{Name: name}})
		}
	}
	for name, t := range want.tenants {
		t := t
		if c, ok := cur.tenants[name]; !ok || !samePorts(c.Ports, t.Ports) || c.Table != t.Table || c.KernelFallback != t.KernelFallback {
			ops = append(ops, state.Op{Kind: model.OpReplace, Origin: k, Tenant: &t})
		}
		var rops []state.Op
		have := cur.routes[name]
		for p, r := range want.routes[name] {
			r := r
			if h, ok := have[p]; !ok || !sameRoute(h, r) {
				rops = append(rops, state.Op{Kind: model.OpReplace, Origin: k, Route: &r})
			}
		}
		for p := range have {
			if _, ok := want.routes[name][p]; !ok {
				rops = append(rops, state.Op{Kind: model.OpDelete, Origin: k, Route: &model.Route{Tenant: name, Prefix: p}})
			}
		}
		if len(rops) > 64 {
			all := make([]model.Route, 0, len(want.routes[name]))
			for _, r := range want.routes[name] {
				all = append(all, r)
			}
			rops = []state.Op{{Kind: model.OpReplace, Origin: k, TenantRoutes: &state.TenantRoutes{Tenant: name, Routes: all}}}
		}
		ops = append(ops, rops...)
	}
	for addr, sd := range want.sids {
		sd := sd
		if c, ok := cur.sids[addr]; !ok || !sameSID(c, sd) {
			ops = append(ops, state.Op{Kind: model.OpReplace, Origin: k, SID: &sd})
		}
	}
	for addr := range cur.sids {
		if _, ok := want.sids[addr]; !ok {
			dels = append(dels, state.Op{Kind: model.OpDelete, Origin: k, SID: &model.SID{SID: addr}})
		}
	}
	for _, dev := range slices.Sorted(maps.Keys(want.vxlans)) {
		v := want.vxlans[dev]
		if c, ok := cur.vxlans[dev]; !ok || !model.SameVXLAN(c, v) {
			ops = append(ops, state.Op{Kind: model.OpReplace, Origin: k, VXLAN: &v})
		}
	}
	for _, dev := range slices.Sorted(maps.Keys(cur.vxlans)) {
		if _, ok := want.vxlans[dev]; !ok {
			dels = append(dels, state.Op{Kind: model.OpDelete, Origin: k, VXLAN: &model.VXLAN{Dev: dev}})
		}
	}
	return append(ops, dels...)
}

func samePorts(a, b []model.Port) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Dev != b[i].Dev || a[i].VLAN != b[i].VLAN {
			return false
		}
	}
	return true
}

func sameRoute(have, want model.Route) bool {
	if have.Mode != want.Mode || len(have.Segs) != len(want.Segs) || have.Src != want.Src {
		return false
	}
	for i := range have.Segs {
		if have.Segs[i] != want.Segs[i] {
			return false
		}
	}
	return true
}

func sameSID(a, b model.SID) bool {
	return a.Action == b.Action && a.NH4 == b.NH4 && a.NH6 == b.NH6 && a.Table == b.Table && a.VLAN == b.VLAN && a.Tenant == b.Tenant &&
		a.Prefix() == b.Prefix() && slices.Equal(a.Flavors, b.Flavors) && a.LBLen == b.LBLen && a.NFLen == b.NFLen &&
		slices.Equal(a.Segs, b.Segs) && a.Src == b.Src
}
