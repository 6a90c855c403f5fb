/* structs.h: map keys and values shared by the XDP program and the Go control plane (bpf2go -type). */
#pragma once

#include <linux/types.h>
#include "consts.h"

/* The tables below align their comments to tab stops, which clang-format cannot do. */
/* clang-format off */

/* SRv6 endpoint behaviors of a local SID (RFC 8986). */
enum sid_action {
	SID_END = 1,
	SID_END_X = 2,
	SID_END_T = 3,
	SID_END_DX4 = 4,
	SID_END_DX6 = 5,
	SID_END_DT4 = 6,
	SID_END_DT6 = 7,
	SID_END_DT46 = 8,
	SID_END_B6_ENCAPS = 9,
	SID_END_B6_ENCAPS_RED = 10,
	SID_PLUGIN = 11, /* an operator's function (plugin.h): plugin = its slot, policy = its configuration */
};

/* Why a packet was dropped (DROP_*), handed to the daemon (SLOW_*), answered (ICMP_*) or handed to the
 * kernel (PASS_*). One counter each. Every value is explicit and says what happens to the packet: 1..39
 * drop it, 40..47 consume it here (XDP_DROP) after sending it to the daemon's slow path (slowpath.h),
 * which sends what becomes of it back through this program, 48..63 replace it
 * with an ICMP error sent back out of the port it came in on (REASON_ANSWER_FIRST: a redirect to the
 * ingress interface, which unlike XDP_TX also reaches a veth peer without an XDP program), 64..127 hand
 * it to the kernel (REASON_PASS_FIRST); internal/dataplane/reasons.go names each one and a test keeps
 * the two in step. */
