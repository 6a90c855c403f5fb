package daemon

// links.go: follows the interfaces the instance uses. When an attached interface (or a tenant
// port's device) is deleted and created again, or renumbered, its ifindex changes: the daemon
// re-applies the objects that name it, which re-resolves the ifindex and re-attaches the program.
// When an attached interface's MTU or driver features change, what the program knows of it for
// multi-buffer frames (dataplane.RefreshMultiBuf) follows.

import (
	"context"
	"net"
	"time"

	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// multiBufEvery is how often the daemon looks at the attached interfaces' drivers besides link
// events: a driver's xdp-features change without one (a veth stops being a redirect target when its
// far end turns GRO off).
const multiBufEvery = 2 * time.Second

// watchLinks re-applies interfaces and tenants whose devices changed ifindex, and refreshes what the
// program knows of the attached interfaces for multi-buffer frames (on link events and every
// multiBufEvery), until ctx ends.
func watchLinks(ctx context.Context, ctl *core.Controller, dir string, logf func(string, ...any)) error {
	sub, err := nl.Subscribe(unix.NETLINK_ROUTE, unix.RTNLGRP_LINK)
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); sub.Close() }()
	go func() {
		tick := time.NewTicker(multiBufEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				ctl.Do(func(s *core.Session) { refreshMultiBuf(s, dir, logf) })
			}
		}
	}()
	go func() {
		for {
			if _, _, err := sub.Receive(); err != nil && err != unix.ENOBUFS {
				return
			}
			ctl.Do(func(s *core.Session) {
				relink(s, logf)
				refreshMultiBuf(s, dir, logf)
			})
		}
	}()
	return nil
}

// relink commits, for every device whose ifindex is no longer the recorded one, the same objects
// again (the commit resolves the ifindex anew and re-attaches the program).
func relink(s *core.Session, logf func(string, ...any)) {
	st := s.Store
	now := func(dev string) int {
		it, err := net.InterfaceByName(dev)
		if err != nil {
			return 0
		}
		return it.Index
	}
	var ops []state.Op
	for _, it := range st.Interfaces() {
		if idx := now(it.Name); idx != 0 && idx != it.Ifindex {
			it := it
			it.Ifindex = 0
			ops = append(ops, state.Op{Kind: model.OpReplace, Interface: &it})
		}
	}
	for _, t := range st.Tenants() {
		for _, p := range t.Ports {
			if idx := now(p.Dev); idx != 0 && idx != p.Ifindex {
				t := t
				ops = append(ops, state.Op{Kind: model.OpReplace, Origin: t.Origin, Tenant: &t})
				break
			}
		}
	}
	if len(ops) == 0 {
		return
	}
	if _, err := commitEachOrigin(s, ops); err != nil {
		logf("interfaces changed, re-applying them failed: %v", err)
		return
	}
	logf("interfaces changed: re-applied %d objects with their new ifindex", len(ops))
}

// refreshMultiBuf makes what the program knows of the attached interfaces for multi-buffer frames
// follow their MTUs and drivers, and logs what changed.
func refreshMultiBuf(s *core.Session, dir string, logf func(string, ...any)) {
	changed, err := dataplane.RefreshMultiBuf(dir, s.Store.Interfaces())
	if err != nil {
		logf("interfaces changed, updating what the fast path knows of their multi-buffer frames failed: %v", err)
	}
	for _, c := range changed {
		rx := "every frame fits one buffer"
		if c.RxFrags != 0 {
			rx = "frames may span buffers, the fast path reads each frame's whole length"
		}
		tx := "its driver sends multi-buffer frames redirected to it"
		if c.TxNoSG {
			tx = "its driver cannot send a multi-buffer frame redirected to it, the daemon sends those"
		}
		logf("%s: MTU %d: %s; %s", c.Name, c.MTU, rx, tx)
	}
}

// commitEachOrigin commits ops, one batch per origin (a front end only changes its own objects).
func commitEachOrigin(s *core.Session, ops []state.Op) (int, error) {
	by := map[model.Origin][]state.Op{}
	var order []model.Origin
	for _, op := range ops {
		if by[op.Origin] == nil {
			order = append(order, op.Origin)
		}
		by[op.Origin] = append(by[op.Origin], op)
	}
	n := 0
	for _, o := range order {
		if _, err := s.Commit(by[o], core.Options{Origin: o, Via: "links"}); err != nil {
			return n, err
		}
		n += len(by[o])
	}
	return n, nil
}
