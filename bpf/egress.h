/* egress.h: a packet ready to leave through an attached interface. Redirected (fwd.h redirect), unless
 * it is a multi-buffer frame and the interface's driver cannot send one redirected (tx_no_sg): the kernel
 * would drop it after the program returned, uncounted. The daemon sends such a frame out of the
 * interface (a packet socket); without a daemon it is dropped, counted. */
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parse.h"
#include "fwd.h"
#include "slowpath.h"

/* The frame, ready to leave, to the daemon, which sends it out of ifindex. A function of its own: its
 * record stays off the callers' stacks. */
static __noinline int send_later(struct ctx_buff *ctx, __u32 ifindex, __u32 bytes)
{
	struct slow_meta m = { .kind = SLOW_KIND_SEND, .ifindex = ifindex, .len = ctx_len(ctx) };
	long rc = slow_send(ctx, &m);

	if (rc == 0)
		return verdict(SLOW_MULTIBUF_SEND, bytes);
	return verdict(rc == SLOW_NO_READER ? DROP_MULTIBUF_EGRESS : DROP_SLOW_BUSY, bytes);
}

/* Whether ifindex is a port of the fabric (local SIDs processed, for any VLAN): the only way out for
 * what a plugin's verdict sent on as End (the SR domain boundary, plugin.h). A global
 * function: its key stays off endpoint()'s stack, which is at the limit of the call chain's. */
__noinline int fabric_port(__u32 ifindex)
{
	struct port_key k = { .ifindex = ifindex, .vlan = PORT_VLAN_ANY };
	struct port_val *pv = bpf_map_lookup_elem(&ports, &k);

	return pv && (pv->flags & PORT_F_SIDS);
}

/* The packet p (its frame rewritten, its Ethernet header set) out of ifindex. */
static __always_inline int send_pkt(struct ctx_buff *ctx, struct pkt *p, __u32 ifindex)
{
	if (p->frags && bpf_map_lookup_elem(&tx_no_sg, &ifindex))
		return send_later(ctx, ifindex, p->len);
	return redirect(ifindex, p->len);
}