enum reason {
	REASON_NONE = 0,
	DROP_TRUNC_VLAN = 1,		/* frame ends inside an 802.1Q tag */
	DROP_TRUNC_IP = 2,		/* frame shorter than the IPv4/IPv6 header or length of a packet seg6x owns */
	DROP_BAD_IPV4_IHL = 3,		/* IPv4 header length field < 5 or beyond the frame */
	DROP_TRUNC_EXTHDR = 4,		/* frame ends inside an IPv6 extension header */
	DROP_TOO_MANY_EXTHDRS = 5,	/* more than MAX_EXT_HDRS extension headers before the SRH */
	DROP_SRH_BAD_LEN = 6,		/* SRH length inconsistent with last entry, or beyond the frame */
	DROP_SRH_SL_BEYOND = 7,		/* segments left points beyond the last entry */
	DROP_BAD_ROUTING_TYPE = 8,	/* routing header addressed to a SID is not an SRH */
	DROP_DECAP_SL_NONZERO = 9,	/* decap behavior with segments left > 0 */
	DROP_BAD_INNER = 10,		/* decap behavior, inner packet of the wrong family, malformed or truncated */
	DROP_NO_ROOM = 11,		/* the frame cannot grow to hold the outer header */
	DROP_BOUNDARY_SID = 12,		/* access side: IPv6 packet addressed to a local SID */
	DROP_BOUNDARY_LOCATOR = 13,	/* access side: IPv6 destination inside the SR domain's locators */
	DROP_BOUNDARY_SRH = 14,		/* access side: IPv6 packet carrying a segment routing header */
	DROP_SID_SOURCE = 15,		/* fabric side: packet to a local SID from outside the domain's sources */
	DROP_BAD_IP_VERSION = 16,	/* IP version field disagrees with the ethertype / next header */
	DROP_BAD_IPV4_CSUM = 17,	/* tenant IPv4 header checksum wrong (RFC 1812 5.2.2) */
	DROP_BAD_IP_LEN = 18,		/* IPv4 total length < header, or IPv6 payload length 0 */
	DROP_TX_GONE = 19,		/* the egress interface left the redirect map after the next hop was chosen */
	DROP_TOO_BIG = 20,		/* larger than its tunnel, and no ICMP error may answer it (no gateway address
					 * of its family, an ICMP error itself, a later fragment, not from a unicast source) */
	DROP_TOO_BIG_RATELIMIT = 21,	/* larger than its tunnel; the ICMP error was over the per-CPU rate limit */
	DROP_DECAP_TOO_BIG = 22,	/* decapsulated packet larger than the MTU of its egress (tenant) port, not
					 * answered (IPv4 without DF, no gateway address, no daemon, not answerable) */
	DROP_SLOW_BUSY = 23,		/* for the daemon's slow path, but its queue (perf ring) is full */
	DROP_POLICY_DOWN = 24,		/* the route's named policy has every segment list marked down */
	DROP_VXLAN_SOURCE = 25,		/* VXLAN to a local VTEP from a source that is no remote of the device (the
					 * boundary rule; a device that learns hands it to the kernel instead) */
	DROP_MULTIBUF_HEADERS = 26,	/* a multi-buffer (jumbo) frame whose first buffer is shorter than
					 * MULTIBUF_HDR_MIN: its headers cannot be checked in place, and the kernel
					 * would take it past the checks of the SR domain boundary */
	DROP_MULTIBUF_EGRESS = 27,	/* a multi-buffer frame for an egress whose driver cannot send one
					 * (tx_no_sg), and no daemon to send it */
	DROP_PLUGIN = 28,		/* a plugin SID's function dropped it (its own reason: plugin_reason_stats) */
	DROP_PLUGIN_ABORT = 29,		/* a plugin SID's function aborted, or its slot holds no function */
	DROP_PLUGIN_VERDICT = 30,	/* a plugin SID's function answered a verdict that does not exist, or one the
					 * SID does not allow (DT without a tenant table, ENCAP into another policy) */
	DROP_PLUGIN_MALFORMED = 31,	/* a plugin SID's function left a frame whose Ethernet and IPv6 headers are
					 * no longer where they were */
	DROP_PLUGIN_BOUNDARY = 32,	/* a plugin SID's function sent the packet on as End towards a port that is
					 * not the fabric's (the SR domain boundary) */
	REASON_SLOW_FIRST = 40,
	SLOW_FRAGMENT = 40,		/* IPv4 without DF larger than its tunnel: the daemon fragments it and runs each
					 * fragment through this program as from the same port */
	SLOW_DECAP_ICMP = 41,		/* decapsulated packet too big for its tenant port: replaced by the ICMP error,
					 * which the daemon runs through this program as sent by the tenant */
	SLOW_VXLAN_FRAGMENT = 42,	/* VXLAN encapsulation larger than the underlay's MTU (a frame the device's MTU
					 * admits): encapsulated here, fragmented (outer IPv6) by the daemon, which
					 * sends the fragments out of the underlay interface */
	SLOW_MULTIBUF_SEND = 43,	/* a multi-buffer frame, ready to leave, for an egress whose driver cannot send
					 * one redirected (tx_no_sg): the daemon sends it out of the egress */
	REASON_ANSWER_FIRST = 48,
	ICMP_TOO_BIG = 48,		/* larger than its tunnel (IPv4 DF, IPv6): ICMP frag needed / packet too big sent */
	REASON_PASS_FIRST = 64,
	PASS_NO_MATCH = 64,		/* reserved: not counted per packet (traffic seg6x does not own) */
	PASS_TTL = 65,			/* TTL / hop limit would expire: kernel sends ICMP */
	PASS_LOCAL = 66,		/* addressed to this node (End with SL 0, no SRH, or local route) */
	PASS_FIB_NO_NEIGH = 67,		/* next hop has no neighbor entry yet: kernel resolves it */
	PASS_FIB_FRAG_NEEDED = 68,	/* larger than the egress MTU: kernel fragments or sends ICMP */
	PASS_FIB_UNREACHABLE = 69,	/* blackhole / unreachable / prohibit route: kernel answers */
	PASS_FIB_OTHER = 70,		/* any other bpf_fib_lookup result (forwarding disabled, ...) */
	PASS_TX_NOT_ATTACHED = 71,	/* egress interface has no seg6x program: kernel forwards */
	PASS_FRAGMENT = 72,		/* IPv6 fragment addressed to a SID: kernel reassembles */
	PASS_SRH_TLV = 73,		/* SRH with TLVs addressed to a SID: kernel validates them (and HMAC) */
	PASS_NO_ROOM = 74,		/* no room for the outer header; the tenant's routes are the kernel's: it encapsulates */
	PASS_IPV4_OPTIONS = 75,		/* IPv4 header with options: the kernel validates them (and answers with ICMP) */
	PASS_GSO_UNSIZED = 76,		/* tc: a GSO aggregate whose segment size cannot be told (not TCP / UDP behind a
					 * plain IP header): the kernel forwards it */
	PASS_POP_EXTHDRS = 77,		/* PSP / USP with extension headers between the IPv6 header and the SRH: the
					 * kernel pops it */
	PASS_GSO_NESTED = 78,		/* tc: a GSO aggregate (already a tunnel) to a binding SID: the kernel
					 * encapsulates it again and segments it */
	PASS_VXLAN_FLOOD = 79,		/* bridged frame to a broadcast, multicast or unknown MAC, or to a MAC behind
					 * several remotes: the kernel floods / replicates it */
	PASS_VXLAN_LOCAL = 80,		/* bridged frame between two local ports, or back to where it came from: the
					 * kernel's bridge */
	PASS_VXLAN_NODE = 81,		/* bridged frame to the node's own MAC on the bridge */
	PASS_VXLAN_LEARN = 82,		/* a source MAC (or VTEP) the kernel has not learned where it is, or one whose
					 * learned entry is due for a refresh: the kernel sees the frame and learns */
	PASS_VXLAN_MALFORMED = 83,	/* VXLAN to a local VTEP that seg6x does not take apart (flags, length, inner
					 * frame): the kernel decides */
	PASS_VXLAN_VNI = 84,		/* VXLAN to a local VTEP with a VNI no followed device has */
	PASS_VXLAN_TOO_BIG = 85,	/* bridged frame larger than the VXLAN device's or the egress port's MTU */
	PASS_VXLAN_CSUM = 86,		/* VXLAN to a local VTEP whose UDP checksum is zero or does not verify: the
					 * kernel checks it its way (it drops a wrong one, and takes a local veth
					 * peer's unfinished CHECKSUM_PARTIAL one, which XDP cannot tell) */
	PASS_VXLAN_ND = 87,		/* bridged ARP or IPv6 neighbor discovery (even unicast): the kernel's (the bridge
					 * may answer or suppress it: neigh_suppress) */
	PASS_VXLAN_ECN = 88,		/* VXLAN whose outer ECN marks change the inner packet (CE, or ECT(1) over
					 * ECT(0); RFC 6040): the kernel rewrites it (or drops a not-ECT one) */
	PASS_MULTIBUF = 89,		/* a multi-buffer (jumbo) frame the fast path does not take whole: VXLAN (its
					 * checksum covers every byte), an outer header that does not fit the headroom:
					 * the kernel forwards it */
	PASS_PLUGIN = 90,		/* a plugin SID's function handed it to the kernel */
	REASON_MAX = 128,
};

