/* endpoint.h: SRv6 endpoint behaviors of local SIDs (RFC 8986 4.1-4.8): End, End.X, End.T and the
 * decapsulating End.DX4, End.DX6, End.DT4, End.DT6, End.DT46. */
#pragma once

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "fwd.h"
#include "ipcheck.h"
#include "icmp.h"

/* Returned by end_transit when the new destination is another local SID (no verdict yet). */
#define SID_CHAIN -1

/* End, End.X, End.T: SL--, DA = Segment List[SL], hop limit--, forward. */
static __always_inline int end_transit(struct xdp_md *ctx, struct pkt *p, struct sid_entry *sid,
				       struct srh_info *s)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup fib = {};
	struct ipv6hdr *ip6 = data + p->l3off;
	__u8 *srh, *seg;
	__u32 sl, off;
	int rc;

	if (!s->srh_off || s->sl == 0)
		return verdict(PASS_LOCAL, p->len);
	if ((void *)(ip6 + 1) > data_end)
		return verdict(DROP_TRUNC_IP, p->len);
	if (ip6->hop_limit <= 1)
		return verdict(PASS_TTL, p->len);

	sl = (__u32)s->sl - 1;
	off = (s->srh_off & 0x3FFF) + SRH_FIXED_LEN + (sl & 0xFF) * 16;
	seg = data + off;
	srh = data + (s->srh_off & 0x3FFF);
	if ((void *)(seg + 16) > data_end || (void *)(srh + SRH_FIXED_LEN) > data_end)
		return verdict(DROP_SRH_BAD_LEN, p->len);
	srh[3] = sl;
	__builtin_memcpy(&ip6->daddr, seg, 16);
	ip6->hop_limit--;
	/* The next SID is this node's too (End then End.DX4 on one node): process it in the same pass. */
	if (sid->action != SID_END_X && bpf_map_lookup_elem(&sids, &ip6->daddr))
		return SID_CHAIN;

	fib.family = AF_INET6;
	fib.ifindex = ctx->ingress_ifindex;
	fib.tot_len = IPV6_HLEN + bpf_ntohs(ip6->payload_len);
	__builtin_memcpy(fib.ipv6_src, &ip6->saddr, 16);
	if (sid->action == SID_END_X)
		__builtin_memcpy(fib.ipv6_dst, sid->nh, 16);
	else
		__builtin_memcpy(fib.ipv6_dst, &ip6->daddr, 16);
	rc = fib_lookup(ctx, &fib, sid->action == SID_END_T ? sid->table : 0);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return verdict(fib_reason(rc), p->len);
	if (write_l2(ctx, (int)p->l3off - ETH_HLEN, fib.dmac, fib.smac, 0, ETH_P_IPV6_BE))
		return verdict(DROP_NO_ROOM, p->len);
	return redirect(fib.ifindex, p->len);
}

/* Decapsulation: the inner packet is looked up (DX: the configured next hop in the main table; DT: its
 * destination in the SID's table), its TTL / hop limit decremented, and it leaves with the SID's VLAN.
 * Anything the fast path cannot finish goes to the kernel already decapsulated. */
