/* csum.h: Internet checksum arithmetic (RFC 1071, RFC 1624) for the headers seg6x writes: ICMP errors
 * and the TCP checksum after MSS clamping. */
#pragma once

#include <linux/types.h>

/* Sum of n 16-bit words at p as they lie in memory (so the folded complement is stored as is). */
static __always_inline __u64 sum16(const void *p, int n)
{
	const __u16 *w = p;
	__u64 sum = 0;

#pragma unroll
	for (int i = 0; i < n; i++)
		sum += w[i];
	return sum;
}

/* The one's complement of a sum folded to 16 bits: the checksum field for that sum. */
static __always_inline __u16 csum_fold(__u64 sum)
{
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	return ~sum;
}
