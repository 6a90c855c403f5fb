/* icmp.h: the answer to a tenant packet too big for its tunnel (RFC 1191, RFC 8201, RFC 4443): an
 * ICMP "fragmentation needed" or ICMPv6 "packet too big" built in place of the packet, from the
 * tenant's gateway address to the packet's source, quoting the packet, and sent back out of the port
 * it came in on with the same VLAN tags. A decapsulated packet too big for its tenant port gets the
 * same answer, sent through the daemon (slowpath.h) into the tenant's port and so through the
 * tenant's own tunnel back to the sender. Rate-limited per CPU like the kernel's own errors. */
#pragma once

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "fwd.h"
#include "ctx.h"
#include "csum.h"
#include "slowpath.h"

#define ICMP4_HLEN 28			    /* IPv4 + ICMP header in front of the quote */
#define ICMP6_HLEN 48			    /* IPv6 + ICMPv6 header */
#define ICMP4_QUOTE_MAX (576 - ICMP4_HLEN)  /* RFC 1812 4.3.2.3: the whole error within 576 bytes */
#define ICMP6_QUOTE_MAX (1280 - ICMP6_HLEN) /* RFC 4443 2.4(c): within the minimum IPv6 MTU */
#define ICMP_TTL 64			    /* the kernel's default TTL / hop limit */

/* The rate limit: on average one error per icmp_interval_ns on each CPU, in bursts of up to icmp_burst
 * (the kernel's defaults for all its ICMP errors: icmp_msgs_per_sec 1000, icmp_msgs_burst 50). Set
 * when the program is loaded; icmp_burst 0 sends none. */
const volatile __u64 icmp_interval_ns = 1000000;
const volatile __u32 icmp_burst = 50;

/* Sends the frame, now the ICMP error for reason, back out of the interface it came in on: a redirect
 * to the ingress interface rather than XDP_TX, which on a veth reaches the peer only when the peer
 * runs an XDP program (a tenant VM's or container's veth does not). */
static __always_inline int answer(struct ctx_buff *ctx, int reason, __u32 bytes)
{
	if (ctx_redirect(ctx->ingress_ifindex))
		return verdict(DROP_TX_GONE, bytes);
	count(&reason_stats, (__u32)reason, bytes);
	TRACE(tr->reason = reason);
	return finish(ACT_REDIRECT, bytes);
}

/* May this CPU send an ICMP error now? A virtual schedule (GCRA): tat is when the next error is due;
 * an error is allowed while tat is less than a burst ahead of now. */
static __always_inline int icmp_allowed(void)
{
	__u32 zero = 0;
	__u64 *tat = bpf_map_lookup_elem(&icmp_tat, &zero);
	__u64 now, t;

	if (!tat || !icmp_burst)
		return 0;
	now = bpf_ktime_get_ns();
	t = *tat > now ? *tat : now;
	if (t + icmp_interval_ns - now > icmp_interval_ns * icmp_burst)
		return 0;
	*tat = t + icmp_interval_ns;
	return 1;
}

/* bpf_csum_diff over c bytes at p (c <= 512, a multiple of 4) continuing sum. */
static __always_inline __s64 csum_chunk(__u8 *p, __u32 c, __s64 sum)
{
	asm volatile("%0 &= 0x3ff" : "+r"(c)); /* a range the verifier can see */
	return bpf_csum_diff(NULL, 0, (__be32 *)p, c, (__wsum)sum);
}

/* One's complement sum (not folded) of the n bytes of the frame at off, n <= ICMP6_QUOTE_MAX, read
 * through the per-CPU scratch buffer (bpf_csum_diff takes at most 512 bytes a call). -1 on failure. */
static __always_inline __s64 quote_sum(struct ctx_buff *ctx, __u32 off, __u32 n)
{
	__u32 zero = 0, r, c;
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	__s64 sum;

	if (!s || n == 0 || n > ICMP6_QUOTE_MAX)
		return -1;
	n -= 1;
	asm volatile("%0 &= 0x7ff" : "+r"(n)); /* 1..2048: a range the verifier can see */
	n += 1;
	if (bpf_xdp_load_bytes(ctx, off, s->buf, n))
		return -1;
	s->buf[n] = 0; /* pad to a multiple of 4 bytes */
	s->buf[n + 1] = 0;
	s->buf[n + 2] = 0;
	r = (n + 3) & ~3U;
	c = r > 512 ? 512 : r;
	sum = csum_chunk(s->buf, c, 0);
	r -= c;
	c = r > 512 ? 512 : r;
	if (sum >= 0 && c)
		sum = csum_chunk(s->buf + 512, c, sum);
	r -= c;
	c = r > 512 ? 512 : r;
	if (sum >= 0 && c)
		sum = csum_chunk(s->buf + 1024, c, sum);
	return sum;
}

