package daemon

// nhwatch.go: keeps the next-hop cache honest. Any route, rule, link or neighbor change the kernel
// announces invalidates the data plane's next hops (state.Observer; the BPF one bumps its nh_gen
// map), which makes every cached FIB result stale at once; the cache's time limit
// (nexthop_cache_ms) remains the backstop for changes made while no daemon runs.

import (
	"context"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// watchNextHops calls invalidate on every relevant netlink message until ctx ends.
func watchNextHops(ctx context.Context, invalidate func() error, logf func(string, ...any)) error {
	sub, err := nl.Subscribe(unix.NETLINK_ROUTE, unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_IPV6_ROUTE,
		unix.RTNLGRP_NEIGH, unix.RTNLGRP_IPV4_RULE, unix.RTNLGRP_IPV6_RULE, unix.RTNLGRP_LINK)
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); sub.Close() }()
	// Whatever was cached before the subscription may be stale already.
	if err := invalidate(); err != nil {
		logf("next-hop cache: %v", err)
	}
	go func() {
		for {
			msgs, _, err := sub.Receive()
			if err != nil && err != unix.ENOBUFS {
				return // closed
			}
			// An overrun also means something changed: bump as for a message.
			if err == unix.ENOBUFS || len(msgs) > 0 {
				if berr := invalidate(); berr != nil {
					logf("next-hop cache: %v", berr)
				}
			}
		}
	}()
	return nil
}
