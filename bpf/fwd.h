/* fwd.h: FIB lookup through the kernel's tables (with the next-hop cache), the IP forwarding step, and
 * the redirect verdict. */
#pragma once

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "structs.h"
#include "stats.h"
#include "ctx.h"
#include "parse.h"
#include "slots.h"

/* fib_lookup's result when the FIB found a next hop on an interface without seg6x (not a
 * bpf_fib_lookup code: those are 0..9). */
#define FIB_TX_NOT_ATTACHED 100

/* Maps a fib_lookup result that is not success to the reason the kernel gets the packet. */
static __always_inline int fib_reason(int rc)
{
	switch (rc) {
	case FIB_TX_NOT_ATTACHED:
		return PASS_TX_NOT_ATTACHED;
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		return PASS_FIB_NO_NEIGH;
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		return PASS_FIB_FRAG_NEEDED;
	case BPF_FIB_LKUP_RET_NOT_FWDED:
		return PASS_LOCAL;
	case BPF_FIB_LKUP_RET_BLACKHOLE:
	case BPF_FIB_LKUP_RET_UNREACHABLE:
	case BPF_FIB_LKUP_RET_PROHIBIT:
		return PASS_FIB_UNREACHABLE;
	default:
		return PASS_FIB_OTHER;
	}
}

/* Flags for a lookup in routing table `table`. 0 = the main table: through the policy rules like the
 * kernel's own forwarding, or straight into the main table in the FIB_MAIN_DIRECT build variant. */
#ifdef FIB_MAIN_DIRECT
#define FIB_MAIN_FLAGS BPF_FIB_LOOKUP_DIRECT
#else
#define FIB_MAIN_FLAGS 0
#endif
static __always_inline __u32 fib_flags(__u32 table)
{
	return table ? (BPF_FIB_LOOKUP_DIRECT | BPF_FIB_LOOKUP_TBID) : FIB_MAIN_FLAGS;
}

/* How long a FIB result may be reused for the same lookup, in ns (0: never). Expiry is checked
 * against the coarse clock (updated every tick, a few ms): reading it costs a load where the
 * precise clock costs a clock-source read (in a VM, about 18 ns per packet of the headend measured
 * with the bench rig's run-time statistics).
 * Set when the program is loaded (the instance's nexthop_cache_ms option). A cached result skips
 * the kernel's FIB for up to this long after a route or neighbor change. */
const volatile __u64 nh_cache_ns = 0;

/* Is the egress interface one the fast path may redirect to? */
static __always_inline int tx_ok(__u32 ifindex)
{
	return bpf_map_lookup_elem(&tx_ports, &ifindex) != NULL;
}

/* bpf_fib_lookup for fib in routing table `table`, uncached; success means a next hop on an
 * interface the fast path redirects to (FIB_TX_NOT_ATTACHED otherwise). */
static __always_inline int fib_ask(struct ctx_buff *ctx, struct bpf_fib_lookup *fib, __u32 table)
{
	int rc;

	fib->tbid = table;
	rc = bpf_fib_lookup(ctx, fib, sizeof(*fib), fib_flags(table));
	TRACE(tr->fib_rc = rc; tr->fib_mtu = rc == BPF_FIB_LKUP_RET_FRAG_NEEDED ? fib->mtu_result : 0;
	      if (rc == BPF_FIB_LKUP_RET_SUCCESS || rc == BPF_FIB_LKUP_RET_NO_NEIGH) {
		      tr->fib_ifindex = fib->ifindex;
		      if (fib->family == AF_INET)
			      trace_addr4(tr->fib_nh, fib->ipv4_dst);
		      else
			      __builtin_memcpy(tr->fib_nh, fib->ipv6_dst, 16);
		      __builtin_memcpy(tr->dmac, fib->dmac, ETH_ALEN);
		      __builtin_memcpy(tr->smac, fib->smac, ETH_ALEN);
	      });
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return rc;
	if (!tx_ok(fib->ifindex)) {
		TRACE(tr->fib_rc = FIB_TX_NOT_ATTACHED);
		return FIB_TX_NOT_ATTACHED;
	}
	return rc;
}

