#!/usr/bin/env python3
"""Portals between two Tern kernel nodes (virtio-net, QEMU, a bridge in a
private network namespace): ping-pong latency 0 B .. 64 KiB (one-way =
round trip / 2, median of 200 or 50 round trips per repetition) and
streaming put bandwidth 4 KiB .. 16 MiB (8 MiB per repetition, one message
for 16 MiB), plus the cost of the tern_portals system call.  Medians over
the repetitions.  Needs root.

    python3 bench/portals_kernel.py [--reps 5] [--accel tcg|kvm] [--out NAME.csv]

Writes bench/results/<date>/portals_kernel.csv (or --out) and prints a table."""
import argparse
import csv
import datetime
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from nodes import run_node  # noqa: E402
from test_portals_kernel import bridged_namespace, prog, run_pair  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--accel", choices=["tcg", "kvm"], default="tcg")
    ap.add_argument("--out", default="portals_kernel.csv",
                    help="file name under bench/results/<date>/ (default portals_kernel.csv)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("portals_kernel: needs root (network namespace, bridge, taps)")

    samples = {}
    with bridged_namespace(2) as (ns, taps):
        (src, sout, serr), (crc, cout, cerr) = run_pair(
            ns, taps, ["server", "1"], ["client", "2", "bench", str(a.reps)],
            timeout=900, nics=("virtio", "virtio"), client_prog="pingpong-musl",
            server_prog="pingpong-musl", accel=a.accel)
    if crc or src:
        sys.exit(f"portals_kernel: client {crc}, server {src}\n{cout}\n{cerr}\n{sout}\n{serr}")
    for line in cout.splitlines():
        m = re.match(r"bench,(\w+),(\d+),(\d+),([\d.]+)$", line)
        if m:
            samples.setdefault((m[1], int(m[2])), []).append(float(m[4]))

    cost = run_node(prog("badptr-musl"), timeout=120,
                    extra=[f"--{a.accel}", "--nic", "virtio", "--nid", "7"])
    m = re.search(r"cost: tern_portals nop (\d+) ns, PtlEQGet \(empty\) (\d+) ns, getpid (\d+) ns",
                  cost.stdout)
    if m:
        for name, v in zip(("call_nop_ns", "call_eqget_ns", "getpid_ns"), m.groups()):
            samples[(name, 0)] = [float(v)]

    out_dir = os.path.join(ROOT, "bench", "results", datetime.date.today().isoformat())
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, a.out)
    rows = [{"accel": a.accel, "nic": "virtio-net", "metric": k, "size": n, "reps": len(v),
             "median": round(statistics.median(v), 2), "min": round(min(v), 2),
             "max": round(max(v), 2)} for (k, n), v in samples.items()]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{'metric':<16}{'size':>10}{'reps':>6}{'median':>12}{'min':>12}{'max':>12}")
    for r in rows:
        print(f"{r['metric']:<16}{r['size']:>10}{r['reps']:>6}{r['median']:>12}{r['min']:>12}"
              f"{r['max']:>12}")
    print(f"written to {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    main()
