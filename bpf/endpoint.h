/* endpoint.h: SRv6 endpoint behaviors of local SIDs (RFC 8986 4.1-4.8): one function per behavior (End,
 * End.X, End.T and the decapsulating End.DX4, End.DX6, End.DT4, End.DT6, End.DT46; the NEXT-C-SID flavor of
 * End and End.X; the binding SIDs End.B6.Encaps* in binding.h) built on shared steps
 * (SRH advance, inner-packet validation, FIB forward), dispatched from one switch in endpoint(). The
 * codes are enum sid_action; the control plane's table of the same behaviors is internal/state/behaviors.go. */
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
#include "ipcheck.h"
#include "toobig.h"
#include "sidlookup.h"
#include "binding.h"

/* Returned by a transit behavior when the new destination is another local SID (no verdict yet). */
#define SID_CHAIN -1

/* Where a behavior sends the packet: the FIB lookup to make and, after decapsulation, where the inner
 * packet lies and what the kernel gets if the fast path does not forward it. */
struct hop {
	struct bpf_fib_lookup fib;
	__u32 table;	 /* FIB table (0: main, through the policy rules) */
	__u32 ioff;	 /* decap: offset of the inner packet */
	__u32 inner_len; /* decap: its length */
	__be16 proto;	 /* decap: its ethertype */
	__u16 vlan;	 /* decap: VLAN ID pushed on egress (0: none) */
	int to_kernel;	 /* decap: PASS_* reason to hand the decapsulated packet to the kernel (0: forward) */
	int pop;	 /* PSP / USP: the SRH goes before the packet leaves */
};

/* ---- Shared steps ---------------------------------------------------------------------------------- */

/* The hop limit of a transit behavior: checked and decremented once per node, by the first SID of a
 * chain, as the kernel does (its seg6local routes chain without touching it; ip6_forward, once, after
 * the last). PASS_TTL when it would expire, else REASON_NONE. */
static __always_inline int hop_limit(struct pkt *p, struct ipv6hdr *ip6)
{
	if (p->chain)
		return REASON_NONE;
	if (ip6->hop_limit <= 1)
		return PASS_TTL;
	ip6->hop_limit--;
	return REASON_NONE;
}

/* The FIB lookup of a transit behavior towards the (new) destination of the outer packet. */
static __always_inline int transit_fib(struct ctx_buff *ctx, struct pkt *p, struct srh_info *s, struct hop *h,
				       void *data, void *data_end, struct ipv6hdr *ip6)
{
	h->fib.family = AF_INET6;
	h->fib.ifindex = p->ifindex;
	h->fib.tot_len = ctx_wire_len(ctx, data, data_end, p->l3off, s->next_off,
				      s->next_hdr == PROTO_IPIP ? ETH_P_IP_BE :
				      s->next_hdr == PROTO_IPV6 ? ETH_P_IPV6_BE :
								  0,
				      IPV6_HLEN + bpf_ntohs(ip6->payload_len));
	if (!h->fib.tot_len)
		return PASS_GSO_UNSIZED;
	/* The flow fields the kernel's multipath hash reads of the forwarded packet (flow label, next
	 * header; no ports: the kernel's flow dissector stops at the encapsulation). */
	h->fib.flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0FFFFFFF);
	h->fib.l4_protocol = ip6->nexthdr;
	__builtin_memcpy(h->fib.ipv6_src, &ip6->saddr, 16);
	__builtin_memcpy(h->fib.ipv6_dst, &ip6->daddr, 16);
	return REASON_NONE;
}

/* NEXT-C-SID (RFC 9800), as the kernel's End / End.X do it: when the destination's argument (what
 * follows the locator block and the node function) is not zero, the next uSID moves into place (the
 * argument shifted left by the node function length, the freed tail zeroed, the block untouched),
 * hop limit--, and the lookup goes to the new destination; an SRH, if any, is not looked at. A zero
 * argument: CSID_CLASSIC, the behavior goes on as without the flavor (the SRH's next segment). */
