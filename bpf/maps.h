/* maps.h: every BPF map of the seg6x data plane, and nothing else. Maps are pinned by name so state
 * survives the process that wrote it. The two maps plugins share (plugin_ctx, plugin_cfg) are in the
 * plugin SDK's header, included here, so that plugins declare them alike. */
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "structs.h"
#define SEG6X_PIPELINE 1
#include "sdk/seg6x/seg6x_plugin.h"

/* (ingress ifindex, VLAN) -> side of the SR domain boundary, and tenant. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PORTS);
	__type(key, struct port_key);
	__type(value, struct port_val);
} ports SEC(".maps");

/* The SR domain's SID space (locator prefixes): refused as destinations on access ports. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MAX_DOMAIN_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm6_key);
	__type(value, __u8);
} sid_space SEC(".maps");

/* Outer sources allowed to address local SIDs from the fabric (checked on PORT_F_SID_SOURCES ports). */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MAX_DOMAIN_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm6_key);
	__type(value, __u8);
} sid_sources SEC(".maps");

/* (route table, prefix length, masked inner IPv4 destination) -> policy. Allocated on demand. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ROUTES4);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct route4_key);
	__type(value, struct encap_val);
} routes4 SEC(".maps");

/* (route table, prefix length, masked inner IPv6 destination) -> policy. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ROUTES6);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct route6_key);
	__type(value, struct encap_val);
} routes6 SEC(".maps");

/* policy id -> prebuilt outer header. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_POLICIES);
	__type(key, __u32);
	__type(value, struct encap_policy);
} policies SEC(".maps");

/* group id -> the slots a flow's hash picks a weighted list from (headend.h). */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_POLICY_GROUPS);
	__type(key, __u32);
	__type(value, struct policy_group);
} policy_groups SEC(".maps");

/* Local SIDs: exact match on the full 128-bit IPv6 destination (SIDs served by prefix: sid_prefixes). */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_SIDS);
	__type(key, struct in6_addr);
	__type(value, struct sid_entry);
} sids SEC(".maps");

/* Local SIDs served by prefix (a uSID locator's uN, service SIDs with argument bits): longest prefix,
 * looked up when the exact match misses and sid_conf says there are any. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MAX_SID_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm6_key);
	__type(value, struct sid_entry);
} sid_prefixes SEC(".maps");

struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sid_conf);
} sid_conf SEC(".maps");

/* VXLAN (vxlan.h): (bridge, MAC) -> where the kernel's tables send frames to it. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_VX_MACS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct vx_mac_key);
	__type(value, struct vx_mac);
} vx_macs SEC(".maps");

/* VXLAN device ifindex -> how it encapsulates. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_VX_DEVS);
	__type(key, __u32);
	__type(value, struct vx_dev);
} vx_devs SEC(".maps");

/* (local VTEP address, UDP port, VNI) -> the device that decapsulates. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * MAX_VX_DEVS);
	__type(key, struct vx_rx_key);
	__type(value, struct vx_dev);
} vx_rx SEC(".maps");

/* (device, remote VTEP): VXLAN from it is accepted (the boundary rule). */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_VX_REMOTES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct vx_remote_key);
	__type(value, __u8);
} vx_remotes SEC(".maps");

/* (bridge, MAC) -> when a frame from a learned MAC last went to the kernel (vxlan.h vx_learned): the
 * kernel's entry is kept fresh by one frame per vx_refresh_ns. Not pinned, not part of the image. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VX_SEEN_ENTRIES);
	__type(key, struct vx_mac_key);
	__type(value, __u64);
} vx_seen SEC(".maps");

/* Interfaces the fast path redirects to (every attached interface). */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, MAX_TX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} tx_ports SEC(".maps");