/* What a slow path record (the perf ring slow_path, followed by the frame) asks of the daemon. */
enum slow_kind {
	SLOW_KIND_FRAGMENT = 1, /* fragment the IPv4 packet at l3off to fit mtu, run each fragment in at ifindex */
	SLOW_KIND_INJECT = 2,	/* run the frame in at ifindex as it is */
	SLOW_KIND_FRAGMENT6 = 3, /* fragment the IPv6 packet at l3off to fit mtu, send each out of ifindex */
	SLOW_KIND_SEND = 4,	 /* send the frame out of ifindex as it is */
};

struct slow_meta {
	__u32 kind;    /* enum slow_kind */
	__u32 ifindex; /* the port the frame (or its fragments) enters through */
	__u32 mtu;     /* SLOW_KIND_FRAGMENT: the largest IPv4 packet the tunnel takes */
	__u32 l3off;   /* offset of the IP header in the frame */
	__u32 len;     /* frame length (the record's sample is padded beyond it) */
};

/* Where a frame came in: ingress ifindex + VLAN ID (0 = untagged; PORT_VLAN_ANY = any VLAN of the
 * interface without an entry of its own). */
enum port_vlan {
	PORT_VLAN_ANY = 0xFFFF,
};

struct port_key {
	__u32 ifindex;
	__u16 vlan;
	__u16 pad;
};

/* What the fast path may do with a frame from a port (its side of the SR domain boundary).
 * Fabric ports process local SIDs; access ports never do: IPv6 to a local SID, into the domain's
 * locators or with an SRH is dropped there. A tenant port leads to one version of the tenant's route
 * table: replacing the whole table writes a new table_id and then flips this entry, so a packet sees
 * the old table or the new one, never a mix. The prefix-length bitmaps say which exact-match lookups
 * a destination needs (longest first). */
