/* vxlan.h: VXLAN over IPv6 (RFC 7348) for the kernel's VXLAN devices the mirror follows (XDP
 * only). A frame from a bridge port to a MAC that the kernel's tables send to one remote VTEP leaves
 * encapsulated (vxlan_encap); VXLAN to a local VTEP and a followed VNI, from one of the device's
 * remotes, leaves decapsulated through the bridge port that the bridge's table names for its
 * destination (vxlan_decap). What the kernel's bridge would flood, replicate, keep, or learn from goes
 * to the kernel unchanged, counted: the forwarding never disagrees with the kernel's tables, which
 * stay the kernel's (the control plane writes vx_macs from them). */
#pragma once

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "fwd.h"
#include "csum.h"
#include "slots.h"
#include "flowlabel.h"
#include "slowpath.h"

/* How often a frame from a learned (dynamic) MAC goes to the kernel anyway, so the kernel's entry,
 * which only the kernel's own forwarding refreshes, does not age out under the fast path (the
 * kernel's default ageing is 300 s). Set at load time. */
const volatile __u64 vx_refresh_ns = 10ULL * 1000000000ULL;

/* vxlan_decap's answer for a packet that is no VXLAN to a local VTEP. */
#define NOT_VXLAN -3

#define VXLAN_FLAGS_BE bpf_htonl(0x08000000) /* the I flag, every reserved bit 0 */

/* Largest run of packet bytes csum_frame() sums (a single-buffer XDP frame is shorter). */
#define CSUM_FRAME_MAX 4096

/* The 16-bit one's complement sum (folded, not complemented; as sum16 counts) of len bytes at off in
 * the frame: bpf_csum_diff over 512- and 256-byte blocks, 32-bit words summed in the program for
 * the rest (a helper call per small block costs more than the words: a 64-byte frame's encapsulation
 * was three calls), then the last 1 to 3 bytes; -1 when they are not all in the frame. A global
 * function: the verifier checks its walk once, and its callers see a number. */
__noinline int csum_frame(struct xdp_md *ctx, __u32 off, __u32 len)
{
	void *data, *data_end, *b;
	__u64 s = 0;

	if (!ctx || off > 256 || len > CSUM_FRAME_MAX)
		return -1;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	/* Each read is at data + off, off kept within a range the verifier can see. */
#define CSUM_BLOCK(n)                                     \
	{                                                 \
		asm volatile("%0 &= 0x1fff" : "+r"(off)); \
		b = data + off;                           \
		if (b + n > data_end)                     \
			return -1;                        \
		s += (__u32)bpf_csum_diff(0, 0, b, n, 0); \
		off += n;                                 \
	}
	for (int i = 0; i < CSUM_FRAME_MAX / 512; i++) { /* a bounded loop, not unrolled */
		if (len < 512)
			break;
		CSUM_BLOCK(512)
		len -= 512;
	}
	if (len & 256)
		CSUM_BLOCK(256)
#undef CSUM_BLOCK
	len &= 255;
	/* Under 256 bytes left: runs of 64, 32, 16, 8 and 4 bytes of native 32-bit words (as
	 * bpf_csum_diff adds them), one bounds check per run. */
#define CSUM_WORDS(n)                                                                   \
	{                                                                               \
		asm volatile("%0 &= 0x1fff" : "+r"(off));                               \
		b = data + off;                                                         \
		if (b + n > data_end)                                                   \
			return -1;                                                      \
		_Pragma("unroll") for (int j = 0; j < n / 4; j++) s += ((__u32 *)b)[j]; \
		off += n;                                                               \
	}
	for (int i = 0; i < 3; i++) {
		if (len < 64)
			break;
		CSUM_WORDS(64)
		len -= 64;
	}
	if (len & 32)
		CSUM_WORDS(32)
	if (len & 16)
		CSUM_WORDS(16)
	if (len & 8)
		CSUM_WORDS(8)
	if (len & 4)
		CSUM_WORDS(4)
#undef CSUM_WORDS
	if (len & 3) { /* 1 to 3 bytes: a last word padded with zeros */
		__u8 *q;
		__u32 w;

		asm volatile("%0 &= 0x1fff" : "+r"(off));
		q = data + off;
		if ((void *)(q + 3) <= data_end) {
			w = q[0] | ((len & 3) >= 2 ? (__u32)q[1] << 8 : 0) | ((len & 3) == 3 ? (__u32)q[2] << 16 : 0);
		} else if ((len & 3) == 1 && (void *)(q + 1) <= data_end) {
			w = q[0];
		} else if ((len & 3) == 2 && (void *)(q + 2) <= data_end) {
			w = q[0] | (__u32)q[1] << 8;
		} else {
			return -1;
		}
		s += w;
	}
	return (__u16)~csum_fold(s);
}

