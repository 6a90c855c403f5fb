// SPDX-License-Identifier: GPL-2.0
/* hostile.c: a plugin for the fuzz run that does what a buggy or malicious plugin might, chosen by a
 * hash of the packet: verdicts that do not exist, drops with reasons out of range, encapsulation into
 * a policy it may not use, a broken ethertype, a wrong payload length or segments left, a frame cut
 * short or its start moved into the IPv6 header. seg6x must drop or forward whatever comes out
 * correctly, and count it. */
#include <seg6x/seg6x_plugin.h>

struct seg6x_plugin_config {
	__u8 unused;
};

SEG6X_PLUGIN(hostile)
{
	__u32 h = pc->pkt_len * 2654435761u;
	__u8 b[8];
	__u16 v;

	if (!seg6x_load(pkt, pc->l3_off + 8, b, 8))
		h ^= (b[5] << 24 | b[6] << 16 | b[7] << 8 | b[3]) * 40503u;
	h ^= h >> 13;
	v = h >> 16;
	switch (h & 7) {
	case 0: /* any verdict, also ones that do not exist */
		return (int)((h >> 8) % 12) - 2;
	case 1: { /* the ethertype in front of IPv6 becomes IPv4's */
		__be16 ip4 = bpf_htons(0x0800);

		if (pc->l3_off < 2 || seg6x_store(pkt, pc->l3_off - 2, &ip4, 2))
			return SEG6X_ABORT;
		return SEG6X_END;
	}
	case 2: /* a wrong payload length */
		if (seg6x_store(pkt, pc->l3_off + 4, &v, 2))
			return SEG6X_ABORT;
		return (h >> 8) & 1 ? SEG6X_END : SEG6X_DT46;
	case 3: /* a wrong segments left */
		if (pc->srh_off && seg6x_store(pkt, pc->srh_off + 3, &v, 1))
			return SEG6X_ABORT;
		return SEG6X_END;
	case 4: /* the frame cut short */
		if (pkt->hook == SEG6X_HOOK_XDP && bpf_xdp_adjust_tail(pkt->ctx, -(int)(1 + (v & 63))))
			return SEG6X_ABORT;
		return SEG6X_DT46;
	case 5: /* the frame's start moved into the IPv6 header */
		if (pkt->hook == SEG6X_HOOK_XDP && bpf_xdp_adjust_head(pkt->ctx, 14))
			return SEG6X_ABORT;
		return SEG6X_END;
	case 6: /* a drop, its reason sometimes out of range */
		return seg6x_drop(pc, v % 20);
	}
	return seg6x_encap(pc, v); /* a policy it may not use */
}

char _license[] SEC("license") = "GPL";
