/* ctx_xdp.h: the packet context (ctx.h) of the XDP hook: a frame in one linear buffer, or (a jumbo frame
 * on a multi-buffer driver, the programs being xdp.frags) a first buffer holding the headers followed by
 * fragments the helpers reach (bpf_xdp_load_bytes / store_bytes / adjust_tail); VLAN tags as bytes in
 * it, redirects through the devmap of attached ports. */
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "consts.h"
#include "maps.h"
#include "parse.h"

#define ctx_buff xdp_md
#define CTX_ANSWERS_TOO_BIG 1

static __always_inline void *ctx_data(struct xdp_md *ctx)
{
	return (void *)(long)ctx->data;
}

static __always_inline void *ctx_data_end(struct xdp_md *ctx)
{
	return (void *)(long)ctx->data_end;
}

/* The whole frame, its fragments included. */
static __always_inline __u32 ctx_len(struct xdp_md *ctx)
{
	return bpf_xdp_get_buff_len(ctx);
}

/* Whether a frame of len bytes (ctx_len) has bytes beyond its first buffer (a multi-buffer frame). */
static __always_inline int ctx_frags(struct xdp_md *ctx, __u32 len)
{
	return len > (__u32)(ctx->data_end - ctx->data);
}

static __always_inline int ctx_ret(int action)
{
	return action;
}

static __always_inline int ctx_load_bytes(struct xdp_md *ctx, __u32 off, void *to, __u32 n)
{
	return bpf_xdp_load_bytes(ctx, off, to, n);
}

/* Through the devmap of attached ports: fails when the interface left it after the next hop was
 * chosen (a cached next hop of an interface just detached). */
static __always_inline int ctx_redirect(__u32 ifindex)
{
	return bpf_redirect_map(&tx_ports, ifindex, XDP_DROP) == XDP_REDIRECT ? 0 : -1;
}

/* Drops the bytes beyond want_len of a frame of have bytes (ctx_len: its fragments included). */
static __always_inline int ctx_trim_len(struct xdp_md *ctx, __u32 have, __u32 want_len)
{
	if (have > want_len)
		return bpf_xdp_adjust_tail(ctx, -(int)(have - want_len));
	return 0;
}

static __always_inline int ctx_trim(struct xdp_md *ctx, __u32 want_len)
{
	return ctx_trim_len(ctx, ctx_len(ctx), want_len);
}

static __always_inline int ctx_store(struct xdp_md *ctx, __u32 off, const void *src, __u32 n)
{
	return bpf_xdp_store_bytes(ctx, off, (void *)src, n);
}

/* ctx_store of an encapsulation header: n bytes of src (a map value of MAX_ENCAP_HDR bytes) to off.
 * An IPv6 header and SRH are a whole number of 8-byte words: those are written with direct stores (a
 * few words need no helper call); anything else goes through ctx_store. */
static __always_inline int ctx_store_hdr(struct xdp_md *ctx, __u32 off, const void *src, __u32 n)
{
	__u8 *dst = ctx_data(ctx) + off;
	void *data_end = ctx_data_end(ctx);

	if (n & 7)
		return ctx_store(ctx, off, src, n);
#pragma unroll
	for (int i = 0; i < MAX_ENCAP_HDR / 8; i++) {
		if (i * 8 >= n)
			break;
		if ((void *)(dst + i * 8 + 8) > data_end)
			return -1;
		*(__u64 *)(dst + i * 8) = *(const __u64 *)((const __u8 *)src + i * 8);
	}
	return 0;
}

/* Moves the frame start by `shift` bytes (positive: drop bytes in front, negative: grow) and writes a
 * fresh Ethernet header (with an 802.1Q tag when vlan != 0) in front of the L3 header, which then starts
 * at ETH_HLEN (+ VLAN_HLEN). Returns 0, or -1 when the frame cannot be adjusted. */
static __always_inline int write_l2(struct xdp_md *ctx, int shift, const __u8 *dmac, const __u8 *smac, __u16 vlan,
				    __be16 proto)
{
	void *data, *data_end;
	struct ethhdr *eth;

	if (shift && bpf_xdp_adjust_head(ctx, shift))
		return -1;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) + VLAN_HLEN > data_end)
		return -1;
	__builtin_memcpy(eth->h_dest, dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, smac, ETH_ALEN);
	if (vlan) {
		struct vlan_tag *tag = (void *)(eth + 1);

		eth->h_proto = ETH_P_8021Q_BE;
		tag->tci = bpf_htons(vlan & 0x0FFF);
		tag->proto = proto;
	} else {
		eth->h_proto = proto;
	}
	return 0;
}

/* The packet at l3off (ethertype proto) gets a fresh Ethernet header, with an 802.1Q tag when vlan != 0:
 * whatever lay in front of it (the frame's own L2 header and tags, an outer header being removed) goes. */
static __always_inline int ctx_set_l2(struct xdp_md *ctx, __u32 l3off, const __u8 *dmac, const __u8 *smac, __u16 vlan,
				      __be16 proto)
{
	return write_l2(ctx, (int)l3off - ETH_HLEN - (vlan ? VLAN_HLEN : 0), dmac, smac, vlan, proto);
}