enum port_flags {
	PORT_F_SIDS = 1,	     /* fabric: local SIDs are processed */
	PORT_F_BOUNDARY = 2,	     /* access: SIDs, locators and SRHs are refused */
	PORT_F_TENANT = 4,	     /* tenant traffic: headend through table_id */
	PORT_F_SID_SOURCES = 8,	     /* fabric: a packet to a local SID needs a source in sid_sources */
	PORT_F_KERNEL_FALLBACK = 16, /* the kernel holds the same routes: hand it what XDP cannot encapsulate */
	PORT_F_BRIDGE = 32,	     /* a port of a bridge with a followed VXLAN device (table_id: the bridge's
				      * ifindex): frames to remote MACs are encapsulated (vxlan.h), the rest is
				      * the kernel's */
	PORT_F_LEARNING = 64,	     /* with PORT_F_BRIDGE: the bridge learns source MACs on this port */
};

/* An rx_frags entry: frames of the interface may span buffers, in XDP of the driver (frames of pages;
 * a redirect hands them to the egress driver as they are) or generic XDP (skbs). */
enum rx_frags_mode {
	RX_FRAGS_NATIVE = 1,
	RX_FRAGS_GENERIC = 2,
};

enum mss_clamp {
	MSS_CLAMP_OFF = 0,
	MSS_CLAMP_AUTO = 0xFFFF, /* fit the tunnel: its MTU minus the IPv4 / IPv6 and TCP headers */
};

struct port_val {
	__u32 table_id;  /* the tenant's route table (PORT_F_BRIDGE: the bridge's ifindex) */
	__u32 flags;     /* PORT_F_* */
	__u64 plens4;    /* bit n: the table has IPv4 routes of prefix length n (0..32) */
	__u64 plens6[3]; /* bit n of 192: IPv6 routes of prefix length n (0..128) */
	__be32 gw4;      /* the tenant's IPv4 gateway address, source of its ICMP errors (0: none) */
	__u16 mss_clamp; /* MSS_CLAMP_OFF, MSS_CLAMP_AUTO, or the largest MSS a SYN may announce */
	__u16 pad;
	__u8 gw6[16];    /* the tenant's IPv6 gateway address (all zero: none) */
};

/* A port lookup as last made (port_of): the port entry of (ifindex, vlan), or none (found 0), and
 * its interface's rx_frags entry (0: none), under generation gen of cache_gen. ifindex 0 never matches (no
 * frame arrives on it): an empty slot. */
struct port_cache_entry {
	__u32 gen;
	__u32 ifindex;
	__u16 vlan;
	__u16 found;
	__u32 frags;
	struct port_val val;
};

/* A route lookup as last made (route_cached): the policy id (0: no route) that destination dst
 * (IPv4: its first 4 bytes, the rest 0) found in route table table_id, under generation gen of
 * cache_gen. fam 0: an empty slot. */
struct route_cache_entry {
	__u32 gen;
	__u32 table_id;
	__u8 dst[16];
	__u32 policy_id;
	__u8 fam; /* 4 or 6 */
	__u8 pad[3];
};

/* An IPv6 prefix in an LPM trie (the domain's locators, the domain's sources). */
struct lpm6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

/* Encap routes: exact match on (table, prefix length, destination masked to that length). */
struct route4_key {
	__u32 table_id;
	__u8 plen;
	__u8 pad[3];
	__u8 addr[4];
};

struct route6_key {
	__u32 table_id;
	__u8 plen;
	__u8 pad[3];
	__u8 addr[16];
};

/* Index of the policy (and its counters) an encap route points to. A policy slot is written before
 * any route points at it and is not reused until well after the last route left it. */
struct encap_val {
	__u32 policy_id;
};

/* A prebuilt outer header: IPv6 (payload length, flow label, traffic class patched per packet) + SRH. */
struct encap_policy {
	__u16 hdr_len; /* bytes in hdr: 40 + optional SRH */
	__u8 pad[2];
	__u8 hdr[MAX_ENCAP_HDR];
};