/* 1 when this frame from learned MAC k is the one that goes to the kernel to keep its entry fresh. */
static __always_inline int vx_refresh(struct vx_mac_key *k)
{
	__u64 now = bpf_ktime_get_coarse_ns();
	__u64 *t = bpf_map_lookup_elem(&vx_seen, k);

	if (t && now - *t < vx_refresh_ns)
		return 0;
	bpf_map_update_elem(&vx_seen, k, &now, BPF_ANY);
	return 1;
}

/* What the outer header takes from an inner frame: a hash of its flow (the UDP source port) and the
 * ECN bits of its IP header. */
struct vx_inner {
	__u32 hash;  /* 20 bits, as an outer flow label */
	__u8 ecn;    /* what the outer traffic class's ECN bits become (RFC 6040: CE is carried as ECT(0)) */
	__u8 nd;     /* ARP, or ICMPv6 neighbor discovery (types 133-137) right behind the IPv6 header */
	__u8 ip_ecn; /* an untagged IPv4 / IPv6 frame: its ECN bits + 1 (0: not such a frame) */
};

static __always_inline void vx_inner_of(void *data, void *data_end, __u32 off, struct vx_inner *in)
{
	struct ethhdr *eth = data + off;
	__be16 proto;
	__u32 l3, *ports = NULL;
	__u8 ds = 0;

	in->hash = 1;
	in->ecn = 0;
	in->nd = 0;
	in->ip_ecn = 0;
	if ((void *)(eth + 1) > data_end)
		return;
	proto = eth->h_proto;
	l3 = off + ETH_HLEN;
#pragma unroll
	for (int i = 0; i < MAX_VLAN_TAGS; i++) {
		struct vlan_tag *tag = data + l3;

		if (proto != ETH_P_8021Q_BE && proto != ETH_P_8021AD_BE)
			break;
		if ((void *)(tag + 1) > data_end)
			return;
		proto = tag->proto;
		l3 += VLAN_HLEN;
	}
	l3 &= 0xFF;
	if (proto == ETH_P_IP_BE) {
		struct iphdr *iph = data + l3;

		if ((void *)(iph + 1) > data_end)
			return;
		if (iph->ihl == 5 && (iph->protocol == PROTO_TCP || iph->protocol == PROTO_UDP) &&
		    !(iph->frag_off & IP_MF_OFFSET_BE) && (void *)(iph + 1) + 4 <= data_end)
			ports = (void *)(iph + 1);
		in->hash = flow_label4(iph, ports);
		ds = iph->tos;
	} else if (proto == ETH_P_IPV6_BE) {
		struct ipv6hdr *ip6 = data + l3;

		if ((void *)(ip6 + 1) > data_end)
			return;
		if ((ip6->nexthdr == PROTO_TCP || ip6->nexthdr == PROTO_UDP) && (void *)(ip6 + 1) + 4 <= data_end)
			ports = (void *)(ip6 + 1);
		if (ip6->nexthdr == PROTO_ICMPV6) {
			__u8 *type = (void *)(ip6 + 1);
			if ((void *)(type + 1) <= data_end && *type >= 133 && *type <= 137)
				in->nd = 1;
		}
		in->hash = flow_label6(ip6, ports);
		ds = (ip6->priority << 4) | (ip6->flow_lbl[0] >> 4);
	} else {
		__u32 *w = (void *)eth;
		in->hash = label_of(fmix32(w[0] ^ 0x9E3779B9) ^ w[1] ^ w[2] ^ proto);
		in->nd = proto == bpf_htons(0x0806); /* ARP */
		return;
	}
	ds &= 3;
	in->ecn = ds == 3 ? 2 : ds;
	if (l3 == off + ETH_HLEN)
		in->ip_ecn = ds + 1;
}

