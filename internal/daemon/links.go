package daemon

// links.go: follows the interfaces the instance uses. When an attached interface (or a tenant
// port's device) is deleted and created again, or renumbered, its ifindex changes: the daemon
// re-applies the objects that name it, which re-resolves the ifindex and re-attaches the program.
// When an attached interface's MTU changes, whether its frames may span buffers (rx_frags) follows.

import (
	"context"
	"net"

	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// watchLinks re-applies interfaces and tenants whose devices changed ifindex, and refreshes the
// attached interfaces' rx_frags entries, until ctx ends.
func watchLinks(ctx context.Context, ctl *core.Controller, dir string, logf func(string, ...any)) error {
	sub, err := nl.Subscribe(unix.NETLINK_ROUTE, unix.RTNLGRP_LINK)
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); sub.Close() }()
	go func() {
		for {
			if _, _, err := sub.Receive(); err != nil && err != unix.ENOBUFS {
				return
			}
			ctl.Do(func(s *core.Session) {
				relink(s, logf)
				refreshRxFrags(s, dir, logf)
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
			ops = append(ops, state.Op{Kind: state.OpReplace, Interface: &it})
		}
	}
	for _, t := range st.Tenants() {
		for _, p := range t.Ports {
			if idx := now(p.Dev); idx != 0 && idx != p.Ifindex {
				t := t
				ops = append(ops, state.Op{Kind: state.OpReplace, Origin: t.Origin, Tenant: &t})
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

// refreshRxFrags makes the rx_frags entries of the attached interfaces follow their MTUs.
func refreshRxFrags(s *core.Session, dir string, logf func(string, ...any)) {
	changed, err := dataplane.RefreshRxFrags(dir, s.Store.Interfaces())
	if err != nil {
		logf("interfaces changed, updating which of them take multi-buffer frames failed: %v", err)
	}
	for _, c := range changed {
		if c.On {
			logf("%s: MTU %d: frames may span buffers, the fast path reads each frame's whole length", c.Name, c.MTU)
		} else {
			logf("%s: MTU %d: every frame fits one buffer", c.Name, c.MTU)
		}
	}
}

// commitEachOrigin commits ops, one batch per origin (a front end only changes its own objects).
func commitEachOrigin(s *core.Session, ops []state.Op) (int, error) {
	by := map[state.Origin][]state.Op{}
	var order []state.Origin
	for _, op := range ops {
		if by[op.Origin] == nil {
			order = append(order, op.Origin)
		}
		by[op.Origin] = append(by[op.Origin], op)
	}
	n := 0
	for _, o := range order {
		if _, err := s.Commit(by[o], core.Options{Origin: o}); err != nil {
			return n, err
		}
		n += len(by[o])
	}
	return n, nil
}