#define CSID_CLASSIC -3

/* Whether the SID has NEXT-C-SID and the destination da an argument left (not zero); *hi, *lo: da as
 * one 128-bit number, in registers. */
static __always_inline int csid_arg(const struct sid_entry *sid, const void *da, __u64 *hi, __u64 *lo)
{
	/* Lengths in bits (multiples of 8, 8..120, lb + nf <= 128: checked by the control plane,
	 * bounded again here for the verifier). The argument: the bits after the first lb + nf. */
	__u32 from = (((__u32)sid->lb_bytes * 8) & 127) + (((__u32)sid->nf_bytes * 8) & 127);
	__u64 mhi, mlo;

	if (!(sid->flags & SID_F_NEXT_CSID))
		return 0;
	__builtin_memcpy(hi, da, 8);
	__builtin_memcpy(lo, (const __u8 *)da + 8, 8);
	*hi = bpf_be64_to_cpu(*hi);
	*lo = bpf_be64_to_cpu(*lo);
	mhi = from >= 64 ? 0 : ~0ULL >> from;
	mlo = from >= 128 ? 0 : from <= 64 ? ~0ULL : ~0ULL >> (from - 64);
	return !!((*hi & mhi) | (*lo & mlo));
}

static __always_inline int csid_advance(struct ctx_buff *ctx, struct pkt *p, struct sid_entry *sid, struct srh_info *s,
					struct hop *h)
{
	void *data = ctx_data(ctx);
	void *data_end = ctx_data_end(ctx);
	struct ipv6hdr *ip6 = data + p->l3off;
	__u32 lb = ((__u32)sid->lb_bytes * 8) & 127, nf = ((__u32)sid->nf_bytes * 8) & 127;
	__u64 hi, lo, mhi, mlo, shi, slo;
	int rc;

	if ((void *)(ip6 + 1) > data_end)
		return DROP_TRUNC_IP;
	if (!csid_arg(sid, &ip6->daddr, &hi, &lo))
		return CSID_CLASSIC;
	rc = hop_limit(p, ip6);
	if (rc != REASON_NONE)
		return rc;
	/* Everything after the block moves left by the node function length; the tail fills with 0. */
	if (nf >= 64) {
		shi = lo << (nf - 64);
		slo = 0;
	} else {
		shi = (hi << nf) | (nf ? lo >> (64 - nf) : 0);
		slo = lo << nf;
	}
	mhi = lb >= 64 ? 0 : ~0ULL >> lb; /* the bits after the block */
	mlo = lb <= 64 ? ~0ULL : ~0ULL >> (lb - 64);
	hi = bpf_cpu_to_be64((hi & ~mhi) | (shi & mhi));
	lo = bpf_cpu_to_be64((lo & ~mlo) | (slo & mlo));
	__builtin_memcpy(&ip6->daddr, &hi, 8);
	__builtin_memcpy((__u8 *)&ip6->daddr + 8, &lo, 8);
	return transit_fib(ctx, p, s, h, data, data_end, ip6);
}

/* SRH advance (RFC 8986 4.1): SL--, DA = Segment List[SL], hop limit--. The lookup goes to the new
 * destination. Returns REASON_NONE or the reason the packet goes no further here. */
