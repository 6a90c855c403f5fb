// SPDX-License-Identifier: GPL-2.0
/* redirector.c: a plugin that tries to send the packet somewhere itself: seg6x refuses to load it. */
#include <seg6x/seg6x_plugin.h>

struct seg6x_plugin_config {
	__u32 ifindex;
};

SEG6X_PLUGIN(redirector)
{
	if (pkt->hook == SEG6X_HOOK_XDP)
		return bpf_redirect(cfg->ifindex, 0);
	return SEG6X_PASS;
}

char _license[] SEC("license") = "GPL";