/* The next-hop cache's rules, shared by its forms (nh_cache; the slots of policy_nh and vx_nh): an entry
 * answers while it carries the current generation gen, has been checked for a packet at least len
 * bytes long, and is younger than nh_cache_ns. */
static __always_inline int nh_fresh(const struct nh_entry *e, __u32 gen, __u32 len)
{
	return e->gen == gen && len <= e->ok_len && bpf_ktime_get_coarse_ns() <= e->expires_ns;
}

/* fib answered from cache entry e. */
static __always_inline int nh_answer(struct bpf_fib_lookup *fib, const struct nh_entry *e)
{
	fib->ifindex = e->ifindex;
	__builtin_memcpy(fib->dmac, e->dmac, ETH_ALEN);
	__builtin_memcpy(fib->smac, e->smac, ETH_ALEN);
	TRACE(tr->flags |= TRACE_F_FIB_CACHED; tr->fib_rc = 0; tr->fib_ifindex = e->ifindex;
	      __builtin_memcpy(tr->dmac, e->dmac, ETH_ALEN); __builtin_memcpy(tr->smac, e->smac, ETH_ALEN));
	return BPF_FIB_LKUP_RET_SUCCESS;
}

/* Cache entry e from the FIB's successful answer fib for a packet of len bytes, under generation gen. */
static __always_inline void nh_fill(struct nh_entry *e, const struct bpf_fib_lookup *fib, __u32 gen, __u32 len)
{
	e->expires_ns = bpf_ktime_get_coarse_ns() + nh_cache_ns;
	e->gen = gen;
	e->ifindex = fib->ifindex;
	e->ok_len = len;
	__builtin_memcpy(e->dmac, fib->dmac, ETH_ALEN);
	__builtin_memcpy(e->smac, fib->smac, ETH_ALEN);
}

/* A generation map's value (nh_gen, cache_gen: one entry the control plane bumps) as last bumped. */
static __always_inline __u32 gen_now(void *map)
{
	__u32 zero = 0;
	__u64 *g = bpf_map_lookup_elem(map, &zero);

	return g ? (__u32)*g : 0;
}

/* The nh_cache slot for the lookup fib (inputs filled in) in table `table`: a hash of every input,
 * read from fib itself (a key built on the stack would not fit the callers' stack). */
static __always_inline __u32 nh_slot_of(const struct bpf_fib_lookup *fib, __u32 table)
{
	__u32 h = table * 0x9E3779B1 ^ fib->ifindex * 0x85EBCA6B ^ ((__u32)fib->family | (__u32)fib->l4_protocol << 8) ^
		  rotl32(fib->flowinfo, 11) ^ rotl32(*(const __u32 *)&fib->sport, 21);

	if (fib->family == AF_INET) {
		h ^= fib->ipv4_dst ^ rotl32(fib->ipv4_src, 16);
	} else {
#pragma unroll
		for (int i = 0; i < 4; i++)
			h ^= rotl32(fib->ipv6_dst[i], 5 * i + 1) ^ rotl32(fib->ipv6_src[i], 5 * i + 16);
	}
	return fmix32(h) & (NH_CACHE_SLOTS - 1);
}

/* Whether k is the key of the lookup fib in table `table`. An empty slot (all zero, family 0) is no
 * lookup's. */
static __always_inline int nh_key_is(const struct nh_key *k, const struct bpf_fib_lookup *fib, __u32 table)
{
	if (k->table != table || k->ifindex != fib->ifindex || k->family != fib->family ||
	    k->l4_protocol != fib->l4_protocol || k->flowinfo != fib->flowinfo || k->sport != fib->sport ||
	    k->dport != fib->dport)
		return 0;
	if (fib->family == AF_INET)
		return *(const __u32 *)k->src == fib->ipv4_src && *(const __u32 *)k->dst == fib->ipv4_dst;
	return same16(k->src, (const __u8 *)fib->ipv6_src) && same16(k->dst, (const __u8 *)fib->ipv6_dst);
}

