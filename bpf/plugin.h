/* plugin.h: local SIDs whose behavior is an operator's function (SID_PLUGIN; the SDK is
 * sdk/seg6x/seg6x_plugin.h). local_sids (pipeline.h) runs one in three steps, each a global function
 * of its own so the verifier checks it once:
 *   plugin_prepare  checks the outer header as endpoint() does and writes the call's context;
 *   plugin_call     tail-calls the function in the SID's slot, whose return value comes back here;
 *   plugin_after    counts the outcome and turns the verdict into the SID entry endpoint() runs next
 *                   (End, End.DT4/6/46 in the SID's own table, End.B6.Encaps into an allowed policy),
 *                   or into a drop or a pass.
 * Nothing the function wrote is trusted: endpoint() checks the headers again, End leaves by the fabric
 * only (fabric_port), Encaps goes only into a policy the SID's settings name (its outer header is the
 * policy's, not the function's), and DT looks up the SID's tenant table, not one the function names. */
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "ctx.h"
#include "consts.h"
#include "structs.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "endpoint.h"

#ifdef SEG6X_TC
#define PLUGIN_PROGS plugin_tc_progs
#define PLUGIN_HOOK SEG6X_HOOK_TC
#else
#define PLUGIN_PROGS plugin_xdp_progs
#define PLUGIN_HOOK SEG6X_HOOK_XDP
#endif

/* plugin_prepare and plugin_after: go on to the next step (any other value is the hook's verdict). */
#define PLUGIN_GO -5
/* plugin_call when the slot holds no function (the tail call fell through). */
#define PLUGIN_EMPTY 0x5E6E0000

static __always_inline void plugin_count(__u32 slot, __u32 bind, __u32 outcome, __u32 bytes)
{
	count(&plugin_stats, slot * PLUGIN_OUTCOMES + outcome, bytes);
	count(&plugin_sid_stats, bind * PLUGIN_OUTCOMES + outcome, bytes);
}

/* The outer header checked (outer_check: the frame trimmed to the packet), the SRH found, the context
 * of the call written. Returns PLUGIN_GO, or the verdict on a packet the function does not get
 * (malformed, TLVs: the kernel's, as for every SID). */
__noinline int plugin_prepare(struct ctx_buff *ctx, struct pkt *arg, struct sid_entry *sid)
{
	struct pkt pk = {}, *p = &pk;
	struct srh_info s = {};
	struct seg6x_plugin_ctx *pc;
	struct ipv6hdr *ip6;
	void *data, *data_end;
	__u32 zero = 0;
	int rc;

	if (!ctx || !sid || pkt_arg(arg, &pk))
		return ctx_ret(ACT_DROP);
	rc = outer_check(ctx, p);
	if (rc != REASON_NONE)
		return verdict(rc, p->len);
	data = ctx_data(ctx);
	data_end = ctx_data_end(ctx);
	rc = find_srh(data, data_end, p->l3off, &s);
	if (rc != REASON_NONE)
		return verdict(rc, p->len);
	if (s.tlv)
		return verdict(PASS_SRH_TLV, p->len);
	ip6 = data + p->l3off;
	pc = bpf_map_lookup_elem(&plugin_ctx, &zero);
	if (!pc || (void *)(ip6 + 1) > data_end)
		return verdict(DROP_PLUGIN_ABORT, p->len);
	pc->abi = SEG6X_PLUGIN_ABI;
	pc->hook = PLUGIN_HOOK;
	pc->chain = p->chain;
	pc->l3_off = p->l3off;
	pc->srh_off = s.srh_off;
	pc->inner_off = s.next_off;
	pc->inner_proto = s.next_hdr;
	pc->sl = s.srh_off ? s.sl : 0xFF;
	pc->last_entry = s.srh_off ? s.last : 0;
	pc->frags = p->frags ? 1 : 0;
	pc->vlan = p->vlan;
	pc->ifindex = p->ifindex;
	pc->pkt_len = ctx_len(ctx);
	pc->sid_id = sid->id;
	pc->bind = sid->policy;
	pc->table = sid->table;
	pc->plugin = sid->plugin;
	pc->pad = 0;
	__builtin_memcpy(pc->sid, &ip6->daddr, 16);
	pc->out_policy = 0;
	pc->out_reason = 0;
	pc->out_pad = 0;
	count(&sid_stats, sid->id, p->len);
	return PLUGIN_GO;
}

/* The function in slot: its verdict, or PLUGIN_EMPTY. A tail call from a global function returns to
 * this function's caller with the callee's return value (the JIT unwinds this frame first), so the
 * caller keeps its state; the asm keeps the compiler from assuming the fall-through value is the
 * only one this function returns. */
