/* boundary.h: the SR domain boundary (RFC 8402 8.2, RFC 8754 5.1). A frame from an access port is
 * tenant traffic whatever its destination: IPv6 addressed to a local SID or into the domain's locators,
 * or carrying an SRH, is refused there. A fabric port may require packets to local SIDs to come from
 * the domain's own sources. */
#pragma once

#include <linux/bpf.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parse.h"
#include "sidlookup.h"

/* Does the IPv6 packet at l3off carry a segment routing header? Walks the extension headers that may
 * precede one (a routing header sits before any fragment header). Returns REASON_NONE,
 * DROP_BOUNDARY_SRH, or a DROP_* reason when the chain cannot be seen to its end. */
static __always_inline int srh_check(void *data, void *data_end, __u32 l3off)
{
	struct ipv6hdr *ip6 = data + l3off;
	__u32 off = l3off + IPV6_HLEN;
	__u8 nh;

	if ((void *)(ip6 + 1) > data_end)
		return DROP_TRUNC_IP;
	nh = ip6->nexthdr;
	for (int i = 0; i < MAX_EXT_HDRS; i++) {
		__u8 *h;

		if (nh != PROTO_HOPOPTS && nh != PROTO_DSTOPTS && nh != PROTO_AH && nh != PROTO_ROUTING)
			return REASON_NONE; /* upper layer, fragment header or no next header */
		off &= 0x3FFF;
		h = data + off;
		if ((void *)(h + 8) > data_end)
			return DROP_TRUNC_EXTHDR;
		if (nh == PROTO_ROUTING && h[2] == SRH_ROUTING_TYPE)
			return DROP_BOUNDARY_SRH;
		off += nh == PROTO_AH ? ((__u32)h[1] + 2) * 4 : ((__u32)h[1] + 1) * 8;
		nh = h[0];
	}
	if (nh == PROTO_HOPOPTS || nh == PROTO_DSTOPTS || nh == PROTO_AH || nh == PROTO_ROUTING)
		return DROP_TOO_MANY_EXTHDRS; /* an SRH could hide further along */
	return REASON_NONE;
}

/* Access side, IPv6: REASON_NONE, or why the packet must not enter (checked before any tenant route). */
static __always_inline int boundary6(void *data, void *data_end, struct pkt *p)
{
	struct ipv6hdr *ip6 = data + p->l3off;
	struct lpm6_key k = { .prefixlen = 128 };

	if ((void *)(ip6 + 1) > data_end)
		return DROP_TRUNC_IP;
	if (sid_lookup(&ip6->daddr))
		return DROP_BOUNDARY_SID;
	__builtin_memcpy(k.addr, &ip6->daddr, 16);
	if (bpf_map_lookup_elem(&sid_space, &k))
		return DROP_BOUNDARY_LOCATOR;
	return srh_check(data, data_end, p->l3off);
}

/* Fabric side: is the outer source one of the domain's (only asked when the port requires it)? */
static __always_inline int sid_source_ok(struct ipv6hdr *ip6)
{
	struct lpm6_key k = { .prefixlen = 128 };

	__builtin_memcpy(k.addr, &ip6->saddr, 16);
	return bpf_map_lookup_elem(&sid_sources, &k) != NULL;
}