/* k becomes the key of the lookup fib in table `table` (IPv4: the addresses' other bytes 0). */
static __always_inline void nh_key_set(struct nh_key *k, const struct bpf_fib_lookup *fib, __u32 table)
{
	*k = (struct nh_key){ .table = table,
			      .ifindex = fib->ifindex,
			      .family = fib->family,
			      .l4_protocol = fib->l4_protocol,
			      .flowinfo = fib->flowinfo,
			      .sport = fib->sport,
			      .dport = fib->dport };
	if (fib->family == AF_INET) {
		*(__u32 *)k->src = fib->ipv4_src;
		*(__u32 *)k->dst = fib->ipv4_dst;
	} else {
		__builtin_memcpy(k->src, fib->ipv6_src, 16);
		__builtin_memcpy(k->dst, fib->ipv6_dst, 16);
	}
}

/* How many other hashes fib6_around tries. With two next hops each try finds the other with
 * probability 1/2, so a flow stays without a next hop once in 65536 (its packets go to the kernel). */
#define FIB_AROUND_TRIES 16

/* The IPv6 lookup fib in table in_table >> 32 answered NO_NEIGH: the next hop the multipath hash gave
 * the flow has no usable neighbor entry (FAILED: it stopped answering; or not resolved yet). Asks again
 * with the flow fields perturbed, which picks another next hop of a multipath route, and takes the first
 * that has a neighbor: a flow is not sent to a next hop the kernel knows is dead while another is alive.
 * dst, flowinfo and the ingress interface (in_table's low half) are the lookup's inputs as first asked
 * (a lookup that fails overwrites them in fib: the gateway, the egress, the route's metric; and the
 * table, in the union that also holds the VLAN the FIB answers with). Returns SUCCESS (the
 * caller fills its cache slot with the answer), or NO_NEIGH when every try had none (a single-path
 * route: the kernel gets the packet and resolves the neighbor). A function of its own: its locals stay
 * off its callers' stack, and it runs only when a next hop has no neighbor. */
static __noinline int fib6_around(struct ctx_buff *ctx, struct bpf_fib_lookup *fib, const __u8 *dst, __be32 flowinfo,
				  __u64 in_table)
{
	/* The inputs to restore before each try wait in fib's output bytes (smac, dmac: written only by a
	 * lookup that succeeds, which ends the tries), not in registers the helper call would spill to
	 * this function's stack. */
	__u32 *keep = (__u32 *)fib->smac; /* smac..dmac: 12 bytes at a 4-byte boundary */
	int rc = BPF_FIB_LKUP_RET_NO_NEIGH;
	__u32 table = in_table >> 32;

	if (!ctx || !fib || !dst)
		return rc;
	keep[0] = (__u32)in_table;
	keep[1] = *(__u32 *)&fib->sport;
	keep[2] = flowinfo;
#pragma clang loop unroll(disable)
	for (__u32 k = 1; k <= FIB_AROUND_TRIES; k++) {
		/* read again each time (volatile): kept in registers across the loop, they would spill */
		for (int i = 0; i < 4; i++)
			fib->ipv6_dst[i] = ((const volatile __u32 *)dst)[i];
		fib->ifindex = keep[0];
		fib->flowinfo = keep[2] ^ bpf_htonl((k * 0x9E3B5) & 0xFFFFF);
		*(__u32 *)&fib->sport = keep[1] ^ (k * 0x9E3779B1);
		rc = fib_ask(ctx, fib, table);
		if (rc != BPF_FIB_LKUP_RET_NO_NEIGH)
			break;
	}
	return rc == BPF_FIB_LKUP_RET_SUCCESS ? rc : BPF_FIB_LKUP_RET_NO_NEIGH;
}

