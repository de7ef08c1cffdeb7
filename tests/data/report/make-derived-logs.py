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

From tests/data/nccl-tests-logs/06_a100_1node_8gpu_oci_allreduce.txt (1 node
x 8 A100, all_reduce, -g 8), both halves alike:

  alternation_dip.txt    every size 2^(2k) from 16 MiB to 4 GiB at 0.7 of
                         its posted busbw (time / 0.7), as when NCCL
                         switches protocol or algorithm at every other size:
                         a regular alternation from 16 MiB to 8 GiB; and the
                         64 MiB cell at 0.46 of the geometric mean of its
                         posted neighbours (32 MiB and 128 MiB), a dip inside
                         the alternation (0.69 of the geometric mean of its
                         like sizes, 16 MiB and 256 MiB)

Run from the repository root:  python3 tests/data/report/make-derived-logs.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "nccl-tests-logs", "01_h100_2node_16gpu_gcp_a3mega_allreduce.txt")
N = 16
SRC_A100 = os.path.join(HERE, "..", "nccl-tests-logs", "06_a100_1node_8gpu_oci_allreduce.txt")
N_A100 = 8


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


def alternation_dip(times):
    """The row function of alternation_dip.txt; @times: size -> (t1, t2) posted."""
    def fn(size, count, t1, t2):
        k = size.bit_length() - 1
        if size == 1 << 26:  # 64 MiB: 0.46 x the geometric mean of its neighbours' busbw
            # busbw = c x size / time, so the geometric mean of the
            # neighbours' (size / 2 and 2 x size) is c x size / sqrt(tl x tr)
            lo, hi = times[1 << 25], times[1 << 27]
            t1, t2 = (lo[0] * hi[0]) ** 0.5 / 0.46, (lo[1] * hi[1]) ** 0.5 / 0.46
        elif k % 2 == 0 and 24 <= k <= 32:
            t1, t2 = t1 / 0.7, t2 / 0.7
        a1, a2 = size / t1 / 1e3, size / t2 / 1e3
        f = 2.0 * (N_A100 - 1) / N_A100
        return count, t1, a1, a1 * f, t2, a2, a2 * f
    return fn


def main():
    with open(SRC) as f:
        lines = f.read().splitlines()
    os.makedirs(os.path.join(HERE, "nccl-derived"), exist_ok=True)
    for name, fn in (("allreduce_night.txt", reduce_scatter), ("sockets_2node.txt", sockets)):
        with open(os.path.join(HERE, "nccl-derived", name), "w") as f:
            f.write(derive(lines, fn))
    with open(SRC_A100) as f:
        lines = f.read().splitlines()
    times = {}
    for ln in lines:
        tok = ln.split()
        if tok and tok[0].isdigit() and len(tok) == 13:
            times[int(tok[0])] = (float(tok[5]), float(tok[9]))
    with open(os.path.join(HERE, "nccl-derived", "alternation_dip.txt"), "w") as f:
        f.write(derive(lines, alternation_dip(times)))


if __name__ == "__main__":
    main()
