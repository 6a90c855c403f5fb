/* ctx_tc.h: the packet context (ctx.h) of the tc hook (tcx ingress): an skb after GRO, possibly a GSO
 * aggregate of many segments with only its headers in the linear part, its VLAN tag in the skb's
 * metadata. Headers are added and removed with bpf_skb_adjust_room, which keeps the aggregate whole
 * and sets its GSO type (the tunnel's on encapsulation: segmentation then happens at the wire, by the
 * NIC or by the kernel's GSO; decapsulation leaves the inner packet's). */
#pragma once

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "consts.h"
#include "maps.h"
#include "parse.h"

#define ctx_buff __sk_buff
#define CTX_ANSWERS_TOO_BIG 0

/* bpf_skb_adjust_room flags of Linux 6.3+ (BPF_F_ADJ_ROOM_DECAP_L3_IPV4/6; this build's UAPI headers
 * may predate them): a decapsulation that sets the skb's protocol to the inner packet's. */
#define ADJ_ROOM_DECAP_L3_IPV4 (1ULL << 7)
#define ADJ_ROOM_DECAP_L3_IPV6 (1ULL << 8)

/* The flag that also clears the tunnel's GSO type and skb->encapsulation on decapsulation
 * (BPF_F_ADJ_ROOM_DECAP_IPXIP6, kernels after 6.18), set at load time when the running kernel has it
 * (0: its decapsulated aggregates keep SKB_GSO_IPXIP6; see docs/hypervisor.md). */
const volatile __u64 decap_tunnel_flag = 0;

/* Headers the behaviors read directly: Ethernet, IPv6 + SRH of MAX_SEGMENTS, the inner IP and TCP
 * headers with options. */
#define CTX_PULL_LEN 512

#ifdef SEG6X_TRACE
/* The traced build's extra registers led clang to keep &ctx->data_end in a register and load through
 * it later, which the verifier refuses (a modified ctx pointer): each read is one load from ctx. */
#define CTX_FIELD(ctx, field)                                                                       \
	({                                                                                          \
		__u64 __v;                                                                          \
		asm volatile("%[v] = *(u32 *)(%[c] + %[o])"                                         \
			     : [v] "=r"(__v)                                                        \
			     : [c] "r"(ctx), [o] "i"(__builtin_offsetof(struct __sk_buff, field))); \
		(void *)(long)__v;                                                                  \
	})
#else
#define CTX_FIELD(ctx, field) ((void *)(long)(ctx)->field)
#endif

static __always_inline void *ctx_data(struct __sk_buff *ctx)
{
	return CTX_FIELD(ctx, data);
}

static __always_inline void *ctx_data_end(struct __sk_buff *ctx)
{
	return CTX_FIELD(ctx, data_end);
}

/* One load from ctx that clang cannot merge with a load through another pointer (a `c ? ctx->len :
 * p->len` made one load through a selected pointer, which the verifier refuses). */
static __always_inline __u32 ctx_len(struct __sk_buff *ctx)
{
	__u64 v;

	asm volatile("%[v] = *(u32 *)(%[c] + %[o])"
		     : [v] "=r"(v)
		     : [c] "r"(ctx), [o] "i"(__builtin_offsetof(struct __sk_buff, len)));
	return v;
}

/* A non-linear skb is read and written through the skb helpers: nothing to tell apart. */
static __always_inline int ctx_frags(struct __sk_buff *ctx, __u32 len)
{
	return 0;
}

static __always_inline int ctx_load_bytes(struct __sk_buff *ctx, __u32 off, void *to, __u32 n)
{
	return bpf_skb_load_bytes(ctx, off, to, n);
}

static __always_inline int ctx_ret(int action)
{
	if (action == ACT_REDIRECT)
		return TC_ACT_REDIRECT;
	return action == ACT_PASS ? TC_ACT_OK : TC_ACT_SHOT;
}

/* Only to attached ports, as on XDP (a detached port keeps the kernel's own forwarding). */
static __always_inline int ctx_redirect(__u32 ifindex)
{
	if (!bpf_map_lookup_elem(&tx_ports, &ifindex))
		return -1;
	return bpf_redirect(ifindex, 0) == TC_ACT_REDIRECT ? 0 : -1;
}

