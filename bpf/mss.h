/* mss.h: TCP MSS clamping at the headend, as operators do with iptables TCPMSS: the MSS option of a
 * SYN (and of a SYN-ACK: the answer enters the headend of the other site) is lowered so that the other
 * side's segments fit the tunnel, with the TCP checksum updated incrementally (RFC 1624). */
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "consts.h"
#include "structs.h"
#include "fwd.h"
#include "csum.h"

#define TCP_HLEN 20
#define TCP_OPT_MSS 2
#define TCP_FLAG_SYN 0x02

/* Offset of the TCP header of a SYN at l4off (0 when it is none): the one check the headend makes
 * per TCP packet of a tenant with clamping on. */
static __always_inline __u32 syn_at(void *data, void *data_end, __u32 l4off)
{
	__u8 *th = data + (l4off & 0x7F);

	if ((void *)(th + TCP_HLEN) > data_end || !(th[13] & TCP_FLAG_SYN))
		return 0;
	return l4off;
}

/* The largest MSS that fits the tunnel of a packet with these FIB inputs and outer header length
 * hdr_len: the FIB is asked for the egress MTU (a lookup for a 65535-byte packet reports it), minus the
 * outer header, the inner IP header (ip_hlen) and the TCP header. 0 when no limit is known. */
static __always_inline __u32 tunnel_mss(struct ctx_buff *ctx, const struct bpf_fib_lookup *in, __u32 hdr_len,
					__u32 ip_hlen)
{
	struct bpf_fib_lookup f = *in;
	__u32 over = hdr_len + ip_hlen + TCP_HLEN;

	f.tot_len = 0xFFFF;
	if (bpf_fib_lookup(ctx, &f, sizeof(f), fib_flags(0)) != BPF_FIB_LKUP_RET_FRAG_NEEDED)
		return 0;
	return f.mtu_result > over ? f.mtu_result - over : 0;
}

/* Lowers the MSS option of the TCP SYN at l4off to max when it announces more. */
static __always_inline void mss_clamp(void *data, void *data_end, __u32 l4off, __u32 max)
{
	__u8 *th = data + (l4off & 0x7F);
	__u32 optlen, i = 0;

	if ((void *)(th + TCP_HLEN) > data_end || max == 0 || max > 0xFFFF)
		return;
	optlen = (__u32)(th[12] >> 4) * 4;
	if (optlen <= TCP_HLEN)
		return;
	optlen -= TCP_HLEN;
	for (int n = 0; n < 40; n++) {
		__u8 *o = th + TCP_HLEN + (i & 0x3F);
		__u32 kind, len, old, new, sum;

		if (i >= optlen || (void *)(o + 2) > data_end)
			return;
		kind = o[0];
		if (kind == 0) /* end of options */
			return;
		len = kind == 1 ? 1 : o[1]; /* 1: no-operation */
		if (len == 0 || i + len > optlen)
			return;
		if (kind == TCP_OPT_MSS) {
			if (len != 4 || (void *)(o + 4) > data_end)
				return;
			old = ((__u32)o[2] << 8) | o[3];
			if (old <= max)
				return;
			new = max;
			o[2] = new >> 8;
			o[3] = new & 0xFF;
			/* The value's two bytes sit in one 16-bit word of the checksum when the option starts
			 * at an even offset, else across two: the same as a byte-swapped word. */
			if (i & 1) {
				old = ((old & 0xFF) << 8) | (old >> 8);
				new = ((new & 0xFF) << 8) | (new >> 8);
			}
			sum = (~(__u32)bpf_ntohs(*(__be16 *)(th + 16)) & 0xFFFF) + (~old & 0xFFFF) + new;
			*(__be16 *)(th + 16) = bpf_htons(csum_fold(sum));
			return;
		}
		i += len;
	}
}