/* bpf_fib_lookup for fib (its inputs filled in) in routing table `table`, answered from the
 * per-CPU cache (nh_cache, direct-mapped) when nh_cache_ns is set and the slot for the same inputs
 * (nh_key) holds a fresh answer (younger than nh_cache_ns and of the current nh_gen generation,
 * which the daemon bumps on every route, rule, link or neighbor change) already checked for a
 * packet at least as long.
 * Success means a next hop on an interface the fast path redirects to (FIB_TX_NOT_ATTACHED
 * otherwise); only such results are cached, so a cache hit needs no tx_ports check. The key holds
 * every input of the lookup (source, ingress interface, protocol, TOS / flow label, ports too), so
 * source- or interface-based policy rules, source-specific routes and the kernel's multipath choice
 * among ECMP next hops are answered as the FIB would. around: for an IPv6 lookup, its destination as
 * asked, somewhere a failed lookup does not overwrite (the packet, a map value); a next hop without a
 * usable neighbor then makes the lookup try the route's other next hops (fib6_around), and what it
 * finds is cached as the answer for these inputs. NULL: NO_NEIGH is the answer (fib_lookup). */
static __always_inline int fib_lookup_around(struct ctx_buff *ctx, struct bpf_fib_lookup *fib, __u32 table,
					     const __u8 *around)
{
	struct nh_cache_slot *c = NULL;
	__u32 len = fib->tot_len, gen = 0, slot, in = fib->ifindex;
	__be32 flowinfo = fib->flowinfo;
	int rc;

	TRACE(tr->flags |= TRACE_F_FIB; tr->flags &= ~TRACE_F_FIB_CACHED; tr->fib_table = table;
	      tr->fib_ifindex = fib->ifindex; if (fib->family == AF_INET) trace_addr4(tr->fib_dst, fib->ipv4_dst);
	      else __builtin_memcpy(tr->fib_dst, fib->ipv6_dst, 16));
	if (nh_cache_ns) {
		gen = gen_now(&nh_gen);
		slot = nh_slot_of(fib, table);
		c = bpf_map_lookup_elem(&nh_cache, &slot);
		if (c) {
			if (!nh_key_is(&c->key, fib, table)) {
				/* This CPU's slot goes to these inputs (as asked: a successful lookup rewrites fib's
				 * destination and interface); it answers nothing until their lookup succeeds. */
				nh_key_set(&c->key, fib, table);
				__builtin_memset(&c->nh, 0,
						 sizeof(c->nh)); /* expired: nothing fresh, even for length 0 */
			} else if (nh_fresh(&c->nh, gen, len)) {
				return nh_answer(fib, &c->nh);
			}
		}
	}
	rc = fib_ask(ctx, fib, table);
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH && around)
		rc = fib6_around(ctx, fib, around, flowinfo, (__u64)table << 32 | in);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return rc;
	if (c)
		nh_fill(&c->nh, fib, gen, len);
	return rc;
}

static __always_inline int fib_lookup(struct ctx_buff *ctx, struct bpf_fib_lookup *fib, __u32 table)
{
	return fib_lookup_around(ctx, fib, table, NULL);
}

/* Whether f holds the flow fields of the outer IPv6 lookup fib. */
static __always_inline int flow6_is(const struct flow6 *f, const struct bpf_fib_lookup *fib)
{
	return f->flowinfo == fib->flowinfo && f->ports == *(const __u32 *)&fib->sport && f->proto == fib->l4_protocol;
}

/* fib_lookup for an outer IPv6 packet (fib's inputs filled in, main table), answered from slot e (a
 * per-CPU array slot the caller picked: by policy and flow, by remote VTEP and flow) under the
 * next-hop cache's rules, when it holds the answer for the same source, destination, ingress
 * interface and flow fields (every input the outer lookup varies in: the flow fields pick among ECMP
 * next hops); otherwise from the FIB (not through nh_cache: e is this lookup's cache), whose answer
 * then fills the slot. The slot is this CPU's own. A lookup for the slot's own inputs that fails (a
 * packet too big for the next hop) leaves the answer smaller packets use; a slot taken over by other
 * inputs holds nothing (zeroed: expired) until its lookup succeeds. */