/* Removes len bytes at off (an SRH right after the IPv6 header): what lies in front of them (Ethernet
 * header, tags, IPv6 header: at most CTX_POP_FRONT bytes) moves up by len. 0, or -1. */
#define CTX_POP_FRONT 64
static __always_inline int ctx_pop(struct xdp_md *ctx, __u32 off, __u32 len)
{
	__u32 zero = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	__u32 n = off;

	if (!s || n == 0 || n > CTX_POP_FRONT)
		return -1;
	n -= 1;
	asm volatile("%0 &= 0x3f" : "+r"(n)); /* 1..CTX_POP_FRONT, a range the verifier can see */
	n += 1;
	if (bpf_xdp_load_bytes(ctx, 0, s->buf, n) || bpf_xdp_store_bytes(ctx, len, s->buf, n))
		return -1;
	return bpf_xdp_adjust_head(ctx, (int)len) ? -1 : 0;
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

/* Makes room for hdr_len bytes of outer header between a 14-byte L2 header and the packet at l3off
 * (inner_len bytes, already trimmed to its length): afterwards the packet starts at ETH_HLEN + hdr_len.
 * The frame's own L2 header and tags are left to be overwritten. 0, or -1 when the frame cannot grow. */
static __always_inline int ctx_encap_room(struct xdp_md *ctx, __u32 l3off, __u32 inner_len, __u32 hdr_len)
{
	if (!bpf_xdp_adjust_head(ctx, (int)l3off - (int)(ETH_HLEN + hdr_len)))
		return 0;
	return grow_by_tail(ctx, l3off, inner_len, hdr_len);
}

/* A frame is what reaches the wire. */
static __always_inline __u32 ctx_wire_len(struct xdp_md *ctx, void *data, void *data_end, __u32 l3off, __u32 ipoff,
					  __be16 proto, __u32 len)
{
	return len;
}

/* Ethernet and up to MAX_VLAN_TAGS tags, all in the frame's bytes; p->len gets the first buffer's
 * length (ctx_whole_len makes it the whole frame's once the port is known). First, one read in each of
 * the frame's second and third 64-byte lines (when it has them): a frame arrives written by another CPU,
 * so each line's first read waits for it; issued together, before the first header read, the waits
 * overlap instead of following one another (VXLAN decap reads the inner Ethernet header 70 bytes in,
 * its checksum the whole datagram). */
static __always_inline int ctx_parse(struct xdp_md *ctx, struct pkt *p)
{
	void *data = ctx_data(ctx), *data_end = ctx_data_end(ctx);

	if (data + 129 <= data_end) {
		(void)*(volatile __u8 *)(data + 64);
		(void)*(volatile __u8 *)(data + 128);
	} else if (data + 65 <= data_end) {
		(void)*(volatile __u8 *)(data + 64);
	}
	p->ifindex = ctx->ingress_ifindex;
	p->len = (__u32)(data_end - data);
	return parse_l2(data, data_end, p);
}

/* Whether the IP packet of a frame (p: parsed) runs past its first buffer of first bytes, or its header
 * is not all there. Not IP: no. */
static __always_inline int ip_runs_past(void *data, void *data_end, struct pkt *p, __u32 first)
{
	__u32 l3off = p->l3off & 0x3F;

	if (p->proto == ETH_P_IPV6_BE) {
		struct ipv6hdr *ip6 = data + l3off;

		if ((void *)(ip6 + 1) > data_end)
			return 1;
		return l3off + IPV6_HLEN + bpf_ntohs(ip6->payload_len) > first;
	}
	if (p->proto == ETH_P_IP_BE) {
		struct iphdr *ip = data + l3off;

		if ((void *)(ip + 1) > data_end)
			return 1;
		return l3off + bpf_ntohs(ip->tot_len) > first;
	}
	return 0;
}

/* p->len becomes the whole frame's length, its fragments included (the helper call, ~20 ns), for a frame
 * that may have fragments: on an interface whose frames may span buffers (frags: rx_frags), or one longer
 * than a 1500-byte MTU's frame or whose IP packet runs past the first buffer (an MTU raised before the
 * control plane caught up). Any other frame is its first buffer: what MTU 1500 fits in every driver's.
 * The one case this cannot tell, fragments holding only bytes after the IP packet on an interface not in
 * rx_frags, keeps those bytes at the end of the frame. A multi-buffer frame must hold MULTIBUF_HDR_MIN
 * bytes in its first buffer (every header seg6x reads is read in place); p->frags says it is one, in
 * XDP of the driver (generic XDP's frames are skbs, which any egress sends). */
static __always_inline int ctx_whole_len(struct xdp_md *ctx, struct pkt *p, __u32 frags)
{
	void *data = ctx_data(ctx), *data_end = ctx_data_end(ctx);
	__u32 first = (__u32)(data_end - data);

	if (!frags && first <= FRAME_1500_MAX && !ip_runs_past(data, data_end, p, first))
		return REASON_NONE;
	p->len = ctx_len(ctx);
	if (p->len <= first)
		return REASON_NONE;
	if (first < MULTIBUF_HDR_MIN)
		return DROP_MULTIBUF_HEADERS;
	p->frags = frags != RX_FRAGS_GENERIC;
	return REASON_NONE;
}