enum sid_flags {
	SID_F_VLAN = 1,	     /* push sid_entry.vlan on egress after decap */
	SID_F_NEXT_CSID = 2, /* End / End.X with the NEXT-C-SID flavor (RFC 9800): lb_bytes, nf_bytes */
	SID_F_PSP = 4,	     /* PSP (RFC 8986 4.16.1): the SRH goes where segments left becomes 0 */
	SID_F_USP = 8,	     /* USP (4.16.2): segments left 0 on arrival: the SRH goes, the packet is local */
	SID_F_USD = 16,	     /* USD (4.16.3): segments left 0 (or no SRH) and an inner IP packet: decapsulate,
			      * look it up in the SID's table (End: main) */
	SID_F_PLUGIN = 32,   /* what a plugin's verdict made of its SID (plugin.h): End leaves by the fabric only */
};

/* Whether any local SID is served by prefix (sid_prefixes is looked up only then). */
struct sid_conf {
	__u32 prefixes;
};

/* A named policy's group for one inner family: the policy id of each slot (0: no list is up). */
struct policy_group {
	__u32 ids[POLICY_GROUP_BUCKETS];
};

struct sid_entry {
	__u32 id;     /* counter index */
	__u8 action;  /* enum sid_action */
	__u8 flags;   /* SID_F_* */
	__u16 vlan;   /* 802.1Q VLAN ID to push (host order) */
	__u32 table;  /* End.T / End.DT* routing table */
	__u8 lb_bytes; /* NEXT-C-SID: locator block length in bytes */
	__u8 nf_bytes; /* NEXT-C-SID: node function length in bytes */
	__u16 plugin; /* SID_PLUGIN: the plugin's slot (plugin_progs) */
	__u8 nh[16];  /* End.X / End.DX6 IPv6 next hop; End.DX4 IPv4 next hop in nh[0..3] */
	__u32 policy; /* End.B6.Encaps*: the SR policy (policies map) the packet goes into; SID_PLUGIN: the
		       * SID's configuration (plugin_cfg, plugin_binds) */
};

/* A SID lookup as last made (sidlookup.h): the local SID of addr (found 0: none), under generation
 * gen of cache_gen. valid 0: an empty slot. */
struct sid_cache_entry {
	__u32 gen;
	__u8 valid;
	__u8 found;
	__u16 pad;
	__u8 addr[16];
	struct sid_entry sid;
};

/* What a cached FIB result answers for: every input the data plane gives bpf_fib_lookup except the
 * packet length (nh_entry.ok_len covers that), so a cached answer is the one the FIB would give for
 * the same kernel state. IPv4 addresses in src/dst[0..3]; table 0 = main through the rules. The flow
 * fields (flowinfo, ports, protocol) are what the kernel's multipath hash picks an ECMP path by. */
struct nh_key {
	__u32 table;
	__u32 ifindex;  /* ingress: policy rules may select by it */
	__u8 family;
	__u8 l4_protocol;
	__u16 pad;
	__be32 flowinfo; /* bpf_fib_lookup's union: IPv4 TOS in its first byte, IPv6 traffic class + flow label */
	__be16 sport;
	__be16 dport;
	__u8 src[16];   /* policy rules and IPv6 source-specific routes may select by it */
	__u8 dst[16];
};

/* A cached FIB result, per CPU. */
struct nh_entry {
	__u64 expires_ns; /* bpf_ktime_get_coarse_ns() after which the FIB is asked again */
	__u32 ifindex;
	__u32 gen;        /* nh_gen when filled: a newer generation makes the entry stale */
	__u16 ok_len;     /* longest packet the FIB accepted for this entry (MTU check) */
	__u8 dmac[6];
	__u8 smac[6];
	__u8 pad[2];
};

/* A slot of the next-hop cache (nh_cache): the FIB's answer nh for the lookup key. */
struct nh_cache_slot {
	struct nh_key key;
	struct nh_entry nh;
};

/* ---- VXLAN over IPv6 (vxlan.h): the kernel's VXLAN devices, their bridges and forwarding tables ---- */

/* What an outer IPv6 lookup of an array slot is made for (fwd.h fib6_slot): the outer packet's flow
 * fields, the multipath hash's inputs besides the addresses (ports in memory order: sport, dport). */
struct flow6 {
	__be32 flowinfo; /* traffic class + flow label, as bpf_fib_lookup takes them */
	__u32 ports;
	__u32 proto;
};

/* A next hop kept in an array slot (policy_nh, vx_nh; fwd.h fib6_slot): the FIB's answer for an outer
 * IPv6 packet from local to remote with the flow fields flow, of a frame that entered on in_ifindex,
 * with the next-hop cache's lifetime rules. */
