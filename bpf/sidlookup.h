/* sidlookup.h: the local SID an IPv6 destination addresses, on either side of the boundary: the exact
 * /128 entry (sids), else the longest SID prefix (sid_prefixes: uSID locators, SIDs with arguments),
 * looked up only when sid_conf says some exist, so plain SIDs keep their one hash lookup. */
#pragma once

#include <linux/bpf.h>
#include <linux/in6.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"

/* The local SID of an IPv6 destination: its exact entry, else (when there are any) the longest SID
 * prefix covering it. */
static __always_inline struct sid_entry *sid_lookup(const struct in6_addr *da)
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