static __always_inline int ctx_trim(struct __sk_buff *ctx, __u32 want_len)
{
	if (ctx->len > want_len)
		return bpf_skb_change_tail(ctx, want_len, 0);
	return 0;
}

/* The skb knows its length: have is XDP's business. */
static __always_inline int ctx_trim_len(struct __sk_buff *ctx, __u32 have, __u32 want_len)
{
	return ctx_trim(ctx, want_len);
}

static __always_inline int ctx_store(struct __sk_buff *ctx, __u32 off, const void *src, __u32 n)
{
	return bpf_skb_store_bytes(ctx, off, src, n, 0);
}

/* ctx_store of an encapsulation header (XDP writes those with direct stores). */
static __always_inline int ctx_store_hdr(struct __sk_buff *ctx, __u32 off, const void *src, __u32 n)
{
	return ctx_store(ctx, off, src, n);
}

/* Makes the headers directly readable, and puts a VLAN tag that is still in the packet's bytes (a
 * BPF_PROG_TEST_RUN frame; the stack itself moves it before tc) into the metadata, as the stack does:
 * the L3 header then follows a 14-byte Ethernet header unless a second tag follows. */
static __always_inline void ctx_prepare(struct __sk_buff *ctx)
{
	void *data = ctx_data(ctx), *data_end = ctx_data_end(ctx);
	__u32 want = ctx->len < CTX_PULL_LEN ? ctx->len : CTX_PULL_LEN;
	struct ethhdr *eth;
	struct vlan_tag *tag;
	__be16 tpid;

	if (data + want > data_end)
		bpf_skb_pull_data(ctx, want);
	if (ctx->vlan_present)
		return;
	data = ctx_data(ctx);
	data_end = ctx_data_end(ctx);
	eth = data;
	tag = (void *)(eth + 1);
	if ((void *)(tag + 1) > data_end)
		return;
	tpid = eth->h_proto;
	if ((tpid != ETH_P_8021Q_BE && tpid != ETH_P_8021AD_BE) || tag->proto == ETH_P_8021Q_BE ||
	    tag->proto == ETH_P_8021AD_BE)
		return;
	{
		__u16 tci = bpf_ntohs(tag->tci);

		if (bpf_skb_vlan_pop(ctx) == 0)
			bpf_skb_vlan_push(ctx, tpid, tci);
	}
}

/* The VLAN ID of the skb's metadata tag (0: none). */
static __always_inline __u16 ctx_vlan(struct __sk_buff *ctx)
{
	return ctx->vlan_present ? ctx->vlan_tci & 0x0FFF : 0;
}

/* The packet at l3off gets a fresh Ethernet header, its ethertype proto, and the metadata tag vlan (0:
 * none). Outer headers in front of it (l3off beyond ETH_HLEN) are removed as a decapsulation, which
 * sets the skb's protocol and keeps a GSO aggregate whole with its segment size. */
static __always_inline int ctx_set_l2(struct __sk_buff *ctx, __u32 l3off, const __u8 *dmac, const __u8 *smac,
				      __u16 vlan, __be16 proto)
{
	void *data, *data_end;
	struct ethhdr *eth;
	__u64 flags = BPF_F_ADJ_ROOM_FIXED_GSO;

	if (l3off > ETH_HLEN) {
		flags |= (proto == ETH_P_IP_BE ? ADJ_ROOM_DECAP_L3_IPV4 : ADJ_ROOM_DECAP_L3_IPV6) | decap_tunnel_flag;
		if (bpf_skb_adjust_room(ctx, -(int)(l3off - ETH_HLEN), BPF_ADJ_ROOM_MAC, flags))
			return -1;
	}
	if (ctx->vlan_present && bpf_skb_vlan_pop(ctx))
		return -1;
	data = ctx_data(ctx);
	data_end = ctx_data_end(ctx);
	eth = data;
	if ((void *)(eth + 1) > data_end)
		return -1;
	__builtin_memcpy(eth->h_dest, dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, smac, ETH_ALEN);
	eth->h_proto = proto;
	if (vlan && bpf_skb_vlan_push(ctx, ETH_P_8021Q_BE, vlan & 0x0FFF))
		return -1;
	return 0;
}

