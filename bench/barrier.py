#!/usr/bin/env python3
"""Barrier latency, the two ways libmsg can do it, measured in the same run:
forwarded by Portals (triggered puts on counters, libmsg/msg_barrier.c, the
default) and the engine's point-to-point dissemination (TERN_MPI_TRIGGERED=0 /
TERN_NX_TRIGGERED=0, what every barrier was before).  Launches alternate
between the two, so host load drifts over both alike.

    python3 bench/barrier.py host [--ranks 2,4,8] [--reps 7] [--iters 2000]
    python3 bench/barrier.py tern [--nodes 2,4] [--reps 5] [--iters 300]

host: MPI_Barrier (bench/mpi/mpibench.c barrier) as N processes on one veth
in a network namespace (tests/nxlaunch.py, as tests/test_mpi_host.py runs).
tern: MPI_Barrier and NX gsync (bench/nx/nxbench.c gsync) by yod on a Tern
cluster of its own (--boot direct), taken down at the end.  Each launch
prints the slowest rank's microseconds per barrier for 3 batches of ITERS;
the table gives the median over every batch of every launch.  On Tern it
also gives the frames each node's library sent per barrier, and of them the
acknowledgements that went alone (the ranks' "portals stats" lines,
TERN_NX_STATS=2 / TERN_MPI_STATS=2), over the job's 4 x (ITERS + 1)
barriers: the job's start, its reductions and its end are in them too, a
few frames against thousands."""
import argparse
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(HERE, "tests"))
from ternbench.standalone import load, own_cluster  # noqa: E402
from ternbench.standalone import main as standalone_main  # noqa: E402

WAYS = (("messages", "0"), ("portals", "1"))
BATCHES = 3        # timed batches a launch prints; the programs warm up with one more
RESULT = re.compile(r"R (?:mpi-barrier|nx-gsync) (\d+) us ([0-9.]+)")
PTL_STATS = re.compile(r"portals stats node \d+: tx=(\d+) .* acks_sent=(\d+)")


def figures(out):
    return [float(m.group(2)) for m in RESULT.finditer(out)]


def frames(err, n, barriers):
    """(frames, of them acknowledgements sent alone) each node's library
    sent per barrier, from the ranks' "portals stats" lines."""
    rows = [tuple(map(int, m.groups())) for m in PTL_STATS.finditer(err)]
    if len(rows) != n:
        return None
    return (sum(r[0] for r in rows) / n / barriers, sum(r[1] for r in rows) / n / barriers)


def table(rows):
    """Medians, and the best batch of each way (the lower envelope: on a
    shared machine whole launches land in a slow mode of scheduling)."""
    print("| what | N | messages (us) | Portals (us) | Portals / messages | best batch: messages / "
          "Portals (us) | frames a barrier and node, messages / Portals (acks alone) | load |")
    print("|---|---|---|---|---|---|---|---|")
    for (what, n), per in rows.items():
        m, p = statistics.median(per["messages"]), statistics.median(per["portals"])
        fr = "-"
        if per.get("frames_messages") and per.get("frames_portals"):
            fm, fp = (tuple(statistics.median(x[i] for x in per[f"frames_{w}"]) for i in (0, 1))
                      for w in ("messages", "portals"))
            fr = f"{fm[0]:.2f} ({fm[1]:.2f}) / {fp[0]:.2f} ({fp[1]:.2f})"
        print(f"| {what} | {n} | {m:.1f} | {p:.1f} | {p / m:.2f} | "
              f"{min(per['messages']):.1f} / {min(per['portals']):.1f} | {fr} | "
              f"{min(per['load']):.1f}-{max(per['load']):.1f} |")


def host(a):
    from nxlaunch import launch, netns
    prog = os.path.join(HERE, "build", "mpi-portals", "mpibench")
    rows = {}
    with netns() as ns:
        for n in a.ranks:
            per = rows.setdefault(("host MPI_Barrier", n), {"messages": [], "portals": [],
                                                            "load": []})
            for rep in range(a.reps):
                for way, flag in WAYS:
                    per["load"].append(load())
                    r = launch(ns, n, [prog, "barrier", str(BATCHES), str(a.iters)], timeout=300,
                               env={"TERN_MPI_TRIGGERED": flag})
                    xs = figures(r.out)
                    if r.status or not xs:
                        raise SystemExit(f"{way} on {n} ranks failed: {r}")
                    per[way] += xs
                    print(f"host n={n} rep={rep} {way}: {' '.join(f'{x:.1f}' for x in xs)} us "
                          f"(load {load()})", flush=True)
    table(rows)


def tern(a):
    progs = (("MPI_Barrier", os.path.join(HERE, "build", "mpi-tern", "mpibench"), "MPI"),
             ("NX gsync", os.path.join(HERE, "build", "nx-tern", "nxbench"), "NX"))
    rows = {}
    with own_cluster("bar", max(a.nodes)) as run:
        for n in a.nodes:
            for what, prog, layer in progs:
                per = rows.setdefault((f"Tern {what}", n), {"messages": [], "portals": [],
                                                            "load": []})
                for rep in range(a.reps):
                    for way, flag in WAYS:
                        per["load"].append(load())
                        r = run(["env", f"TERN_{layer}_TRIGGERED={flag}",
                                 f"TERN_{layer}_STATS=2", "yod", "-timeout", "600",
                                 "-sz", str(n), prog, "gsync" if layer == "NX" else "barrier",
                                 str(BATCHES), str(a.iters)])
                        xs = figures(r.stdout)
                        if r.returncode or not xs:
                            raise SystemExit(f"{what} {way} on {n} nodes failed: "
                                             f"{r.stdout}{r.stderr}")
                        per[way] += xs
                        fr = frames(r.stderr, n, (BATCHES + 1) * (a.iters + 1))
                        if fr:
                            per.setdefault(f"frames_{way}", []).append(fr)
                        print(f"tern {what} n={n} rep={rep} {way}: "
                              f"{' '.join(f'{x:.1f}' for x in xs)} us (load {load()})"
                              + (f", {fr[0]:.2f} frames a barrier and node, {fr[1]:.2f} acks "
                                 "alone" if fr else ""), flush=True)
    table(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="2,4,8")
    ap.add_argument("--nodes", default="2,4")
    standalone_main(ap, host, tern, reps=(7, 5), iters=(2000, 300), lists=("ranks", "nodes"))

if __name__ == "__main__":
    main()
