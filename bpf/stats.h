/* stats.h: per-CPU counters (per policy, per SID, per XDP action, per drop/pass reason). */
#pragma once

#include "maps.h"
#include "ctx.h"
#include "trace.h"

static __always_inline void count(void *map, __u32 idx, __u32 bytes)
{
	struct counter *c;

#ifdef SEG6X_TRACE
	if (trace_explain)
		return;
#endif
	c = bpf_map_lookup_elem(map, &idx);
	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
}

/* Every program exit goes through here so the action counters see each packet once: action is an
 * ACT_* (ctx.h), returned as the hook's code. */
static __always_inline int finish(int action, __u32 bytes)
{
	count(&action_stats, (__u32)action, bytes);
	TRACE(tr->action = action);
	return ctx_ret(action);
}

/* A packet seg6x owns but drops or hands to the kernel, with the reason (its value says which; the
 * answers, ICMP_*, leave through answer() in icmp.h). */
static __always_inline int verdict(int reason, __u32 bytes)
{
	count(&reason_stats, (__u32)reason, bytes);
	TRACE(tr->reason = reason);
	return finish(reason >= REASON_PASS_FIRST ? ACT_PASS : ACT_DROP, bytes);
}
