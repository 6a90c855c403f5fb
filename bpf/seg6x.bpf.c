// SPDX-License-Identifier: GPL-2.0
/* seg6x.bpf.c: the XDP entry point (network nodes): the pipeline (pipeline.h) on frames before the
 * stack. seg6x_tc.bpf.c builds the same pipeline for tc. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pipeline.h"

SEC("xdp.frags")
int seg6x_xdp(struct xdp_md *ctx)
{
	if (trace_armed) /* the traced build (trace.h); no-op while its slot is empty */
		bpf_tail_call(ctx, &trace_prog, 0);
	return seg6x_main(ctx);
}

/* Types the control plane takes from this object's BTF (bpf2go -type): enums are only kept in BTF when
 * something refers to them. */
const enum sid_action *const export_sid_action __attribute__((unused)) = 0;
const enum reason *const export_reason __attribute__((unused)) = 0;
const enum slow_kind *const export_slow_kind __attribute__((unused)) = 0;
const enum rx_frags_mode *const export_rx_frags_mode __attribute__((unused)) = 0;
const enum port_flags *const export_port_flags __attribute__((unused)) = 0;
const enum port_vlan *const export_port_vlan __attribute__((unused)) = 0;
const enum sid_flags *const export_sid_flags __attribute__((unused)) = 0;
const enum mss_clamp *const export_mss_clamp __attribute__((unused)) = 0;
const enum limits *const export_limits __attribute__((unused)) = 0;
const enum vx_mac_kind *const export_vx_mac_kind __attribute__((unused)) = 0;
const enum vx_mac_flags *const export_vx_mac_flags __attribute__((unused)) = 0;
const enum vx_dev_flags *const export_vx_dev_flags __attribute__((unused)) = 0;
const enum trace_class *const export_trace_class __attribute__((unused)) = 0;
const enum trace_flags *const export_trace_flags __attribute__((unused)) = 0;
const enum trace_filter_flags *const export_trace_filter_flags __attribute__((unused)) = 0;
const enum plugin_outcome *const export_plugin_outcome __attribute__((unused)) = 0;
const enum seg6x_verdict *const export_seg6x_verdict __attribute__((unused)) = 0;

char _license[] SEC("license") = "GPL";
