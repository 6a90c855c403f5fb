// SPDX-License-Identifier: GPL-2.0
/* bench.bpf.c: the benchmark rig's traffic generator (run with BPF_F_TEST_XDP_LIVE_FRAMES) and its
 * sink (counts only frames that match what the scenario must produce). Loaded twice per rig: the
 * second copy's sink counts, on the generator's interface, what a bidirectional scenario sends
 * back. In a closed-loop trial (loop_cfg) the sink also turns every correct frame back into a
 * template and sends it into the DUT again: a fixed population of frames circulates, and the rig's
 * cost per frame is one receive, check, rewrite and send, no more than a bare redirect's. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define TPL_MAX 2048  /* largest frame template (VXLAN decap: a 1514-byte tenant frame + 70) */
#define TPL_FLOWS 256 /* templates: one per flow */
#define PAT_LEN 128   /* bytes of each received frame the sink checks */
#define GEN_BURST 16  /* frames per paced burst (a devmap flushes every 16 frames too) */

struct frame_tpl {
	__u32 len;	/* frame length (templates of different lengths make IMIX) */
	__u32 redirect; /* 1: sent through gen_tx (the sink's side, into the DUT's egress), 0: XDP_TX */
	__u8 data[TPL_MAX];
};

/* gen_tx[0]: the sink's interface (written from its namespace): frames of templates marked redirect
 * leave through it, into the DUT's egress, for scenarios that load both directions at once. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} gen_tx SEC(".maps");

/* Frame templates; every generated frame is written whole from one of them (live-frame pages are
 * recycled without being re-initialised). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TPL_FLOWS);
	__type(key, __u32);
	__type(value, struct frame_tpl);
} gen_tpl SEC(".maps");

/* gen_cfg: [0] 1: pick templates in turn instead of at random (a closed loop's seed: its mix is
 * exactly the templates'), [1] number of templates to pick from at random (1 = one flow), [2] ns between
 * frames (0 = as fast as possible). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u32);
} gen_cfg SEC(".maps");

/* What the generator did in the current trial (reset by the control plane before each). */
struct gen_state {
	__u64 next_ns;
	__u64 first_ns;
	__u64 last_ns;
	__u64 count;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_state);
} gen_stats SEC(".maps");

/* Closed loop: while on, the sink rewrites each correct frame into a template of the frame's own
 * length class (loop_class) and sends it back into the DUT: through loop_tx (the generator's
 * interface, whose peer is the DUT's ingress) or, with redirect 0, with XDP_TX (out of the interface
 * it came in on: the way back of a bidirectional scenario). */
struct loop_conf {
	__u32 on;
	__u32 dir; /* the loop_class entry of the templates to rewrite into */
	__u32 redirect;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct loop_conf);
} loop_cfg SEC(".maps");

#define LOOP_CLASSES 4 /* template lengths per direction a loop keeps apart (IMIX has 3) */

/* loop_class[dir]: the templates going one way, grouped by length. A frame the DUT sent is rewritten
 * into a template of the class whose length is nearest to its own (the DUT adds or removes a few
 * dozen header bytes; IMIX's lengths lie hundreds apart), so every frame keeps its length class and
 * the population keeps the mix it was seeded with. */
struct loop_classes {
	__u32 len[LOOP_CLASSES]; /* 0: class unused */
	__u32 n[LOOP_CLASSES];
	__u8 idx[LOOP_CLASSES][TPL_FLOWS]; /* gen_tpl indices of the class's templates */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct loop_classes);
} loop_class SEC(".maps");