struct nh_slot {
	__u8 local[16];
	__u8 remote[16];
	__u32 in_ifindex;
	struct flow6 flow;
	__u32 pad;
	struct nh_entry nh;
};

/* A MAC address in a bridge's table (vx_macs), as the kernel's two tables decide its frames go. */
enum vx_mac_kind {
	VX_MAC_LOCAL = 1,  /* behind local port ifindex */
	VX_MAC_NODE = 2,   /* the node's own address on the bridge: frames to it are the kernel's */
	VX_MAC_TUNNEL = 3, /* the bridge sends it to the VXLAN device ifindex; VX_MAC_F_REMOTE: to one remote */
};

enum vx_mac_flags {
	VX_MAC_F_DYNAMIC = 1, /* learned: it ages unless its frames reach the kernel (vx_seen) */
	VX_MAC_F_REMOTE = 2,  /* VX_MAC_TUNNEL: remote, port and vni say where frames to it go */
};

struct vx_mac_key {
	__u32 bridge; /* ifindex */
	__u8 mac[6];
	__u16 pad;
};

struct vx_mac {
	__u8 kind;	/* enum vx_mac_kind */
	__u8 flags;	/* VX_MAC_F_* */
	__be16 port;	/* VX_MAC_TUNNEL: UDP destination port */
	__u32 ifindex;	/* VX_MAC_LOCAL: the port; VX_MAC_TUNNEL: the VXLAN device */
	__be32 vni;	/* VX_MAC_TUNNEL: the VXLAN header's second word (VNI << 8) */
	__u16 mtu;	/* VX_MAC_LOCAL: the port's MTU */
	__u16 pad;
	__u8 remote[16];
};

enum vx_dev_flags {
	VX_F_LEARNING = 1,	/* the device learns remote VTEPs: VXLAN from an unknown one goes to the kernel */
	VX_F_PORT_LEARNING = 2,	/* the bridge learns source MACs on the device's port */
};

/* A VXLAN device (vx_devs, by its ifindex; vx_rx, by what its packets are addressed to). */
struct vx_dev {
	__u8 local[16];		/* underlay source address */
	__u32 ifindex;		/* the device */
	__u32 bridge;		/* the bridge it is a port of */
	__be32 vni;		/* VXLAN header's second word */
	__be32 flow;		/* the outer IPv6 header's first word but the ECN bits (version, TC, label) */
	__be16 port;		/* UDP destination port */
	__u16 sport_lo;		/* UDP source ports: sport_lo .. sport_lo + sport_span - 1 */
	__u16 sport_span;
	__u16 mtu;		/* the device's MTU */
	__u8 ttl;		/* outer hop limit */
	__u8 flags;		/* VX_F_* */
	__u16 pad;
};

/* The inputs of an encapsulation decision (vx_enc_cache): the frame's port, its bridge, its MACs and
 * whether the port learns. */
struct vx_enc_key {
	__u32 in_ifindex;
	__u32 bridge;
	__u8 dst[6];
	__u8 src[6];
	__u32 learning;
};

/* An encapsulation the fast path decided (vx_enc_cache, per CPU): what vx_macs and vx_devs said,
 * valid while cache_gen is gen (the control plane bumps it after every write of those tables). */
struct vx_enc_entry {
	struct vx_enc_key key;
	__u32 gen;
	__u8 src_dynamic; /* the source MAC was learned: its refresh (vx_refresh) still runs per frame */
	__u8 pad[3];
	struct vx_mac dst;
	struct vx_dev dev;
};

/* The inputs of a decapsulation decision (vx_dec_cache): outer source and destination, UDP port,
 * VNI word, inner MACs. */
struct vx_dec_key {
	__u8 src[16];
	__u8 dst[16];
	__be32 vni;
	__be16 port;
	__u8 idst[6];
	__u8 isrc[6];
	__u16 pad;
	__u32 pad2; /* to a whole number of 64-bit words: slots.h hashes and compares the key as such */
};

/* The decision caches compare and hash their keys as 64-bit words (slots.h words_same, words_slot): a key
 * of another size would leave its last bytes out of both (an inner source MAC's were, once). */
_Static_assert(sizeof(struct vx_enc_key) % 8 == 0, "vx_enc_key: whole 64-bit words");
_Static_assert(sizeof(struct vx_dec_key) % 8 == 0, "vx_dec_key: whole 64-bit words");

