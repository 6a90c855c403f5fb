/* headend.h: H.Encaps and H.Encaps.Red (RFC 8986 5.1/5.2) for tenant IPv4 and IPv6 traffic. */
#pragma once

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "fwd.h"
#include "egress.h"
#include "flowlabel.h"
#include "routes.h"
#include "ipcheck.h"
#include "mss.h"
#include "toobig.h"

/* What the headend learned about the inner packet before rewriting anything. */
struct inner {
	__u32 policy_id;
	__u32 len;     /* inner L3 packet length from its own header */
	__u32 label;   /* outer flow label */
	__u32 ports;   /* TCP/UDP source and destination port as in the packet (0: none, or a fragment) */
	__u32 syn_off; /* offset of the TCP header of a SYN to clamp (0: none) */
	__u8 tclass;   /* copied to the outer traffic class */
	__u8 ttl;
	__u8 df; /* IPv4 don't-fragment (IPv6: always set) */
};

/* The outer traffic class and flow label of in, as bpf_fib_lookup takes them. */
static __always_inline __be32 flowinfo_of(const struct inner *in)
{
	return bpf_htonl(((__u32)in->tclass << 20) | in->label);
}

/* Checks the tenant's IPv4 packet (ipcheck.h) and finds its policy. Returns REASON_NONE, a DROP_* or
 * PASS_* reason, or PASS_NO_MATCH when no route of the tenant covers the destination. */
static __always_inline int headend_v4(void *data, void *data_end, __u32 pkt_len, struct pkt *p,
				      const struct port_val *tv, struct inner *in)
{
	struct iphdr *iph = data + p->l3off;
	__u32 policy_id;
	__u32 *ports = NULL;
	int rc;

	rc = ip_check_at(data, data_end, pkt_len, p->l3off, ETH_P_IP_BE, &in->len);
	if (rc != REASON_NONE)
		return rc;
	if ((void *)(iph + 1) > data_end)
		return DROP_TRUNC_IP;
	policy_id = route4_cached(tv, iph->daddr);
	if (!policy_id)
		return PASS_NO_MATCH;
	if ((iph->protocol == PROTO_TCP || iph->protocol == PROTO_UDP) && !(iph->frag_off & IP_MF_OFFSET_BE)) {
		__u32 *l4 = (void *)(iph + 1);
		if ((void *)(l4 + 1) <= data_end) {
			ports = l4;
			in->ports = *l4;
		}
		if (tv->mss_clamp && iph->protocol == PROTO_TCP)
			in->syn_off = syn_at(data, data_end, p->l3off + sizeof(*iph));
	}
	in->df = !!(iph->frag_off & IP_DF_BE);
	in->policy_id = policy_id;
	in->label = flow_label4(iph, ports);
	in->tclass = iph->tos;
	in->ttl = iph->ttl;
	return REASON_NONE;
}

static __always_inline int headend_v6(void *data, void *data_end, __u32 pkt_len, struct pkt *p,
				      const struct port_val *tv, struct inner *in)
{
	struct ipv6hdr *ip6 = data + p->l3off;
	__u64 hi, lo;
	__u32 policy_id;
	__u32 *ports = NULL;
	int rc;

	rc = ip_check_at(data, data_end, pkt_len, p->l3off, ETH_P_IPV6_BE, &in->len);
	if (rc != REASON_NONE)
		return rc;
	if ((void *)(ip6 + 1) > data_end)
		return DROP_TRUNC_IP;
	__builtin_memcpy(&hi, &ip6->daddr, 8);
	__builtin_memcpy(&lo, (__u8 *)&ip6->daddr + 8, 8);
	policy_id = route6_cached(tv, hi, lo);
	if (!policy_id)
		return PASS_NO_MATCH;
	if (ip6->nexthdr == PROTO_TCP || ip6->nexthdr == PROTO_UDP) {
		__u32 *l4 = (void *)(ip6 + 1);
		if ((void *)(l4 + 1) <= data_end) {
			ports = l4;
			in->ports = *l4;
		}
		if (tv->mss_clamp && ip6->nexthdr == PROTO_TCP)
			in->syn_off = syn_at(data, data_end, p->l3off + sizeof(*ip6));
	}
	in->df = 1;
	in->policy_id = policy_id;
	in->label = flow_label6(ip6, ports);
	in->tclass = (ip6->priority << 4) | (ip6->flow_lbl[0] >> 4);
	in->ttl = ip6->hop_limit;
	return REASON_NONE;
}

