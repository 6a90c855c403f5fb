// SPDX-License-Identifier: GPL-2.0
/* plugin_nop.c: the benchmark's plugin: it leaves the packet alone and returns the verdict its SID's
 * configuration names, so `seg6x-bench micro` times what calling a plugin costs next to the built-in
 * behavior the verdict continues as. */
#include <seg6x/seg6x_plugin.h>

struct seg6x_plugin_config {
	__s32 verdict; /* enum seg6x_verdict */
};

SEG6X_PLUGIN(nop)
{
	return cfg->verdict;
}

char _license[] SEC("license") = "GPL";
