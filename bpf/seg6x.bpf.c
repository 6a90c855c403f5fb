// SPDX-License-Identifier: GPL-2.0
/* seg6x.bpf.c: the XDP entry point. Parse, classify (local SID, tenant headend, or not ours), act. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "consts.h"
#include "structs.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "headend.h"
#include "endpoint.h"

SEC("xdp")
int seg6x_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pkt p = { .len = data_end - data };
	int rc;

	rc = parse_l2(data, data_end, &p);
	if (rc != REASON_NONE)
		return verdict(rc, p.len);

	if (p.proto == ETH_P_IPV6_BE) {
		for (int i = 0; i < MAX_SID_CHAIN; i++) {
			struct ipv6hdr *ip6;
			struct sid_entry *sid;

			data = (void *)(long)ctx->data;
			data_end = (void *)(long)ctx->data_end;
			ip6 = data + p.l3off;
			if ((void *)(ip6 + 1) > data_end)
				return finish(XDP_PASS, p.len);
			sid = bpf_map_lookup_elem(&sids, &ip6->daddr);
			if (!sid)
				return i == 0 ? headend(ctx, &p) : finish(XDP_PASS, p.len);
			rc = endpoint(ctx, &p, sid);
			if (rc != SID_CHAIN)
				return rc;
		}
		/* A longer chain of local SIDs than the fast path follows: the kernel takes it from here. */
		return verdict(PASS_LOCAL, p.len);
	}
	if (p.proto == ETH_P_IP_BE)
		return headend(ctx, &p);
	return finish(XDP_PASS, p.len);
}

char _license[] SEC("license") = "GPL";
