/* flowlabel.h: the outer IPv6 flow label, a hash of the inner 5-tuple (2-tuple + protocol otherwise). */
#pragma once

#include <linux/ip.h>
#include <linux/ipv6.h>
#include "consts.h"

static __always_inline __u32 fmix32(__u32 h)
{
	h ^= h >> 16;
	h *= 0x85EBCA6B;
	h ^= h >> 13;
	h *= 0xC2B2AE35;
	h ^= h >> 16;
	return h;
}

static __always_inline __u32 label_of(__u32 h)
{
	h = fmix32(h) & 0xFFFFF;
	return h ? h : 1; /* never 0: 0 means "no label" to RSS and ECMP */
}

/* ports points at the L4 header when it is TCP/UDP and fully present, else NULL. */
static __always_inline __u32 flow_label4(struct iphdr *iph, __u32 *ports)
{
	__u32 h = fmix32(iph->saddr ^ 0x9E3779B9) ^ iph->daddr;

	h = fmix32(h) ^ iph->protocol;
	if (ports)
		h = fmix32(h) ^ *ports;
	return label_of(h);
}

/* The label of an IPv6 packet from src to dst with next header nexthdr. */
static __always_inline __u32 flow_label6_of(const void *src, const void *dst, __u8 nexthdr, __u32 *ports)
{
	const __u32 *s = src, *d = dst;
	__u32 h = 0x9E3779B9;

#pragma unroll
	for (int i = 0; i < 4; i++)
		h = fmix32(h ^ s[i]) ^ d[i];
	h = fmix32(h) ^ nexthdr;
	if (ports)
		h = fmix32(h) ^ *ports;
	return label_of(h);
}

static __always_inline __u32 flow_label6(struct ipv6hdr *ip6, __u32 *ports)
{
	return flow_label6_of(&ip6->saddr, &ip6->daddr, ip6->nexthdr, ports);
}
