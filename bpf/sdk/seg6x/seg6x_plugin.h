/* SPDX-License-Identifier: GPL-2.0 */
/* seg6x_plugin.h: the seg6x plugin SDK, ABI version 1. An operator's SRv6 function, written as its own
 * BPF object and run on a local SID (`seg6x sid add SID action plugin NAME`). seg6x calls it by tail call
 * from its pipeline, on XDP and on tc, with the frame as it arrived at the SID and a context
 * (struct seg6x_plugin_ctx) describing it; the plugin returns a verdict (enum seg6x_verdict) and the
 * pipeline carries it out, checking the frame again first. A plugin never forwards a packet itself.
 *
 *     #include <seg6x/seg6x_plugin.h>
 *     struct seg6x_plugin_config { __u8 min_ttl; };      // its per-SID settings (BTF names them)
 *     SEG6X_PLUGIN(ttlgate) { ... return SEG6X_DT46; }     // pkt, pc and cfg are in scope
 *     char _license[] SEC("license") = "GPL";
 *
 * Build: clang -O2 -g -target bpf -I/usr/include/$(dpkg-architecture -qDEB_HOST_MULTIARCH) -c f.c -o f.o
 * (-g: seg6x reads the config's layout from BTF). docs/plugins.md is the manual.
 *
 * The pipeline includes this header too, for the context, the verdicts and the two maps it shares
 * with plugins (it defines SEG6X_PIPELINE, which leaves out the plugin side). */
#pragma once

#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* The ABI this header describes. seg6x refuses a plugin built against another one. */
#define SEG6X_PLUGIN_ABI 1

/* Bytes of per-SID configuration (struct seg6x_plugin_config), and SIDs that may run plugins. */
#define SEG6X_PLUGIN_CFG_MAX 1024
#define SEG6X_PLUGIN_BINDS 1024

/* Types for struct seg6x_plugin_config's members that seg6x writes from names and addresses (a
 * SID's settings: key=value); any other member is an integer, an enum (by member name or number), a
 * struct (key.member=) or an array (key.N=) of these. */
typedef __be32 seg6x_ipv4_t; /* an IPv4 address, network order: 198.18.1.2 */
typedef struct {
	__u8 addr[16];
} seg6x_ipv6_t; /* an IPv6 address: 2001:db8::1 */
typedef struct {
	__be32 addr;
	__u8 len;
	__u8 pad[3];
} seg6x_prefix4_t; /* an IPv4 prefix: 198.18.0.0/15 (addr: its first address, masked) */
typedef struct {
	__u8 addr[16];
	__u8 len;
	__u8 pad[3];
} seg6x_prefix6_t; /* an IPv6 prefix: 2001:db8::/32 */
typedef struct {
	__u8 addr[6];
} seg6x_mac_t;		      /* a MAC address: 02:00:00:00:00:01 */
typedef __be16 seg6x_port_t;  /* a TCP/UDP port, network order: 443 */
typedef __u32 seg6x_policy_t; /* an SR policy of seg6x, by name: the id SEG6X_ENCAP takes (0: none) */
typedef __u32 seg6x_tenant_t; /* a tenant of seg6x, by name: its routing table (0: none) */

/* A member's help line for `seg6x plugin show NAME`: __u8 min_ttl SEG6X_HELP("drop below this TTL"); */
#define SEG6X_HELP(text) __attribute__((btf_decl_tag("seg6x:help=" text)))
/* A member every SID must set (seg6x refuses a SID without it): __u16 port SEG6X_REQUIRED; */
#define SEG6X_REQUIRED __attribute__((btf_decl_tag("seg6x:required")))

enum seg6x_hook {
	SEG6X_HOOK_XDP = 0,
	SEG6X_HOOK_TC = 1,
};

/* What the pipeline does with the packet after the plugin. Every other value drops it (counted). */
enum seg6x_verdict {
	SEG6X_ABORT = 0, /* the plugin failed: dropped, counted as an abort */
	SEG6X_DROP = 1,	 /* dropped, counted under the plugin's reason (seg6x_drop) */
	SEG6X_PASS = 2,	 /* handed to the kernel as it is now */
	SEG6X_END = 3,	 /* carried on as End (next segment; the fabric only) */
	SEG6X_DT4 = 4,	 /* decapsulated as End.DT4 into the SID's tenant table */
	SEG6X_DT6 = 5,	 /* ... as End.DT6 */
	SEG6X_DT46 = 6,	 /* ... as End.DT46 */
	SEG6X_ENCAP = 7, /* encapsulated as End.B6.Encaps into the policy out_policy (seg6x_encap), which
			  * must be one the SID allows */
};

