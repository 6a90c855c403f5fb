// SPDX-License-Identifier: GPL-2.0
/* access.bpf.c: a tc program that turns a lab host's veth into an 802.1Q access port (the lab has no
 * VLAN devices): egress tags every frame with the port's VLAN (as skb metadata: the host's veth has
 * VLAN insertion offload off, so the stack writes the tag into the frame's bytes before it segments a
 * GSO aggregate, and each segment leaves tagged), ingress accepts only frames tagged with the port's
 * VLAN, pops the tag and counts what it saw. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

const volatile __u16 access_vid = 0;

enum access_counter {
	ACCESS_TX_TAGGED = 0, /* frames sent with the tag pushed */
	ACCESS_RX_OK,	      /* frames received with this port's VLAN, tag popped */
	ACCESS_RX_UNTAGGED,   /* frames received without a tag: dropped */
	ACCESS_RX_WRONG_VLAN, /* frames received with another VLAN: dropped */
	ACCESS_RX_PE_MLD,     /* untagged MLDv2 reports of the PE's own kernel (IPv6 on for tenant routes): dropped */
	ACCESS_MAX,
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ACCESS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} access_stats SEC(".maps");

static __always_inline void add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&access_stats, &idx);

	if (v)
		__sync_fetch_and_add(v, n);
}

static __always_inline void bump(__u32 idx)
{
	add(idx, 1);
}

/* Counted per frame on the wire: a GSO aggregate as the segments it becomes. */
SEC("tc")
int access_egress(struct __sk_buff *skb)
{
	if (skb->vlan_present) /* a second tag is not what an access port sends */
		return TC_ACT_SHOT;
	if (bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q), access_vid & 0x0FFF))
		return TC_ACT_SHOT;
	add(ACCESS_TX_TAGGED, skb->gso_segs ? skb->gso_segs : 1);
	return TC_ACT_OK;
}

SEC("tc")
int access_ingress(struct __sk_buff *skb)
{
	if (!skb->vlan_present) {
		__u8 dst[6];
		if (skb->protocol == bpf_htons(ETH_P_IPV6) && !bpf_skb_load_bytes(skb, 0, dst, 6) && dst[0] == 0x33 &&
		    dst[1] == 0x33 && dst[2] == 0 && dst[3] == 0 && dst[4] == 0 && dst[5] == 0x16)
			bump(ACCESS_RX_PE_MLD); /* to ff02::16, all MLDv2-capable routers */
		else
			bump(ACCESS_RX_UNTAGGED);
		return TC_ACT_SHOT;
	}
	if ((skb->vlan_tci & 0x0FFF) != access_vid) {
		bump(ACCESS_RX_WRONG_VLAN);
		return TC_ACT_SHOT;
	}
	if (bpf_skb_vlan_pop(skb))
		return TC_ACT_SHOT;
	bump(ACCESS_RX_OK);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