/* The entry of MAC mac in bridge k->bridge when the kernel's tables send frames to it the way `want`
 * says (VX_MAC_TUNNEL: encapsulation, VX_MAC_LOCAL: a local port); else NULL, and *reason says why
 * the kernel gets the frame (flooded, the bridge's own, bridged locally or back). */
static __always_inline struct vx_mac *vx_dst(struct vx_mac_key *k, const __u8 *mac, __u8 want, int *reason)
{
	struct vx_mac *m;

	*reason = PASS_VXLAN_FLOOD;
	if (mac[0] & 1)
		return NULL;
	__builtin_memcpy(k->mac, mac, ETH_ALEN);
	m = bpf_map_lookup_elem(&vx_macs, k);
	if (!m)
		return NULL;
	if (m->kind == want)
		return m;
	*reason = m->kind == VX_MAC_NODE ? PASS_VXLAN_NODE : PASS_VXLAN_LOCAL;
	return NULL;
}

/* The IPv6 pseudo-header's part of a UDP datagram's checksum (as sum16 counts). */
static __always_inline __u64 udp6_pseudo(const __u8 *src, const __u8 *dst, __u32 len)
{
	return sum16(src, 8) + sum16(dst, 8) + bpf_htons(len) + bpf_htons(PROTO_UDP);
}

/* fib_lookup for the outer packet of an encapsulation (fib's inputs filled in, main table; remote: its
 * destination in a map value), answered from vx_nh's slot for the remote and the flow's source port
 * (fib6_slot). A next hop without a usable neighbor makes it try the route's others (fib6_around),
 * whose answer the slot keeps. */
static __always_inline int vx_fib(struct xdp_md *ctx, struct bpf_fib_lookup *fib, const __u8 *remote)
{
	__u32 slot = fmix32(fib->ipv6_dst[0] ^ fib->ipv6_dst[1] ^ fib->ipv6_dst[2] ^ fib->ipv6_dst[3] ^
			    (__u32)fib->sport * 0x9E3779B1) &
		     (VX_NH_SLOTS - 1);
	struct nh_slot *e = bpf_map_lookup_elem(&vx_nh, &slot);
	__be32 flowinfo = fib->flowinfo;
	__u32 in = fib->ifindex;
	int rc = fib6_slot(ctx, fib, e);

	if (rc != BPF_FIB_LKUP_RET_NO_NEIGH)
		return rc;
	rc = fib6_around(ctx, fib, remote, flowinfo, in);
	if (rc == BPF_FIB_LKUP_RET_SUCCESS && nh_cache_ns && e)
		nh_fill(&e->nh, fib, gen_now(&nh_gen), fib->tot_len);
	return rc;
}

/* The encapsulated frame, larger than the underlay's mtu, to the daemon, which fragments its outer
 * IPv6 packet and sends the fragments out of ifindex. Without a daemon the outer header goes again
 * and the kernel gets the frame as it came (it answers with ICMP, or drops, as without seg6x). */
static __always_inline int vxlan_fragment_later(struct xdp_md *ctx, __u32 ifindex, __u32 mtu, __u32 bytes)
{
	struct slow_meta m = {
		.kind = SLOW_KIND_FRAGMENT6, .ifindex = ifindex, .mtu = mtu, .l3off = ETH_HLEN, .len = ctx_len(ctx)
	};
	long rc = slow_send(ctx, &m);

	if (rc == 0)
		return verdict(SLOW_VXLAN_FRAGMENT, bytes);
	if (bpf_xdp_adjust_head(ctx, (int)VXLAN_ENCAP_LEN))
		return verdict(DROP_SLOW_BUSY, bytes);
	return verdict(rc == SLOW_NO_READER ? PASS_FIB_FRAG_NEEDED : DROP_SLOW_BUSY, bytes);
}

