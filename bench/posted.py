#!/usr/bin/env python3
"""What a deep posted-receive list costs a message: the 0-byte MPI
ping-pong between ranks 0 and 1 with COUNT receives posted on both that no
message matches (bench/mpi/mpibench.c posted), by COUNT.  Every message is
matched behind them (Portals walks the priority list; past
TERN_MPI_POSTED, 1024, the receives and the ping-pong's own wait in the
library, libmsg/msg_held.c, and each message lands as unexpected first).
COUNT 0 is the baseline of the same launch: the table gives each count's
median and its ratio to it.

    python3 bench/posted.py host [--reps 5] [--iters 2000] [--counts ...]
    python3 bench/posted.py tern [--reps 3] [--iters 300] [--counts ...]

host: two processes on one veth in a network namespace (tests/nxlaunch.py).
tern: yod -sz 2 on a Tern cluster of its own (--boot direct), taken down at
the end.  Each launch prints 3 batches of ITERS round trips per count;
medians are over every batch of every launch."""
import argparse
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(HERE, "tests"))
from ternbench.standalone import load, own_cluster  # noqa: E402
from ternbench.standalone import main as standalone_main  # noqa: E402

RESULT = re.compile(r"R mpi-posted (\d+) us_oneway ([0-9.]+)")


def measure(a, where, run_one):
    per = {}
    for rep in range(a.reps):
        before = load()
        out = run_one([str(a.iters), ",".join(map(str, a.counts))])
        got = {}
        for m in RESULT.finditer(out):
            got.setdefault(int(m.group(1)), []).append(float(m.group(2)))
        if sorted(got) != sorted(a.counts):
            raise SystemExit(f"{where} launch {rep} printed {sorted(got)}: {out[-2000:]}")
        for c, xs in got.items():
            per.setdefault(c, []).extend(xs)
        print(f"{where} rep={rep} (load {before:.1f}): " +
              ", ".join(f"{c}: {statistics.median(xs):.1f}" for c, xs in sorted(got.items())) +
              " us", flush=True)
    base = statistics.median(per[min(a.counts)])
    print(f"\n| where | receives posted | one-way 0 B (us, median) | min-max | "
          f"/ {min(a.counts)} posted |")
    print("|---|---|---|---|---|")
    for c, xs in sorted(per.items()):
        med = statistics.median(xs)
        print(f"| {where} | {c} | {med:.1f} | {min(xs):.1f}-{max(xs):.1f} | {med / base:.2f} |")


def host(a):
    from nxlaunch import launch, netns
    prog = os.path.join(HERE, "build", "mpi-portals", "mpibench")
    with netns() as ns:
        def one(args):
            r = launch(ns, 2, [prog, "posted", "3", *args], timeout=600)
            if r.status:
                raise SystemExit(f"host launch failed: {r}")
            return r.out
        measure(a, "host", one)


def tern(a):
    prog = os.path.join(HERE, "build", "mpi-tern", "mpibench")
    with own_cluster("po", 2) as run:
        def one(args):
            r = run(["yod", "-timeout", "600", "-sz", "2", prog, "posted", "3", *args])
            if r.returncode:
                raise SystemExit(f"tern launch failed: {r.stdout}{r.stderr}")
            return r.stdout
        measure(a, "Tern", one)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--counts", default="0,64,256,1000,2000,4000")
    standalone_main(ap, host, tern, reps=(5, 3), iters=(2000, 300), lists=("counts",))

if __name__ == "__main__":
    main()
