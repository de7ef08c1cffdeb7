#!/usr/bin/env python3
"""Write nccl-tests logs derived from a real one (tests/data/report/nccl-derived/).

From tests/data/nccl-tests-logs/01_h100_2node_16gpu_gcp_a3mega_allreduce.txt
(2 nodes x 8 H100, all_reduce, no "Collective test starting" line), with the
row arithmetic nccl-tests uses (algbw = size / time; busbw = algbw x the
collective's factor) and the Avg line recomputed as nccl-tests does (the mean
of every busbw cell):

  allreduce_night.txt    the same sweep as a reduce_scatter: busbw = algbw
                         x (n-1)/n for 16 ranks, count = size / 4 / 16; a
                         reduce_scatter log under an all-reduce name
  sockets_2node.txt      the same all_reduce with every time x 5.2 (algbw
                         and busbw / 5.2): a plateau near 65 GB/s, about a
                         fifth of what 8 x 400 Gb/s per node allow, as when
                         NCCL falls back to its socket transport

Run from the repository root:  python3 tests/data/report/make-derived-logs.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "nccl-tests-logs", "01_h100_2node_16gpu_gcp_a3mega_allreduce.txt")
N = 16


def fmt_time(t):
    return "%.1f" % t if t < 10000 else "%.0f" % t


def derive(lines, fn):
    out, cells = [], []
    for ln in lines:
        tok = ln.split()
        if tok and tok[0].isdigit() and len(tok) == 13:
            size = int(tok[0])
            row = fn(size, int(tok[1]), float(tok[5]), float(tok[9]))
            count, t1, a1, b1, t2, a2, b2 = row
            cells += [float("%.2f" % b1), float("%.2f" % b2)]
            out.append("%12d  %12d  %8s  %6s  %6s  %7s  %6.2f  %6.2f  %5s  %7s  %6.2f  %6.2f  %5s" %
                       (size, count, tok[2], tok[3], tok[4], fmt_time(t1), a1, b1, tok[8],
                        fmt_time(t2), a2, b2, tok[12]))
        elif ln.startswith("# Avg bus bandwidth"):
            out.append("# Avg bus bandwidth    : %.3f " % (sum(cells) / len(cells)))
        else:
            out.append(ln)
    return "\n".join(out) + "\n"


def reduce_scatter(size, count, t1, t2):
    a1, a2 = size / t1 / 1e3, size / t2 / 1e3
    f = (N - 1) / N
    return size // 4 // N, t1, a1, a1 * f, t2, a2, a2 * f


def sockets(size, count, t1, t2):
    t1, t2 = t1 * 5.2, t2 * 5.2
    a1, a2 = size / t1 / 1e3, size / t2 / 1e3
    f = 2.0 * (N - 1) / N
    return count, t1, a1, a1 * f, t2, a2, a2 * f


def main():
    with open(SRC) as f:
        lines = f.read().splitlines()
    os.makedirs(os.path.join(HERE, "nccl-derived"), exist_ok=True)
    for name, fn in (("allreduce_night.txt", reduce_scatter), ("sockets_2node.txt", sockets)):
        with open(os.path.join(HERE, "nccl-derived", name), "w") as f:
            f.write(derive(lines, fn))


if __name__ == "__main__":
    main()