/* A decapsulation the fast path decided (vx_dec_cache, per CPU), valid while cache_gen is gen. */
struct vx_dec_entry {
	struct vx_dec_key key;
	__u32 gen;
	__u32 bridge;	  /* the device's bridge (the source MAC's refresh key) */
	__u32 out;	  /* the bridge port the inner frame leaves by */
	__u16 mtu;	  /* its MTU */
	__u8 src_dynamic; /* the inner source MAC was learned: its refresh still runs per frame */
	__u8 pad;
};

/* vx_rx: VXLAN packets addressed to a local VTEP; vni VX_VNI_ANY: the VTEP has some device on the port. */
#define VX_VNI_ANY 0xFFFFFFFFU
struct vx_rx_key {
	__u8 local[16];
	__be16 port;
	__u16 pad;
	__be32 vni;
};

/* vx_remotes: the VTEPs a device takes VXLAN from (its default remotes and its MACs' remotes). */
struct vx_remote_key {
	__u32 dev;
	__u8 addr[16];
};

struct counter {
	__u64 packets;
	__u64 bytes;
};

/* What became of a packet at a plugin SID (plugin.h): the verdict the function returned (0..7, enum
 * seg6x_verdict), or why it has none. plugin_stats and plugin_sid_stats count each. */
enum plugin_outcome {
	PLUGIN_O_EMPTY = 8,	  /* the slot holds no function (not loaded, or unloaded under the SID) */
	PLUGIN_O_BAD_VERDICT = 9, /* a verdict that does not exist, or one the SID does not allow */
	PLUGIN_O_MALFORMED = 10,  /* the frame's headers moved or broke */
	PLUGIN_OUTCOMES = 16,
};

/* What a plugin SID allows beyond its tenant table: the policies ENCAP may name (0: unused). */
struct plugin_bind {
	__u32 policies[PLUGIN_POLICIES];
};

/* The data plane's capacities (consts.h) as the control plane must see them: bpf2go turns this into Go
 * constants, and a test checks the control plane's limits against them. */
enum limits {
	LIMIT_SEGMENTS = MAX_SEGMENTS,
	LIMIT_POLICIES = MAX_POLICIES,
	LIMIT_ROUTES4 = MAX_ROUTES4,
	LIMIT_ROUTES6 = MAX_ROUTES6,
	LIMIT_SIDS = MAX_SIDS,
	LIMIT_DOMAIN_PREFIXES = MAX_DOMAIN_PREFIXES,
};

/* ---- Trace (trace.h): one record per traced packet, through the trace ring ------------------------ */

/* What a packet was taken for. */
enum trace_class {
	TRACE_NOT_OURS = 0,	/* passed untouched: not a tenant's, not to a local SID (or not IP) */
	TRACE_TENANT = 1,	/* tenant traffic: headend (route lookup, encap) */
	TRACE_SID = 2,		/* addressed to a local SID: endpoint behavior */
	TRACE_BOUNDARY = 3,	/* access side: refused by the SR domain boundary checks */
	TRACE_MALFORMED = 4,	/* refused while parsing */
};

enum trace_flags {
	TRACE_F_PORT = 1,	/* the port had an entry (port_flags, table valid) */
	TRACE_F_ROUTE = 2,	/* a tenant route matched (route_*, policy) */
	TRACE_F_SID = 4,	/* a local SID matched (sid, behavior, sl_*) */
	TRACE_F_FIB = 8,	/* a FIB lookup was made (fib_*) */
	TRACE_F_FIB_CACHED = 16, /* ... answered from the next-hop cache */
	TRACE_F_INNER = 32,	/* the received packet carries an inner IP packet (inner_*) */
	TRACE_F_L4 = 64,	/* sport/dport hold the innermost TCP/UDP ports */
	TRACE_F_TC = 128,	/* recorded by the tc program (else XDP) */
	TRACE_F_SRH_READ = 256,	/* the endpoint looked for the SRH: sl_* valid (0xFF: none) */
	TRACE_F_SRH_POPPED = 512, /* the SRH was popped (PSP, USP) */
};