/* loop_tx[0]: the generator's interface (written from its namespace). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} loop_tx SEC(".maps");

static long spin_until(__u64 idx, void *deadline)
{
	return bpf_ktime_get_ns() >= *(__u64 *)deadline;
}

SEC("xdp")
int bench_gen(struct xdp_md *ctx)
{
	__u32 k_flows = 1, k_gap = 2, zero = 0, idx = 0;
	__u32 *seq = bpf_map_lookup_elem(&gen_cfg, &zero);
	__u32 *flows = bpf_map_lookup_elem(&gen_cfg, &k_flows);
	__u32 *gap = bpf_map_lookup_elem(&gen_cfg, &k_gap);
	struct gen_state *st = bpf_map_lookup_elem(&gen_stats, &zero);
	struct frame_tpl *t;
	__u64 now;
	__u32 n;
	long cur;

	if (!seq || !flows || !gap || !st)
		return XDP_ABORTED;
	now = 0;
	if (*gap && (st->count & (GEN_BURST - 1)) == 0) {
		/* Rate control, once per burst of GEN_BURST frames (the live-frames batch size): wait for
		 * the burst's slot, never catching up more than 1 ms late. */
		now = bpf_ktime_get_ns();
		if (st->next_ns + 1000000 < now)
			st->next_ns = now;
		if (now < st->next_ns) {
			__u64 deadline = st->next_ns;
			bpf_loop(1 << 20, spin_until, &deadline, 0);
			now = bpf_ktime_get_ns();
		}
		st->next_ns += (__u64)*gap * GEN_BURST;
	}
	if (!now && (!st->first_ns || (st->count & (GEN_BURST - 1)) == 0))
		now = bpf_ktime_get_ns();
	if (!st->first_ns)
		st->first_ns = now;
	if (now)
		st->last_ns = now; /* time of the last burst start: the rate is computed over whole bursts */
	if (*flows > 1) {
		n = *flows & (TPL_FLOWS - 1) ? *flows & (TPL_FLOWS - 1) : TPL_FLOWS;
		idx = (*seq ? (__u32)st->count : bpf_get_prandom_u32()) % n;
	}
	st->count++;
	t = bpf_map_lookup_elem(&gen_tpl, &idx);
	if (!t)
		return XDP_ABORTED;
	n = t->len;
	if (n < 14 || n > TPL_MAX)
		return XDP_ABORTED;
	cur = (long)ctx->data_end - (long)ctx->data;
	asm volatile("" : "+r"(cur)); /* keep it a scalar: no arithmetic on pkt_end in the next line */
	if (cur != n && bpf_xdp_adjust_tail(ctx, (int)n - (int)cur)) /* live frames start at the longest */
		return XDP_ABORTED;
	if (bpf_xdp_store_bytes(ctx, 0, t->data, n))
		return XDP_ABORTED;
	if (t->redirect)
		return bpf_redirect_map(&gen_tx, 0, XDP_ABORTED);
	return XDP_TX;
}

/* What a correct frame looks like: (frame[i] & mask[i]) == value[i] for i < PAT_LEN. Entry 0 always
 * applies; entry 1 (when its min_len is set) is a second correct form (a test that switches the DUT
 * between two configurations accepts either, never a mix). */
struct sink_pattern {
	__u8 value[PAT_LEN];
	__u8 mask[PAT_LEN];
	__u32 min_len;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct sink_pattern);
} sink_pat SEC(".maps");

