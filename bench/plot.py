#!/usr/bin/python3
"""plot.py: PNG plots of `seg6x-bench run` results (bench/results/latest.json by default).

mpps_by_size.png: PDR and NDR (Mpps) by frame size, one line per scenario, single flow.
ratio_to_kernel.png: each seg6x scenario's rate divided by its kernel reference, per frame size.
"""
import json
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

path = sys.argv[1] if len(sys.argv) > 1 else "bench/results/latest.json"
out = os.path.dirname(path)
data = json.load(open(path))
# {"meta": {date, command, commit, machine}, "results": [...]}; a bare list is the older form.
points = data["results"] if isinstance(data, dict) else data
flows = "single" if any(p["flows"] == "single" for p in points) else points[0]["flows"]
pts = [p for p in points if p["flows"] == flows]
names = []
for p in pts:
    if p["scenario"] not in names:
        names.append(p["scenario"])

fig, axes = plt.subplots(1, 2, figsize=(14, 6), sharey=True)
for ax, key, title in ((axes[0], "pdr_mpps", "PDR (loss <= 0.5%)"), (axes[1], "ndr_mpps", "NDR (zero loss)")):
    for n in names:
        xs = [p["frame_size"] for p in pts if p["scenario"] == n]
        ys = [p[key] for p in pts if p["scenario"] == n]
        style = "--" if n.startswith("kernel") else ("-." if n.startswith("bare") else "-")
        ax.plot(xs, ys, style, marker="o", label=n)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("frame size (bytes)")
    ax.set_title(f"{title}, {flows} flow")
    ax.grid(True, alpha=0.3)
axes[0].set_ylabel("Mpps")
axes[1].legend(fontsize=7, loc="upper right")
fig.tight_layout()
fig.savefig(os.path.join(out, "mpps_by_size.png"), dpi=90)

fig, ax = plt.subplots(figsize=(12, 5))
sizes = sorted({p["frame_size"] for p in pts})
seg6x = [n for n in names if n.startswith("seg6x")]
width = 0.8 / max(1, len(sizes))
for i, size in enumerate(sorted({p["frame_size"] for p in pts if p["scenario"].startswith("seg6x")})):
    vals = []
    for n in seg6x:
        v = [p["ratio_to_kernel"] for p in pts if p["scenario"] == n and p["frame_size"] == size]
        vals.append(v[0] if v else 0)
    ax.bar([j + i * width for j in range(len(seg6x))], vals, width, label=f"{size} B")
ax.axhline(1, color="black", linewidth=0.8)
ax.set_xticks([j + width * (len(sizes) - 1) / 2 for j in range(len(seg6x))])
ax.set_xticklabels(seg6x, rotation=30, ha="right", fontsize=8)
ax.set_ylabel("rate / kernel reference (same run)")
ax.set_title("seg6x vs the kernel doing the same work (PDR, same run)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(os.path.join(out, "ratio_to_kernel.png"), dpi=90)
print("plots:", os.path.join(out, "mpps_by_size.png"), os.path.join(out, "ratio_to_kernel.png"))
