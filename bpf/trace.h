/* trace.h: `seg6x trace` / `capture` / `explain` in the fast path. The product program checks one global
 * flag per packet (trace_armed) and, when it is set, tail-calls the traced build of itself (the same
 * pipeline compiled with SEG6X_TRACE: seg6x_trace.bpf.c, seg6x_tc_trace.bpf.c). Only that build has
 * the TRACE() hooks: they fill a per-CPU record (trace_rec, structs.h) with every decision (port,
 * class, route and policy, SID, behavior and segments left, FIB inputs and result, action, reason);
 * at the end the record, the frame as received and as it left go to the trace ring when the filter
 * (trace_config) takes the packet, sampling and the per-CPU rate limit allow. */
#pragma once

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "consts.h"
#include "structs.h"
#include "maps.h"
#include "ctx.h"
#include "parse.h"

#ifdef SEG6X_TRACE

static __always_inline struct trace_buf *trace_buf_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&trace_scratch, &zero);
}

/* Set when the build is loaded for `seg6x explain`: the frame is not sent anywhere (nothing to the
 * slow path), counts nothing in the live counters and writes nothing to the ring. The slow path then
 * answers as it would: TRACE_EXPLAIN_SLOW_READER when a daemon reads it, else as without a daemon. */
#define TRACE_EXPLAIN 1
#define TRACE_EXPLAIN_SLOW_READER 2
const volatile __u32 trace_explain = 0;

/* Runs the statements with tr pointing at this packet's record. */
#define TRACE(...)                                         \
	do {                                               \
		struct trace_buf *__tb = trace_buf_get();  \
		if (__tb) {                                \
			struct trace_rec *tr = &__tb->rec; \
			__VA_ARGS__;                       \
		}                                          \
	} while (0)

#else

#define TRACE(...) \
	do {       \
	} while (0)

/* Set by the daemon while a trace runs (the product build's one per-packet check). */
volatile __u32 trace_armed = 0;

#endif

/* An IPv4 address as IPv4-mapped IPv6 (::ffff:a.b.c.d). */
static __always_inline void trace_addr4(__u8 *to, __be32 a)
{
	__builtin_memset(to, 0, 10);
	to[10] = 0xff;
	to[11] = 0xff;
	__builtin_memcpy(to + 12, &a, 4);
}

#ifdef SEG6X_TRACE

/* The addresses, protocols and ports of the received packet: its first IP header and, behind an IPv6
 * header (and an SRH), an inner IPv4/IPv6 packet; the innermost TCP/UDP ports. */
static __always_inline void trace_ports(void *data, void *data_end, __u32 off, __u8 proto, struct trace_rec *r)
{
	__be16 *l4 = data + (off & 0x3FF);

	if (proto != PROTO_TCP && proto != PROTO_UDP)
		return;
	if ((void *)(l4 + 2) > data_end)
		return;
	r->sport = bpf_ntohs(l4[0]);
	r->dport = bpf_ntohs(l4[1]);
	r->flags |= TRACE_F_L4;
}

/* The IP header at off (ethertype proto) into src/dst and *nh; returns the offset of its payload, 0
 * when it has no headers of its own (a later IPv4 fragment), -1 when it is not within the frame. */
static __always_inline int trace_ip(void *data, void *data_end, __u32 off, __be16 proto, __u8 *src, __u8 *dst, __u8 *nh)
{
	off &= 0x3FF;
	if (proto == ETH_P_IP_BE) {
		struct iphdr *iph = data + off;
		if ((void *)(iph + 1) > data_end)
			return -1;
		trace_addr4(src, iph->saddr);
		trace_addr4(dst, iph->daddr);
		*nh = iph->protocol;
		return iph->frag_off & IP_OFFSET_BE ? 0 : off + iph->ihl * 4;
	}
	if (proto == ETH_P_IPV6_BE) {
		struct ipv6hdr *ip6 = data + off;
		if ((void *)(ip6 + 1) > data_end)
			return -1;
		__builtin_memcpy(src, &ip6->saddr, 16);
		__builtin_memcpy(dst, &ip6->daddr, 16);
		*nh = ip6->nexthdr;
		return off + sizeof(*ip6);
	}
	return -1;
}