static __always_inline int srh_advance(struct ctx_buff *ctx, struct pkt *p, struct srh_info *s, struct hop *h)
{
	void *data = ctx_data(ctx);
	void *data_end = ctx_data_end(ctx);
	struct ipv6hdr *ip6 = data + p->l3off;
	__u8 *srh, *seg;
	__u32 sl, off;
	int rc;

	if (!s->srh_off || s->sl == 0)
		return PASS_LOCAL;
	if ((void *)(ip6 + 1) > data_end)
		return DROP_TRUNC_IP;
	if (!p->chain && ip6->hop_limit <= 1)
		return PASS_TTL;

	sl = (__u32)s->sl - 1;
	off = (s->srh_off & 0x3FFF) + SRH_FIXED_LEN + (sl & 0xFF) * 16;
	seg = data + off;
	srh = data + (s->srh_off & 0x3FFF);
	if ((void *)(seg + 16) > data_end || (void *)(srh + SRH_FIXED_LEN) > data_end)
		return DROP_SRH_BAD_LEN;
	srh[3] = sl;
	TRACE(tr->sl_after = sl);
	__builtin_memcpy(&ip6->daddr, seg, 16);
	rc = hop_limit(p, ip6);
	if (rc != REASON_NONE)
		return rc;
	return transit_fib(ctx, p, s, h, data, data_end, ip6);
}

/* Is the (new) destination another local SID? Then it is processed in the same pass (End then
 * End.DX4 on one node). */
static __always_inline int next_is_local(struct ctx_buff *ctx, struct pkt *p)
{
	void *data = ctx_data(ctx);
	void *data_end = ctx_data_end(ctx);
	struct ipv6hdr *ip6 = data + p->l3off;

	return (void *)(ip6 + 1) <= data_end && sid_lookup(&ip6->daddr);
}

/* A decap behavior may only act on the last segment. */
static __always_inline int decap_sl_ok(struct srh_info *s)
{
	return !(s->srh_off && s->sl != 0);
}

/* The ports of a decapsulated packet's transport header l4 (protocol proto) into its lookup fib, where
 * the kernel's multipath hash reads them (TCP, UDP, SCTP, UDP-Lite: the ports lead the header). */
static __always_inline void inner_ports(struct bpf_fib_lookup *fib, __u8 proto, void *l4, void *data_end)
{
	if ((proto == PROTO_TCP || proto == PROTO_UDP || proto == 132 || proto == 136) && l4 + 4 <= data_end)
		*(__u32 *)&fib->sport = *(__u32 *)l4;
}

/* The inner packet of a decap behavior (ethertype proto, at the SRH's next header): validated as the
 * headend validates tenant packets (ipcheck.h), its lookup set up: its own destination in the SID's
 * table (by_dst: End.DT*) or the SID's next hop in the main table (End.DX*). A packet the kernel must
 * see (IPv4 options, TTL / hop limit expiring) is still decapsulated, then handed over. */
static __always_inline int inner_packet(struct ctx_buff *ctx, struct pkt *p, struct sid_entry *sid, struct srh_info *s,
					struct hop *h, __be16 proto, int by_dst)
{
	void *data = ctx_data(ctx);
	void *data_end = ctx_data_end(ctx);
	struct ipv6hdr *ip6 = data + p->l3off;
	__u32 ioff = s->next_off & 0x3FFF;
	int rc;