/* After the frame grew by `shift` bytes in front: the Ethernet header (and the 802.1Q tags, l3off is
 * 14, 18 or 22) of the frame as it came, now `shift` bytes further on, is written at the start with
 * the addresses swapped: to the sender, from the MAC the frame was sent to. */
static __always_inline int icmp_l2(void *data, void *data_end, __u32 shift, __u32 l3off, const __u8 *mac)
{
	__u8 *d = data, *s = data + shift;

	if ((void *)(s + ETH_HLEN + 2 * VLAN_HLEN) > data_end)
		return -1;
	__builtin_memcpy(d, mac + ETH_ALEN, ETH_ALEN);
	__builtin_memcpy(d + ETH_ALEN, mac, ETH_ALEN);
	__builtin_memcpy(d + 12, s + 12, 2);
	if (l3off >= ETH_HLEN + VLAN_HLEN)
		__builtin_memcpy(d + 14, s + 14, VLAN_HLEN);
	if (l3off >= ETH_HLEN + 2 * VLAN_HLEN)
		__builtin_memcpy(d + 18, s + 18, VLAN_HLEN);
	return 0;
}

/* Makes room for an answer of hlen header bytes in front of the first q bytes of the packet at l3off
 * and writes its Ethernet header; the answer's IP header then starts at l3off. 0, or -1 when the
 * frame cannot be adjusted. */
static __always_inline int icmp_make_room(struct ctx_buff *ctx, __u32 l3off, __u32 hlen, __u32 q, const __u8 *mac)
{
	if (bpf_xdp_adjust_head(ctx, -(int)hlen) || ctx_trim(ctx, l3off + hlen + q))
		return -1;
	return icmp_l2((void *)(long)ctx->data, (void *)(long)ctx->data_end, hlen, l3off, mac);
}

/* Is the tenant IPv4 packet one an ICMP error may answer (RFC 1812 4.3.2.7, as the kernel's
 * icmp_send decides): not a later fragment, from and to unicast addresses, not an ICMP error itself. */
static __always_inline int icmp4_may_answer(const struct iphdr *iph, const void *data_end)
{
	__u8 s = ((const __u8 *)&iph->saddr)[0], d = ((const __u8 *)&iph->daddr)[0];

	if (iph->frag_off & IP_OFFSET_BE)
		return 0;
	if (s == 0 || s == 127 || s >= 224 || d >= 224)
		return 0;
	if (iph->protocol == PROTO_ICMP) {
		const __u8 *type = (const __u8 *)iph + 20; /* IHL is 5: options went to the kernel */
		if ((const void *)(type + 1) > data_end)
			return 0;
		if (*type > 18 || *type == 3 || *type == 4 || *type == 5 || *type == 11 || *type == 12)
			return 0;
	}
	return 1;
}

/* ... and IPv6 (RFC 4443 2.4(e)): from a unicast source, not an ICMPv6 error itself (a packet too big
 * may answer a multicast destination). */
static __always_inline int icmp6_may_answer(const struct ipv6hdr *ip6, const void *data_end)
{
	const __u8 *src = (const __u8 *)&ip6->saddr;
	__u64 hi, lo;

	__builtin_memcpy(&hi, src, 8);
	__builtin_memcpy(&lo, src + 8, 8);
	if ((hi | lo) == 0 || src[0] == 0xFF)
		return 0;
	if (ip6->nexthdr == PROTO_ICMPV6) {
		const __u8 *type = (const __u8 *)(ip6 + 1);
		if ((const void *)(type + 1) > data_end || *type < 128)
			return 0;
	}
	return 1;
}

/* A too-big packet of a tenant without a gateway address of its family: a tenant whose routes the
 * kernel holds too (the kernel mirror's, which the API cannot give a gateway) leaves it to the
 * kernel as before; any other drops it unanswered. */
static __always_inline int no_gateway(const struct port_val *tv, struct pkt *p)
{
	if (tv->flags & PORT_F_KERNEL_FALLBACK)
		return verdict(PASS_FIB_FRAG_NEEDED, p->len);
	return verdict(DROP_TOO_BIG, p->len);
}

/* Sends the answer built in place: back out of the port it came in on (via 0: ICMP_TOO_BIG), or
 * through the daemon into port via (SLOW_DECAP_ICMP). */
static __always_inline int send_answer(struct ctx_buff *ctx, __u32 via, __u32 l3off, __u32 bytes)
{
	if (!via)
		return answer(ctx, ICMP_TOO_BIG, bytes);
	return slow_inject(ctx, via, l3off, bytes);
}

