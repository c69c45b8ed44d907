#!/usr/bin/env python3
"""MPI_Gatherv and MPI_Scatterv, the two ways libmpi can move a block
(libmpi/src/mpi_gatherv.c), measured in the same run: along the binomial
tree (TERN_MPI_VTREE_MAX=1000000000: every block) and straight between the
root and each rank (TERN_MPI_VTREE_MAX=0: the linear algorithm), by block
size, to see where the default limit (512 bytes) should lie.  Launches
alternate between the two ways, so host load drifts over both alike.

    python3 bench/gatherv.py host [--ranks 8,16] [--reps 5] [--iters 300] [--sizes ...]
    python3 bench/gatherv.py tern [--nodes 8] [--reps 3] [--iters 30] [--sizes ...]

host: bench/mpi/mpibench.c gatherv / scatterv as N processes on one veth
in a network namespace (tests/nxlaunch.py).  tern: the same by yod on a
Tern cluster of its own (--boot direct), taken down at the end.  Each launch
prints the slowest rank's microseconds per call for 3 batches of ITERS per
size; the table gives the median over every batch of every launch."""
import argparse
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(HERE, "tests"))
from ternbench.standalone import load, own_cluster  # noqa: E402
from ternbench.standalone import main as standalone_main  # noqa: E402

WAYS = (("linear", "0"), ("tree", "1000000000"))
RESULT = re.compile(r"R mpi-(gatherv|scatterv)\d+ (\d+) us ([0-9.]+)")


def figures(out):
    """{(call, size): [us, ...]} of one launch."""
    got = {}
    for m in RESULT.finditer(out):
        got.setdefault((m.group(1), int(m.group(2))), []).append(float(m.group(3)))
    return got


def table(rows):
    print("| where | call | N | block bytes | linear (us) | tree (us) | tree / linear | load |")
    print("|---|---|---|---|---|---|---|---|")
    for (where, call, n, size), per in sorted(rows.items()):
        li, tr = statistics.median(per["linear"]), statistics.median(per["tree"])
        print(f"| {where} | MPI_{call.capitalize()} | {n} | {size} | {li:.1f} | {tr:.1f} | "
              f"{tr / li:.2f} | {min(per['load']):.1f}-{max(per['load']):.1f} |")


def measure(a, where, n, run_one):
    """Launches alternating between the ways, the first way changing each
    repetition; run_one(call, way_flag) -> stdout."""
    rows = {}
    for rep in range(a.reps):
        for call in ("gatherv", "scatterv"):
            for way, flag in (WAYS if rep % 2 == 0 else WAYS[::-1]):
                before = load()
                got = figures(run_one(call, flag))
                if len(got) != len(a.sizes):
                    raise SystemExit(f"{where} {call} {way} on {n} failed")
                for (c, size), xs in got.items():
                    per = rows.setdefault((where, c, n, size), {"linear": [], "tree": [],
                                                                "load": []})
                    per[way] += xs
                    per["load"].append(before)
                print(f"{where} n={n} rep={rep} {call} {way}: " + ", ".join(
                    f"{s} B {statistics.median(v):.1f}" for (_, s), v in sorted(got.items())) +
                    f" us (load {load():.1f})", flush=True)
    return rows


def host(a):
    from nxlaunch import launch, netns
    prog = os.path.join(HERE, "build", "mpi-portals", "mpibench")
    rows = {}
    with netns() as ns:
        for n in a.ranks:
            def one(call, flag):
                r = launch(ns, n, [prog, call, "3", str(a.iters), ",".join(map(str, a.sizes))],
                           timeout=600, env={"TERN_MPI_VTREE_MAX": flag})
                if r.status:
                    raise SystemExit(f"host {call} on {n}: {r}")
                return r.out
            rows.update(measure(a, "host", n, one))
    table(rows)


def tern(a):
    prog = os.path.join(HERE, "build", "mpi-tern", "mpibench")
    rows = {}
    with own_cluster("gv", max(a.nodes)) as run:
        for n in a.nodes:
            def one(call, flag):
                r = run(["env", f"TERN_MPI_VTREE_MAX={flag}", "yod", "-timeout", "600",
                         "-sz", str(n), prog, call, "3", str(a.iters),
                         ",".join(map(str, a.sizes))])
                if r.returncode:
                    raise SystemExit(f"tern {call} on {n}: {r.stdout}{r.stderr}")
                return r.stdout
            rows.update(measure(a, "Tern", n, one))
    table(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="8,16")
    ap.add_argument("--nodes", default="8")
    ap.add_argument("--sizes", default="8,256,512,1024,4096,16384")
    standalone_main(ap, host, tern, reps=(5, 3), iters=(300, 30),
                    lists=("ranks", "nodes", "sizes"))

if __name__ == "__main__":
    main()