	if ((void *)(ip6 + 1) > data_end)
		return DROP_BAD_INNER;
	/* outer_check() trimmed the frame to the outer packet: its length is the frame's. */
	rc = ip_check_at(data, data_end, p->l3off + IPV6_HLEN + bpf_ntohs(ip6->payload_len), ioff, proto,
			 &h->inner_len);
	if (rc == PASS_IPV4_OPTIONS)
		h->to_kernel = PASS_IPV4_OPTIONS; /* the kernel validates the options of the decapsulated packet */
	else if (rc != REASON_NONE)
		return DROP_BAD_INNER;
	h->ioff = ioff;
	h->proto = proto;
	h->vlan = (sid->flags & SID_F_VLAN) ? sid->vlan : 0;
	h->fib.ifindex = p->ifindex;
	h->fib.tot_len = ctx_wire_len(ctx, data, data_end, ioff, ioff, proto, h->inner_len);
	if (!h->fib.tot_len)
		return PASS_GSO_UNSIZED;
	if (by_dst)
		h->table = sid->table;
	if (proto == ETH_P_IP_BE) {
		struct iphdr *iph = data + ioff;

		if ((void *)(iph + 1) > data_end)
			return DROP_BAD_INNER;
		h->fib.family = AF_INET;
		h->fib.tos = iph->tos;
		h->fib.l4_protocol = iph->protocol;
		h->fib.ipv4_src = iph->saddr;
		if (!(iph->frag_off & IP_MF_OFFSET_BE) && iph->ihl == 5)
			inner_ports(&h->fib, iph->protocol, iph + 1, data_end);
		if (by_dst)
			h->fib.ipv4_dst = iph->daddr;
		else
			__builtin_memcpy(&h->fib.ipv4_dst, sid->nh, 4);
		if (iph->ttl <= 1 && !h->to_kernel)
			h->to_kernel = PASS_TTL;
	} else {
		struct ipv6hdr *ip6 = data + ioff;

		if ((void *)(ip6 + 1) > data_end)
			return DROP_BAD_INNER;
		h->fib.family = AF_INET6;
		h->fib.l4_protocol = ip6->nexthdr;
		h->fib.flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0FFFFFFF);
		inner_ports(&h->fib, ip6->nexthdr, ip6 + 1, data_end);
		__builtin_memcpy(h->fib.ipv6_src, &ip6->saddr, 16);
		if (by_dst)
			__builtin_memcpy(h->fib.ipv6_dst, &ip6->daddr, 16);
		else
			__builtin_memcpy(h->fib.ipv6_dst, sid->nh, 16);
		if (ip6->hop_limit <= 1)
			h->to_kernel = PASS_TTL;
	}
	if (sid->action >= SID_END_DX4) /* End, End.X, End.T (USD) counted the packet on arrival */
		count(&sid_stats, sid->id, p->len);
	return REASON_NONE;
}

/* PSP / USP (RFC 8986 4.16.1-2): the SRH goes; the IPv6 header takes the SRH's next header and a
 * payload length without it, and moves up (with the L2 header in front) over it. Only an SRH right
 * after the IPv6 header is popped here; behind other extension headers the kernel pops it. */
static __always_inline int pop_srh(struct ctx_buff *ctx, struct pkt *p, struct srh_info *s, struct hop *h)
{
	void *data = ctx_data(ctx);
	void *data_end = ctx_data_end(ctx);
	struct ipv6hdr *ip6 = data + p->l3off;
	__u32 off = s->srh_off & 0x3FFF;
	__u8 *srh = data + off;
	__u32 len;

	if (off != p->l3off + IPV6_HLEN)
		return PASS_POP_EXTHDRS;
	if ((void *)(ip6 + 1) > data_end || (void *)(srh + SRH_FIXED_LEN) > data_end)
		return DROP_TRUNC_IP;
	len = ((__u32)srh[1] + 1) * 8;
	ip6->nexthdr = srh[0];
	h->fib.l4_protocol = srh[0]; /* the packet leaves without its SRH */
	ip6->payload_len = bpf_htons(bpf_ntohs(ip6->payload_len) - len);
	if (ctx_pop(ctx, off, len))
		return DROP_NO_ROOM;
	TRACE(tr->flags |= TRACE_F_SRH_POPPED);
	h->fib.tot_len -= len;
	s->next_off -= len;
	s->srh_off = 0;
	return REASON_NONE;
}

/* The next segment of End / End.X / End.T: the next uSID (NEXT-C-SID flavor), else the SRH's, the SRH
 * to be popped (h->pop) when that was its last segment (PSP). At the last segment (segments left 0 on
 * arrival, or no SRH): with USD, SID_USD for an inner IPv4 / IPv6 packet (endpoint() decapsulates it
 * and looks it up in the SID's table: End: main); with USP the SRH is to be popped; the packet is this
 * node's. Popping happens once, in endpoint(). */
