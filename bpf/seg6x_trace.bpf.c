// SPDX-License-Identifier: GPL-2.0
/* seg6x_trace.bpf.c: the traced XDP build (trace.h): the same pipeline with its TRACE() hooks compiled
 * in, tail-called by seg6x_xdp while a trace is armed, and run directly by `seg6x explain`. */
#define SEG6X_TRACE 1
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pipeline.h"

SEC("xdp.frags")
int seg6x_xdp_trace(struct xdp_md *ctx)
{
	int rc;

	trace_begin(ctx, 0);
	rc = seg6x_main(ctx);
	trace_end(ctx);
	return rc;
}

char _license[] SEC("license") = "GPL";