/* The context of one call: a fresh copy per packet, written by the pipeline before the call. The
 * plugin may change the frame; nothing else it writes here is read back but out_*. Offsets count from
 * the first byte of the frame. 64 bytes. */
struct seg6x_plugin_ctx {
	__u16 abi;	  /* SEG6X_PLUGIN_ABI */
	__u8 hook;	  /* enum seg6x_hook */
	__u8 chain;	  /* local SIDs processed before this one in the same pass */
	__u16 l3_off;	  /* the outer IPv6 header (after Ethernet and any VLAN tags) */
	__u16 srh_off;	  /* the SRH, 0: none */
	__u16 inner_off;  /* the header after the SRH (or after the IPv6 extension headers) */
	__u8 inner_proto; /* its protocol (4: IPv4, 41: IPv6, 43 never) */
	__u8 sl;	  /* segments left as received, 0xFF: no SRH */
	__u8 last_entry;  /* the SRH's last entry (0 without one) */
	__u8 frags;	  /* the frame has bytes beyond its first buffer: read them with seg6x_load */
	__u16 vlan;	  /* the ingress VLAN ID, 0: untagged */
	__u32 ifindex;	  /* the ingress interface */
	__u32 pkt_len;	  /* the whole frame's length */
	__u32 sid_id;	  /* the SID's counter index (`seg6x show sids`) */
	__u32 bind;	  /* the SID's configuration slot (the key of plugin_cfg) */
	__u32 table;	  /* the SID's tenant table (0: none; DT verdicts are then refused) */
	__u16 plugin;	  /* the plugin's slot */
	__u16 pad;
	__u8 sid[16];	  /* the SID, as the packet's destination address when it arrived */
	__u32 out_policy; /* SEG6X_ENCAP: the policy id (from the configuration) */
	__u16 out_reason; /* SEG6X_DROP: the plugin's reason, 1..15 (enum seg6x_plugin_reason) */
	__u16 out_pad;
};
_Static_assert(sizeof(struct seg6x_plugin_ctx) == 64, "seg6x_plugin_ctx is 64 bytes");

/* One SID's configuration bytes: the plugin's struct seg6x_plugin_config, encoded by seg6x from the
 * SID's settings at the offsets BTF gives. */
struct seg6x_plugin_cfg {
	__u8 bytes[SEG6X_PLUGIN_CFG_MAX];
};

/* The context of the call under way (one per CPU). */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct seg6x_plugin_ctx);
} plugin_ctx SEC(".maps");

/* Per-SID configurations, by bind; read-only to programs (seg6x writes them). */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SEG6X_PLUGIN_BINDS);
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__type(key, __u32);
	__type(value, struct seg6x_plugin_cfg);
} plugin_cfg SEC(".maps");

#ifndef SEG6X_PIPELINE

/* The ABI the plugin was built against (seg6x reads it from the object). */
const volatile __u32 seg6x_plugin_abi = SEG6X_PLUGIN_ABI;

/* The frame: the hook's context. hook is a constant wherever SEG6X_PLUGIN expands, so each helper
 * below compiles to one hook's helper call. */
struct seg6x_pkt {
	void *ctx;
	__u32 hook;
};

static __always_inline void *seg6x_data(const struct seg6x_pkt *pkt)
{
	if (pkt->hook == SEG6X_HOOK_TC)
		return (void *)(long)((struct __sk_buff *)pkt->ctx)->data;
	return (void *)(long)((struct xdp_md *)pkt->ctx)->data;
}

static __always_inline void *seg6x_data_end(const struct seg6x_pkt *pkt)
{
	if (pkt->hook == SEG6X_HOOK_TC)
		return (void *)(long)((struct __sk_buff *)pkt->ctx)->data_end;
	return (void *)(long)((struct xdp_md *)pkt->ctx)->data_end;
}

/* len bytes at off into to (anywhere in the frame, also beyond its first buffer). 0: done. */
static __always_inline long seg6x_load(const struct seg6x_pkt *pkt, __u32 off, void *to, __u32 len)
{
	if (pkt->hook == SEG6X_HOOK_TC)
		return bpf_skb_load_bytes(pkt->ctx, off, to, len);
	return bpf_xdp_load_bytes(pkt->ctx, off, to, len);
}

/* len bytes from from into the frame at off. 0: done. Checksums are the plugin's to fix
 * (seg6x_csum_replace16). */