/* A frame from bridge port p->ifindex of bridge `bridge` (port flags pflags). */
__noinline int vxlan_encap(struct xdp_md *ctx, struct pkt *arg, __u32 bridge, __u32 pflags)
{
	struct vx_mac_key k = { .bridge = bridge };
	struct vx_enc_key ck = {};
	struct vx_enc_entry *c;
	struct bpf_fib_lookup fib = {};
	struct pkt pk = {}, *p = &pk;
	struct vx_inner in;
	struct vx_mac *dst;
	struct vx_dev *dev;
	__u32 gen, slot;
	void *data, *data_end;
	struct ethhdr *eth;
	struct ipv6hdr *o6;
	struct udphdr *udp;
	__be32 *vxh;
	__u32 len, devidx, sport, mtu = 0;
	int rc, sum;

	if (!ctx || pkt_arg(arg, &pk))
		return XDP_DROP;
	/* The encapsulation's checksum covers the whole frame, summed in place: a multi-buffer frame is
	 * the kernel's (its VXLAN device and bridge). */
	if (ctx_frags(ctx, p->len))
		return verdict(PASS_MULTIBUF, p->len);
	data = ctx_data(ctx);
	data_end = ctx_data_end(ctx);
	eth = data;
	if ((void *)(eth + 1) > data_end)
		return verdict(DROP_TRUNC_VLAN, p->len);
	/* The decision for this port and these MACs, as last made under the tables' generation. */
	ck.in_ifindex = p->ifindex;
	ck.bridge = bridge;
	ck.learning = pflags & PORT_F_LEARNING;
	__builtin_memcpy(ck.dst, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(ck.src, eth->h_source, ETH_ALEN);
	gen = gen_now(&cache_gen); /* before any table is read: a decision made while they change is stale */
	slot = words_slot(&ck, sizeof(ck) / 8) & (VX_CACHE_SLOTS - 1);
	c = bpf_map_lookup_elem(&vx_enc_cache, &slot);
	if (c && c->gen == gen && words_same(&c->key, &ck, sizeof(ck) / 8)) {
		dst = &c->dst;
		dev = &c->dev;
		if (c->src_dynamic) {
			__builtin_memcpy(k.mac, eth->h_source, ETH_ALEN);
			if (vx_refresh(&k))
				return verdict(PASS_VXLAN_LEARN, p->len);
		}
	} else {
		__u8 src_dynamic = 0;

		dst = vx_dst(&k, eth->h_dest, VX_MAC_TUNNEL, &rc);
		if (!dst)
			return verdict(rc, p->len);
		if (!(dst->flags & VX_MAC_F_REMOTE))
			return verdict(PASS_VXLAN_FLOOD, p->len);
		if (eth->h_source[0] & 1)
			return verdict(PASS_VXLAN_MALFORMED, p->len);
		if (pflags & PORT_F_LEARNING) {
			struct vx_mac *s;

			__builtin_memcpy(k.mac, eth->h_source, ETH_ALEN);
			s = bpf_map_lookup_elem(&vx_macs, &k);
			if (!s || s->kind != VX_MAC_LOCAL || s->ifindex != p->ifindex)
				return verdict(PASS_VXLAN_LEARN, p->len);
			src_dynamic = s->flags & VX_MAC_F_DYNAMIC;
			if (src_dynamic && vx_refresh(&k))
				return verdict(PASS_VXLAN_LEARN, p->len);
		}
		devidx = dst->ifindex;
		dev = bpf_map_lookup_elem(&vx_devs, &devidx);
		if (!dev)
			return verdict(PASS_VXLAN_FLOOD, p->len);
		if (c) {
			c->key = ck;
			c->dst = *dst;
			c->dev = *dev;
			c->src_dynamic = src_dynamic;
			c->gen = gen;
		}
	}
	/* The bridge hands the device frames up to its MTU (the first tag aside). */
	len = p->len;
	if (len - (p->l3off > ETH_HLEN ? VLAN_HLEN : 0) > (__u32)dev->mtu + ETH_HLEN)
		return verdict(PASS_VXLAN_TOO_BIG, p->len);

	vx_inner_of(data, data_end, 0, &in);
	if (in.nd)
		return verdict(PASS_VXLAN_ND, p->len);
	sport = dev->sport_lo + ((in.hash * (__u32)dev->sport_span) >> 20);
	fib.family = AF_INET6;
	fib.l4_protocol = PROTO_UDP;
	fib.sport = bpf_htons(sport);
	fib.dport = dst->port;
	fib.flowinfo = (dev->flow | bpf_htonl((__u32)in.ecn << 20)) & bpf_htonl(0x0FFFFFFF); /* as written below */
	fib.ifindex = p->ifindex;
	fib.tot_len = len + IPV6_HLEN + UDP_HLEN + VXLAN_HLEN;
	__builtin_memcpy(fib.ipv6_src, dev->local, 16);
	__builtin_memcpy(fib.ipv6_dst, dst->remote, 16);
	rc = vx_fib(ctx, &fib, dst->remote);
	if (rc == BPF_FIB_LKUP_RET_FRAG_NEEDED && fib.mtu_result >= 1280) {
		/* Larger than the underlay: carried in outer IPv6 fragments (the daemon cuts them). The
		 * FIB fills in the next hop only for a packet that fits. */
		mtu = fib.mtu_result;
		fib.tot_len = 0;
		rc = fib_lookup(ctx, &fib, 0);
		if (rc != BPF_FIB_LKUP_RET_SUCCESS)
			return verdict(fib_reason(rc), p->len);
	} else if (rc != BPF_FIB_LKUP_RET_SUCCESS) {
		return verdict(fib_reason(rc), p->len);
	}

	/* The UDP checksum's sum over the inner frame, read while it is where it arrived (in cache): the
	 * headroom the outer headers go to is not, and reading them back would wait for it. */
	sum = csum_frame(ctx, 0, len);
	if (sum < 0)
		return verdict(PASS_VXLAN_MALFORMED, p->len);

	/* Committed: the frame, as it came, becomes the inner frame. */
	if (bpf_xdp_adjust_head(ctx, -(int)VXLAN_ENCAP_LEN))
		return verdict(PASS_NO_ROOM, p->len);
	data = ctx_data(ctx);
	data_end = ctx_data_end(ctx);
	eth = data;
	o6 = (void *)(eth + 1);
	udp = (void *)(o6 + 1);
	vxh = (void *)(udp + 1);
	if ((void *)(vxh + 2) > data_end)
		return verdict(DROP_NO_ROOM, p->len);
	__builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
	eth->h_proto = ETH_P_IPV6_BE;
	*(__be32 *)o6 = dev->flow | bpf_htonl((__u32)in.ecn << 20);
	o6->payload_len = bpf_htons(len + UDP_HLEN + VXLAN_HLEN);
	o6->nexthdr = PROTO_UDP;
	o6->hop_limit = dev->ttl;
	__builtin_memcpy(&o6->saddr, dev->local, 16);
	__builtin_memcpy(&o6->daddr, dst->remote, 16);
	udp->source = bpf_htons(sport);
	udp->dest = dst->port;
	udp->len = o6->payload_len;
	udp->check = 0;
	vxh[0] = VXLAN_FLAGS_BE;
	vxh[1] = dst->vni;

	/* The rest of the sum from the values written (as native 16- and 32-bit words of network-order
	 * bytes, as the inner frame's were summed): UDP header (checksum 0), VXLAN header, pseudo-header. */
	udp->check =
		csum_fold((__u64)sum + bpf_htons(sport) + dst->port + udp->len + VXLAN_FLAGS_BE + dst->vni + udp6_pseudo(dev->local, dst->remote, len + UDP_HLEN + VXLAN_HLEN)) ?:
			0xFFFF;
	if (mtu)
		return vxlan_fragment_later(ctx, fib.ifindex, mtu, p->len);
	return redirect(fib.ifindex, p->len);
}

/* Whether a VXLAN packet's lengths disagree: UDP's with IPv6's, too short for VXLAN and an Ethernet
 * header, or longer than the frame. */
static __always_inline int vx_lengths_bad(const struct udphdr *udp, __u32 plen, const struct pkt *p)
{
	return bpf_ntohs(udp->len) != plen || plen < UDP_HLEN + VXLAN_HLEN + ETH_HLEN ||
	       p->l3off + IPV6_HLEN + plen > p->len;
}

/* An IPv6 packet from a fabric port that is no local SID: VXLAN to a local VTEP is taken apart here.
 * Returns a verdict, or NOT_VXLAN. */
__noinline int vxlan_decap(struct xdp_md *ctx, struct pkt *arg)
{
	struct vx_rx_key rk = {};
	struct vx_remote_key rem = {};
	struct vx_mac_key k = {};
	struct vx_dec_key dk = {};
	struct vx_dec_entry *c = NULL;
	struct vx_inner in;
	struct pkt pk = {}, *p = &pk;
	struct vx_mac *dst, *src;
	struct vx_dev *dev;
	void *data, *data_end;
	struct ipv6hdr *ip6;
	struct udphdr *udp;
	struct ethhdr *eth;
	__be32 *vxh;
	__u32 plen, ioff, ilen, out, mtu, gen, slot;
	int sum, malformed, why;
	__u8 ecn;

	if (!ctx || pkt_arg(arg, &pk))
		return XDP_DROP;
	data = ctx_data(ctx);
	data_end = ctx_data_end(ctx);
	ip6 = data + p->l3off;
	udp = (void *)(ip6 + 1);
	vxh = (void *)(udp + 1);
	if ((void *)(udp + 1) > data_end || ip6->nexthdr != PROTO_UDP)
		return NOT_VXLAN;
	malformed = (void *)(vxh + 2) > data_end || vxh[0] != VXLAN_FLAGS_BE || (vxh[1] & bpf_htonl(0xFF));
	plen = bpf_ntohs(ip6->payload_len);
	ioff = p->l3off + IPV6_HLEN + UDP_HLEN + VXLAN_HLEN;
	eth = data + ioff;

	/* The decision for these addresses, port, VNI and inner MACs, as last made under the tables'
	 * generation (read before any of them). */
	gen = gen_now(&cache_gen); /* before any table is read: a decision made while they change is stale */
	if (!malformed && (void *)(eth + 1) <= data_end) {
		__builtin_memcpy(dk.src, &ip6->saddr, 16);
		__builtin_memcpy(dk.dst, &ip6->daddr, 16);
		dk.vni = vxh[1];
		dk.port = udp->dest;
		__builtin_memcpy(dk.idst, eth->h_dest, ETH_ALEN);
		__builtin_memcpy(dk.isrc, eth->h_source, ETH_ALEN);
		slot = words_slot(&dk, sizeof(dk) / 8) & (VX_CACHE_SLOTS - 1);
		c = bpf_map_lookup_elem(&vx_dec_cache, &slot);
	}
	if (c && c->gen == gen && words_same(&c->key, &dk, sizeof(dk) / 8)) {
		if (vx_lengths_bad(udp, plen, p))
			return verdict(PASS_VXLAN_MALFORMED, p->len);
		out = c->out;
		mtu = c->mtu;
		if (c->src_dynamic) {
			k.bridge = c->bridge;
			__builtin_memcpy(k.mac, dk.isrc, ETH_ALEN);
			if (vx_refresh(&k))
				return verdict(PASS_VXLAN_LEARN, p->len);
		}
	} else {
		__u8 src_dynamic = 0;

		__builtin_memcpy(rk.local, &ip6->daddr, 16);
		rk.port = udp->dest;
		rk.vni = malformed ? VX_VNI_ANY : vxh[1];
		dev = bpf_map_lookup_elem(&vx_rx, &rk);
		if (!dev) {
			if (malformed)
				return NOT_VXLAN;
			rk.vni = VX_VNI_ANY;
			return bpf_map_lookup_elem(&vx_rx, &rk) ? verdict(PASS_VXLAN_VNI, p->len) : NOT_VXLAN;
		}
		if (malformed)
			return verdict(PASS_VXLAN_MALFORMED, p->len);
		if (vx_lengths_bad(udp, plen, p))
			return verdict(PASS_VXLAN_MALFORMED, p->len);
		rem.dev = dev->ifindex;
		__builtin_memcpy(rem.addr, &ip6->saddr, 16);
		if (!bpf_map_lookup_elem(&vx_remotes, &rem))
			return verdict(dev->flags & VX_F_LEARNING ? PASS_VXLAN_LEARN : DROP_VXLAN_SOURCE, p->len);

		if ((void *)(eth + 1) > data_end)
			return verdict(PASS_VXLAN_MALFORMED, p->len);
		k.bridge = dev->bridge;
		dst = vx_dst(&k, eth->h_dest, VX_MAC_LOCAL, &why);
		if (!dst)
			return verdict(why, p->len);
		if (eth->h_source[0] & 1)
			return verdict(PASS_VXLAN_MALFORMED, p->len);
		if (dev->flags & (VX_F_LEARNING | VX_F_PORT_LEARNING)) {
			__builtin_memcpy(k.mac, eth->h_source, ETH_ALEN);
			src = bpf_map_lookup_elem(&vx_macs, &k);
			if (!src || src->kind != VX_MAC_TUNNEL)
				return verdict(PASS_VXLAN_LEARN, p->len);
			if ((dev->flags & VX_F_LEARNING) &&
			    (!(src->flags & VX_MAC_F_REMOTE) || !same16(src->remote, rem.addr)))
				return verdict(PASS_VXLAN_LEARN, p->len);
			src_dynamic = src->flags & VX_MAC_F_DYNAMIC;
			if (src_dynamic && vx_refresh(&k))
				return verdict(PASS_VXLAN_LEARN, p->len);
		}
		out = dst->ifindex;
		mtu = dst->mtu;
		if (c) {
			c->key = dk;
			c->bridge = dev->bridge;
			c->out = out;
			c->mtu = mtu;
			c->src_dynamic = src_dynamic;
			c->gen = gen;
		}
	}
	vx_inner_of(data, data_end, ioff, &in);
	if (in.nd)
		return verdict(PASS_VXLAN_ND, p->len);
	/* RFC 6040 decapsulation, as the kernel does it for an untagged inner IP packet: an outer CE
	 * marks the inner (or drops a not-ECT one), an outer ECT(1) turns an inner ECT(0) into ECT(1).
	 * Rare (congestion marks): the kernel rewrites those. */
	ecn = (ip6->flow_lbl[0] >> 4) & 3;
	if (in.ip_ecn && ((ecn == 3 && in.ip_ecn != 4) || (ecn == 1 && in.ip_ecn == 3)))
		return verdict(PASS_VXLAN_ECN, p->len);
	ilen = plen - UDP_HLEN - VXLAN_HLEN;
	/* The bridge hands a port frames up to its MTU (the first tag aside). */
	if (ilen - ((eth->h_proto == ETH_P_8021Q_BE || eth->h_proto == ETH_P_8021AD_BE) ? VLAN_HLEN : 0) >
	    mtu + ETH_HLEN)
		return verdict(PASS_VXLAN_TOO_BIG, p->len);
	if (!tx_ok(out))
		return verdict(PASS_TX_NOT_ATTACHED, p->len);

	/* The whole datagram's checksum, as the kernel's UDP checks it (zero is refused over IPv6). What
	 * does not verify is the kernel's to judge: only it knows a checksum a local sender left to
	 * offload (a veth peer's CHECKSUM_PARTIAL), and it drops the others. */
	if (!udp->check)
		return verdict(PASS_VXLAN_CSUM, p->len);
	if (ctx_frags(ctx, p->len)) /* the checksum is summed in place */
		return verdict(PASS_MULTIBUF, p->len);
	sum = csum_frame(ctx, p->l3off + IPV6_HLEN, plen);
	data = ctx_data(ctx);
	data_end = ctx_data_end(ctx);
	ip6 = data + p->l3off;
	if (sum < 0 || (void *)(ip6 + 1) > data_end)
		return verdict(PASS_VXLAN_MALFORMED, p->len);
	if (csum_fold((__u64)sum + udp6_pseudo((__u8 *)&ip6->saddr, (__u8 *)&ip6->daddr, plen)))
		return verdict(PASS_VXLAN_CSUM, p->len);

	if (ctx_trim_len(ctx, p->len, p->l3off + IPV6_HLEN + plen) || bpf_xdp_adjust_head(ctx, (int)ioff))
		return verdict(PASS_VXLAN_MALFORMED, p->len);
	return redirect(out, p->len);
}