/* Turns the tenant IPv4 packet (with DF) at p->l3off, len bytes, into ICMP "fragmentation needed"
 * announcing mtu, and returns the verdict (ICMP_TOO_BIG or SLOW_DECAP_ICMP, or why not: the packet
 * is then dropped as DROP_TOO_BIG, or DROP_DECAP_TOO_BIG when via says it was decapsulated). */
static __always_inline int icmp4_too_big(struct ctx_buff *ctx, struct pkt *p, const struct port_val *tv, __u32 len,
					 __u32 mtu, __u32 via)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 l3off = p->l3off & 0x1F, q = len < ICMP4_QUOTE_MAX ? len : ICMP4_QUOTE_MAX;
	struct iphdr *iph = data + l3off;
	__u8 mac[2 * ETH_ALEN], *icmp;
	__be32 dst;
	__u8 tos;
	__s64 qsum;

	if ((void *)(iph + 1) > data_end || data + sizeof(mac) > data_end)
		return verdict(DROP_TRUNC_IP, p->len);
	if (!tv->gw4)
		return no_gateway(tv, p);
	if ((*(__u8 *)data & 1) || !icmp4_may_answer(iph, data_end))
		return verdict(via ? DROP_DECAP_TOO_BIG : DROP_TOO_BIG, p->len);
	if (!icmp_allowed())
		return verdict(DROP_TOO_BIG_RATELIMIT, p->len);
	__builtin_memcpy(mac, data, sizeof(mac));
	dst = iph->saddr;
	tos = (iph->tos & 0x1E) | 0xC0; /* as the kernel's errors: internetwork control precedence */
	qsum = quote_sum(ctx, p->l3off, q);
	if (qsum < 0)
		return verdict(via ? DROP_DECAP_TOO_BIG : DROP_TOO_BIG, p->len);

	if (icmp_make_room(ctx, l3off, ICMP4_HLEN, q, mac))
		return verdict(DROP_NO_ROOM, p->len);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	iph = data + l3off;
	asm volatile("" : "+r"(iph)); /* one pointer, checked once: clang may not derive it anew unchecked */
	if ((void *)iph + ICMP4_HLEN > data_end)
		return verdict(DROP_NO_ROOM, p->len);
	*(__u8 *)iph = 0x45;
	iph->tos = tos;
	iph->tot_len = bpf_htons(ICMP4_HLEN + q);
	iph->id = 0;
	iph->frag_off = IP_DF_BE;
	iph->ttl = ICMP_TTL;
	iph->protocol = PROTO_ICMP;
	iph->check = 0;
	iph->saddr = tv->gw4;
	iph->daddr = dst;
	iph->check = csum_fold(sum16(iph, 10));
	icmp = (__u8 *)(iph + 1);
	icmp[0] = 3; /* destination unreachable */
	icmp[1] = 4; /* fragmentation needed and DF set */
	*(__u16 *)(icmp + 2) = 0;
	*(__u16 *)(icmp + 4) = 0;
	*(__be16 *)(icmp + 6) = bpf_htons(mtu > 0xFFFF ? 0xFFFF : mtu);
	*(__u16 *)(icmp + 2) = csum_fold(sum16(icmp, 4) + (__u64)qsum);
	return send_answer(ctx, via, l3off, p->len);
}

