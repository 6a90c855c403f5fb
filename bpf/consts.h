/* consts.h: tunables and protocol constants of the seg6x data plane (multi-byte ones in network order). */
#pragma once

#include <linux/types.h>
#include <bpf/bpf_endian.h>

#ifndef MAX_SEGMENTS
#define MAX_SEGMENTS 16 /* SIDs in one segment list */
#endif
#ifndef MAX_EXT_HDRS
#define MAX_EXT_HDRS 8 /* IPv6 extension headers walked before giving up */
#endif
#ifndef MAX_VLAN_TAGS
#define MAX_VLAN_TAGS 2 /* 802.1Q / 802.1ad tags parsed on ingress */
#endif
#ifndef MAX_POLICIES
#define MAX_POLICIES 65536 /* distinct SR policies (routes with the same segment list share one) */
#endif
/* Named policies with weighted segment lists (internal/state/policies.go): a route's policy id with
 * POLICY_GROUP_FLAG names a group, whose POLICY_GROUP_BUCKETS slots hold the lists' policy ids. */
#define POLICY_GROUP_FLAG 0x80000000U
#define POLICY_GROUP_BUCKETS 64
#ifndef MAX_POLICY_GROUPS
#define MAX_POLICY_GROUPS 8192
#endif
#ifndef MAX_ROUTES4
#define MAX_ROUTES4 4194304 /* IPv4 encap routes, all tenants (a table swap holds old + new) */
#endif
#ifndef MAX_ROUTES6
#define MAX_ROUTES6 1048576 /* IPv6 encap routes, all tenants */
#endif
#ifndef MAX_SIDS
#define MAX_SIDS 131072 /* local SIDs */
#endif
#define MAX_SID_PREFIXES 4096 /* local SIDs served by prefix (uSID locators, SIDs with arguments) */
#ifndef MAX_PORTS
#define MAX_PORTS 8192 /* (ifindex, VLAN) -> boundary side and tenant entries */
#endif
#ifndef MAX_DOMAIN_PREFIXES
#define MAX_DOMAIN_PREFIXES 1024 /* locators, and SID sources, of the SR domain */
#endif
#ifndef MAX_TX_PORTS
#define MAX_TX_PORTS 1024 /* interfaces the fast path may redirect to */
#endif
#define VX_NH_SLOTS 4096    /* VXLAN encapsulation's next hops, per CPU, direct-mapped by remote VTEP and source port */
#define SID_CACHE_SLOTS 256 /* SID lookups (sid_lookup), per CPU, direct-mapped by destination */
#define ROUTE_CACHE_SLOTS 1024 /* route lookups (route_cached), per CPU, direct-mapped by (table, destination) */
#define POLICY_NH_SLOTS 16384  /* H.Encaps next hops, per CPU, direct-mapped by policy id and flow label */
#define PORT_CACHE_SLOTS 64    /* port lookups (port_of), per CPU, direct-mapped by (interface, VLAN) */
#define VX_CACHE_SLOTS 1024    /* VXLAN forwarding decisions, per CPU and direction, direct-mapped by flow */
#ifndef NH_CACHE_SLOTS
#define NH_CACHE_SLOTS 4096 /* FIB results in the next-hop cache, per CPU, direct-mapped by the lookup's inputs */
#endif
#ifndef MAX_VX_MACS
#define MAX_VX_MACS 262144 /* MACs in the bridges of followed VXLAN devices */
#endif
#ifndef VX_SEEN_ENTRIES
#define VX_SEEN_ENTRIES 65536 /* learned MACs whose last refresh is remembered (LRU: one evicted costs a refresh) */
#endif
#ifndef MAX_VX_DEVS
#define MAX_VX_DEVS 4096 /* followed VXLAN devices */
#endif
#ifndef MAX_VX_REMOTES
#define MAX_VX_REMOTES 65536 /* (device, remote VTEP) pairs */
#endif
#ifndef MAX_SID_CHAIN
#define MAX_SID_CHAIN 4 /* local SIDs processed in one pass (End whose next SID is also local) */
#endif
#define PLUGIN_SLOTS 16	  /* plugins loaded at once (plugin.h); a replacement takes a slot of its own */
#define PLUGIN_POLICIES 4 /* policies a plugin SID may encapsulate into (plugin_bind) */
#define PLUGIN_REASONS 16 /* a plugin's own drop reasons: 1..15 */
#ifndef TRACE_SNAP_MAX
#define TRACE_SNAP_MAX 2048 /* frame bytes a trace record carries, as received and as sent */
#endif
#ifndef TRACE_RING_BYTES
#define TRACE_RING_BYTES (4 << 20) /* the trace ring */
#endif
/* Bytes a multi-buffer frame's first buffer must hold: every header the behaviors read in place
 * (Ethernet, two tags, IPv6 + SRH of MAX_SEGMENTS, the inner IP and TCP headers with options). Drivers
 * put a page or at least 2 KB there. */
#define MULTIBUF_HDR_MIN 512
/* The longest frame of a 1500-byte MTU: Ethernet, MAX_VLAN_TAGS tags, 1500 bytes. */
#define FRAME_1500_MAX (ETH_HLEN + 4 * MAX_VLAN_TAGS + 1500)
/* Headroom an outer header may take in front of a frame: what every XDP driver leaves
 * (XDP_PACKET_HEADROOM, 256) less the 40 bytes the kernel keeps for struct xdp_frame. */
#define MULTIBUF_HEADROOM 216

#ifndef SCRATCH_SIZE
#define SCRATCH_SIZE 4096 /* per-CPU buffer for encaps that do not fit the headroom */
#endif

/* Bytes of outer IPv6 header + SRH with MAX_SEGMENTS entries. */
#define MAX_ENCAP_HDR (40 + 8 + 16 * MAX_SEGMENTS)

#define ETH_ALEN 6
#define ETH_HLEN 14
#define VLAN_HLEN 4
#define IPV6_HLEN 40
#define SRH_FIXED_LEN 8
#define UDP_HLEN 8
#define VXLAN_HLEN 8
/* Outer Ethernet + IPv6 + UDP + VXLAN in front of a VXLAN's inner frame. */
#define VXLAN_ENCAP_LEN (ETH_HLEN + IPV6_HLEN + UDP_HLEN + VXLAN_HLEN)

#define ETH_P_IP_BE bpf_htons(0x0800)
#define ETH_P_IPV6_BE bpf_htons(0x86DD)
#define ETH_P_8021Q_BE bpf_htons(0x8100)
#define ETH_P_8021AD_BE bpf_htons(0x88A8)

#define PROTO_HOPOPTS 0
#define PROTO_ICMP 1
#define PROTO_IPIP 4
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_IPV6 41
#define PROTO_ROUTING 43
#define PROTO_FRAGMENT 44
#define PROTO_AH 51
#define PROTO_ICMPV6 58
#define PROTO_DSTOPTS 60

#define SRH_ROUTING_TYPE 4

#define IP_MF_OFFSET_BE bpf_htons(0x3FFF) /* more-fragments flag and fragment offset */
#define IP_OFFSET_BE bpf_htons(0x1FFF)	  /* fragment offset */
#define IP_DF_BE bpf_htons(0x4000)	  /* don't-fragment flag */

#define AF_INET 2
#define AF_INET6 10