/* Addresses are IPv6, or IPv4-mapped (::ffff:a.b.c.d). */
struct trace_rec {
	__u64 ts_ns;		/* bpf_ktime_get_ns() at the start */
	__u32 flags;		/* TRACE_F_* */
	__u32 ifindex;		/* ingress */
	__u16 vlan;		/* outer VLAN ID (0: untagged) */
	__u8 class;		/* enum trace_class */
	__u8 action;		/* ACT_* (XDP values) */
	__u16 reason;		/* enum reason (0: none) */
	__u16 rx_len;		/* bytes of the received frame that follow this record */
	__u16 tx_len;		/* then bytes of the frame as it left (or was dropped, or passed) */
	__u8 plugin_outcome;	/* a plugin SID's: 1 + its outcome (enum plugin_outcome, verdicts 0..7); 0: none */
	__u8 pad;
	__u32 frame_len;	/* the received frame's length */
	__u32 out_len;		/* its length at the end */
	__u32 port_flags;	/* PORT_F_* of the ingress port */
	__u32 table;		/* the port's tenant route table */
	__u32 policy;		/* the route's policy id */
	__u32 route_plen;	/* the route's prefix length (of route_addr) */
	__u8 route_addr[16];	/* the route's prefix */
	__u8 sid[16];		/* the local SID */
	__u32 sid_id;		/* its counter index */
	__u8 behavior;		/* enum sid_action */
	__u8 sl_before;		/* segments left as received (0xFF: no SRH) */
	__u8 sl_after;		/* after the behavior */
	__u8 chain;		/* local SIDs processed before this one in the same pass */
	__u32 fib_table;	/* FIB lookup: table (0: main through the rules) */
	__s32 fib_rc;		/* bpf_fib_lookup result (BPF_FIB_LKUP_RET_*, 100: egress not attached) */
	__u32 fib_ifindex;	/* its input interface, then the egress interface on success */
	__u32 fib_mtu;		/* the MTU it reported (frag needed) */
	__u8 fib_dst[16];	/* the address looked up */
	__u8 fib_nh[16];	/* the next hop it returned (the gateway, or the destination itself) */
	__u8 dmac[6];
	__u8 smac[6];
	__u8 outer_proto;	/* IP protocol / next header of the received outer header */
	__u8 inner_proto;	/* of the inner packet, when TRACE_F_INNER */
	__u16 sport, dport;	/* innermost TCP/UDP ports (host order), when TRACE_F_L4 */
	__u8 outer_src[16], outer_dst[16];
	__u8 inner_src[16], inner_dst[16];
};

/* What to trace (trace_cfg[0]); TF_* say which fields are set, the rest match anything. */
enum trace_filter_flags {
	TF_IFINDEX = 1,
	TF_VLAN = 2,
	TF_TABLE = 4,
	TF_POLICY = 8,
	TF_SID = 16,
	TF_REASON = 32,
	TF_SRC = 64,		/* outer or inner source within src/src_plen */
	TF_DST = 128,		/* outer or inner destination within dst/dst_plen */
	TF_PROTO = 256,		/* innermost protocol */
	TF_SPORT = 512,
	TF_DPORT = 1024,
	TF_ACTIONS = 2048,	/* the action is one of action_mask's bits */
	TF_CLASS = 4096,
};

struct trace_cfg {
	__u32 filter;		/* TF_* */
	__u32 ifindex;
	__u16 vlan;
	__u16 reason;
	__u32 table;
	__u32 policy;
	__u8 sid[16];
	__u8 src[16];
	__u8 dst[16];
	__u8 src_plen, dst_plen;	/* on the IPv4-mapped form for IPv4 */
	__u8 proto;
	__u8 class;
	__u16 sport, dport;
	__u32 action_mask;	/* bit ACT_* */
	__u32 sample;		/* record 1 in this many matching packets (0, 1: all), per CPU */
	__u32 rate;		/* at most this many records per second per CPU (0: no limit) */
	__u32 snaplen;		/* frame bytes per record, before and after (at most TRACE_SNAP_MAX) */
};

/* Per-CPU trace counters (trace_stats). */
struct trace_stats {
	__u64 matched;		/* packets the filter took */
	__u64 emitted;		/* records written to the ring */
	__u64 sampled_out;	/* matched, skipped by sampling */
	__u64 rate_limited;	/* matched, over the rate limit */
	__u64 ring_full;	/* the ring had no room */
	__u64 tokens_ns;	/* rate limit: the time the bucket was last filled */
	__u64 tokens;		/* rate limit: records that may go now (x 1e9) */
	__u64 seen;		/* sampling: matched packets so far */
};
/* clang-format on */
