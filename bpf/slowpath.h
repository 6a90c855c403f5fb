/* slowpath.h: what one XDP run cannot finish goes to the seg6x daemon through the perf ring slow_path,
 * a slow_meta followed by the frame, and the frame is consumed here. The daemon sends what becomes of it
 * back through this same program (BPF_PROG_TEST_RUN with live frames, as if the frame had arrived on
 * meta.ifindex), so the ports, routes, policies and boundary checks of the fast path apply unchanged:
 *  - an IPv4 packet without DF larger than its tunnel is fragmented (RFC 791; inner fragmentation,
 *    RFC 4459 3.) and each fragment, which then fits, is encapsulated like any other packet;
 *  - the ICMP error answering a decapsulated packet too big for its tenant port enters through that
 *    port, as if the tenant's gateway had sent it, and is encapsulated by the tenant's own route back
 *    towards the sender;
 *  - a VXLAN encapsulation larger than the underlay (vxlan.h) is fragmented (outer IPv6, RFC 8200
 *    4.5) and the fragments are sent out of the underlay interface as they are (a packet socket).
 * Without a daemon reading the ring (nothing registered for this CPU), the caller decides. */
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "stats.h"
#include "fwd.h"

#define SLOW_NO_READER (-2) /* -ENOENT from bpf_perf_event_output: no daemon reads this CPU's ring */

/* Queues the whole frame (trimmed to m->len first) with m; 0, SLOW_NO_READER or another error. A
 * function of its own (not inlined): the record's type then reaches BTF, where bpf2go finds it. */
static __noinline long slow_send(struct ctx_buff *ctx, struct slow_meta *m)
{
	if (ctx_trim(ctx, m->len))
		return -1;
#ifdef SEG6X_TRACE
	if (trace_explain) /* as the slow path would answer, without sending */
		return trace_explain == TRACE_EXPLAIN_SLOW_READER ? 0 : SLOW_NO_READER;
#endif
	m->len = ctx_len(ctx);
	return bpf_perf_event_output(ctx, &slow_path, BPF_F_CURRENT_CPU | ((__u64)(m->len & 0xFFFF) << 32), m,
				     sizeof(*m));
}

/* A tenant IPv4 packet without DF (len bytes at p->l3off) larger than the tunnel MTU mtu: to the
 * daemon's fragmenter. Without a daemon, the kernel gets it as before (PASS_FIB_FRAG_NEEDED). */
static __always_inline int fragment_later(struct ctx_buff *ctx, struct pkt *p, __u32 len, __u32 mtu)
{
	struct slow_meta m = {
		.kind = SLOW_KIND_FRAGMENT, .ifindex = p->ifindex, .mtu = mtu, .l3off = p->l3off, .len = p->l3off + len
	};
	long rc;

	if (mtu < 68) /* RFC 791: every IPv4 link carries 68 bytes; a tunnel that does not is broken */
		return verdict(DROP_TOO_BIG, p->len);
	rc = slow_send(ctx, &m);
	if (rc == 0)
		return verdict(SLOW_FRAGMENT, p->len);
	if (rc == SLOW_NO_READER)
		return verdict(PASS_FIB_FRAG_NEEDED, p->len);
	return verdict(DROP_SLOW_BUSY, p->len);
}

/* The frame, an answer built in place, to the daemon, which runs it in at port ifindex. */
static __always_inline int slow_inject(struct ctx_buff *ctx, __u32 ifindex, __u32 l3off, __u32 bytes)
{
	struct slow_meta m = { .kind = SLOW_KIND_INJECT, .ifindex = ifindex, .l3off = l3off, .len = ctx_len(ctx) };
	long rc = slow_send(ctx, &m);

	if (rc == 0)
		return verdict(SLOW_DECAP_ICMP, bytes);
	if (rc == SLOW_NO_READER)
		return verdict(DROP_DECAP_TOO_BIG, bytes);
	return verdict(DROP_SLOW_BUSY, bytes);
}
