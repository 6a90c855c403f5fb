// SPDX-License-Identifier: GPL-2.0
/* seg6x.bpf.c: the XDP entry point. Parse, find the port's side of the SR domain boundary, then act:
 * local SIDs on fabric ports, the boundary checks on access ports, the headend for tenant ports. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "consts.h"
#include "structs.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "boundary.h"
#include "headend.h"
#include "endpoint.h"

/* The port a frame arrived on: its own (interface, VLAN) entry, or the interface's entry for any VLAN. */
static __always_inline struct port_val *port_of(struct xdp_md *ctx, struct pkt *p)
{
	struct port_key k = { .ifindex = ctx->ingress_ifindex, .vlan = p->vlan };
	struct port_val *pv = bpf_map_lookup_elem(&ports, &k);

	if (pv)
		return pv;
	k.vlan = PORT_VLAN_ANY;
	return bpf_map_lookup_elem(&ports, &k);
}

/* Fabric side, IPv6: a chain of local SIDs (End then End.DX4 on one node) in one pass. Returns the
 * verdict, or NOT_A_SID when the destination is not a local SID. */
#define NOT_A_SID -2
static __always_inline int local_sids(struct xdp_md *ctx, struct pkt *p, __u32 flags)
{
	for (int i = 0; i < MAX_SID_CHAIN; i++) {
		void *data = (void *)(long)ctx->data;
		void *data_end = (void *)(long)ctx->data_end;
		struct ipv6hdr *ip6 = data + p->l3off;
		struct sid_entry *sid;
		int rc;

		if ((void *)(ip6 + 1) > data_end)
			return i == 0 ? NOT_A_SID : finish(XDP_PASS, p->len);
		sid = bpf_map_lookup_elem(&sids, &ip6->daddr);
		if (!sid)
			return i == 0 ? NOT_A_SID : finish(XDP_PASS, p->len);
		if (i == 0 && (flags & PORT_F_SID_SOURCES) && !sid_source_ok(ip6))
			return verdict(DROP_SID_SOURCE, p->len);
		rc = endpoint(ctx, p, sid);
		if (rc != SID_CHAIN)
			return rc;
	}
	/* A longer chain of local SIDs than the fast path follows: the kernel takes it from here. */
	return verdict(PASS_LOCAL, p->len);
}

SEC("xdp")
int seg6x_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pkt p = { .len = data_end - data };
	struct port_val *port;
	__u32 flags;
	int rc;

	rc = parse_l2(data, data_end, &p);
	if (rc != REASON_NONE)
		return verdict(rc, p.len);
	if (p.proto != ETH_P_IPV6_BE && p.proto != ETH_P_IP_BE)
		return finish(XDP_PASS, p.len);

	/* A port without an entry is treated as access without a tenant: nothing is let in. */
	port = port_of(ctx, &p);
	flags = port ? port->flags : PORT_F_BOUNDARY;
	if (p.proto == ETH_P_IPV6_BE) {
		if (flags & PORT_F_SIDS) {
			rc = local_sids(ctx, &p, flags);
			if (rc != NOT_A_SID)
				return rc;
		} else {
			data = (void *)(long)ctx->data;
			data_end = (void *)(long)ctx->data_end;
			rc = boundary6(data, data_end, &p);
			if (rc != REASON_NONE)
				return verdict(rc, p.len);
		}
	}
	if (port && (flags & PORT_F_TENANT))
		return headend(ctx, &p, port);
	return finish(XDP_PASS, p.len);
}

/* Types the control plane takes from this object's BTF (bpf2go -type): enums are only kept in BTF when
 * something refers to them. */
const enum sid_action *const export_sid_action __attribute__((unused)) = 0;
const enum reason *const export_reason __attribute__((unused)) = 0;
const enum slow_kind *const export_slow_kind __attribute__((unused)) = 0;
const enum port_flags *const export_port_flags __attribute__((unused)) = 0;
const enum port_vlan *const export_port_vlan __attribute__((unused)) = 0;
const enum sid_flags *const export_sid_flags __attribute__((unused)) = 0;
const enum mss_clamp *const export_mss_clamp __attribute__((unused)) = 0;
const enum limits *const export_limits __attribute__((unused)) = 0;

char _license[] SEC("license") = "GPL";
