#!/usr/bin/env python3
"""Launch time of yod: from yod's start to every rank running (GO sent after
all ranks reported LOADED) and to the end of a trivial job, for N nodes and a
1 MiB and a 16 MiB static program, under TCG and (where usable) KVM.
Medians of repeated runs on one virtual cluster per (accelerator, N).

    python3 bench/yod_launch.py [--nodes 1,4,16,64] [--runs 5] [--accel tcg,kvm]
                                [--fanout 2] [--out FILE]

Writes bench/results/<date>/yod_launch.csv (or --out) and prints a table.
For scale (seed 001): a resident RPC server spawns a remote process in
4.3 ms, rsh/ssh in about 70 ms."""
import argparse
import csv
import datetime
import os
import re
import statistics
import subprocess
import sys
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "qemu"))
from ternlib import accel  # noqa: E402

CLUSTER = os.path.join(ROOT, "qemu", "cluster")
PROGS = {"1MiB": os.path.join(ROOT, "build", "bench", "launch-1m"),
         "16MiB": os.path.join(ROOT, "build", "bench", "launch-16m")}
TIMING = re.compile(r"loaded in ([\d.]+) ms, ran ([\d.]+) ms, ([\d.]+) ms in all")


def run(name, *args, timeout=900):
    return subprocess.run([CLUSTER, "--name", name, *args], capture_output=True, text=True,
                          timeout=timeout)


def measure(name, n, prog, runs, fanout):
    loads, totals = [], []
    for _ in range(runs):
        r = run(name, "exec", "yod", "-v", "-quiet", "-fanout", str(fanout), "-sz", str(n), prog)
        m = TIMING.search(r.stderr)
        if r.returncode != 0 or not m:
            raise SystemExit(f"yod failed (N={n} {prog}): {r.stderr}")
        loads.append(float(m.group(1)))
        totals.append(float(m.group(3)))
    return statistics.median(loads), statistics.median(totals)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", default="1,4,16,64")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--accel", default="tcg,kvm")
    ap.add_argument("--fanout", type=int, default=2)
    ap.add_argument("--out")
    a = ap.parse_args()
    modes = [m for m in a.accel.split(",") if m == "tcg" or (m == "kvm" and accel.kvm_usable())]
    out = a.out or os.path.join(ROOT, "bench", "results", datetime.date.today().isoformat(),
                                "yod_launch.csv")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    rows = []
    for mode in modes:
        for n in [int(x) for x in a.nodes.split(",")]:
            name = "b" + uuid.uuid4().hex[:7]
            try:
                r = run(name, "up", "-n", str(n), "--boot", "direct", f"--{mode}")
                if r.returncode != 0:
                    print(f"{mode} N={n}: cluster did not come up: {r.stderr[-500:]}")
                    continue
                for label, prog in PROGS.items():
                    load, total = measure(name, n, prog, a.runs, a.fanout)
                    rows.append({"accel": mode, "nodes": n, "program": label,
                                 "fanout": a.fanout, "runs": a.runs,
                                 "to_running_ms": round(load, 1), "to_end_ms": round(total, 1)})
                    print(f"{mode:4} N={n:3} {label:6} all running {load:9.1f} ms   "
                          f"job end {total:9.1f} ms", flush=True)
            finally:
                run(name, "down")
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["accel", "nodes", "program", "fanout", "runs",
                                          "to_running_ms", "to_end_ms"])
        w.writeheader()
        w.writerows(rows)
    print(f"written {out}")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
