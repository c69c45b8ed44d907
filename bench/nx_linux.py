#!/usr/bin/env python3
"""NX on the Linux-host Portals (libnx, build/nx-portals/nxbench) next to
raw Portals on the same wire: every process on one veth end (MTU 9000) in
one network namespace, one nid, one Portals pid each (tests/nxlaunch.py),
the set-up the libnx tests use.  Needs root.  One command:

    python3 bench/nx_linux.py [--reps 7] [--mpi]

Figures (each the median of --reps repetitions, after a warm-up):
  nx-lat     NX csend/crecv ping-pong, one-way us
  ptl-lat    raw Portals put ping-pong (plbench), one-way us
  nx-ring2/4 NX ring (irecv, csend to the right, msgwait), MB/s per node
             (the slowest node's figure), 2 and 4 nodes
  ptl-bw     raw Portals streaming puts with acks, MB/s
  nx-gsync   us per gsync, 2..16 nodes
With --mpi also libnx-mpi (MPICH, shared memory on this host: not the same
wire, only a reference) for latency and the 2-node ring.
All processes share the machine's cores (2 here, with other work), so
several ranks per core cost scheduling, not network time.
--cpus LIST pins every process (taskset), default: not pinned.  Some runs
show Portals streams between two local processes stalling: the receiver
counts frames out of order (rx_ooo_dropped, no ring drops) and the sender
repairs them by retransmission timeouts, 50-200 ms each.  That is below
libnx (docs/libnx.md, Known limits); the medians hide single stalls, not a
run that stalls throughout, so look at min/max in the CSV.
CSV: bench/results/<date>/nx_linux.csv (and the console table)."""
import argparse
import csv
import datetime
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from nxlaunch import NID, Netns, cleanup_on_sigterm, launch  # noqa: E402

NXB = str(ROOT / "build" / "nx-portals" / "nxbench")
MPIB = str(ROOT / "build" / "nx-mpi" / "nxbench")
PLB = str(ROOT / "build" / "portals" / "linux" / "plbench")
LAT = [0, 8, 1024, 8192, 16384, 65536]
RING = [8, 4096, 65536, 1 << 20, 8 << 20]
GSYNC = [2, 4, 8, 16]


def parse(out, rows):
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 4 and p[0] == "R":
            rows.setdefault((p[1], int(p[2])), []).append(float(p[-1]))


CPUS = None


def nx(ns, n, args, rows, timeout=300):
    r = launch(ns, n, [NXB, *map(str, args)], timeout=timeout, cpus=CPUS)
    if r.status:
        sys.exit(f"nxbench {args} on {n} nodes failed:\n{r}")
    parse(r.out, rows)


def raw_portals(ns, a, rows):
    env = dict(os.environ, TERN_IFACE=ns.dev, TERN_RING_KB="16384")
    pin = ["taskset", "-c", CPUS] if CPUS else []
    pong = subprocess.Popen(["ip", "netns", "exec", ns.name, *pin, PLB,
                             "ptl-pong"],
                            env=dict(env, TERN_PID="10"), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        if not pong.stdout.readline().startswith("READY"):
            sys.exit("plbench ptl-pong did not start")
        join = lambda xs: ",".join(map(str, xs))  # noqa: E731
        for argv in (["ptl-ping", NID, 10, a.iters, a.reps, join(LAT)],
                     ["ptl-bw", NID, 10, 64 << 20, a.reps, join(RING[1:])]):
            r = subprocess.run(["ip", "netns", "exec", ns.name, *pin, PLB,
                                *map(str, argv)], env=dict(env, TERN_PID="20"),
                               capture_output=True, text=True, timeout=600)
            if r.returncode:
                sys.exit(f"plbench {argv[0]} failed:\n{r.stdout}{r.stderr}")
            parse(r.stdout, rows)
    finally:
        pong.kill()
        pong.wait()


def mpi(a, rows):
    for n, args in ((2, ["lat", a.reps, a.iters, ",".join(map(str, LAT))]),
                    (2, ["ring", a.reps, 16 << 20, ",".join(map(str, RING))])):
        pin = ["taskset", "-c", CPUS] if CPUS else []
        r = subprocess.run([*pin, "mpiexec", "-n", str(n), MPIB, *map(str, args)],
                           capture_output=True, text=True, timeout=600)
        if r.returncode:
            sys.exit(f"libnx-mpi nxbench failed:\n{r.stdout}{r.stderr}")
        for line in r.stdout.splitlines():
            p = line.split()
            if len(p) >= 4 and p[0] == "R":
                rows.setdefault(("mpi-" + p[1][3:], int(p[2])), []).append(
                    float(p[-1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--mpi", action="store_true")
    ap.add_argument("--cpus", default="all")
    a = ap.parse_args()
    global CPUS
    CPUS = None if a.cpus == "all" else a.cpus
    cleanup_on_sigterm()
    subprocess.run(["make", "-s", "libnx", "portals"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    rows = {}
    t0 = time.monotonic()
    with Netns() as ns:
        raw_portals(ns, a, rows)
        nx(ns, 2, ["lat", a.reps, a.iters, ",".join(map(str, LAT))], rows)
        for n in (2, 4):
            nx(ns, n, ["ring", a.reps, 16 << 20, ",".join(map(str, RING))],
               rows)
        for n in GSYNC:
            nx(ns, n, ["gsync", a.reps, 500], rows)
    if a.mpi:
        mpi(a, rows)

    day = datetime.date.today().isoformat()
    outdir = ROOT / "bench" / "results" / day
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "nx_linux.csv"
    unit = lambda k: ("MBps" if "bw" in k or "ring" in k else  # noqa: E731
                      "us" if "gsync" in k else "us_oneway")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "size_bytes_or_nodes", "unit", "median", "min",
                    "max", "reps"])
        for (kind, size), v in sorted(rows.items()):
            w.writerow([kind, size, unit(kind), f"{statistics.median(v):.2f}",
                        f"{min(v):.2f}", f"{max(v):.2f}", len(v)])
    med = {k: statistics.median(v) for k, v in rows.items()}
    cell = lambda k, s: f"{med[(k, s)]:.2f}" if (k, s) in med else "-"  # noqa
    print(f"one-way latency (us), median of {a.reps}; one veth end, MTU 9000, "
          f"cpus {a.cpus}")
    print(f"{'size':>9} {'NX':>9} {'Portals':>9} {'NX-mpi':>9}")
    for s in LAT:
        print(f"{s:>9} {cell('nx-lat', s):>9} {cell('ptl-lat', s):>9} "
              f"{cell('mpi-lat', s):>9}")
    print("\nbandwidth (MB/s): NX ring per node, raw Portals stream")
    print(f"{'size':>9} {'ring2':>9} {'ring4':>9} {'Portals':>9} {'mpi ring2':>9}")
    for s in RING:
        print(f"{s:>9} {cell('nx-ring2', s):>9} {cell('nx-ring4', s):>9} "
              f"{cell('ptl-bw', s):>9} {cell('mpi-ring2', s):>9}")
    print("\ngsync (us)")
    for n in GSYNC:
        print(f"{n:>9} {cell('nx-gsync', n):>9}")
    print(f"\n{time.monotonic() - t0:.0f} s; CSV: {path}")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