/* What the sink counted (per CPU; the control plane sums). */
struct sink_count {
	__u64 good; /* frames that matched a pattern */
	__u64 good_bytes;
	__u64 bad;	 /* frames that matched none */
	__u64 first;	 /* good frames that matched pattern 0 */
	__u64 second;	 /* good frames that matched pattern 1 */
	__u64 multicast; /* multicast frames ignored */
	__u64 looped;	 /* good frames sent into the DUT again (closed loop) */
	__u64 loop_err;	 /* good frames the loop could not rewrite (dropped) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sink_count);
} sink_stats SEC(".maps");

/* The first PAT_LEN bytes of the last wrong frame, to show what the DUT did. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct frame_tpl);
} sink_last_bad SEC(".maps");

static __always_inline int bad(struct xdp_md *ctx)
{
	__u32 zero = 0, n = ctx->data_end - ctx->data;
	struct frame_tpl *t = bpf_map_lookup_elem(&sink_last_bad, &zero);

	if (t) {
		if (n > PAT_LEN)
			n = PAT_LEN;
		if (n >= 1)
			bpf_xdp_load_bytes(ctx, 0, t->data, n & (PAT_LEN - 1) ? n & (PAT_LEN - 1) : PAT_LEN);
	}
	return XDP_DROP;
}

/* Does the frame match pattern p? */
static __always_inline int matches(struct sink_pattern *p, void *data, void *data_end)
{
	__u32 len = data_end - data;
	__u64 *w = data, *v = (__u64 *)p->value, *m = (__u64 *)p->mask;

	if (len < p->min_len)
		return 0;
#pragma unroll
	for (int i = 0; i < PAT_LEN / 8; i++) {
		if ((void *)(w + i + 1) > data_end) {
			if (m[i]) /* a checked byte lies beyond the frame */
				return 0;
			continue;
		}
		if ((w[i] & m[i]) != v[i])
			return 0;
	}
	return 1;
}

/* In a closed-loop trial: rewrite the correct frame of len bytes into a template of its length class
 * and send it into the DUT again; otherwise drop it. The DUT's work adds or removes bytes at the
 * front (headers), so moving the start by what the length changed puts the frame back where its
 * template began. */
static __always_inline int loop(struct xdp_md *ctx, struct sink_count *c, __u32 len)
{
	__u32 zero = 0, best = 0, bestd = ~0U, idx, i = 0, n;
	struct loop_conf *lc = bpf_map_lookup_elem(&loop_cfg, &zero);
	struct loop_classes *cl;
	struct frame_tpl *t;

	if (!lc || !lc->on)
		return XDP_DROP;
	cl = bpf_map_lookup_elem(&loop_class, &lc->dir);
	if (!cl)
		goto err;
#pragma unroll
	for (int k = 0; k < LOOP_CLASSES; k++) {
		__u32 l = cl->len[k], d = len > l ? len - l : l - len;

		if (l && cl->n[k] && d < bestd) {
			best = k;
			bestd = d;
		}
	}
	if (bestd == ~0U)
		goto err;
	best &= LOOP_CLASSES - 1;
	n = cl->n[best];
	if (n > 1)
		i = bpf_get_prandom_u32() % n;
	idx = cl->idx[best][i & (TPL_FLOWS - 1)];
	t = bpf_map_lookup_elem(&gen_tpl, &idx);
	if (!t)
		goto err;
	n = t->len;
	if (n < 14 || n > TPL_MAX)
		goto err;
	if (len != n && bpf_xdp_adjust_head(ctx, (int)len - (int)n))
		goto err;
	if (bpf_xdp_store_bytes(ctx, 0, t->data, n))
		goto err;
	c->looped++;
	if (lc->redirect)
		return bpf_redirect_map(&loop_tx, 0, XDP_DROP);
	return XDP_TX;
err:
	c->loop_err++;
	return XDP_DROP;
}

SEC("xdp")
int bench_sink(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 zero = 0, one = 1, len = data_end - data;
	struct sink_pattern *p0 = bpf_map_lookup_elem(&sink_pat, &zero);
	struct sink_pattern *p1 = bpf_map_lookup_elem(&sink_pat, &one);
	struct sink_count *c = bpf_map_lookup_elem(&sink_stats, &zero);

	if (!p0 || !p1 || !c)
		return XDP_DROP;
	if (data + 1 <= data_end && (*(__u8 *)data & 1)) {
		c->multicast++; /* the DUT kernel's own ND/MLD: not output under test */
		return XDP_DROP;
	}
	if (matches(p0, data, data_end)) {
		c->first++;
	} else if (p1->min_len && matches(p1, data, data_end)) {
		c->second++;
	} else {
		c->bad++;
		return bad(ctx);
	}
	c->good++;
	c->good_bytes += len;
	return loop(ctx, c, len);
}

char _license[] SEC("license") = "GPL";
