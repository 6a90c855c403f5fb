/* pipeline.h: what every packet goes through, on either hook (ctx.h): parse, find the port's side of the
 * SR domain boundary, then act: local SIDs (then VXLAN to a local VTEP) on fabric ports, the boundary
 * checks on access ports, the headend for tenant ports, VXLAN encapsulation on bridge ports. */
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "ctx.h"
#include "consts.h"
#include "structs.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "boundary.h"
#include "headend.h"
#include "endpoint.h"
#include "plugin.h"
#ifndef SEG6X_TC
#include "vxlan.h"
#endif

/* The port a frame arrived on: its own (interface, VLAN) entry, or the interface's entry for any VLAN,
 * and in *frags its interface's rx_frags entry (0: none); answered from port_cache while cache_gen has not
 * moved since (read before ports, so that an answer read while the control plane changes ports is
 * stale at the next frame). */
static __always_inline struct port_val *port_of(struct ctx_buff *ctx, struct pkt *p, __u32 *frags)
{
	struct port_key k = { .ifindex = p->ifindex, .vlan = p->vlan };
	__u32 gen = gen_now(&cache_gen), slot = ((p->ifindex * 0x9E3779B1) ^ p->vlan) & (PORT_CACHE_SLOTS - 1);
	struct port_cache_entry *c = bpf_map_lookup_elem(&port_cache, &slot);
	struct port_val *pv;
	__u32 *fm;

	if (c && c->gen == gen && c->ifindex == p->ifindex && c->vlan == p->vlan) {
		*frags = c->frags;
		return c->found ? &c->val : NULL;
	}
	fm = bpf_map_lookup_elem(&rx_frags, &k.ifindex);
	*frags = fm ? *fm : 0;
	pv = bpf_map_lookup_elem(&ports, &k);
	if (!pv) {
		k.vlan = PORT_VLAN_ANY;
		pv = bpf_map_lookup_elem(&ports, &k);
	}
	if (c) {
		c->gen = gen;
		c->ifindex = p->ifindex;
		c->vlan = p->vlan;
		c->found = pv != NULL;
		c->frags = *frags;
		if (pv)
			c->val = *pv;
	}
	return pv;
}

/* Fabric side, IPv6: a chain of local SIDs (End then End.DX4 on one node) in one pass. Returns the
 * verdict, or NOT_A_SID when the destination is not a local SID. */
#define NOT_A_SID -2
static __always_inline int local_sids(struct ctx_buff *ctx, struct pkt *p, __u32 flags)
{
	for (int i = 0; i < MAX_SID_CHAIN; i++) {
		void *data = ctx_data(ctx);
		void *data_end = ctx_data_end(ctx);
		struct ipv6hdr *ip6 = data + p->l3off;
		struct sid_entry *sid;
		int rc;

		if ((void *)(ip6 + 1) > data_end)
			return i == 0 ? NOT_A_SID : finish(ACT_PASS, p->len);
		sid = sid_lookup(&ip6->daddr);
		if (!sid)
			return i == 0 ? NOT_A_SID : finish(ACT_PASS, p->len);
		TRACE(tr->class = TRACE_SID; tr->flags |= TRACE_F_SID; tr->chain = i; tr->behavior = sid->action;
		      tr->sid_id = sid->id; __builtin_memcpy(tr->sid, &ip6->daddr, 16));
		if (i == 0 && (flags & PORT_F_SID_SOURCES) && !sid_source_ok(ip6))
			return verdict(DROP_SID_SOURCE, p->len);
		/* endpoint() is a global function: the verifier forgets what its pointer arguments point at,
		 * so it gets a copy, and p keeps the bounds proven here (l3off) for the headend after. */
		struct pkt q = *p;
		q.chain = i;
		if (sid->action == SID_PLUGIN) { /* an operator's function first (plugin.h) */
			rc = plugin_prepare(ctx, &q, sid);
			if (rc != PLUGIN_GO)
				return rc;
			rc = plugin_call(ctx, sid->plugin);
			rc = plugin_after(ctx, &q, sid, rc);
			if (rc != PLUGIN_GO)
				return rc;
			sid = plugin_next_entry();
			if (!sid)
				return verdict(DROP_PLUGIN_ABORT, p->len);
		}
		rc = endpoint(ctx, &q, sid);
		if (rc != SID_CHAIN)
			return rc;
	}
	/* A longer chain of local SIDs than the fast path follows: the kernel takes it from here. */
	return verdict(PASS_LOCAL, p->len);
}

static __always_inline int seg6x_main(struct ctx_buff *ctx)
{
	struct pkt p = {};
	struct port_val *port;
	void *data, *data_end;
	__u32 flags, frags;
	int rc;

	rc = ctx_parse(ctx, &p);
	TRACE(tr->vlan = p.vlan);
	if (rc != REASON_NONE) {
		TRACE(tr->class = TRACE_MALFORMED);
		return verdict(rc, p.len);
	}

	/* A port without an entry is treated as access without a tenant: nothing is let in. */
	port = port_of(ctx, &p, &frags);
	rc = ctx_whole_len(ctx, &p, frags);
	if (rc != REASON_NONE) {
		TRACE(tr->class = TRACE_MALFORMED);
		return verdict(rc, p.len);
	}
	flags = port ? port->flags : PORT_F_BOUNDARY;
	TRACE(if (port) {
		tr->flags |= TRACE_F_PORT;
		tr->port_flags = flags;
		tr->table = port->table_id;
	});
	if (flags & PORT_F_BRIDGE) { /* a port of a bridge with a VXLAN device: every frame is bridged */
#ifdef SEG6X_TC
		return finish(ACT_PASS, p.len);
#else
		return vxlan_encap(ctx, &p, port ? port->table_id : 0, flags);
#endif
	}
	if (p.proto != ETH_P_IPV6_BE && p.proto != ETH_P_IP_BE)
		return finish(ACT_PASS, p.len);
	if (p.proto == ETH_P_IPV6_BE) {
		if (flags & PORT_F_SIDS) {
			rc = local_sids(ctx, &p, flags);
			if (rc != NOT_A_SID)
				return rc;
#ifndef SEG6X_TC
			rc = vxlan_decap(ctx, &p);
			if (rc != NOT_VXLAN)
				return rc;
#endif
		} else {
			data = ctx_data(ctx);
			data_end = ctx_data_end(ctx);
			rc = boundary6(data, data_end, &p);
			if (rc != REASON_NONE) {
				TRACE(tr->class = TRACE_BOUNDARY);
				return verdict(rc, p.len);
			}
		}
	}
	if (port && (flags & PORT_F_TENANT)) {
		TRACE(tr->class = TRACE_TENANT);
		return headend(ctx, &p, port);
	}
	return finish(ACT_PASS, p.len);
}
