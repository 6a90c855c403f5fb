#!/usr/bin/python3
"""plot_tcp.py: PNG of `seg6x-bench tcp --out FILE` (bench/results/tcp.json by default): Gbps (median,
with the lowest-highest range of the rounds where the file has it) and CPU ns per byte (with its
softirq part) per mode, one bar per flow count, written as tcp.png next to the JSON."""
import json
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

path = sys.argv[1] if len(sys.argv) > 1 else "bench/results/tcp.json"
recs = json.load(open(path))
modes = []
for r in recs:
    if r["mode"] not in modes:
        modes.append(r["mode"])
flows = sorted({r["flows"] for r in recs})
rounds = max((len(r.get("runs", [])) for r in recs), default=0)


def rec(m, f):
    return next((r for r in recs if r["mode"] == m and r["flows"] == f), {})


fig, axes = plt.subplots(1, 2, figsize=(13, 5))
width = 0.8 / len(flows)
colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
for i, f in enumerate(flows):
    color = colors[i % len(colors)]
    xs = [x + i * width for x in range(len(modes))]
    rs = [rec(m, f) for m in modes]
    ys = [r.get("gbps", 0) for r in rs]
    err = None
    if all("gbps_min" in r for r in rs):
        err = [[y - r["gbps_min"] for y, r in zip(ys, rs)], [r["gbps_max"] - y for y, r in zip(ys, rs)]]
    axes[0].bar(xs, ys, width, yerr=err, capsize=3, color=color, label=f"{f} flow(s)")
    axes[1].bar(xs, [r.get("cpu_ns_per_byte", 0) for r in rs], width, color=color, label=f"{f} flow(s)")
    if all("softirq_ns_per_byte" in r for r in rs):
        axes[1].bar(xs, [r["softirq_ns_per_byte"] for r in rs], width, fill=False, hatch="//",
                    label="softirq part" if i == 0 else None)
for ax, title in ((axes[0], "TCP throughput (Gbps)"), (axes[1], "CPU ns per byte (whole path)")):
    ax.set_xticks([x + width * (len(flows) - 1) / 2 for x in range(len(modes))])
    ax.set_xticklabels(modes)
    ax.set_title(title + (f", median of {rounds} rounds" if rounds > 1 else ""))
    ax.legend()
fig.suptitle("seg6x-bench tcp: vm1 -> vm2 across two hypervisors and a transit node")
fig.tight_layout()
out = os.path.join(os.path.dirname(path) or ".", "tcp.png")
fig.savefig(out, dpi=100)
print("wrote", out)