static __always_inline long seg6x_store(const struct seg6x_pkt *pkt, __u32 off, const void *from, __u32 len)
{
	if (pkt->hook == SEG6X_HOOK_TC)
		return bpf_skb_store_bytes(pkt->ctx, off, from, len, 0);
	return bpf_xdp_store_bytes(pkt->ctx, off, (void *)from, len);
}

/* A 16-bit checksum after one of the 16-bit words it covers changed from old to new (RFC 1624). */
static __always_inline __u16 seg6x_csum_replace16(__u16 csum, __u16 old, __u16 new)
{
	__u32 s = (__u16)~csum + (__u16)~old + (__u32) new;

	s = (s & 0xFFFF) + (s >> 16);
	s = (s & 0xFFFF) + (s >> 16);
	return (__u16)~s;
}

/* Verdict setters: return seg6x_drop(pc, reason); / return seg6x_encap(pc, policy); */
static __always_inline int seg6x_drop(struct seg6x_plugin_ctx *pc, __u16 reason)
{
	pc->out_reason = reason;
	return SEG6X_DROP;
}

static __always_inline int seg6x_encap(struct seg6x_plugin_ctx *pc, __u32 policy)
{
	pc->out_policy = policy;
	return SEG6X_ENCAP;
}

/* The context and configuration of this call, or nonzero when the call did not come from a seg6x
 * of this ABI on this hook (the plugin then aborts). */
static __always_inline int seg6x_plugin_open(const struct seg6x_pkt *pkt, struct seg6x_plugin_ctx **pc,
					     const void **cfg)
{
	__u32 zero = 0, bind;

	*pc = bpf_map_lookup_elem(&plugin_ctx, &zero);
	if (!*pc || (*pc)->abi != SEG6X_PLUGIN_ABI || (*pc)->hook != pkt->hook)
		return -1;
	bind = (*pc)->bind;
	*cfg = bpf_map_lookup_elem(&plugin_cfg, &bind);
	return *cfg ? 0 : -1;
}

#define SEG6X_PLUGIN_ENTRY(name, hookname, sec, ctxtype, hookval)                     \
	SEC(sec) int name##_##hookname(ctxtype *ctx)                                  \
	{                                                                             \
		struct seg6x_pkt pkt = { .ctx = ctx, .hook = hookval };               \
		struct seg6x_plugin_ctx *pc;                                          \
		const void *cfg;                                                      \
                                                                                      \
		if (seg6x_plugin_open(&pkt, &pc, &cfg))                               \
			return SEG6X_ABORT;                                           \
		return name##_run(&pkt, pc, (const struct seg6x_plugin_config *)cfg); \
	}

/* Declares the plugin name: its body follows as a function of pkt (the frame), pc (the context) and
 * cfg (this SID's struct seg6x_plugin_config, which the plugin declares before). It is built for both
 * hooks (name_xdp, name_tc); seg6x loads each into its own pipeline. */
#define SEG6X_PLUGIN(name)                                                                              \
	const struct seg6x_plugin_config *const seg6x_plugin_config_btf __attribute__((unused)) = 0;    \
	_Static_assert(sizeof(struct seg6x_plugin_config) <= SEG6X_PLUGIN_CFG_MAX,                      \
		       "struct seg6x_plugin_config is larger than SEG6X_PLUGIN_CFG_MAX");               \
	static __always_inline int name##_run(const struct seg6x_pkt *pkt, struct seg6x_plugin_ctx *pc, \
					      const struct seg6x_plugin_config *cfg);                   \
	SEG6X_PLUGIN_ENTRY(name, xdp, "xdp.frags", struct xdp_md, SEG6X_HOOK_XDP)                       \
	SEG6X_PLUGIN_ENTRY(name, tc, "tc", struct __sk_buff, SEG6X_HOOK_TC)                             \
	static __always_inline int name##_run(const struct seg6x_pkt *pkt, struct seg6x_plugin_ctx *pc, \
					      const struct seg6x_plugin_config *cfg)

/* Counters of the plugin's own, per SID: SEG6X_COUNTERS(n) declares n of them for each SID (a firewall's
 * rules, say), and seg6x_count(pc, i) counts this packet in counter i (0..n-1) of this SID. seg6x
 * shows them with the SID's statistics, as "counter i" or by the names enum seg6x_plugin_counter
 * gives (SEG6X_EXPORT_COUNTERS); they live as long as the plugin's object is loaded. */
struct seg6x_counter {
	__u64 packets;
	__u64 bytes;
};

