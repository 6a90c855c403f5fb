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
#include "flowlabel.h"
#include "routes.h"
#include "ipcheck.h"
#include "icmp.h"
#include "mss.h"

/* What the headend learned about the inner packet before rewriting anything. */
struct inner {
	__u32 policy_id;
	__u32 len;      /* inner L3 packet length from its own header */
	__u32 label;    /* outer flow label */
	__u32 syn_off;  /* offset of the TCP header of a SYN to clamp (0: none) */
	__u8 tclass;    /* copied to the outer traffic class */
	__u8 ttl;
	__u8 df;        /* IPv4 don't-fragment (IPv6: always set) */
};

/* Checks the tenant's IPv4 packet (ipcheck.h) and finds its policy. Returns REASON_NONE, a DROP_* or
 * PASS_* reason, or PASS_NO_MATCH when no route of the tenant covers the destination. */
static __always_inline int headend_v4(void *data, void *data_end, struct pkt *p,
				      const struct port_val *tv, struct inner *in)
{
	struct iphdr *iph = data + p->l3off;
	__u32 policy_id;
	__u32 *ports = NULL;
	int rc;

	rc = ip_check_at(data, data_end, p->l3off, ETH_P_IP_BE, &in->len);
	if (rc != REASON_NONE)
		return rc;
	if ((void *)(iph + 1) > data_end)
		return DROP_TRUNC_IP;
	policy_id = route4_lookup(tv, iph->daddr);
	if (!policy_id)
		return PASS_NO_MATCH;
	if ((iph->protocol == PROTO_TCP || iph->protocol == PROTO_UDP) && !(iph->frag_off & IP_MF_OFFSET_BE)) {
		__u32 *l4 = (void *)(iph + 1);
		if ((void *)(l4 + 1) <= data_end)
			ports = l4;
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

static __always_inline int headend_v6(void *data, void *data_end, struct pkt *p,
				      const struct port_val *tv, struct inner *in)
{
	struct ipv6hdr *ip6 = data + p->l3off;
	__u64 hi, lo;
	__u32 policy_id;
	__u32 *ports = NULL;
	int rc;

	rc = ip_check_at(data, data_end, p->l3off, ETH_P_IPV6_BE, &in->len);
	if (rc != REASON_NONE)
		return rc;
	if ((void *)(ip6 + 1) > data_end)
		return DROP_TRUNC_IP;
	__builtin_memcpy(&hi, &ip6->daddr, 8);
	__builtin_memcpy(&lo, (__u8 *)&ip6->daddr + 8, 8);
	policy_id = route6_lookup(tv, hi, lo);
	if (!policy_id)
		return PASS_NO_MATCH;
	if (ip6->nexthdr == PROTO_TCP || ip6->nexthdr == PROTO_UDP) {
		__u32 *l4 = (void *)(ip6 + 1);
		if ((void *)(l4 + 1) <= data_end)
			ports = l4;
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

/* A tenant packet larger than its tunnel: the egress MTU (fib_mtu) minus the outer header. With DF
 * (IPv6: always) it is answered with an ICMP error announcing the tunnel MTU; without, the daemon
 * fragments it (slowpath.h) and each fragment comes back through here. */
static __always_inline int tunnel_too_big(struct xdp_md *ctx, struct pkt *p, const struct port_val *tv,
					  const struct inner *in, __u32 fib_mtu, __u32 hdr_len)
{
	__u32 mtu = fib_mtu > hdr_len ? fib_mtu - hdr_len : 0;

	if (p->proto == ETH_P_IP_BE) {
		if (!in->df)
			return fragment_later(ctx, p, in->len, mtu);
		return icmp4_too_big(ctx, p, tv, in->len, mtu, 0);
	}
	return icmp6_too_big(ctx, p, tv, in->len, mtu, 0);
}

/* Grows the frame at its tail when the headroom cannot hold the outer header (long segment lists):
 * the inner packet is copied out, the frame extended, and the packet written back further along. */
static __always_inline int grow_by_tail(struct xdp_md *ctx, __u32 l3off, __u32 inner_len, __u32 hdr_len)
{
	__u32 zero = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	__u32 n = inner_len;
	int grow = (int)(ETH_HLEN + hdr_len) - (int)l3off;

	if (!s || n == 0 || n >= SCRATCH_SIZE)
		return -1;
	n -= 1;
	asm volatile("%0 &= 0xfff" : "+r"(n)); /* 1..SCRATCH_SIZE, a range the verifier can see */
	n += 1;
	if (bpf_xdp_load_bytes(ctx, l3off, s->buf, n))
		return -1;
	if (bpf_xdp_adjust_tail(ctx, grow))
		return -1;
	if (bpf_xdp_store_bytes(ctx, ETH_HLEN + hdr_len, s->buf, n))
		return -1;
	return 0;
}

/* Tenant traffic of the port tv (its route table): match the inner destination in the tenant's routes
 * and encapsulate into the policy's prebuilt IPv6 + SRH header. */
static __always_inline int headend(struct xdp_md *ctx, struct pkt *p, const struct port_val *tv)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup fib = {};
	struct encap_policy *pol;
	struct inner in = {};
	struct ipv6hdr *o6;
	__u32 hdr_len, ioff;
	int rc, to_kernel = REASON_NONE;

	if (p->proto == ETH_P_IP_BE)
		rc = headend_v4(data, data_end, p, tv, &in);
	else
		rc = headend_v6(data, data_end, p, tv, &in);
	if (rc == PASS_NO_MATCH)
		return finish(XDP_PASS, p->len);
	if (rc != REASON_NONE)
		return verdict(rc, p->len);

	pol = bpf_map_lookup_elem(&policies, &in.policy_id);
	if (!pol)
		return finish(XDP_PASS, p->len);
	hdr_len = pol->hdr_len;
	if (hdr_len < IPV6_HLEN || hdr_len > MAX_ENCAP_HDR)
		return finish(XDP_PASS, p->len);
	count(&policy_stats, in.policy_id, p->len);
	if (in.ttl <= 1)
		return verdict(PASS_TTL, p->len);

	fib.family = AF_INET6;
	fib.ifindex = ctx->ingress_ifindex;
	fib.tot_len = in.len + hdr_len;
	__builtin_memcpy(fib.ipv6_src, pol->hdr + 8, 16);
	__builtin_memcpy(fib.ipv6_dst, pol->hdr + 24, 16);
	if (in.syn_off) {
		__u32 mss = tv->mss_clamp;
		if (mss == MSS_CLAMP_AUTO)
			mss = tunnel_mss(ctx, &fib, hdr_len, p->proto == ETH_P_IP_BE ? 20 : IPV6_HLEN);
		mss_clamp(data, data_end, in.syn_off, mss);
	}
	rc = fib_lookup(ctx, &fib, 0);
	if (rc == BPF_FIB_LKUP_RET_FRAG_NEEDED)
		return tunnel_too_big(ctx, p, tv, &in, fib.mtu_result, hdr_len);
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH || rc == FIB_TX_NOT_ATTACHED)
		to_kernel = fib_reason(rc);
	else if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return verdict(fib_reason(rc), p->len);
	if (to_kernel) {
		/* The kernel forwards the encapsulated packet (resolving the neighbor on the way): keep the
		 * frame addressed to this node as it arrived. */
		struct ethhdr *eth = data;
		if ((void *)(eth + 1) > data_end)
			return verdict(DROP_TRUNC_IP, p->len);
		__builtin_memcpy(fib.dmac, eth->h_dest, ETH_ALEN);
		__builtin_memcpy(fib.smac, eth->h_source, ETH_ALEN);
	}

	/* Committed: drop any Ethernet padding, make room for the outer header, then forward the inner
	 * packet (TTL / hop limit) where it now lies. */
	if (trim_to(ctx, p->l3off + in.len))
		return verdict(DROP_NO_ROOM, p->len);
	if (bpf_xdp_adjust_head(ctx, (int)p->l3off - (int)(ETH_HLEN + hdr_len))) {
		if (grow_by_tail(ctx, p->l3off, in.len, hdr_len)) {
			/* Nothing changed but the padding: a tenant whose routes the kernel also holds (the
			 * kernel mirror) lets the kernel encapsulate; otherwise the packet cannot go out. */
			if (tv->flags & PORT_F_KERNEL_FALLBACK)
				return verdict(PASS_NO_ROOM, p->len);
			return verdict(DROP_NO_ROOM, p->len);
		}
	}
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	ioff = ETH_HLEN + (hdr_len & 0x1FF); /* hdr_len <= MAX_ENCAP_HDR: a range the verifier sees */
	if (ip_forwarded(data, data_end, ioff, p->proto))
		return verdict(DROP_NO_ROOM, p->len);
	if (bpf_xdp_store_bytes(ctx, ETH_HLEN, pol->hdr, hdr_len))
		return verdict(DROP_NO_ROOM, p->len);
	if (write_l2(ctx, 0, fib.dmac, fib.smac, 0, ETH_P_IPV6_BE))
		return verdict(DROP_NO_ROOM, p->len);

	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	o6 = data + ETH_HLEN;
	if ((void *)(o6 + 1) > data_end)
		return verdict(DROP_NO_ROOM, p->len);
	*(__be32 *)o6 = bpf_htonl((6U << 28) | ((__u32)in.tclass << 20) | in.label);
	o6->payload_len = bpf_htons(in.len + hdr_len - IPV6_HLEN);
	if (to_kernel)
		return verdict(to_kernel, p->len);
	return redirect(fib.ifindex, p->len);
}
