/* sidlookup.h: the local SID an IPv6 destination addresses, on either side of the boundary: the exact
 * /128 entry (sids), else the longest SID prefix (sid_prefixes: uSID locators, SIDs with arguments),
 * looked up only when sid_conf says some exist; the answer (a SID or none) cached per CPU
 * (sid_cache) under cache_gen. */
#pragma once

#include <linux/bpf.h>
#include <linux/in6.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parse.h"
#include "fwd.h"

/* The local SID of an IPv6 destination in the tables: its exact entry, else (when there are any) the
 * longest SID prefix covering it. */
static __always_inline struct sid_entry *sid_in_tables(const struct in6_addr *da)
{
	struct sid_entry *sid = bpf_map_lookup_elem(&sids, da);
	struct sid_conf *conf;
	struct lpm6_key k;
	__u32 zero = 0;

	if (sid)
		return sid;
	conf = bpf_map_lookup_elem(&sid_conf, &zero);
	if (!conf || !conf->prefixes)
		return NULL;
	k.prefixlen = 128;
	__builtin_memcpy(k.addr, da, 16);
	return bpf_map_lookup_elem(&sid_prefixes, &k);
}

/* The local SID of an IPv6 destination (NULL: none), answered from this CPU's sid_cache slot while
 * cache_gen has not moved since it was filled (read before the tables: an answer made while they
 * change is stale at the next frame). The entry returned may be the slot's copy: it is valid until
 * the next sid_lookup, which may take the same slot. The traced build asks the tables. */
static __always_inline struct sid_entry *sid_lookup(const struct in6_addr *da)
{
#ifdef SEG6X_TRACE
	return sid_in_tables(da); /* the traced build's stack has no room for the slot's bookkeeping */
#else
	const __u32 *w = (const __u32 *)da;
	__u32 gen = gen_now(&cache_gen);
	__u32 slot = fmix32(w[0] ^ rotl32(w[1], 8) ^ rotl32(w[2], 16) ^ rotl32(w[3], 24)) & (SID_CACHE_SLOTS - 1);
	struct sid_cache_entry *c = bpf_map_lookup_elem(&sid_cache, &slot);
	struct sid_entry *sid;

	if (c && c->gen == gen && c->valid && same16(c->addr, (const __u8 *)da))
		return c->found ? &c->sid : NULL;
	sid = sid_in_tables(da);
	if (c) {
		c->gen = gen;
		c->valid = 1;
		__builtin_memcpy(c->addr, da, 16);
		c->found = sid != NULL;
		if (sid)
			c->sid = *sid;
	}
	return sid;
#endif
}
