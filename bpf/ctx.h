/* ctx.h: the packet context the behaviors are written against (as Cilium's ctx/ layer), so one copy of
 * every behavior compiles for both hooks: seg6x.bpf.c builds it for XDP (struct xdp_md: frames before
 * the stack, network nodes), seg6x_tc.bpf.c with SEG6X_TC for tc/tcx (struct __sk_buff: skbs after GRO
 * and before GSO, hypervisors). Each hook's file defines:
 *   struct ctx_buff                  the context type
 *   ctx_data/ctx_data_end/ctx_len    linear data (direct access) and the whole packet's length
 *   ctx_frags(ctx, len)              whether bytes of the packet lie beyond what the helpers that
 *                                    read it whole can reach in place (an XDP multi-buffer frame)
 *   ctx_parse(ctx, p)                p->len (what can be read in place), p->ifindex and the L2 header
 *                                    (parse.h)
 *   ctx_whole_len(ctx, p, frags)     p->len the whole packet's length, once the port is known (frags:
 *                                    its interface may receive multi-buffer frames)
 *   ctx_ret(action)                  an ACT_* action as the hook's return code
 *   ctx_redirect(ifindex)            0 when the packet will leave through ifindex (an attached port)
 *   ctx_trim(ctx, len)               drops bytes beyond len (Ethernet padding)
 *   ctx_trim_len(ctx, have, len)     the same for a packet known to be have bytes long (no length
 *                                    to ask for)
 *   ctx_store(ctx, off, src, n)      writes n bytes at off
 *   ctx_store_hdr(ctx, off, src, n)  the same for an encapsulation header (src: MAX_ENCAP_HDR bytes)
 *   ctx_load_bytes(ctx, off, to, n)  copies n bytes at off out of the packet (linear or not)
 *   ctx_set_l2(...)                  the packet at l3off gets a fresh Ethernet header (+ VLAN)
 *   ctx_encap_room(...)              room for an outer header in front of the packet at l3off
 *   ctx_pop(ctx, off, len)           removes len bytes at off, right after the IPv6 header (an SRH)
 *   ctx_wire_len(...)                the L3 length of the largest packet that will reach the wire
 *                                    (a GSO aggregate's segment, or the packet itself)
 *   CTX_ANSWERS_TOO_BIG              whether a packet too big for its next link is answered here
 *                                    (ICMP, inner fragmentation) or handed to the kernel as it came */
#pragma once

#include <linux/bpf.h>

/* What the data plane does with a packet, whatever the hook (the values are XDP's, which also index
 * the action counters). */
enum act {
	ACT_DROP = XDP_DROP,
	ACT_PASS = XDP_PASS,
	ACT_REDIRECT = XDP_REDIRECT,
};

#ifdef SEG6X_TC
#include "ctx_tc.h"
#else
#include "ctx_xdp.h"
#endif