/* Attached interfaces whose frames may span more than one buffer: an MTU above 1500, or generic XDP
 * (which sees GRO aggregates). The XDP program reads the whole length of every frame arriving there
 * (bpf_xdp_get_buff_len); elsewhere only of a frame longer than a 1500-byte MTU's or whose IP header
 * runs past the first buffer (ctx_xdp.h ctx_whole_len). Written by the control plane when it attaches
 * an interface and when the interface's MTU changes; value RX_FRAGS_NATIVE or RX_FRAGS_GENERIC. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_TX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} rx_frags SEC(".maps");

/* Attached interfaces whose driver cannot send a multi-buffer frame redirected to it (xdp-features
 * without ndo-xmit-sg): such a frame goes to the daemon, which sends it (egress.h). Written by the
 * control plane with rx_frags; value 1. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_TX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} tx_no_sg SEC(".maps");

/* Per-CPU counters: per policy, per SID, per XDP action, per drop/pass reason. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_POLICIES);
	__type(key, __u32);
	__type(value, struct counter);
} policy_stats SEC(".maps");

struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_SIDS);
	__type(key, __u32);
	__type(value, struct counter);
} sid_stats SEC(".maps");

struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XDP_REDIRECT + 1);
	__type(key, __u32);
	__type(value, struct counter);
} action_stats SEC(".maps");

struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, REASON_MAX);
	__type(key, __u32);
	__type(value, struct counter);
} reason_stats SEC(".maps");

/* Per-CPU cache of FIB results (used only when nh_cache_ns is set at load time), direct-mapped by a
 * hash of the lookup's inputs (slots.h): an array slot and a compare of the whole key instead of a
 * hashed LRU lookup (and an LRU update on each fill); a slot another lookup took is a miss. Not
 * pinned: a cache belongs to the program instance that fills it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NH_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct nh_cache_slot);
} nh_cache SEC(".maps");

/* Per-CPU next hops of VXLAN encapsulation (vxlan.h, when nh_cache_ns is set), one slot per hash of
 * the remote VTEP and the outer UDP source port (the flow's entropy, which the kernel's multipath hash
 * reads): a slot another (remote, port) took is a miss. Not pinned, like nh_cache. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VX_NH_SLOTS);
	__type(key, __u32);
	__type(value, struct nh_slot);
} vx_nh SEC(".maps");

/* Per-CPU next hops of H.Encaps (headend.h, when nh_cache_ns is set), one slot per hash of the policy id
 * and the flow's outer label: the outer lookup of a policy differs between its flows only in the flow
 * fields the kernel's multipath hash reads, so a slot answers for one (policy, flow) and flows of one
 * policy spread over ECMP next hops as the FIB spreads them; a slot another (policy, flow) took is a
 * miss that asks the FIB (fwd.h fib6_slot). Not pinned. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, POLICY_NH_SLOTS);
	__type(key, __u32);
	__type(value, struct nh_slot);
} policy_nh SEC(".maps");

/* Generation of the tables the fast path caches answers from: the ports, the tenants' routes, the
 * SIDs and the VXLAN tables (vx_*). The control plane bumps it right after every write of them (and
 * after a rollback restored them), which makes every cached port lookup (port_cache), route lookup
 * (route_cache), SID lookup (sid_cache) and VXLAN decision (vx_enc_cache, vx_dec_cache) stale at
 * once. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cache_gen SEC(".maps");

/* Per-CPU port lookups (pipeline.h port_of), direct-mapped by (interface, VLAN): an array slot and a
 * compare instead of one or two hashed lookups of ports per frame. Not pinned. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PORT_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct port_cache_entry);
} port_cache SEC(".maps");

/* Per-CPU route lookups (routes.h route_cached), direct-mapped by a hash of (table, destination): an
 * array slot and a compare instead of one hashed lookup per prefix length the table uses. Not pinned. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ROUTE_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct route_cache_entry);
} route_cache SEC(".maps");

/* Per-CPU SID lookups (sidlookup.h), direct-mapped by a hash of the destination: an array slot and
 * a compare instead of the sids hash lookup (and the prefix trie's, where there are SID prefixes).
 * Not pinned. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SID_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct sid_cache_entry);
} sid_cache SEC(".maps");

/* Per-CPU VXLAN forwarding decisions, direct-mapped by a hash of their inputs: one array slot and a
 * compare instead of three or four hashed lookups per frame; a slot another flow took is a miss.
 * Not pinned: a cache belongs to the program instance that fills it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VX_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct vx_enc_entry);
} vx_enc_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VX_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct vx_dec_entry);
} vx_dec_cache SEC(".maps");

/* Generation of the kernel's routes, rules, links and neighbors as the control plane last saw them
 * change: the daemon bumps it on every netlink change, which makes every next-hop cache entry stale. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} nh_gen SEC(".maps");

/* Per-CPU buffer used only when an encap does not fit in the frame's headroom. */
struct scratch {
	__u8 buf[SCRATCH_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* Per-CPU rate limit of the ICMP errors the fast path sends (icmp.h): the time at which the CPU's
 * next error would be on schedule. Not pinned: it belongs to the program instance. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} icmp_tat SEC(".maps");

/* The slow path's queue to the daemon (slowpath.h): one perf ring per CPU, each record a slow_meta and
 * the frame. Pinned: the daemon reads the rings of whichever program instance is attached. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
} slow_path SEC(".maps");

/* ---- Trace (trace.h) ------------------------------------------------------------------------------ */

/* The traced build of the program (seg6x_trace.bpf.c, seg6x_tc_trace.bpf.c), tail-called when a trace
 * is armed. Not pinned: each loaded program has its own, filled by whoever loaded it. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} trace_prog SEC(".maps");

/* What to trace (the daemon writes it before arming). */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_cfg);
} trace_config SEC(".maps");

struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_stats);
} trace_counts SEC(".maps");

/* The records: a trace_rec, then rx_len bytes of the frame as received, then tx_len as it left. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TRACE_RING_BYTES);
} trace_ring SEC(".maps");

/* Per-CPU record under construction. */
struct trace_buf {
	struct trace_rec rec;
	__u8 data[2 * TRACE_SNAP_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_buf);
} trace_scratch SEC(".maps");

/* ---- Plugins (plugin.h; sdk/seg6x/seg6x_plugin.h defines plugin_ctx and plugin_cfg) ------------- */

/* The operators' functions, by slot: one array per hook (a program array takes one program type).
 * Pinned: loaded plugins stay when the process that loaded them ends. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, PLUGIN_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} plugin_xdp_progs SEC(".maps");

struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, PLUGIN_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} plugin_tc_progs SEC(".maps");

/* Per plugin SID (sid_entry.policy): what its verdicts may do beyond its tenant table. */
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SEG6X_PLUGIN_BINDS);
	__type(key, __u32);
	__type(value, struct plugin_bind);
} plugin_binds SEC(".maps");

/* Outcomes per plugin slot and per plugin SID (key: slot or bind * PLUGIN_OUTCOMES + outcome), and each
 * plugin's own drop reasons (slot * PLUGIN_REASONS + reason). */
#define PLUGIN_STATS_ENTRIES (PLUGIN_SLOTS * PLUGIN_OUTCOMES)
#define PLUGIN_SID_STATS_ENTRIES (SEG6X_PLUGIN_BINDS * PLUGIN_OUTCOMES)
#define PLUGIN_REASON_STATS_ENTRIES (PLUGIN_SLOTS * PLUGIN_REASONS)
struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PLUGIN_STATS_ENTRIES);
	__type(key, __u32);
	__type(value, struct counter);
} plugin_stats SEC(".maps");

struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PLUGIN_SID_STATS_ENTRIES);
	__type(key, __u32);
	__type(value, struct counter);
} plugin_sid_stats SEC(".maps");

struct {
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PLUGIN_REASON_STATS_ENTRIES);
	__type(key, __u32);
	__type(value, struct counter);
} plugin_reason_stats SEC(".maps");

/* The SID entry a plugin's verdict made (per CPU): what endpoint() runs next. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sid_entry);
} plugin_next SEC(".maps");
