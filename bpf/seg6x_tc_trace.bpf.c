// SPDX-License-Identifier: GPL-2.0
/* seg6x_tc_trace.bpf.c: the traced tc build (trace.h), tail-called by seg6x_tc while a trace is armed. */
#define SEG6X_TC 1
#define SEG6X_TRACE 1
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pipeline.h"

SEC("tc")
int seg6x_tc_trace(struct __sk_buff *ctx)
{
	int rc;

	trace_begin(ctx, TRACE_F_TC);
	rc = seg6x_main(ctx);
	trace_end(ctx);
	return rc;
}

char _license[] SEC("license") = "GPL";
