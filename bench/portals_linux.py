#!/usr/bin/env python3
"""Portals over the Linux host (AF_PACKET) between two processes in two
network namespaces joined by a veth pair (MTU 9000), next to the floor of
the same link measured in the same run: a raw AF_PACKET frame bounce and a
UDP ping-pong.  Needs root.  One command:

    python3 bench/portals_linux.py [--reps 5]

Latency is one-way = round trip / 2, bandwidth is MB/s (10^6) of put
payload with acks; each figure is the median of --reps repetitions (after
one warm-up).  CSV: bench/results/<date>/portals_linux.csv."""
import argparse
import csv
import datetime
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "portals" / "linux"))
from netns import Pair, read_until, sh  # noqa: E402

EXE = str(ROOT / "build" / "portals" / "linux" / "plbench")
LAT = [0, 8, 64, 512, 1024, 4096, 8192, 16384, 65536]
FLOOR = [0, 8, 64, 512, 1024, 4096, 8192]  # one frame (MTU 9000)
BW = [4096, 65536, 1 << 20, 16 << 20]


def results(out):
    rows = {}
    for line in out.splitlines():
        if line.startswith("R "):
            _, kind, size, _, val = line.split()
            rows.setdefault((kind, int(size)), []).append(float(val))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--bytes", type=int, default=64 << 20)
    a = ap.parse_args()
    subprocess.run(["make", "-s", "portals"], cwd=ROOT, check=True)
    pair = Pair(mtu=9000)
    rows = {}
    try:
        for nid in (1, 2):
            sh("ip", "-n", pair.ns[nid], "addr", "add", f"10.99.0.{nid}/24",
               "dev", pair.dev[nid])
        srv = pair.spawn(2, 10, [EXE, "ptl-pong"])
        read_until(srv, "READY", 10)
        raw = pair.spawn(2, 11, [EXE, "raw-echo", "vb"])
        read_until(raw, "READY", 10)
        udp = pair.spawn(2, 12, [EXE, "udp-echo", "9999"])
        read_until(udp, "READY", 10)
        joined = lambda xs: ",".join(map(str, xs))  # noqa: E731
        runs = [
            (20, [EXE, "ptl-ping", "2", "10", str(a.iters), str(a.reps),
                  joined(LAT)]),
            (21, [EXE, "ptl-bw", "2", "10", str(a.bytes), str(a.reps),
                  joined(BW)]),
            (22, [EXE, "raw-ping", "va", "02:00:00:00:00:02", str(a.iters),
                  str(a.reps), joined(FLOOR)]),
            (23, [EXE, "udp-ping", "10.99.0.2", "9999", str(a.iters),
                  str(a.reps), joined(FLOOR)]),
        ]
        for pid, argv in runs:
            rc, out, err = pair.run(1, pid, argv, 600)
            if rc:
                sys.exit(f"{argv[1]} failed:\n{out}\n{err}")
            rows.update(results(out))
    finally:
        pair.close()

    day = datetime.date.today().isoformat()
    outdir = ROOT / "bench" / "results" / day
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "portals_linux.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "size_bytes", "unit", "median", "min", "max",
                    "reps"])
        for (kind, size), v in sorted(rows.items()):
            unit = "MBps" if kind.endswith("bw") else "us_oneway"
            w.writerow([kind, size, unit, f"{statistics.median(v):.2f}",
                        f"{min(v):.2f}", f"{max(v):.2f}", len(v)])
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"one-way latency (us), median of {a.reps}; veth MTU 9000")
    print(f"{'size':>8} {'portals':>9} {'raw AF_PACKET':>14} {'UDP':>8}")
    for s in LAT:
        cell = lambda k: f"{med[(k, s)]:.2f}" if (k, s) in med else "-"  # noqa
        print(f"{s:>8} {cell('ptl-lat'):>9} {cell('raw-lat'):>14} "
              f"{cell('udp-lat'):>8}")
    print(f"\nportals streaming bandwidth (MB/s), median of {a.reps}")
    for s in BW:
        print(f"{s:>9} {med[('ptl-bw', s)]:>9.1f}")
    print(f"\nCSV: {path}")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
