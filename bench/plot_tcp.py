#!/usr/bin/python3
"""plot_tcp.py: PNG of `seg6x bench tcp --out FILE` (bench/results/tcp.json by default): Gbps and CPU
ns per byte per mode, one bar per flow count, written as tcp.png next to the JSON."""
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
fig, axes = plt.subplots(1, 2, figsize=(13, 5))
width = 0.8 / len(flows)
for ax, key, title in ((axes[0], "gbps", "TCP throughput (Gbps)"), (axes[1], "cpu_ns_per_byte", "CPU ns per byte (whole path)")):
    for i, f in enumerate(flows):
        ys = [next((r[key] for r in recs if r["mode"] == m and r["flows"] == f), 0) for m in modes]
        ax.bar([x + i * width for x in range(len(modes))], ys, width, label=f"{f} flow(s)")
    ax.set_xticks([x + width * (len(flows) - 1) / 2 for x in range(len(modes))])
    ax.set_xticklabels(modes)
    ax.set_title(title)
    ax.legend()
fig.suptitle("seg6x bench tcp: vm1 -> vm2 across two hypervisors and a transit node")
fig.tight_layout()
out = os.path.join(os.path.dirname(path) or ".", "tcp.png")
fig.savefig(out, dpi=100)
print("wrote", out)
