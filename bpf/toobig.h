/* toobig.h: a packet too big for its next link. On XDP the fast path answers it: an ICMP error
 * announcing the tunnel's (or the tenant port's) MTU (icmp.h), or, for IPv4 without DF at the headend,
 * fragmentation by the daemon (slowpath.h). On tc the kernel gets it as it arrived (counted as
 * PASS_FIB_FRAG_NEEDED): its own seg6 routes, when it holds the tenant's, fragment or answer it. A GSO
 * aggregate is too big only when its segments are (ctx_wire_len). */
#pragma once

#include "ctx.h"
#include "parse.h"
#include "stats.h"
#include "structs.h"

#if CTX_ANSWERS_TOO_BIG
#include "icmp.h"
#include "slowpath.h"

/* A tenant packet (inner_len bytes, DF set or IPv6) larger than its tunnel: the egress MTU (fib_mtu)
 * minus the outer header. With DF (IPv6: always) it is answered with an ICMP error announcing the
 * tunnel MTU; without, the daemon fragments it and each fragment comes back through here. */
static __always_inline int tunnel_too_big(struct ctx_buff *ctx, struct pkt *p, const struct port_val *tv,
					  __u32 inner_len, __u8 df, __u32 fib_mtu, __u32 hdr_len)
{
	__u32 mtu = fib_mtu > hdr_len ? fib_mtu - hdr_len : 0;

	if (p->proto == ETH_P_IP_BE) {
		if (!df)
			return fragment_later(ctx, p, inner_len, mtu);
		return icmp4_too_big(ctx, p, tv, inner_len, mtu, 0);
	}
	return icmp6_too_big(ctx, p, tv, inner_len, mtu, 0);
}
#else
static __always_inline int tunnel_too_big(struct ctx_buff *ctx, struct pkt *p, const struct port_val *tv,
					  __u32 inner_len, __u8 df, __u32 fib_mtu, __u32 hdr_len)
{
	return verdict(PASS_FIB_FRAG_NEEDED, p->len);
}

/* A decapsulated packet too big for its egress port: the kernel gets it still encapsulated. */
static __always_inline int decap_too_big(struct ctx_buff *ctx, struct pkt *p, struct bpf_fib_lookup *fib, __u32 table,
					 __be16 proto, __u32 ioff, __u32 inner_len, __u16 vlan)
{
	return verdict(PASS_FIB_FRAG_NEEDED, p->len);
}
#endif