static __always_inline void trace_headers(void *data, void *data_end, struct trace_rec *r)
{
	struct pkt p = {};
	int off;
	__u8 *rh;
	__u8 nh;

	if (parse_l2(data, data_end, &p) != REASON_NONE)
		return;
	off = trace_ip(data, data_end, p.l3off, p.proto, r->outer_src, r->outer_dst, &r->outer_proto);
	if (off <= 0)
		return;
	nh = r->outer_proto;
	if (p.proto == ETH_P_IPV6_BE && nh == PROTO_ROUTING) {
		rh = data + (off & 0xFF);
		if ((void *)(rh + 2) > data_end)
			return;
		nh = rh[0];
		off += ((int)rh[1] + 1) * 8;
	}
	if (p.proto == ETH_P_IPV6_BE && (nh == PROTO_IPIP || nh == PROTO_IPV6)) {
		off = trace_ip(data, data_end, off, nh == PROTO_IPIP ? ETH_P_IP_BE : ETH_P_IPV6_BE, r->inner_src,
			       r->inner_dst, &r->inner_proto);
		if (off < 0)
			return;
		r->flags |= TRACE_F_INNER;
		nh = r->inner_proto;
		if (!off)
			return;
	}
	trace_ports(data, data_end, off, nh, r);
}

/* Is a (16 bytes) within the prefix p/plen? */
static __always_inline int trace_in_prefix(const __u8 *a, const __u8 *p, __u32 plen)
{
#pragma unroll
	for (int w = 0; w < 4; w++) {
		__u32 x, y, bits = plen > 32 * w ? plen - 32 * w : 0;
		__u32 mask;

		if (!bits)
			break;
		mask = bits >= 32 ? 0xFFFFFFFF : ~(0xFFFFFFFFU >> bits);
		__builtin_memcpy(&x, a + 4 * w, 4);
		__builtin_memcpy(&y, p + 4 * w, 4);
		if ((bpf_ntohl(x) ^ bpf_ntohl(y)) & mask)
			return 0;
	}
	return 1;
}

static __always_inline int trace_match(const struct trace_cfg *c, const struct trace_rec *r)
{
	__u32 f = c->filter;
	int inner = r->flags & TRACE_F_INNER;

	if ((f & TF_IFINDEX) && r->ifindex != c->ifindex)
		return 0;
	if ((f & TF_VLAN) && r->vlan != c->vlan)
		return 0;
	if ((f & TF_TABLE) && (!(r->port_flags & PORT_F_TENANT) || r->table != c->table))
		return 0;
	if ((f & TF_POLICY) && (!(r->flags & TRACE_F_ROUTE) || r->policy != c->policy))
		return 0;
	if ((f & TF_SID) && (!(r->flags & TRACE_F_SID) || !same16(r->sid, c->sid)))
		return 0;
	if ((f & TF_REASON) && r->reason != c->reason)
		return 0;
	if ((f & TF_ACTIONS) && !(c->action_mask & (1U << (r->action & 31))))
		return 0;
	if ((f & TF_CLASS) && r->class != c->class)
		return 0;
	if ((f & TF_SRC) && !trace_in_prefix(r->outer_src, c->src, c->src_plen) &&
	    !(inner && trace_in_prefix(r->inner_src, c->src, c->src_plen)))
		return 0;
	if ((f & TF_DST) && !trace_in_prefix(r->outer_dst, c->dst, c->dst_plen) &&
	    !(inner && trace_in_prefix(r->inner_dst, c->dst, c->dst_plen)))
		return 0;
	if ((f & TF_PROTO) && (inner ? r->inner_proto : r->outer_proto) != c->proto)
		return 0;
	if ((f & TF_SPORT) && (!(r->flags & TRACE_F_L4) || r->sport != c->sport))
		return 0;
	if ((f & TF_DPORT) && (!(r->flags & TRACE_F_L4) || r->dport != c->dport))
		return 0;
	return 1;
}