#define SID_USD -4
static __always_inline int next_segment(struct ctx_buff *ctx, struct pkt *p, struct sid_entry *sid, struct srh_info *s,
					struct hop *h)
{
	int rc = CSID_CLASSIC;

	if (sid->flags & SID_F_NEXT_CSID)
		rc = csid_advance(ctx, p, sid, s, h);
	if (rc != CSID_CLASSIC)
		return rc;
	if ((sid->flags & SID_F_PSP) && s->srh_off && s->sl == 1 && s->srh_off != p->l3off + IPV6_HLEN)
		return PASS_POP_EXTHDRS; /* before anything changes: the kernel gets the packet as it came */
	rc = srh_advance(ctx, p, s, h);
	if (rc == REASON_NONE && (sid->flags & SID_F_PSP) && s->sl == 1)
		h->pop = 1;
	if (rc != PASS_LOCAL)
		return rc;
	if ((sid->flags & SID_F_USD) && (s->next_hdr == PROTO_IPIP || s->next_hdr == PROTO_IPV6))
		return SID_USD;
	if ((sid->flags & SID_F_USP) && s->srh_off)
		h->pop = 1;
	return PASS_LOCAL;
}

/* FIB forward of a transit behavior: the outer packet leaves through the FIB's next hop (End.T: of the
 * SID's table). A next hop without a usable neighbor makes the lookup try the route's other next hops
 * (fib_lookup_around), whose answer the next-hop cache keeps for the flow. */
static __always_inline int transit_forward(struct ctx_buff *ctx, struct pkt *p, struct hop *h, struct sid_entry *sid)
{
	void *data = ctx_data(ctx);
	void *data_end = ctx_data_end(ctx);
	struct ipv6hdr *ip6 = data + (p->l3off & 0x3F);
	int rc;

	if ((void *)(ip6 + 1) > data_end)
		return verdict(DROP_TRUNC_IP, p->len);
	rc = fib_lookup_around(ctx, &h->fib, h->table, sid->action == SID_END_X ? sid->nh : (const __u8 *)&ip6->daddr);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return verdict(fib_reason(rc), p->len);
	if ((sid->flags & SID_F_PLUGIN) && !fabric_port(h->fib.ifindex))
		return verdict(DROP_PLUGIN_BOUNDARY, p->len);
	if (ctx_set_l2(ctx, p->l3off, h->fib.dmac, h->fib.smac, 0, ETH_P_IPV6_BE))
		return verdict(DROP_NO_ROOM, p->len);
	return send_pkt(ctx, p, h->fib.ifindex);
}

/* FIB forward after decapsulation: the inner packet leaves through the FIB's next hop with the SID's
 * VLAN, its TTL / hop limit decremented; one too big for its port is answered (icmp.h); anything the
 * fast path cannot finish goes to the kernel already decapsulated, addressed to this node's MAC as it
 * arrived. */
