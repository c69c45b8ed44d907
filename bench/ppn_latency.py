#!/usr/bin/env python3
"""NX ping-pong latency between two ranks of one node (yod -ppn 2: the
node's loop ring, two copies) against two ranks on two nodes (one rank per
node: the NIC and the virtual fabric), measured in the same run on one
cluster of two 2-CPU nodes (--boot direct) of its own, taken down at the end.
Launches alternate between the two, so host load drifts over both alike.

    python3 bench/ppn_latency.py [--launches 5] [--reps 3] [--iters 300]
                                 [--sizes 8,1024,65536]

Each launch runs bench/nx/nxbench.c lat (REPS batches of ITERS round trips
per size, one-way microseconds per batch); the table gives, per size, the
median over every batch of every launch and the ratio intra / inter."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import uuid

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(HERE, "tests"))

RESULT = re.compile(r"R nx-lat (\d+) us_oneway ([0-9.]+)")
NXBENCH = os.path.join(HERE, "build", "nx-tern", "nxbench")


def load():
    return float(open("/proc/loadavg").read().split()[0])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--launches", type=int, default=5)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--iters", type=int, default=300)
    p.add_argument("--sizes", default="8,1024,65536")
    a = p.parse_args()
    import clusters
    name = "pplat" + uuid.uuid4().hex[:6]
    ways = {"intra": ("-sz", "2", "-ppn", "2"), "inter": ("-sz", "2")}
    got = {w: {} for w in ways}
    loads = []
    clusters.cluster(name, "up", "-n", "2", "--smp", "2", "--boot", "direct")
    try:
        for _ in range(a.launches):
            for way, opts in ways.items():
                loads.append(load())
                r = clusters.yod(name, "-timeout", "200", *opts, NXBENCH, "lat", str(a.reps),
                                 str(a.iters), a.sizes, "200", timeout=300)
                if r.returncode != 0:
                    sys.exit(f"{way}: yod failed: {r.stdout}{r.stderr}")
                for m in RESULT.finditer(r.stdout):
                    got[way].setdefault(int(m.group(1)), []).append(float(m.group(2)))
    finally:
        clusters.down(name)
    print(f"NX one-way latency, {a.launches} launches x {a.reps} batches x {a.iters} round "
          f"trips, 2-CPU TCG nodes; host load {min(loads):.1f}-{max(loads):.1f}")
    print("| size (B) | intra-node, -ppn 2 (us) | inter-node (us) | intra / inter |")
    print("|---|---|---|---|")
    for size in sorted(got["intra"]):
        i, o = statistics.median(got["intra"][size]), statistics.median(got["inter"][size])
        print(f"| {size} | {i:.1f} | {o:.1f} | {i / o:.2f} |")


if __name__ == "__main__":
    main()
