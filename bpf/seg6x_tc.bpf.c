// SPDX-License-Identifier: GPL-2.0
/* seg6x_tc.bpf.c: the tc (tcx ingress) entry point (hypervisors): the same pipeline (pipeline.h) on skbs
 * after GRO, so GSO aggregates are encapsulated and decapsulated whole. Its maps are the XDP object's
 * (the loader hands it those). */
#define SEG6X_TC 1
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pipeline.h"

SEC("tc")
int seg6x_tc(struct __sk_buff *ctx)
{
	if (trace_armed) /* the traced build (trace.h); no-op while its slot is empty */
		bpf_tail_call(ctx, &trace_prog, 0);
	return seg6x_main(ctx);
}

char _license[] SEC("license") = "GPL";