__noinline int plugin_call(struct ctx_buff *ctx, __u32 slot)
{
	int rc = PLUGIN_EMPTY;

	if (!ctx)
		return rc;
	bpf_tail_call(ctx, &PLUGIN_PROGS, slot & (PLUGIN_SLOTS - 1));
	asm volatile("" : "+r"(rc));
	return rc;
}

/* Whether policy is one the SID bind may encapsulate into. */
static __always_inline int plugin_policy_ok(__u32 bind, __u32 policy)
{
	struct plugin_bind *b = bpf_map_lookup_elem(&plugin_binds, &bind);

	if (!b || !policy)
		return 0;
	for (int i = 0; i < PLUGIN_POLICIES; i++)
		if (b->policies[i] == policy)
			return 1;
	return 0;
}

/* The function returned v: counted, then a drop, a pass, or PLUGIN_GO with plugin_next holding the
 * entry endpoint() runs (and arg->len the frame's length now, which the function may have changed). */
__noinline int plugin_after(struct ctx_buff *ctx, struct pkt *arg, struct sid_entry *sid, int v)
{
	__u32 zero = 0, slot, bind, len, outcome, reason = REASON_NONE, action = 0;
	struct seg6x_plugin_ctx *pc;
	struct sid_entry *next;
	struct pkt pk = {}, now = {};
	void *data, *data_end;

	if (!ctx || !arg || !sid || pkt_arg(arg, &pk))
		return ctx_ret(ACT_DROP);
	slot = sid->plugin & (PLUGIN_SLOTS - 1);
	bind = sid->policy;
	if (bind >= SEG6X_PLUGIN_BINDS)
		return verdict(DROP_PLUGIN_VERDICT, pk.len);
	len = ctx_len(ctx);
	pc = bpf_map_lookup_elem(&plugin_ctx, &zero);
	next = bpf_map_lookup_elem(&plugin_next, &zero);
	if (!pc || !next)
		return verdict(DROP_PLUGIN_ABORT, len);

	switch (v) {
	case PLUGIN_EMPTY:
		outcome = PLUGIN_O_EMPTY;
		reason = DROP_PLUGIN_ABORT;
		break;
	case SEG6X_ABORT:
		outcome = SEG6X_ABORT;
		reason = DROP_PLUGIN_ABORT;
		break;
	case SEG6X_DROP:
		outcome = SEG6X_DROP;
		reason = DROP_PLUGIN;
		count(&plugin_reason_stats,
		      slot * PLUGIN_REASONS + (pc->out_reason < PLUGIN_REASONS ? pc->out_reason : 0), len);
		break;
	case SEG6X_PASS:
		outcome = SEG6X_PASS;
		reason = PASS_PLUGIN;
		break;
	case SEG6X_END:
		outcome = SEG6X_END;
		action = SID_END;
		break;
	case SEG6X_DT4:
		outcome = SEG6X_DT4;
		action = SID_END_DT4;
		break;
	case SEG6X_DT6:
		outcome = SEG6X_DT6;
		action = SID_END_DT6;
		break;
	case SEG6X_DT46:
		outcome = SEG6X_DT46;
		action = SID_END_DT46;
		break;
	case SEG6X_ENCAP:
		outcome = SEG6X_ENCAP;
		action = SID_END_B6_ENCAPS;
		break;
	default:
		outcome = PLUGIN_O_BAD_VERDICT;
		reason = DROP_PLUGIN_VERDICT;
	}
	if (action) {
		/* The verdict must be one this SID allows, and the frame must still hold the IPv6 packet where
		 * it was (endpoint() checks the rest as for any packet). */
		if ((action != SID_END && action != SID_END_B6_ENCAPS && !sid->table) ||
		    (action == SID_END_B6_ENCAPS && !plugin_policy_ok(bind, pc->out_policy))) {
			outcome = PLUGIN_O_BAD_VERDICT;
			reason = DROP_PLUGIN_VERDICT;
		} else {
			data = ctx_data(ctx);
			data_end = ctx_data_end(ctx);
			if (parse_l2(data, data_end, &now) != REASON_NONE || now.l3off != pk.l3off ||
			    now.proto != ETH_P_IPV6_BE) {
				outcome = PLUGIN_O_MALFORMED;
				reason = DROP_PLUGIN_MALFORMED;
			}
		}
	}
	plugin_count(slot, bind, outcome, len);
	TRACE(tr->plugin_outcome = outcome + 1);
	if (reason != REASON_NONE)
		return verdict(reason, len);
	*next = *sid;
	next->action = action;
	next->flags = (sid->flags & SID_F_VLAN) | SID_F_PLUGIN;
	next->plugin = 0;
	next->policy = action == SID_END_B6_ENCAPS ? pc->out_policy : 0;
	arg->len = len;
	return PLUGIN_GO;
}

/* The entry plugin_after made, or NULL. */
static __always_inline struct sid_entry *plugin_next_entry(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&plugin_next, &zero);
}