/* Removes len bytes at off, which callers keep right after the IPv6 header (an SRH being popped): a
 * GSO aggregate keeps its segment size (each segment loses the same bytes). 0, or -1. */
static __always_inline int ctx_pop(struct __sk_buff *ctx, __u32 off, __u32 len)
{
	return bpf_skb_adjust_room(ctx, -(int)len, BPF_ADJ_ROOM_NET, BPF_F_ADJ_ROOM_FIXED_GSO) ? -1 : 0;
}

/* Room for hdr_len bytes of outer IPv6 (+ SRH) header after the Ethernet header, as a tunnel
 * encapsulation: the skb's protocol becomes IPv6, a GSO aggregate gets the IPv6-tunnel GSO type on top
 * of its own (segmented later with the outer header repeated on each segment) and keeps its segment
 * size (the caller checked that segments fit). The tenant's VLAN tag goes. */
static __always_inline int ctx_encap_room(struct __sk_buff *ctx, __u32 l3off, __u32 inner_len, __u32 hdr_len)
{
	if (l3off != ETH_HLEN)
		return -1;
	if (ctx->vlan_present && bpf_skb_vlan_pop(ctx))
		return -1;
	return bpf_skb_adjust_room(ctx, hdr_len, BPF_ADJ_ROOM_MAC,
				   BPF_F_ADJ_ROOM_ENCAP_L3_IPV6 | BPF_F_ADJ_ROOM_FIXED_GSO) ?
		       -1 :
		       0;
}

/* The L3 length (from l3off) of the largest packet this skb becomes on the wire: itself, or for a GSO
 * aggregate, one segment: the headers up to the TCP / UDP payload (the IP header at ipoff, ethertype
 * proto, without extension headers) plus the segment size. 0 when it cannot be told. */
static __always_inline __u32 ctx_wire_len(struct __sk_buff *ctx, void *data, void *data_end, __u32 l3off, __u32 ipoff,
					  __be16 proto, __u32 len)
{
	__u32 gso = ctx->gso_size, l4off;
	__u8 l4;

	if (!gso)
		return len;
	ipoff &= 0x1FF;
	if (proto == ETH_P_IP_BE) {
		struct iphdr *iph = data + ipoff;

		if ((void *)(iph + 1) > data_end)
			return 0;
		l4 = iph->protocol;
		l4off = ipoff + iph->ihl * 4;
	} else {
		struct ipv6hdr *ip6 = data + ipoff;

		if ((void *)(ip6 + 1) > data_end)
			return 0;
		l4 = ip6->nexthdr;
		l4off = ipoff + IPV6_HLEN;
	}
	if (l4 == PROTO_UDP)
		return l4off + 8 + gso - l3off;
	if (l4 == PROTO_TCP) {
		__u8 *th = data + (l4off & 0x3FF);

		if ((void *)(th + 20) > data_end)
			return 0;
		return l4off + (th[12] >> 4) * 4 + gso - l3off;
	}
	return 0;
}

/* Ethernet, the VLAN tag from the metadata. A tag left in the bytes (802.1ad with an inner 802.1Q tag)
 * is not seg6x's: proto 0, the kernel gets it. */
static __always_inline int ctx_parse(struct __sk_buff *ctx, struct pkt *p)
{
	int rc;

	p->ifindex = ctx->ingress_ifindex;
	ctx_prepare(ctx);
	p->len = ctx_len(ctx);
	rc = parse_l2(ctx_data(ctx), ctx_data_end(ctx), p);
	if (rc != REASON_NONE)
		return rc;
	if (p->l3off != ETH_HLEN)
		p->proto = 0;
	p->vlan = ctx_vlan(ctx);
	return REASON_NONE;
}

/* An skb's length is the whole packet's from the start (ctx_parse). */
static __always_inline int ctx_whole_len(struct __sk_buff *ctx, struct pkt *p, __u32 frags)
{
	return REASON_NONE;
}
