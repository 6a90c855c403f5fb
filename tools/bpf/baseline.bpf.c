// SPDX-License-Identifier: GPL-2.0
/* baseline.bpf.c: reference programs for benchmarks and labs: a bare MAC-swap redirect (the fastest
 * possible forwarding on the rig) and a plain XDP_PASS to give a veth peer NAPI for redirected frames. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} bare_tx SEC(".maps");

/* Redirect target per ingress ifindex, and the MACs to write. */
struct bare_route {
	__u32 ifindex;
	__u8 dmac[6];
	__u8 smac[6];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bare_route);
} bare_cfg SEC(".maps");

SEC("xdp")
int bare_redirect(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 zero = 0;
	struct bare_route *r;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	r = bpf_map_lookup_elem(&bare_cfg, &zero);
	if (!r)
		return XDP_PASS;
	__builtin_memcpy(eth->h_dest, r->dmac, 6);
	__builtin_memcpy(eth->h_source, r->smac, 6);
	return bpf_redirect_map(&bare_tx, r->ifindex, 0);
}

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
