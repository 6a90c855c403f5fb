/* ipcheck.h: the checks an IPv4 or IPv6 header must pass before seg6x forwards the packet (RFC 1812
 * 5.2.2, RFC 8200), shared by the headend (tenant packets) and decapsulation (inner packets). */
#pragma once

#include <linux/ip.h>
#include <linux/ipv6.h>
#include "consts.h"
#include "structs.h"

/* Is the IPv4 header's checksum right (one's complement sum of its IHL * 2 16-bit words, options
 * included, as the kernel's ip_rcv checks it)? The caller has checked that the first 20 bytes are in
 * the frame; the usual header without options takes the short path. */
static __always_inline int ip4_csum_ok(const struct iphdr *iph, const void *data_end)
{
	const __u16 *w = (const __u16 *)iph;
	__u32 words = iph->ihl * 2, sum = 0;

	if (words == 10) {
#pragma unroll
		for (int i = 0; i < 10; i++)
			sum += w[i];
	} else {
#pragma unroll
		for (int i = 0; i < 30; i++) {
			if (i < words) {
				if ((const void *)(w + i + 1) > data_end)
					return 0;
				sum += w[i];
			}
		}
	}
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	return sum == 0xFFFF;
}

/* An IPv4 header (its first 20 bytes present, avail bytes of packet from its start) that seg6x may
 * forward: version 4, IHL >= 5, total length covering the header and within the packet, checksum right
 * (in the kernel's order: a header it would drop is dropped here, options or not). *len gets the total
 * length. Returns REASON_NONE, a DROP_* reason, or PASS_IPV4_OPTIONS for a sound header with options
 * (the kernel validates those). */
static __always_inline int ip4_check(const struct iphdr *iph, const void *data_end, __u32 avail, __u32 *len)
{
	if (iph->version != 4)
		return DROP_BAD_IP_VERSION;
	if (iph->ihl < 5)
		return DROP_BAD_IPV4_IHL;
	*len = bpf_ntohs(iph->tot_len);
	if (*len < (__u32)iph->ihl * 4)
		return DROP_BAD_IP_LEN;
	if (*len > avail)
		return DROP_TRUNC_IP;
	if (!ip4_csum_ok(iph, data_end))
		return DROP_BAD_IPV4_CSUM;
	if (iph->ihl > 5)
		return PASS_IPV4_OPTIONS;
	return REASON_NONE;
}

/* An IPv6 header (its 40 bytes present, avail bytes of packet from its start) that seg6x may forward:
 * version 6, a payload length that is not 0 (jumbograms are not carried) and within the packet, and a hop-by-hop options header, which
 * every node reads, inside the payload (the kernel's ipv6_parse_hopopts drops it otherwise). *len gets
 * 40 + payload length. */
static __always_inline int ip6_check(const struct ipv6hdr *ip6, const void *data_end, __u32 avail, __u32 *len)
{
	if (ip6->version != 6)
		return DROP_BAD_IP_VERSION;
	if (!ip6->payload_len)
		return DROP_BAD_IP_LEN;
	*len = IPV6_HLEN + bpf_ntohs(ip6->payload_len);
	if (*len > avail)
		return DROP_TRUNC_IP;
	if (ip6->nexthdr == PROTO_HOPOPTS) {
		const __u8 *h = (const __u8 *)(ip6 + 1);

		if ((const void *)(h + 2) > data_end || *len < IPV6_HLEN + ((__u32)h[1] + 1) * 8)
			return DROP_TRUNC_EXTHDR;
	}
	return REASON_NONE;
}

/* The IPv4 or IPv6 header at off (proto: its ethertype) of a packet of pkt_len bytes checked as above
 * (the tenant's packet at the headend, the inner packet of a decap behavior); *len gets its length.
 * DROP_TRUNC_IP when its fixed header is not within the linear data. */
static __always_inline int ip_check_at(const void *data, const void *data_end, __u32 pkt_len, __u32 off, __be16 proto,
				       __u32 *len)
{
	if (proto == ETH_P_IP_BE) {
		const struct iphdr *iph = data + off;

		if ((const void *)(iph + 1) > data_end)
			return DROP_TRUNC_IP;
		return ip4_check(iph, data_end, pkt_len - off, len);
	} else {
		const struct ipv6hdr *ip6 = data + off;

		if ((const void *)(ip6 + 1) > data_end)
			return DROP_TRUNC_IP;
		return ip6_check(ip6, data_end, pkt_len - off, len);
	}
}