#define SEG6X_COUNTERS(n)                                                                   \
	enum { seg6x_counters_per_sid = (n) };                                              \
	struct {                                                                            \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                                    \
		__uint(max_entries, SEG6X_PLUGIN_BINDS *(n));                               \
		__type(key, __u32);                                                         \
		__type(value, struct seg6x_counter);                                        \
	} seg6x_counters SEC(".maps");                                                      \
	static __always_inline void seg6x_count(const struct seg6x_plugin_ctx *pc, __u32 i) \
	{                                                                                   \
		__u32 k = pc->bind * seg6x_counters_per_sid + i;                            \
		struct seg6x_counter *c;                                                    \
                                                                                            \
		if (i >= seg6x_counters_per_sid)                                            \
			return;                                                             \
		c = bpf_map_lookup_elem(&seg6x_counters, &k);                               \
		if (c) {                                                                    \
			c->packets++;                                                       \
			c->bytes += pc->pkt_len;                                            \
		}                                                                           \
	}

/* A copy of the frame for `seg6x capture --plugin NAME`: SEG6X_DUMP(bytes) declares the ring (bytes:
 * a power of 2 of at least a page) and seg6x_dump(pkt, pc, snaplen) puts this packet's first snaplen
 * bytes (at most SEG6X_DUMP_SNAP_MAX - 1) in it, with the SID, the interface, the length and the time.
 * 0: done; nonzero: the ring was full (the reader is behind) or the frame could not be read. */
#define SEG6X_DUMP_SNAP_MAX 1024

struct seg6x_dump_rec { /* 1064 bytes */
	__u64 time_ns;	/* bpf_ktime_get_ns() */
	__u32 sid_id;
	__u32 bind;
	__u32 ifindex;
	__u32 pkt_len; /* the whole frame */
	__u16 cap_len; /* bytes in data */
	__u16 vlan;
	__u8 hook;
	__u8 pad[11];
	__u8 data[SEG6X_DUMP_SNAP_MAX]; /* at byte 40 */
};

#define SEG6X_DUMP(bytes)                                                                                     \
	struct {                                                                                              \
		__uint(type, BPF_MAP_TYPE_RINGBUF);                                                           \
		__uint(max_entries, (bytes));                                                                 \
	} seg6x_dump_ring SEC(".maps");                                                                       \
	static __always_inline int seg6x_dump(const struct seg6x_pkt *pkt, const struct seg6x_plugin_ctx *pc, \
					      __u32 snaplen)                                                  \
	{                                                                                                     \
		struct seg6x_dump_rec *r;                                                                     \
		__u32 n = pc->pkt_len < snaplen ? pc->pkt_len : snaplen;                                      \
                                                                                                              \
		if (n >= SEG6X_DUMP_SNAP_MAX)                                                                 \
			n = SEG6X_DUMP_SNAP_MAX - 1;                                                          \
		r = bpf_ringbuf_reserve(&seg6x_dump_ring, sizeof(*r), 0);                                     \
		if (!r)                                                                                       \
			return -1;                                                                            \
		r->time_ns = bpf_ktime_get_ns();                                                              \
		r->sid_id = pc->sid_id;                                                                       \
		r->bind = pc->bind;                                                                           \
		r->ifindex = pc->ifindex;                                                                     \
		r->pkt_len = pc->pkt_len;                                                                     \
		r->vlan = pc->vlan;                                                                           \
		r->hook = pc->hook;                                                                           \
		asm volatile("" : "+r"(n)); /* the verifier sees the mask below */                            \
		n &= SEG6X_DUMP_SNAP_MAX - 1;                                                                 \
		if (n == 0 || seg6x_load(pkt, 0, r->data, n)) {                                               \
			bpf_ringbuf_discard(r, 0);                                                            \
			return -1;                                                                            \
		}                                                                                             \
		r->cap_len = n;                                                                               \
		bpf_ringbuf_submit(r, 0);                                                                     \
		return 0;                                                                                     \
	}

/* Names the plugin's counters: after `enum seg6x_plugin_counter { allowed = 0, ... };`. */
#define SEG6X_EXPORT_COUNTERS \
	const enum seg6x_plugin_counter *const seg6x_plugin_counters_btf __attribute__((unused)) = 0

/* Names the plugin's drop reasons: after `enum seg6x_plugin_reason { low_ttl = 1, ... };`, this line
 * makes seg6x label its per-reason counters with them (1..15). */
#define SEG6X_EXPORT_REASONS const enum seg6x_plugin_reason *const seg6x_plugin_reasons_btf __attribute__((unused)) = 0

#endif /* SEG6X_PIPELINE */
