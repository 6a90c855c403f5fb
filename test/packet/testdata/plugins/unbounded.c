// SPDX-License-Identifier: GPL-2.0
/* unbounded.c: a plugin that reads the frame without checking its bounds: the verifier refuses it. */
#include <seg6x/seg6x_plugin.h>

struct seg6x_plugin_config {
	__u32 unused;
};

SEG6X_PLUGIN(unbounded)
{
	__u8 *data = seg6x_data(pkt);

	return data[pc->l3_off + 7] > 1 ? SEG6X_END : SEG6X_DROP;
}

char _license[] SEC("license") = "GPL";
