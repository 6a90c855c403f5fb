// SPDX-License-Identifier: GPL-2.0
/* ttlgate.c: the tutorial plugin (docs/plugins.md). At the last segment, drops inner packets whose
 * TTL / hop limit is below min_ttl (counted as low_ttl) and decapsulates the rest as End.DT46 into
 * the SID's tenant table; before the last segment, acts as End.
 *   seg6x plugin load ttlgate ttlgate.o
 *   seg6x sid add fc00:1::d action plugin ttlgate tenant blue min_ttl=5 */
#include <seg6x/seg6x_plugin.h>

struct seg6x_plugin_config {
	__u8 min_ttl SEG6X_HELP("inner TTL / hop limit below which packets are dropped");
};

enum seg6x_plugin_reason { low_ttl = 1, not_ip = 2 };
SEG6X_EXPORT_REASONS;

SEG6X_PLUGIN(ttlgate)
{
	__u8 ttl;

	if (pc->sl != 0 && pc->sl != 0xFF)
		return SEG6X_END;
	if (pc->inner_proto != 4 && pc->inner_proto != 41)
		return seg6x_drop(pc, not_ip);
	/* IPv4: TTL at byte 8; IPv6: hop limit at byte 7 */
	if (seg6x_load(pkt, pc->inner_off + (pc->inner_proto == 4 ? 8 : 7), &ttl, 1))
		return SEG6X_ABORT;
	if (ttl < cfg->min_ttl)
		return seg6x_drop(pc, low_ttl);
	return SEG6X_DT46;
}

char _license[] SEC("license") = "GPL";