/* Turns the tenant IPv6 packet at p->l3off, len bytes, into ICMPv6 "packet too big" announcing mtu. */
static __always_inline int icmp6_too_big(struct ctx_buff *ctx, struct pkt *p, const struct port_val *tv, __u32 len,
					 __u32 mtu, __u32 via)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 l3off = p->l3off & 0x1F, q = len < ICMP6_QUOTE_MAX ? len : ICMP6_QUOTE_MAX;
	struct ipv6hdr *ip6 = data + l3off;
	__u8 mac[2 * ETH_ALEN], dst[16], *icmp;
	__u64 hi, lo, sum;
	__s64 qsum;

	if ((void *)(ip6 + 1) > data_end || data + sizeof(mac) > data_end)
		return verdict(DROP_TRUNC_IP, p->len);
	__builtin_memcpy(&hi, tv->gw6, 8);
	__builtin_memcpy(&lo, tv->gw6 + 8, 8);
	if ((hi | lo) == 0)
		return no_gateway(tv, p);
	if ((*(__u8 *)data & 1) || !icmp6_may_answer(ip6, data_end))
		return verdict(via ? DROP_DECAP_TOO_BIG : DROP_TOO_BIG, p->len);
	if (!icmp_allowed())
		return verdict(DROP_TOO_BIG_RATELIMIT, p->len);
	__builtin_memcpy(mac, data, sizeof(mac));
	__builtin_memcpy(dst, &ip6->saddr, 16);
	qsum = quote_sum(ctx, p->l3off, q);
	if (qsum < 0)
		return verdict(via ? DROP_DECAP_TOO_BIG : DROP_TOO_BIG, p->len);

	if (icmp_make_room(ctx, l3off, ICMP6_HLEN, q, mac))
		return verdict(DROP_NO_ROOM, p->len);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	ip6 = data + l3off;
	asm volatile("" : "+r"(ip6)); /* one pointer, checked once: clang may not derive it anew unchecked */
	if ((void *)ip6 + ICMP6_HLEN > data_end)
		return verdict(DROP_NO_ROOM, p->len);
	*(__be32 *)ip6 = bpf_htonl(6U << 28);
	ip6->payload_len = bpf_htons(8 + q);
	ip6->nexthdr = PROTO_ICMPV6;
	ip6->hop_limit = ICMP_TTL;
	__builtin_memcpy(&ip6->saddr, tv->gw6, 16);
	__builtin_memcpy(&ip6->daddr, dst, 16);
	icmp = (__u8 *)(ip6 + 1);
	icmp[0] = 2; /* packet too big */
	icmp[1] = 0;
	*(__u16 *)(icmp + 2) = 0;
	*(__be32 *)(icmp + 4) = bpf_htonl(mtu);
	/* Pseudo-header (RFC 8200 8.1): addresses, upper-layer length, next header. */
	sum = sum16(&ip6->saddr, 16) + bpf_htons(8 + q) + bpf_htons(PROTO_ICMPV6);
	*(__u16 *)(icmp + 2) = csum_fold(sum + sum16(icmp, 4) + (__u64)qsum);
	return send_answer(ctx, via, l3off, p->len);
}

/* A decapsulated packet (inner_len bytes at ioff, ethertype proto) larger than the MTU of its egress
 * port (fib: the lookup in table that said so, mtu_result set). When that port is a tenant port with
 * a gateway address of the packet's family, an IPv4 packet with DF or an IPv6 packet is answered: the
 * outer headers go, the frame is addressed as the tenant's host would send it (its MAC to the port's,
 * with the SID's VLAN), turned into the ICMP error, and sent through the daemon into that port, so the
 * tenant's routes carry it back to the sender. Anything else is dropped (DROP_DECAP_TOO_BIG). */
static __always_inline int decap_too_big(struct ctx_buff *ctx, struct pkt *p, struct bpf_fib_lookup *fib, __u32 table,
					 __be16 proto, __u32 ioff, __u32 inner_len, __u16 vlan)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 mtu = fib->mtu_result, l2len = ETH_HLEN + (vlan ? VLAN_HLEN : 0);
	struct port_key k = {};
	struct port_val *tv;
	struct pkt a = { .l3off = l2len, .len = p->len, .vlan = vlan, .proto = proto };
	__u64 hi, lo;

	ioff &= 0x3FFF;
	if (proto == ETH_P_IP_BE) {
		struct iphdr *iph = data + ioff;
		if ((void *)(iph + 1) > data_end || !(iph->frag_off & IP_DF_BE))
			return verdict(DROP_DECAP_TOO_BIG, p->len);
	}
	/* The same lookup without the MTU check names the egress port. */
	fib->tot_len = 0;
	fib->tbid = table;
	if (bpf_fib_lookup(ctx, fib, sizeof(*fib), fib_flags(table)) != BPF_FIB_LKUP_RET_SUCCESS)
		return verdict(DROP_DECAP_TOO_BIG, p->len);
	k.ifindex = fib->ifindex;
	k.vlan = vlan;
	tv = bpf_map_lookup_elem(&ports, &k);
	if (!tv) {
		k.vlan = PORT_VLAN_ANY;
		tv = bpf_map_lookup_elem(&ports, &k);
	}
	if (!tv || !(tv->flags & PORT_F_TENANT))
		return verdict(DROP_DECAP_TOO_BIG, p->len);
	__builtin_memcpy(&hi, tv->gw6, 8);
	__builtin_memcpy(&lo, tv->gw6 + 8, 8);
	if (proto == ETH_P_IP_BE ? !tv->gw4 : (hi | lo) == 0)
		return verdict(DROP_DECAP_TOO_BIG, p->len);
	if (ctx_trim(ctx, ioff + inner_len) || ctx_set_l2(ctx, ioff, fib->dmac, fib->smac, vlan, proto))
		return verdict(DROP_NO_ROOM, p->len);
	if (proto == ETH_P_IP_BE)
		return icmp4_too_big(ctx, &a, tv, inner_len, mtu, k.ifindex);
	return icmp6_too_big(ctx, &a, tv, inner_len, mtu, k.ifindex);
}
