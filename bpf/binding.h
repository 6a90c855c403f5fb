/* binding.h: binding SIDs, End.B6.Encaps and End.B6.Encaps.Red (RFC 8986 4.13, 4.14): the packet's SRH
 * advances to its next segment, then the whole IPv6 packet goes into the SID's SR policy (its prebuilt
 * outer IPv6 header + SRH, the one a headend route with that segment list writes; .Red: reduced) and
 * leaves towards the policy's first segment. As the kernel's seg6local End.B6.Encaps: the inner hop
 * limit is left as it arrived, the outer takes it (less this hop), and the inner traffic class and flow
 * label (a hash of the inner addresses when the inner label is 0, where the kernel writes 0). */
#pragma once

#include <linux/bpf.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "fwd.h"
#include "egress.h"
#include "flowlabel.h"

/* A packet addressed to binding SID sid, its SRH found (s); fib: endpoint()'s, zeroed (the stack has no
 * room for a second one). Returns the verdict. Until the FIB has
 * answered nothing is changed, so whatever the fast path does not forward reaches the kernel as it came
 * (its End.B6.Encaps, when the kernel mirror's, or its answer: a too-big packet, no route). */
static __always_inline int binding_sid(struct ctx_buff *ctx, struct pkt *p, struct sid_entry *sid, struct srh_info *s,
				       struct bpf_fib_lookup *fib)
{
	void *data = ctx_data(ctx);
	void *data_end = ctx_data_end(ctx);
	struct ipv6hdr *ip6 = data + p->l3off;
	struct encap_policy *pol;
	struct ipv6hdr *o6;
	__u32 len, hdr_len, sl, word;
	__u8 *srh, *seg, hl;
	int rc, to_kernel = REASON_NONE;

	if (!s->srh_off || s->sl == 0)
		return verdict(PASS_LOCAL, p->len); /* the last segment: the packet is this node's */
	if ((void *)(ip6 + 1) > data_end)
		return verdict(DROP_TRUNC_IP, p->len);
	/* The hop limit as it arrived: the first SID of a chain took this node's one off already. */
	hl = p->chain ? ip6->hop_limit + 1 : ip6->hop_limit;
	if (hl <= 1)
		return verdict(PASS_TTL, p->len);
	pol = bpf_map_lookup_elem(&policies, &sid->policy);
	if (!pol)
		return finish(ACT_PASS, p->len);
	hdr_len = pol->hdr_len;
	if (hdr_len < IPV6_HLEN || hdr_len > MAX_ENCAP_HDR)
		return finish(ACT_PASS, p->len);
	len = IPV6_HLEN + bpf_ntohs(ip6->payload_len); /* outer_check(): within the frame, padding trimmed */
	if (ctx_wire_len(ctx, data, data_end, p->l3off, p->l3off, ETH_P_IPV6_BE, len) != len)
		return verdict(PASS_GSO_NESTED, p->len);

	/* The outer first word the packet will carry (below): its flow label picks the path among ECMP
	 * next hops, so the lookup is made with it. */
	sl = (__u32)s->sl - 1;
	srh = data + (s->srh_off & 0x3FFF);
	seg = srh + SRH_FIXED_LEN + (sl & 0xFF) * 16;
	if ((void *)(srh + SRH_FIXED_LEN) > data_end || (void *)(seg + 16) > data_end)
		return verdict(DROP_SRH_BAD_LEN, p->len);
	word = bpf_ntohl(*(__be32 *)ip6);
	if (!(word & 0xFFFFF))
		word |= flow_label6_of(&ip6->saddr, seg, ip6->nexthdr, NULL);
	fib->flowinfo = bpf_htonl(word & 0x0FFFFFFF);

	fib->family = AF_INET6;
	fib->ifindex = p->ifindex;
	fib->tot_len = len + hdr_len;
	fib->l4_protocol = pol->hdr[6];
	__builtin_memcpy(fib->ipv6_src, pol->hdr + 8, 16);
	__builtin_memcpy(fib->ipv6_dst, pol->hdr + 24, 16);
	rc = fib_lookup(ctx, fib, 0);
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH || rc == FIB_TX_NOT_ATTACHED) {
		/* The kernel forwards the encapsulated packet (resolving the neighbor on the way): the frame
		 * stays addressed to this node as it arrived. */
		struct ethhdr *eth = data;

		if ((void *)(eth + 1) > data_end)
			return verdict(DROP_TRUNC_IP, p->len);
		__builtin_memcpy(fib->dmac, eth->h_dest, ETH_ALEN);
		__builtin_memcpy(fib->smac, eth->h_source, ETH_ALEN);
		to_kernel = fib_reason(rc);
	} else if (rc != BPF_FIB_LKUP_RET_SUCCESS) {
		return verdict(fib_reason(rc), p->len);
	}

	/* A multi-buffer frame cannot be moved through the scratch buffer: it must take the outer header
	 * in its headroom (MULTIBUF_HEADROOM), or go to the kernel untouched. */
	if (ETH_HLEN + hdr_len > p->l3off + MULTIBUF_HEADROOM && ctx_frags(ctx, p->l3off + len))
		return verdict(PASS_MULTIBUF, p->len);

	/* Committed. The SRH's next segment (SL--, DA = Segment List[SL]), the hop limit as it came. */
	sl = (__u32)s->sl - 1;
	srh = data + (s->srh_off & 0x3FFF);
	seg = srh + SRH_FIXED_LEN + (sl & 0xFF) * 16;
	if ((void *)(srh + SRH_FIXED_LEN) > data_end || (void *)(seg + 16) > data_end)
		return verdict(DROP_SRH_BAD_LEN, p->len);
	srh[3] = sl;
	__builtin_memcpy(&ip6->daddr, seg, 16);
	ip6->hop_limit = hl;
	TRACE(tr->sl_after = sl; tr->policy = sid->policy);
	word = bpf_ntohl(*(__be32 *)ip6); /* version, traffic class, flow label */
	if (!(word & 0xFFFFF))
		word |= flow_label6(ip6, NULL);
	count(&policy_stats, sid->policy, p->len);

	/* The policy's header in front of the IPv6 packet; the outer's first word and lengths patched. */
	if (ctx_encap_room(ctx, p->l3off, len, hdr_len))
		return verdict(DROP_NO_ROOM, p->len);
	if (ctx_store_hdr(ctx, ETH_HLEN, pol->hdr, hdr_len))
		return verdict(DROP_NO_ROOM, p->len);
	if (ctx_set_l2(ctx, ETH_HLEN, fib->dmac, fib->smac, 0, ETH_P_IPV6_BE))
		return verdict(DROP_NO_ROOM, p->len);
	data = ctx_data(ctx);
	data_end = ctx_data_end(ctx);
	o6 = data + ETH_HLEN;
	if ((void *)(o6 + 1) > data_end)
		return verdict(DROP_NO_ROOM, p->len);
	*(__be32 *)o6 = bpf_htonl(word);
	o6->payload_len = bpf_htons(len + hdr_len - IPV6_HLEN);
	/* This hop's decrement, unless the kernel forwards it (and decrements it then). */
	o6->hop_limit = to_kernel ? hl : hl - 1;
	if (to_kernel)
		return verdict(to_kernel, p->len);
	return send_pkt(ctx, p, fib->ifindex);
}
