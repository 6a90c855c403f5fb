// SPDX-License-Identifier: GPL-2.0
/* nosdk.c: an XDP program built without the plugin SDK: seg6x refuses it as a plugin. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp.frags")
int plain(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
