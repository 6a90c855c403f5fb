// SPDX-License-Identifier: GPL-2.0
/* verdicts.c: a test plugin whose every act comes from its SID's configuration: the verdict to return
 * (any value, also ones that do not exist), the reason and policy with it, and a damage to do first. */
#include <seg6x/seg6x_plugin.h>

enum damage {
	DAMAGE_NONE = 0,
	DAMAGE_ETHERTYPE = 1, /* the ethertype before the IPv6 header becomes IPv4's */
	DAMAGE_INNER_DST = 2, /* the inner IPv4 destination becomes 198.18.9.2 (checksum fixed) */
};

struct seg6x_plugin_config {
	__s32 verdict;
	__u16 reason;
	__u8 damage; /* enum damage */
	__u8 pad;
	seg6x_policy_t policy;
};

SEG6X_PLUGIN(verdicts)
{
	if (cfg->damage == DAMAGE_ETHERTYPE) {
		__be16 ip4 = bpf_htons(0x0800);

		if (pc->l3_off < 2 || seg6x_store(pkt, pc->l3_off - 2, &ip4, 2))
			return SEG6X_ABORT;
	}
	if (cfg->damage == DAMAGE_INNER_DST && pc->inner_proto == 4) {
		__u16 old[2], new[2], csum;
		__be32 dst = bpf_htonl(0xC6120902); /* 198.18.9.2 */

		if (seg6x_load(pkt, pc->inner_off + 16, old, 4) || seg6x_load(pkt, pc->inner_off + 10, &csum, 2))
			return SEG6X_ABORT;
		__builtin_memcpy(new, &dst, 4);
		csum = seg6x_csum_replace16(csum, old[0], new[0]);
		csum = seg6x_csum_replace16(csum, old[1], new[1]);
		if (seg6x_store(pkt, pc->inner_off + 16, &dst, 4) || seg6x_store(pkt, pc->inner_off + 10, &csum, 2))
			return SEG6X_ABORT;
	}
	if (cfg->verdict == SEG6X_DROP)
		return seg6x_drop(pc, cfg->reason);
	if (cfg->verdict == SEG6X_ENCAP)
		return seg6x_encap(pc, cfg->policy);
	return cfg->verdict;
}

char _license[] SEC("license") = "GPL";