/* Tenant traffic of the port tv (its route table): match the inner destination in the tenant's routes
 * and encapsulate into the policy's prebuilt IPv6 + SRH header. */
__noinline int headend(struct ctx_buff *ctx, struct pkt *arg, const struct port_val *tv)
{
	void *data, *data_end;
	struct bpf_fib_lookup fib; /* filled only when the FIB is asked (nh_slot_hit: not) */
	struct nh_slot *nh;
	const __u8 *dmac, *smac;
	__u32 out_ifindex;
	struct encap_policy *pol;
	struct inner in = {};
	struct pkt pk = {}, *p = &pk;
	struct ipv6hdr *o6;
	__u32 hdr_len, ioff, wire, slot;
	int rc, to_kernel = REASON_NONE;

	if (!ctx || !tv || pkt_arg(arg, &pk))
		return ctx_ret(ACT_DROP);
	data = ctx_data(ctx);
	data_end = ctx_data_end(ctx);

	if (p->proto == ETH_P_IP_BE)
		rc = headend_v4(data, data_end, p->len, p, tv, &in);
	else
		rc = headend_v6(data, data_end, p->len, p, tv, &in);
	if (rc == PASS_NO_MATCH)
		return finish(ACT_PASS, p->len);
	if (rc != REASON_NONE)
		return verdict(rc, p->len);
	if (in.policy_id & POLICY_GROUP_FLAG) {
		/* A named policy: the flow's hash (its outer flow label) picks one of its weighted lists. */
		__u32 gid = in.policy_id & ~POLICY_GROUP_FLAG;
		struct policy_group *g = bpf_map_lookup_elem(&policy_groups, &gid);

		if (!g)
			return finish(ACT_PASS, p->len);
		in.policy_id = g->ids[in.label & (POLICY_GROUP_BUCKETS - 1)];
		if (!in.policy_id)
			return verdict(DROP_POLICY_DOWN, p->len);
	}
	TRACE(tr->policy = in.policy_id);

	pol = bpf_map_lookup_elem(&policies, &in.policy_id);
	if (!pol)
		return finish(ACT_PASS, p->len);
	hdr_len = pol->hdr_len;
	if (hdr_len < IPV6_HLEN || hdr_len > MAX_ENCAP_HDR)
		return finish(ACT_PASS, p->len);
	count(&policy_stats, in.policy_id, p->len);
	if (in.ttl <= 1)
		return verdict(PASS_TTL, p->len);
	wire = ctx_wire_len(ctx, data, data_end, p->l3off, p->l3off, p->proto, in.len);
	if (!wire)
		return verdict(PASS_GSO_UNSIZED, p->len);

	/* The outer packet's flow fields pick its path among ECMP next hops as the kernel's multipath hash
	 * would (the inner ports stand in for the outer packet's, which has none: under an L4 hash policy
	 * the flows of one policy spread as the tenant's flows do). */
	slot = fmix32(in.policy_id * 0x9E3779B1 ^ in.label) & (POLICY_NH_SLOTS - 1);
	nh = bpf_map_lookup_elem(&policy_nh, &slot);
	if (!in.syn_off && nh_slot_hit(nh, p->ifindex, pol->hdr + 8, pol->hdr + 24, flowinfo_of(&in), in.ports,
				       pol->hdr[6], wire + hdr_len)) {
		/* The policy's next hop as this CPU last asked the FIB for it: no request to fill. */
		out_ifindex = nh->nh.ifindex;
		dmac = nh->nh.dmac;
		smac = nh->nh.smac;
	} else {
		__builtin_memset(&fib, 0, sizeof(fib));
		fib.family = AF_INET6;
		fib.ifindex = p->ifindex;
		fib.tot_len = wire + hdr_len;
		__builtin_memcpy(fib.ipv6_src, pol->hdr + 8, 16);
		__builtin_memcpy(fib.ipv6_dst, pol->hdr + 24, 16);
		fib.flowinfo = flowinfo_of(&in);
		*(__u32 *)&fib.sport = in.ports;
		fib.l4_protocol = pol->hdr[6];
		if (in.syn_off) {
			__u32 mss = tv->mss_clamp;
			if (mss == MSS_CLAMP_AUTO)
				mss = tunnel_mss(ctx, &fib, hdr_len, p->proto == ETH_P_IP_BE ? 20 : IPV6_HLEN);
			mss_clamp(data, data_end, in.syn_off, mss);
		}
		rc = fib6_slot(ctx, &fib, nh);
		if (rc == BPF_FIB_LKUP_RET_NO_NEIGH) {
			rc = fib6_around(ctx, &fib, pol->hdr + 24, flowinfo_of(&in), p->ifindex);
			if (rc == BPF_FIB_LKUP_RET_SUCCESS && nh_cache_ns && nh)
				nh_fill(&nh->nh, &fib, gen_now(&nh_gen), fib.tot_len);
		}
		if (rc == BPF_FIB_LKUP_RET_FRAG_NEEDED)
			return tunnel_too_big(ctx, p, tv, in.len, in.df, fib.mtu_result, hdr_len);
		if (rc == BPF_FIB_LKUP_RET_NO_NEIGH || rc == FIB_TX_NOT_ATTACHED)
			to_kernel = fib_reason(rc);
		else if (rc != BPF_FIB_LKUP_RET_SUCCESS)
			return verdict(fib_reason(rc), p->len);
		if (to_kernel) {
			/* The kernel forwards the encapsulated packet (resolving the neighbor on the way): keep
			 * the frame addressed to this node as it arrived. */
			struct ethhdr *eth = data;
			if ((void *)(eth + 1) > data_end)
				return verdict(DROP_TRUNC_IP, p->len);
			__builtin_memcpy(fib.dmac, eth->h_dest, ETH_ALEN);
			__builtin_memcpy(fib.smac, eth->h_source, ETH_ALEN);
		}
		out_ifindex = fib.ifindex;
		dmac = fib.dmac;
		smac = fib.smac;
	}

	/* Committed: drop any Ethernet padding, make room for the outer header, then forward the inner
	 * packet (TTL / hop limit) where it now lies. */
	if (ctx_trim_len(ctx, p->len, p->l3off + in.len))
		return verdict(DROP_NO_ROOM, p->len);
	if (ctx_encap_room(ctx, p->l3off, in.len, hdr_len)) {
		/* Nothing changed but the padding: a tenant whose routes the kernel also holds (the kernel
		 * mirror) lets the kernel encapsulate; otherwise the packet cannot go out. */
		if (tv->flags & PORT_F_KERNEL_FALLBACK)
			return verdict(PASS_NO_ROOM, p->len);
		if (ctx_frags(ctx, p->l3off + in.len)) /* too long to move through the scratch buffer */
			return verdict(PASS_MULTIBUF, p->len);
		return verdict(DROP_NO_ROOM, p->len);
	}
	data = ctx_data(ctx);
	data_end = ctx_data_end(ctx);
	ioff = ETH_HLEN + (hdr_len & 0x1FF); /* hdr_len <= MAX_ENCAP_HDR: a range the verifier sees */
	if (ip_forwarded(data, data_end, ioff, p->proto))
		return verdict(DROP_NO_ROOM, p->len);
	if (ctx_store_hdr(ctx, ETH_HLEN, pol->hdr, hdr_len))
		return verdict(DROP_NO_ROOM, p->len);
	if (ctx_set_l2(ctx, ETH_HLEN, dmac, smac, 0, ETH_P_IPV6_BE))
		return verdict(DROP_NO_ROOM, p->len);

	data = ctx_data(ctx);
	data_end = ctx_data_end(ctx);
	o6 = data + ETH_HLEN;
	if ((void *)(o6 + 1) > data_end)
		return verdict(DROP_NO_ROOM, p->len);
	*(__be32 *)o6 = bpf_htonl((6U << 28) | ((__u32)in.tclass << 20) | in.label);
	o6->payload_len = bpf_htons(in.len + hdr_len - IPV6_HLEN);
	if (to_kernel)
		return verdict(to_kernel, p->len);
	return send_pkt(ctx, p, out_ifindex);
}