static __always_inline int decap_forward(struct ctx_buff *ctx, struct pkt *p, struct hop *h, struct sid_entry *sid)
{
	void *data = ctx_data(ctx);
	void *data_end = ctx_data_end(ctx);
	__u32 ioff = h->ioff & 0x3FFF, have;
	struct ipv6hdr *o6 = data + (p->l3off & 0x1F); /* <= 22 (pkt_arg) */
	__u8 mac[2 * ETH_ALEN];
	int reason = h->to_kernel, rc;

	/* outer_check() trimmed the frame to the outer packet: its length is the frame's (no helper). */
	if ((void *)(o6 + 1) > data_end)
		return verdict(DROP_TRUNC_IP, p->len);
	have = (p->l3off & 0x1F) + IPV6_HLEN + bpf_ntohs(o6->payload_len);

	if (reason == REASON_NONE) {
		/* An IPv6 packet's next hop without a usable neighbor: the route's others are tried
		 * (fib_lookup_around; its destination: End.DX6's next hop, or the packet's). */
		const __u8 *around = NULL;
		struct ipv6hdr *i6 = data + ioff;

		if (h->proto == ETH_P_IPV6_BE && (void *)(i6 + 1) <= data_end)
			around = sid->action == SID_END_DX6 ? sid->nh : (const __u8 *)&i6->daddr;
		rc = fib_lookup_around(ctx, &h->fib, h->table, around);
		if (rc == BPF_FIB_LKUP_RET_FRAG_NEEDED)
			return decap_too_big(ctx, p, &h->fib, h->table, h->proto, ioff, h->inner_len, h->vlan);
		if (rc != BPF_FIB_LKUP_RET_SUCCESS)
			reason = fib_reason(rc);
	}

	if (reason == REASON_NONE) {
		/* TTL / hop limit of the inner packet, in place before the headers move. */
		if (ip_forwarded(data, data_end, ioff, h->proto))
			return verdict(DROP_BAD_INNER, p->len);
		if (ctx_trim_len(ctx, have, ioff + h->inner_len))
			return verdict(DROP_NO_ROOM, p->len);
		if (ctx_set_l2(ctx, ioff, h->fib.dmac, h->fib.smac, h->vlan, h->proto))
			return verdict(DROP_NO_ROOM, p->len);
		return send_pkt(ctx, p, h->fib.ifindex);
	}

	{
		struct ethhdr *eth = data;
		if ((void *)(eth + 1) > data_end)
			return verdict(DROP_TRUNC_IP, p->len);
		__builtin_memcpy(mac, eth, sizeof(mac));
	}
	if (ctx_trim_len(ctx, have, ioff + h->inner_len))
		return verdict(DROP_NO_ROOM, p->len);
	if (ctx_set_l2(ctx, ioff, mac, mac + ETH_ALEN, 0, h->proto))
		return verdict(DROP_NO_ROOM, p->len);
	return verdict(reason, p->len);
}

/* ---- One function per behavior (RFC 8986 4.1-4.8) ---------------------------------------------------
 * Each returns REASON_NONE with *h set for the shared forward step, SID_CHAIN, or the reason for the
 * verdict. Transit behaviors count the packet on arrival, decap behaviors once the inner packet is
 * found sound. */

/* End: the next segment, looked up in the main table. */
static __always_inline int end(struct ctx_buff *ctx, struct pkt *p, struct sid_entry *sid, struct srh_info *s,
			       struct hop *h)
{
	int rc = next_segment(ctx, p, sid, s, h);

	if (rc != REASON_NONE)
		return rc;
	return next_is_local(ctx, p) ? SID_CHAIN : REASON_NONE;
}

/* End.X: the next segment, forwarded to the SID's IPv6 next hop (a layer-3 cross-connect). */
static __always_inline int end_x(struct ctx_buff *ctx, struct pkt *p, struct sid_entry *sid, struct srh_info *s,
				 struct hop *h)
{
	int rc = next_segment(ctx, p, sid, s, h);

	if (rc != REASON_NONE)
		return rc;
	__builtin_memcpy(h->fib.ipv6_dst, sid->nh, 16);
	return REASON_NONE;
}

/* End.T: the next segment, looked up in the SID's table. */
static __always_inline int end_t(struct ctx_buff *ctx, struct pkt *p, struct sid_entry *sid, struct srh_info *s,
				 struct hop *h)
{
	int rc = next_segment(ctx, p, sid, s, h);

	if (rc != REASON_NONE)
		return rc;
	h->table = sid->table;
	return next_is_local(ctx, p) ? SID_CHAIN : REASON_NONE;
}

/* End.DX4: decapsulate, the IPv4 packet to the SID's next hop. */
static __always_inline int end_dx4(struct ctx_buff *ctx, struct pkt *p, struct sid_entry *sid, struct srh_info *s,
				   struct hop *h)
{
	if (!decap_sl_ok(s))
		return DROP_DECAP_SL_NONZERO;
	if (s->next_hdr != PROTO_IPIP)
		return DROP_BAD_INNER;
	return inner_packet(ctx, p, sid, s, h, ETH_P_IP_BE, 0);
}