static __always_inline int fib6_slot(struct ctx_buff *ctx, struct bpf_fib_lookup *fib, struct nh_slot *e)
{
	__u32 gen, len = fib->tot_len, in = fib->ifindex;
	int rc;

	if (!nh_cache_ns || !e)
		return fib_lookup(ctx, fib, 0);
	TRACE(tr->flags |= TRACE_F_FIB; tr->flags &= ~TRACE_F_FIB_CACHED; tr->fib_table = 0; tr->fib_ifindex = in;
	      __builtin_memcpy(tr->fib_dst, fib->ipv6_dst, 16));
	gen = gen_now(&nh_gen);
	if (e->in_ifindex != in || !same16(e->remote, (__u8 *)fib->ipv6_dst) ||
	    !same16(e->local, (__u8 *)fib->ipv6_src) || !flow6_is(&e->flow, fib)) {
		/* The inputs as asked (a successful lookup rewrites fib's destination with the gateway's). */
		__builtin_memcpy(e->local, fib->ipv6_src, 16);
		__builtin_memcpy(e->remote, fib->ipv6_dst, 16);
		e->in_ifindex = in;
		e->flow.flowinfo = fib->flowinfo;
		e->flow.ports = *(const __u32 *)&fib->sport;
		e->flow.proto = fib->l4_protocol;
		__builtin_memset(&e->nh, 0, sizeof(e->nh)); /* expired: nothing fresh, even for length 0 */
	} else if (nh_fresh(&e->nh, gen, len)) {
		return nh_answer(fib, &e->nh);
	}
	rc = fib_ask(ctx, fib, 0);
	if (rc == BPF_FIB_LKUP_RET_SUCCESS)
		nh_fill(&e->nh, fib, gen, len);
	return rc;
}

/* Whether slot e answers, under fib6_slot's rules, for an outer IPv6 packet of len bytes from local
 * to remote with the flow fields flowinfo, ports and proto that entered on ifindex in: the caller then
 * takes e's next hop without filling a FIB request. The traced build always goes through fib6_slot
 * (its records name the FIB's answer). */
static __always_inline int nh_slot_hit(const struct nh_slot *e, __u32 in, const __u8 *local, const __u8 *remote,
				       __be32 flowinfo, __u32 ports, __u32 proto, __u32 len)
{
#ifdef SEG6X_TRACE
	return 0;
#else
	return nh_cache_ns && e && e->in_ifindex == in && e->flow.flowinfo == flowinfo && e->flow.ports == ports &&
	       e->flow.proto == proto && same16(e->remote, remote) && same16(e->local, local) &&
	       nh_fresh(&e->nh, gen_now(&nh_gen), len);
#endif
}

static __always_inline void ip4_dec_ttl(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
	iph->check = (__u16)(check + (check >= 0xFFFF));
	iph->ttl--;
}

/* The forwarding step of the IPv4 or IPv6 header at off (proto: its ethertype): TTL or hop limit minus
 * one, the IPv4 checksum updated. Returns -1 when the header is not within the frame. */
static __always_inline int ip_forwarded(void *data, void *data_end, __u32 off, __be16 proto)
{
	if (proto == ETH_P_IP_BE) {
		struct iphdr *iph = data + off;

		if ((void *)(iph + 1) > data_end)
			return -1;
		ip4_dec_ttl(iph);
	} else {
		struct ipv6hdr *ip6 = data + off;

		if ((void *)(ip6 + 1) > data_end)
			return -1;
		ip6->hop_limit--;
	}
	return 0;
}

/* The verdict of a packet rewritten for ifindex: redirected, or, when the interface left the redirect
 * map after the next hop was chosen (a cached next hop of an interface just detached), dropped and
 * counted instead of aborted. */
static __always_inline int redirect(__u32 ifindex, __u32 bytes)
{
	if (ctx_redirect(ifindex))
		return verdict(DROP_TX_GONE, bytes);
	return finish(ACT_REDIRECT, bytes);
}
