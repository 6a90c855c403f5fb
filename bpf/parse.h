/* parse.h: bounds-checked header parsers for Ethernet/802.1Q, IPv4, IPv6 and the SRH walk. */
#pragma once

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in6.h>
#include <bpf/bpf_helpers.h>
#include "consts.h"
#include "structs.h"

/* What the parser learned about one frame. Offsets are from ctx->data. */
/* l3off shares its 8 bytes of stack only with chain, which the pipeline does not write after parsing:
 * a store into the other half of a stack slot makes the verifier forget the range it knows a value
 * there by, and the headers are read at data + l3off. */
struct pkt {
	__u32 l3off;   /* first byte of the IPv4/IPv6 header */
	__u32 chain;   /* local SIDs processed before this one in the same pass (pipeline.h local_sids) */
	__u32 len;     /* frame length at ingress */
	__u32 ifindex; /* ingress interface, read from the context once (ctx_parse): clang may otherwise keep a
			* pointer into the context the verifier refuses to dereference */
	__u16 vlan;    /* outer VLAN ID, 0 when untagged */
	__be16 proto;  /* ethertype of the L3 header */
	__u32 frags;   /* XDP in the driver: the frame has bytes beyond its first buffer (ctx_whole_len) */
};

/* Whether two 16-byte addresses are equal (two 8-byte compares). */
static __always_inline int same16(const __u8 *a, const __u8 *b)
{
	__u64 a0, a1, b0, b1;

	__builtin_memcpy(&a0, a, 8);
	__builtin_memcpy(&a1, a + 8, 8);
	__builtin_memcpy(&b0, b, 8);
	__builtin_memcpy(&b1, b + 8, 8);
	return a0 == b0 && a1 == b1;
}

struct vlan_tag {
	__be16 tci;
	__be16 proto;
};

/* The pkt a global function (endpoint(), headend()) gets: the verifier checks such a function once,
 * on its own, knowing nothing of what its pointer arguments point at, so it works on a copy whose
 * bounds it proves again. 0, or -1 for a pkt parse_l2 could not have made. */
static __always_inline int pkt_arg(const struct pkt *arg, struct pkt *pk)
{
	__u32 l3off;

	if (!arg)
		return -1;
	l3off = arg->l3off;
	if (l3off > ETH_HLEN + MAX_VLAN_TAGS * VLAN_HLEN)
		return -1;
	pk->l3off = l3off;
	pk->len = arg->len;
	pk->vlan = arg->vlan;
	pk->proto = arg->proto;
	pk->ifindex = arg->ifindex;
	pk->chain = arg->chain;
	pk->frags = arg->frags;
	return 0;
}

/* Ethernet plus up to MAX_VLAN_TAGS tags. Returns a drop reason or REASON_NONE. */
static __always_inline int parse_l2(void *data, void *data_end, struct pkt *p)
{
	struct ethhdr *eth = data;
	__u32 off = ETH_HLEN;

	if ((void *)(eth + 1) > data_end)
		return DROP_TRUNC_VLAN;
	p->proto = eth->h_proto;
	p->vlan = 0;
#pragma unroll
	for (int i = 0; i < MAX_VLAN_TAGS; i++) {
		if (p->proto != ETH_P_8021Q_BE && p->proto != ETH_P_8021AD_BE)
			break;
		struct vlan_tag *tag = data + off;
		if ((void *)(tag + 1) > data_end)
			return DROP_TRUNC_VLAN;
		if (i == 0)
			p->vlan = bpf_ntohs(tag->tci) & 0x0FFF;
		p->proto = tag->proto;
		off += VLAN_HLEN;
	}
	p->l3off = off;
	return REASON_NONE;
}

/* Where an SRv6 endpoint finds its routing header and the payload behind it. */
struct srh_info {
	__u32 srh_off;	/* offset of the SRH, 0 when there is none */
	__u32 next_off; /* offset of the header after the SRH (or after the IPv6 header) */
	__u8 next_hdr;	/* protocol of that header */
	__u8 sl;	/* segments left */
	__u8 last;	/* last entry */
	__u8 tlv;	/* the SRH is longer than its segment list: TLVs follow */
};

/* Walks the IPv6 extension headers of a packet addressed to a local SID, up to the SRH.
 * Returns REASON_NONE, a DROP_* reason, or PASS_FRAGMENT. */
static __always_inline int find_srh(void *data, void *data_end, __u32 l3off, struct srh_info *s)
{
	struct ipv6hdr *ip6 = data + l3off;
	__u8 nh;
	__u32 off;

	if ((void *)(ip6 + 1) > data_end)
		return DROP_TRUNC_IP;
	nh = ip6->nexthdr;
	off = l3off + IPV6_HLEN;
	s->srh_off = 0;

	for (int i = 0; i < MAX_EXT_HDRS; i++) {
		__u8 *h;
		__u32 hlen;

		if (nh == PROTO_FRAGMENT)
			return PASS_FRAGMENT;
		if (nh != PROTO_HOPOPTS && nh != PROTO_DSTOPTS && nh != PROTO_AH && nh != PROTO_ROUTING) {
			s->next_hdr = nh;
			s->next_off = off;
			return REASON_NONE;
		}
		off &= 0x3FFF; /* keeps the verifier's range of off small */
		h = data + off;
		if ((void *)(h + 8) > data_end)
			return DROP_TRUNC_EXTHDR;
		if (nh == PROTO_ROUTING) {
			if (h[2] != SRH_ROUTING_TYPE)
				return DROP_BAD_ROUTING_TYPE;
			hlen = ((__u32)h[1] + 1) * 8;
			s->srh_off = off;
			s->next_hdr = h[0];
			s->sl = h[3];
			s->last = h[4];
			if (hlen < SRH_FIXED_LEN + 16 * ((__u32)s->last + 1))
				return DROP_SRH_BAD_LEN;
			s->tlv = hlen > SRH_FIXED_LEN + 16 * ((__u32)s->last + 1);
			if (data + off + hlen > data_end)
				return DROP_SRH_BAD_LEN;
			if ((__u32)s->sl > (__u32)s->last + 1)
				return DROP_SRH_SL_BEYOND;
			s->next_off = off + hlen;
			return REASON_NONE;
		}
		hlen = nh == PROTO_AH ? ((__u32)h[1] + 2) * 4 : ((__u32)h[1] + 1) * 8;
		nh = h[0];
		off += hlen;
	}
	if (nh == PROTO_HOPOPTS || nh == PROTO_DSTOPTS || nh == PROTO_AH || nh == PROTO_ROUTING || nh == PROTO_FRAGMENT)
		return DROP_TOO_MANY_EXTHDRS;
	s->next_hdr = nh;
	s->next_off = off;
	return REASON_NONE;
}
