// SPDX-License-Identifier: GPL-2.0
/* gsoprobe.bpf.c: a lab tc observer that counts, per CPU, what skbs pass a hook look like to GSO/GRO
 * (aggregates, their sizes and gso_type, skb->encapsulation and tunnel GSO bits read from the kernel's
 * own sk_buff through bpf_cast_to_kern_ctx); it never changes a packet and always returns
 * TC_ACT_UNSPEC, which tcx reads as "next program", so it never cuts a tcx chain short. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>

/* The kernel's SKB_GSO_* values are an anonymous enum whose bits moved between releases (6.18 moved
 * TCP_FIXEDID to bit 30), so CO-RE cannot relocate them: the loader reads them from the running
 * kernel's BTF and sets this mask (GRE, GRE_CSUM, IPXIP4, IPXIP6, UDP_TUNNEL, UDP_TUNNEL_CSUM). */
const volatile __u32 tunnel_gso_mask = 0;

/* The few fields of the kernel's struct sk_buff and skb_shared_info this program reads; CO-RE
 * relocates their offsets against the running kernel. */
struct sk_buff___gp {
	unsigned char *head;
	unsigned int end; /* sk_buff_data_t: an offset from head on 64-bit kernels */
	__u8 encapsulation : 1;
} __attribute__((preserve_access_index));

struct skb_shared_info___gp {
	unsigned int gso_type;
} __attribute__((preserve_access_index));

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

/* One record per CPU; Go sums the counters and takes the largest of the maxima. */
struct probe_stats {
	__u64 skbs;		 /* every skb seen */
	__u64 bytes;		 /* sum of skb->len */
	__u64 tcp;		 /* TCP over IPv4/IPv6, also under one SRH (IPv4/IPv6 in IPv6+SRH) */
	__u64 srh;		 /* IPv6 whose next header is a segment routing header */
	__u64 aggregates;	 /* skbs with gso_size > 0 or gso_segs > 1 */
	__u64 agg_bytes;	 /* sum of skb->len over aggregates */
	__u64 gso_segs;		 /* sum of gso_segs over aggregates (0 when the kernel marked it to recount) */
	__u64 max_len;		 /* largest skb->len */
	__u64 max_gso_size;	 /* largest gso_size */
	__u64 max_gso_segs;	 /* largest gso_segs */
	__u64 encapsulation;	 /* skbs with skb->encapsulation set */
	__u64 tunnel_gso;	 /* skbs with tunnel bits (tunnel_gso_mask) in gso_type */
	__u64 gso_type_or;	 /* gso_type OR-ed over all skbs */
	__u64 last_agg_ns;	 /* bpf_ktime_get_ns() of this CPU's last aggregate (Go picks the newest) */
	__u64 last_agg_gso_type; /* gso_type of that aggregate */
	__u64 last_agg_len;	 /* its skb->len */
	__u64 last_agg_gso_size; /* its gso_size */
	__u64 last_agg_gso_segs; /* its gso_segs */
	__u64 kern_read_errors;	 /* skb_shared_info reads that failed */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_stats);
} gsoprobe_stats SEC(".maps");

#define IPV6_HLEN 40
#define NEXTHDR_ROUTING 43
#define IPV6_SRCRT_TYPE_4 4

/* The L4 protocol of the IPv4/IPv6 header at off (ethertype proto), or 0. */
static __always_inline __u8 l4_proto(struct __sk_buff *skb, __be16 proto, __u32 off)
{
	__u8 p;

	if (proto == bpf_htons(ETH_P_IP)) {
		if (bpf_skb_load_bytes(skb, off + 9, &p, 1))
			return 0;
		return p;
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		if (bpf_skb_load_bytes(skb, off + 6, &p, 1))
			return 0;
		return p;
	}
	return 0;
}

/* Whether the frame carries TCP, directly or under one SRH; sets *srh when it has an SRH. */
static __always_inline bool is_tcp(struct __sk_buff *skb, bool *srh)
{
	__u8 rh[4]; /* next header, header length in 8 octets, routing type, segments left */
	__u8 p = l4_proto(skb, skb->protocol, ETH_HLEN);

	*srh = false;
	if (p == IPPROTO_TCP)
		return true;
	if (skb->protocol != bpf_htons(ETH_P_IPV6) || p != NEXTHDR_ROUTING)
		return false;
	if (bpf_skb_load_bytes(skb, ETH_HLEN + IPV6_HLEN, rh, sizeof(rh)) || rh[2] != IPV6_SRCRT_TYPE_4)
		return false;
	*srh = true;
	__u32 inner = ETH_HLEN + IPV6_HLEN + ((__u32)rh[1] + 1) * 8;
	if (rh[0] == IPPROTO_IPIP)
		return l4_proto(skb, bpf_htons(ETH_P_IP), inner) == IPPROTO_TCP;
	if (rh[0] == IPPROTO_IPV6)
		return l4_proto(skb, bpf_htons(ETH_P_IPV6), inner) == IPPROTO_TCP;
	return rh[0] == IPPROTO_TCP;
}

static __always_inline void set_max(__u64 *m, __u64 v)
{
	if (v > *m)
		*m = v;
}

SEC("tc")
int gsoprobe(struct __sk_buff *skb)
{
	struct sk_buff___gp *kskb = bpf_cast_to_kern_ctx(skb);
	struct skb_shared_info___gp *shinfo;
	struct probe_stats *st;
	__u32 key = 0, gso_type = 0;
	__u32 len = skb->len, gso_size = skb->gso_size, gso_segs = skb->gso_segs;
	bool srh;

	st = bpf_map_lookup_elem(&gsoprobe_stats, &key);
	if (!st)
		return TC_ACT_UNSPEC;

	/* The shared info sits at head + end; head is a plain byte pointer, so read it with a probe. */
	shinfo = (void *)(kskb->head + kskb->end);
	if (bpf_core_read(&gso_type, sizeof(gso_type), &shinfo->gso_type))
		st->kern_read_errors++;

	st->skbs++;
	st->bytes += len;
	if (is_tcp(skb, &srh))
		st->tcp++;
	if (srh)
		st->srh++;
	set_max(&st->max_len, len);
	set_max(&st->max_gso_size, gso_size);
	set_max(&st->max_gso_segs, gso_segs);
	if (BPF_CORE_READ_BITFIELD(kskb, encapsulation))
		st->encapsulation++;
	if (gso_type & tunnel_gso_mask)
		st->tunnel_gso++;
	st->gso_type_or |= gso_type;
	if (gso_size > 0 || gso_segs > 1) {
		st->aggregates++;
		st->agg_bytes += len;
		st->gso_segs += gso_segs;
		st->last_agg_ns = bpf_ktime_get_ns();
		st->last_agg_gso_type = gso_type;
		st->last_agg_len = len;
		st->last_agg_gso_size = gso_size;
		st->last_agg_gso_segs = gso_segs;
	}
	return TC_ACT_UNSPEC;
}

char _license[] SEC("license") = "GPL";
