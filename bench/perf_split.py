#!/usr/bin/python3
"""perf_split.py: where the CPU of a hypervisor-lab TCP run goes, from a system-wide call-graph
profile. Reads `perf script` output on stdin; prints each part's share of the samples and, with
--gbytes (the GB delivered during the profile), its CPU ns per byte (samples over perf's sampling
frequency --freq, per CPU, as recorded with `perf record -F`).

Every sample is put in one part by its call chain. The lab's nodes share one kernel; a packet crossing
a veth is queued and handled later in NET_RX softirq (process_backlog or the veth's NAPI poll), so
the chain from the leaf down to the first of those frames is one node's handling of one packet:
  forwarding   that chain does not reach a local TCP/IP receive (hv1, p and hv2 forwarding, any data
               plane: the kernel's IP or seg6, or seg6x's tc or XDP program and its redirect)
  vm receive   the chain reaches tcp_v4_rcv / ip_local_deliver (the VMs' TCP receive, data and ACKs)
  vm tcp/app   no softirq receive frame: iperf3 and its system calls (copies, TCP transmit)
  idle         the idle loop
Method and use: docs/benchmarks.md ("Where the CPU goes")."""
import argparse
import collections
import sys

RX_FRAMES = ("process_backlog", "veth_poll", "__netif_receive_skb_one_core")
LOCAL_RX = ("tcp_v4_rcv", "tcp_v6_rcv", "ip_local_deliver", "ip6_input")
IDLE = ("default_idle", "pv_native_safe_halt", "cpu_idle", "do_idle")


def classify(syms):
    chain = []
    for s in syms:
        chain.append(s)
        if s in RX_FRAMES:
            break
    else:
        return "idle" if any(s in IDLE for s in syms) else "vm tcp/app"
    return "vm receive" if any(s in LOCAL_RX for s in chain) else "forwarding"


def samples(lines):
    syms = []
    for line in lines:
        line = line.strip()
        if not line:
            if syms:
                yield syms
            syms = []
            continue
        f = line.split()
        # A stack line is "<address> <symbol>+<offset> (<object>)"; a header line has no hex address first.
        if len(f) >= 2 and all(c in "0123456789abcdef" for c in f[0]):
            syms.append(f[1].split("+")[0])
    if syms:
        yield syms


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gbytes", type=float, help="GB delivered during the profile")
    ap.add_argument("--freq", type=float, default=4000, help="perf record's sampling frequency (-F; perf's default 4000)")
    a = ap.parse_args()
    parts = collections.Counter(classify(s) for s in samples(sys.stdin))
    total = sum(parts.values())
    if not total:
        sys.exit("no samples with call chains on stdin (perf record -a -g ...; perf script)")
    for part in ("forwarding", "vm receive", "vm tcp/app", "idle"):
        line = "%-11s %5.1f%%" % (part, 100.0 * parts[part] / total)
        if a.gbytes:
            line += "  %.3f CPU ns/byte" % (parts[part] / a.freq / a.gbytes)
        print(line)


if __name__ == "__main__":
    main()
