/* routes.h: longest-prefix match of an inner destination in a tenant's route table, as a few
 * exact-match hash lookups: one per prefix length the table uses, longest first. The cost grows with
 * the number of distinct prefix lengths, not with the number of routes (an LPM trie costs hundreds
 * of ns at a million entries). The two lookups are global functions: the verifier checks each once,
 * on its own, instead of once per path through the program that calls it. They return the policy
 * id, 0 for no route. route4_cached / route6_cached answer from the per-CPU route_cache first. */
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "maps.h"
#include "trace.h"
#include "slots.h"
#include "fwd.h"

#define READ_ONCE_U64(x) (*(volatile __u64 *)&(x))

/* The top n bits of a 64-bit word (n in 0..64). */
static __always_inline __u64 top_bits(__u32 n)
{
	return n ? ~0ULL << (64 - n) : 0;
}

__noinline __u32 route4_lookup(const struct port_val *tv, __be32 daddr)
{
	struct route4_key k = {};
	struct encap_val *ev;
	__u64 dst;

	if (!tv)
		return 0;
	k.table_id = tv->table_id;
	dst = (__u64)bpf_ntohl(daddr) << 32;
	/* The bitmap is read again in every round on purpose: a copy kept in a register would let the
	 * verifier track which bits each path has seen and explore 2^33 paths. */
#pragma clang loop unroll(disable)
	for (int n = 32; n >= 0; n--) {
		__u64 lens = READ_ONCE_U64(tv->plens4);
		__be32 masked;

		if (!(lens & ((2ULL << n) - 1)))
			break; /* no shorter prefixes */
		if (!(lens & (1ULL << n)))
			continue;
		masked = bpf_htonl((__u32)((dst & top_bits(n)) >> 32));
		k.plen = n;
		__builtin_memcpy(k.addr, &masked, 4);
		ev = bpf_map_lookup_elem(&routes4, &k);
		if (ev) {
			TRACE(tr->flags |= TRACE_F_ROUTE; tr->route_plen = n; trace_addr4(tr->route_addr, masked));
			return ev->policy_id;
		}
	}
	return 0;
}

/* hi, lo: the destination as its two 64-bit halves, as they are in the packet (big-endian). */
__noinline __u32 route6_lookup(const struct port_val *tv, __u64 hi, __u64 lo)
{
	struct route6_key k = {};
	struct encap_val *ev;
	__u64 lens;

	if (!tv)
		return 0;
	k.table_id = tv->table_id;
	hi = bpf_be64_to_cpu(hi);
	lo = bpf_be64_to_cpu(lo);
	/* Lengths 128..0: bit 0 of word 2 is /128, word 1 holds 64..127, word 0 holds 0..63. */
#pragma clang loop unroll(disable)
	for (int plen = 128; plen >= 0; plen--) {
		__u32 w = plen >> 6, b = plen & 63;
		__u64 mh, ml;

		lens = w == 2 ? READ_ONCE_U64(tv->plens6[2]) :
		       w == 1 ? READ_ONCE_U64(tv->plens6[1]) :
				READ_ONCE_U64(tv->plens6[0]);
		if (!(lens & (1ULL << b))) {
			if (!(lens & ((2ULL << b) - 1)))
				plen -= b; /* nothing below in this word: jump to its lowest length */
			continue;
		}
		mh = plen >= 64 ? hi : hi & top_bits(plen);
		ml = plen >= 64 ? lo & top_bits(plen - 64) : 0;
		mh = bpf_cpu_to_be64(mh);
		ml = bpf_cpu_to_be64(ml);
		k.plen = plen;
		__builtin_memcpy(k.addr, &mh, 8);
		__builtin_memcpy(k.addr + 8, &ml, 8);
		ev = bpf_map_lookup_elem(&routes6, &k);
		if (ev) {
			TRACE(tr->flags |= TRACE_F_ROUTE; tr->route_plen = plen;
			      __builtin_memcpy(tr->route_addr, k.addr, 16));
			return ev->policy_id;
		}
	}
	return 0;
}

/* The route_cache slot for destination words w0..w3 (IPv4: w0 only) of table table_id. */
static __always_inline struct route_cache_entry *route_slot(__u32 table_id, __u32 w0, __u32 w1, __u32 w2, __u32 w3)
{
	__u32 slot = fmix32(table_id * 0x9E3779B1 ^ w0 ^ rotl32(w1, 7) ^ rotl32(w2, 13) ^ rotl32(w3, 19)) &
		     (ROUTE_CACHE_SLOTS - 1);

	return bpf_map_lookup_elem(&route_cache, &slot);
}

/* route4_lookup answered from route_cache while cache_gen has not moved since the answer was cached
 * (the generation is read before the tables: an answer made while they change is stale at the next
 * frame). The traced build always asks the tables: its records name the route. */
static __always_inline __u32 route4_cached(const struct port_val *tv, __be32 daddr)
{
#ifdef SEG6X_TRACE
	return route4_lookup(tv, daddr);
#else
	__u32 gen = gen_now(&cache_gen), id;
	struct route_cache_entry *c = route_slot(tv->table_id, daddr, 0, 0, 0);

	if (c && c->gen == gen && c->fam == 4 && c->table_id == tv->table_id && *(__be32 *)c->dst == daddr)
		return c->policy_id;
	id = route4_lookup(tv, daddr);
	if (c) {
		c->gen = gen;
		c->table_id = tv->table_id;
		__builtin_memset(c->dst, 0, 16);
		*(__be32 *)c->dst = daddr;
		c->policy_id = id;
		c->fam = 4;
	}
	return id;
#endif
}

/* route6_lookup the same way; hi, lo: the destination's halves as in the packet. */
static __always_inline __u32 route6_cached(const struct port_val *tv, __u64 hi, __u64 lo)
{
#ifdef SEG6X_TRACE
	return route6_lookup(tv, hi, lo);
#else
	__u32 gen = gen_now(&cache_gen), id;
	struct route_cache_entry *c =
		route_slot(tv->table_id, (__u32)hi, (__u32)(hi >> 32), (__u32)lo, (__u32)(lo >> 32));

	if (c && c->gen == gen && c->fam == 6 && c->table_id == tv->table_id && *(__u64 *)c->dst == hi &&
	    *(__u64 *)(c->dst + 8) == lo)
		return c->policy_id;
	id = route6_lookup(tv, hi, lo);
	if (c) {
		c->gen = gen;
		c->table_id = tv->table_id;
		*(__u64 *)c->dst = hi;
		*(__u64 *)(c->dst + 8) = lo;
		c->policy_id = id;
		c->fam = 6;
	}
	return id;
#endif
}