/* Sampling (1 in c->sample) and the per-CPU rate limit (c->rate records/s, a burst of one second). */
static __always_inline int trace_allowed(const struct trace_cfg *c, struct trace_stats *st)
{
	__u64 now, elapsed, cap;

	st->matched++;
	st->seen++;
	if (c->sample > 1 && st->seen % c->sample) {
		st->sampled_out++;
		return 0;
	}
	if (!c->rate)
		return 1;
	now = bpf_ktime_get_ns();
	elapsed = now - st->tokens_ns;
	if (elapsed > 1000000000ULL)
		elapsed = 1000000000ULL;
	st->tokens_ns = now;
	cap = (__u64)c->rate * 1000000000ULL;
	st->tokens += elapsed * c->rate;
	if (st->tokens > cap)
		st->tokens = cap;
	if (st->tokens < 1000000000ULL) {
		st->rate_limited++;
		return 0;
	}
	st->tokens -= 1000000000ULL;
	return 1;
}

static __always_inline __u32 trace_snap(const struct trace_cfg *c, __u32 len)
{
	__u32 n = c->snaplen < len ? c->snaplen : len;

	return n < TRACE_SNAP_MAX ? n : TRACE_SNAP_MAX;
}

/* Copies the frame's first n (1..TRACE_SNAP_MAX) bytes to to; bounds the verifier can follow. */
static __always_inline int trace_copy(struct ctx_buff *ctx, __u8 *to, __u32 n)
{
	asm volatile("" : "+r"(n)); /* the checks below on the register the helper gets */
	n &= 0xFFF;
	if (n == 0 || n > TRACE_SNAP_MAX)
		return -1;
	return ctx_load_bytes(ctx, 0, to, n);
}

/* Start of a traced packet: a fresh record, the headers and the frame as received. A function of its
 * own (not inlined), so the pipeline's code around it is compiled as in the product build. */
static __noinline void trace_begin(struct ctx_buff *ctx, __u32 flags)
{
	struct trace_buf *b = trace_buf_get();
	__u32 zero = 0, n;
	struct trace_cfg *c = bpf_map_lookup_elem(&trace_config, &zero);

	__u32 ifindex = ctx->ingress_ifindex, len = ctx_len(ctx);
	void *data = ctx_data(ctx), *data_end = ctx_data_end(ctx);

	if (!b || !c)
		return;
	__builtin_memset(&b->rec, 0, sizeof(b->rec));
	b->rec.ts_ns = bpf_ktime_get_ns();
	b->rec.flags = flags;
	b->rec.ifindex = ifindex;
	b->rec.frame_len = len;
	trace_headers(data, data_end, &b->rec);
	n = trace_snap(c, len);
	if (!trace_copy(ctx, b->data, n))
		b->rec.rx_len = n;
}

/* End of a traced packet: filter, sampling, rate limit, then the record with the frame as it leaves. */
static __noinline void trace_end(struct ctx_buff *ctx)
{
	struct trace_buf *b = trace_buf_get();
	__u32 zero = 0, n, off, size;
	struct trace_cfg *c = bpf_map_lookup_elem(&trace_config, &zero);
	struct trace_stats *st = bpf_map_lookup_elem(&trace_counts, &zero);
	__u32 len = ctx_len(ctx);

	if (!b || !c || !st || trace_explain)
		return;
	if (!trace_match(c, &b->rec) || !trace_allowed(c, st))
		return;
	b->rec.out_len = len;
	off = b->rec.rx_len & 0xFFF;
	if (off > TRACE_SNAP_MAX)
		return;
	n = trace_snap(c, len);
	if (!trace_copy(ctx, b->data + off, n))
		b->rec.tx_len = n;
	size = (sizeof(b->rec) + off + b->rec.tx_len) & 0x1FFF;
	if (size > sizeof(*b))
		return;
	if (bpf_ringbuf_output(&trace_ring, b, size, 0))
		st->ring_full++;
	else
		st->emitted++;
}

#endif