/* End.DX6: decapsulate, the IPv6 packet to the SID's next hop. */
static __always_inline int end_dx6(struct ctx_buff *ctx, struct pkt *p, struct sid_entry *sid, struct srh_info *s,
				   struct hop *h)
{
	if (!decap_sl_ok(s))
		return DROP_DECAP_SL_NONZERO;
	if (s->next_hdr != PROTO_IPV6)
		return DROP_BAD_INNER;
	return inner_packet(ctx, p, sid, s, h, ETH_P_IPV6_BE, 0);
}

/* End.DT4: decapsulate, the IPv4 packet looked up in the SID's table. */
static __always_inline int end_dt4(struct ctx_buff *ctx, struct pkt *p, struct sid_entry *sid, struct srh_info *s,
				   struct hop *h)
{
	if (!decap_sl_ok(s))
		return DROP_DECAP_SL_NONZERO;
	if (s->next_hdr != PROTO_IPIP)
		return DROP_BAD_INNER;
	return inner_packet(ctx, p, sid, s, h, ETH_P_IP_BE, 1);
}

/* End.DT6: decapsulate, the IPv6 packet looked up in the SID's table. */
static __always_inline int end_dt6(struct ctx_buff *ctx, struct pkt *p, struct sid_entry *sid, struct srh_info *s,
				   struct hop *h)
{
	if (!decap_sl_ok(s))
		return DROP_DECAP_SL_NONZERO;
	if (s->next_hdr != PROTO_IPV6)
		return DROP_BAD_INNER;
	return inner_packet(ctx, p, sid, s, h, ETH_P_IPV6_BE, 1);
}

/* End.DT46: decapsulate, either family looked up in the SID's table. */
static __always_inline int end_dt46(struct ctx_buff *ctx, struct pkt *p, struct sid_entry *sid, struct srh_info *s,
				    struct hop *h)
{
	if (!decap_sl_ok(s))
		return DROP_DECAP_SL_NONZERO;
	if (s->next_hdr == PROTO_IPIP)
		return inner_packet(ctx, p, sid, s, h, ETH_P_IP_BE, 1);
	if (s->next_hdr == PROTO_IPV6)
		return inner_packet(ctx, p, sid, s, h, ETH_P_IPV6_BE, 1);
	return DROP_BAD_INNER;
}

/* The outer IPv6 header of a packet addressed to a local SID, as the kernel's IPv6 input takes it:
 * version 6, payload length not 0 and not beyond the frame; bytes beyond it (Ethernet padding) are
 * trimmed, so lengths and the MTU check below are those of the real packet. */
static __always_inline int outer_check(struct ctx_buff *ctx, struct pkt *p)
{
	void *data = ctx_data(ctx);
	void *data_end = ctx_data_end(ctx);
	struct ipv6hdr *ip6 = data + p->l3off;
	__u32 len, have;
	int rc;

	if ((void *)(ip6 + 1) > data_end)
		return DROP_TRUNC_IP;
	/* The frame's length: as it came for the first SID of a chain (no helper call), as it now is
	 * for the next ones. */
	have = p->chain ? ctx_len(ctx) : p->len;
	rc = ip6_check(ip6, data_end, have - p->l3off, &len);
	if (rc != REASON_NONE)
		return rc;
	if (ctx_trim_len(ctx, have, p->l3off + len))
		return DROP_NO_ROOM;
	return REASON_NONE;
}

/* A packet whose IPv6 destination is a local SID. A global function (pkt_arg()): the verifier checks
 * it once, instead of once per place the SID chain of the pipeline reaches it (the behaviors' branches
 * times MAX_SID_CHAIN would not fit its budget), and its stack is not added to the headend's. */