static __always_inline int end_decap(struct xdp_md *ctx, struct pkt *p, struct sid_entry *sid,
				     struct srh_info *s)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup fib = {};
	__u8 act = sid->action;
	__u32 ioff = s->next_off & 0x3FFF;
	__u8 mac[2 * ETH_ALEN];
	__u32 inner_len, table = 0;
	__be16 proto;
	__u16 vlan = (sid->flags & SID_F_VLAN) ? sid->vlan : 0;
	int reason = REASON_NONE, rc;

	if (s->srh_off && s->sl != 0)
		return verdict(DROP_DECAP_SL_NONZERO, p->len);

	if (s->next_hdr == PROTO_IPIP && (act == SID_END_DX4 || act == SID_END_DT4 || act == SID_END_DT46)) {
		struct iphdr *iph = data + ioff;

		if ((void *)(iph + 1) > data_end)
			return verdict(DROP_BAD_INNER, p->len);
		rc = ip4_check(iph, data_end, &inner_len);
		if (rc == PASS_IPV4_OPTIONS) {
			/* The kernel validates the options of the decapsulated packet (and forwards it). */
			reason = PASS_IPV4_OPTIONS;
		} else if (rc != REASON_NONE) {
			return verdict(DROP_BAD_INNER, p->len);
		}
		proto = ETH_P_IP_BE;
		fib.family = AF_INET;
		fib.tos = iph->tos;
		fib.l4_protocol = iph->protocol;
		fib.ipv4_src = iph->saddr;
		if (act == SID_END_DX4) {
			__builtin_memcpy(&fib.ipv4_dst, sid->nh, 4);
		} else {
			fib.ipv4_dst = iph->daddr;
			table = sid->table;
		}
		if (iph->ttl <= 1 && reason == REASON_NONE)
			reason = PASS_TTL;
	} else if (s->next_hdr == PROTO_IPV6 && (act == SID_END_DX6 || act == SID_END_DT6 || act == SID_END_DT46)) {
		struct ipv6hdr *ip6 = data + ioff;

		if ((void *)(ip6 + 1) > data_end || ip6_check(ip6, data_end, &inner_len) != REASON_NONE)
			return verdict(DROP_BAD_INNER, p->len);
		proto = ETH_P_IPV6_BE;
		fib.family = AF_INET6;
		fib.l4_protocol = ip6->nexthdr;
		__builtin_memcpy(fib.ipv6_src, &ip6->saddr, 16);
		if (act == SID_END_DX6) {
			__builtin_memcpy(fib.ipv6_dst, sid->nh, 16);
		} else {
			__builtin_memcpy(fib.ipv6_dst, &ip6->daddr, 16);
			table = sid->table;
		}
		if (ip6->hop_limit <= 1)
			reason = PASS_TTL;
	} else {
		return verdict(DROP_BAD_INNER, p->len);
	}
	count(&sid_stats, sid->id, p->len);

	fib.ifindex = ctx->ingress_ifindex;
	fib.tot_len = inner_len;
	if (reason == REASON_NONE) {
		rc = fib_lookup(ctx, &fib, table);
		if (rc == BPF_FIB_LKUP_RET_FRAG_NEEDED)
			return decap_too_big(ctx, p, &fib, table, proto, ioff, inner_len, vlan);
		if (rc != BPF_FIB_LKUP_RET_SUCCESS)
			reason = fib_reason(rc);
	}

	if (reason == REASON_NONE) {
		/* Forward: TTL / hop limit of the inner packet, in place before the headers move. */
		if (proto == ETH_P_IP_BE) {
			struct iphdr *iph = data + ioff;
			if ((void *)(iph + 1) > data_end)
				return verdict(DROP_BAD_INNER, p->len);
			ip4_dec_ttl(iph);
		} else {
			struct ipv6hdr *ip6 = data + ioff;
			if ((void *)(ip6 + 1) > data_end)
				return verdict(DROP_BAD_INNER, p->len);
			ip6->hop_limit--;
		}
		if (trim_to(ctx, ioff + inner_len))
			return verdict(DROP_NO_ROOM, p->len);
		if (write_l2(ctx, (int)ioff - ETH_HLEN - (vlan ? VLAN_HLEN : 0), fib.dmac, fib.smac, vlan, proto))
			return verdict(DROP_NO_ROOM, p->len);
		return redirect(fib.ifindex, p->len);
	}

	/* Hand the kernel the decapsulated packet, addressed to this node's MAC as it arrived. */
	{
		struct ethhdr *eth = data;
		if ((void *)(eth + 1) > data_end)
			return verdict(DROP_TRUNC_IP, p->len);
		__builtin_memcpy(mac, eth, sizeof(mac));
	}
	if (trim_to(ctx, ioff + inner_len))
		return verdict(DROP_NO_ROOM, p->len);
	if (write_l2(ctx, (int)ioff - ETH_HLEN, mac, mac + ETH_ALEN, 0, proto))
		return verdict(DROP_NO_ROOM, p->len);
	return verdict(reason, p->len);
}

/* The outer IPv6 header of a packet addressed to a local SID, as the kernel's IPv6 input takes it:
 * version 6, payload length not 0 and not beyond the frame; bytes beyond it (Ethernet padding) are
 * trimmed, so lengths and the MTU check below are those of the real packet. */
static __always_inline int outer_check(struct xdp_md *ctx, struct pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6 = data + p->l3off;
	__u32 len;
	int rc;

	if ((void *)(ip6 + 1) > data_end)
		return DROP_TRUNC_IP;
	rc = ip6_check(ip6, data_end, &len);
	if (rc != REASON_NONE)
		return rc;
	if (trim_to(ctx, p->l3off + len))
		return DROP_NO_ROOM;
	return REASON_NONE;
}

/* A packet whose IPv6 destination is a local SID. */
static __always_inline int endpoint(struct xdp_md *ctx, struct pkt *p, struct sid_entry *sid)
{
	void *data, *data_end;
	struct srh_info s = {};
	int rc;

	rc = outer_check(ctx, p);
	if (rc != REASON_NONE)
		return verdict(rc, p->len);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	rc = find_srh(data, data_end, p->l3off, &s);
	if (rc != REASON_NONE)
		return verdict(rc, p->len);
	/* TLVs (padding, HMAC, ...): the kernel validates their layout and checks HMACs. */
	if (s.tlv)
		return verdict(PASS_SRH_TLV, p->len);
	switch (sid->action) {
	case SID_END:
	case SID_END_X:
	case SID_END_T:
		count(&sid_stats, sid->id, p->len);
		return end_transit(ctx, p, sid, &s);
	case SID_END_DX4:
	case SID_END_DX6:
	case SID_END_DT4:
	case SID_END_DT6:
	case SID_END_DT46:
		return end_decap(ctx, p, sid, &s);
	default:
		return finish(XDP_PASS, p->len);
	}
}