__noinline int endpoint(struct ctx_buff *ctx, struct pkt *arg, struct sid_entry *sid)
{
	void *data, *data_end;
	struct srh_info s = {};
	struct hop h = {};
	struct pkt pk = {}, *p = &pk;
	int rc, decap = 0;

	if (!ctx || !sid || pkt_arg(arg, &pk))
		return ctx_ret(ACT_DROP);
	rc = outer_check(ctx, p);
	if (rc != REASON_NONE)
		return verdict(rc, p->len);
	data = ctx_data(ctx);
	data_end = ctx_data_end(ctx);
	rc = find_srh(data, data_end, p->l3off, &s);
	if (rc != REASON_NONE || s.tlv) {
		struct ipv6hdr *ip6 = data + p->l3off;
		__u64 hi, lo;

		/* NEXT-C-SID with an argument left does not look at the SRH (RFC 9800; the kernel does
		 * not read it then): whatever find_srh saw there, the next uSID moves in. */
		if ((void *)(ip6 + 1) <= data_end && csid_arg(sid, &ip6->daddr, &hi, &lo)) {
			if (rc != REASON_NONE) { /* what lies behind the extension headers is not known */
				s.next_hdr = 0;
				s.next_off = p->l3off + IPV6_HLEN;
			}
		} else if (rc != REASON_NONE) {
			return verdict(rc, p->len);
		} else {
			/* TLVs (padding, HMAC, ...): the kernel validates their layout and checks HMACs. */
			return verdict(PASS_SRH_TLV, p->len);
		}
	}
	TRACE(__u8 sl = s.srh_off ? s.sl : 0xFF; if (!tr->chain) tr->sl_before = sl; tr->sl_after = sl;
	      tr->flags |= TRACE_F_SRH_READ);
	switch (sid->action) {
	case SID_END:
		count(&sid_stats, sid->id, p->len);
		rc = end(ctx, p, sid, &s, &h);
		break;
	case SID_END_X:
		count(&sid_stats, sid->id, p->len);
		rc = end_x(ctx, p, sid, &s, &h);
		break;
	case SID_END_T:
		count(&sid_stats, sid->id, p->len);
		rc = end_t(ctx, p, sid, &s, &h);
		break;
	case SID_END_DX4:
		rc = end_dx4(ctx, p, sid, &s, &h);
		decap = 1;
		break;
	case SID_END_DX6:
		rc = end_dx6(ctx, p, sid, &s, &h);
		decap = 1;
		break;
	case SID_END_DT4:
		rc = end_dt4(ctx, p, sid, &s, &h);
		decap = 1;
		break;
	case SID_END_DT6:
		rc = end_dt6(ctx, p, sid, &s, &h);
		decap = 1;
		break;
	case SID_END_DT46:
		rc = end_dt46(ctx, p, sid, &s, &h);
		decap = 1;
		break;
	case SID_END_B6_ENCAPS:
	case SID_END_B6_ENCAPS_RED:
		count(&sid_stats, sid->id, p->len);
		return binding_sid(ctx, p, sid, &s, &h.fib);
	default:
		return finish(ACT_PASS, p->len);
	}
	if (rc == SID_USD) {
		rc = inner_packet(ctx, p, sid, &s, &h, s.next_hdr == PROTO_IPIP ? ETH_P_IP_BE : ETH_P_IPV6_BE, 1);
		decap = 1;
	} else if (h.pop && (rc == REASON_NONE || rc == PASS_LOCAL || rc == SID_CHAIN)) {
		int prc = pop_srh(ctx, p, &s, &h);

		if (prc != REASON_NONE)
			rc = prc;
	}
	if (rc == SID_CHAIN)
		return SID_CHAIN;
	if (rc != REASON_NONE)
		return verdict(rc, p->len);
	if (decap)
		return decap_forward(ctx, p, &h, sid);
	return transit_forward(ctx, p, &h, sid);
}
