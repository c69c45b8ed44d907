"""Experiment 12 (issue 17): NX between two ranks of one node against two
ranks on two nodes, measured in the same run on one Tern cluster of two
2-CPU nodes, launches alternating so that the host's load drifts over both
alike.

- intra: `yod -sz 2 -ppn 2`, both ranks on one node: frames go through the
  node's loop (docs/kernel.md, "Ranks per core"), each payload copied once,
  from the sender's buffer into the matched one; no NIC.
- inter: `yod -sz 2 -ppn 1`, one rank per node: virtio-net and the virtual fabric.

Each launch runs nxbench lat (one-way us, REPS batches of ITERS round trips
per size) and nxbench ring (2 ranks: each sends to the other while receiving
from it, MB/s each rank sends).  Rows: system tern-intra / tern-inter,
metrics lat (us) and ring (MBps) by size; host load_1min before each launch;
paired: intra/inter of each pair of adjacent launches, medians of their
batches."""
import statistics

from .runner import down, job, parse_r, up

SYSTEMS = {"tern-intra": ("-ppn", "2"), "tern-inter": ("-ppn", "1")}


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def experiment(run):
    a = run.a
    lat_sizes = [8] if a.smoke else [0, 8, 1024, 65536]
    ring_sizes = [65536] if a.smoke else [4096, 65536, 1 << 20]
    iters = a.iters
    name, _ = up(run, "tern", 2, extra=("--smp", "2"))
    got = {s: {} for s in SYSTEMS}      # system -> (kind, size) -> [values]
    paired = {}                         # (kind, size) -> [intra/inter]
    loads = []
    try:
        for i in range(a.reps):
            mine = {}
            order = list(SYSTEMS.items())
            for system, opts in order if i % 2 == 0 else order[::-1]:
                loads.append(load1())
                out, _, _ = job(run, name, "tern", 2, "nxbench", "lat", 3, iters,
                                ",".join(map(str, lat_sizes)), a.lat_warmup, yod_opts=opts)
                r = parse_r(out)
                out, _, _ = job(run, name, "tern", 2, "nxbench", "ring", 3, a.ring_bytes,
                                ",".join(map(str, ring_sizes)), yod_opts=opts)
                r.update(parse_r(out))
                mine[system] = r
                for key, vs in r.items():
                    got[system].setdefault(key, []).extend(vs)
            for key, vs in mine["tern-intra"].items():
                other = mine["tern-inter"].get(key)
                if other:
                    paired.setdefault(key, []).append(
                        statistics.median(vs) / statistics.median(other))
            run.log(f"ppn: launch pair {i + 1} of {a.reps} done, load {load1():.2f}")
    finally:
        down(run, name)
    units = {"nx-lat": ("lat", "us"), "nx-ring2": ("ring", "MBps")}
    for system, by in got.items():
        for (kind, size), vs in by.items():
            metric, unit = units.get(kind, (kind, ""))
            run.add("ppn", system, metric, size, unit, vs)
    for (kind, size), vs in paired.items():
        metric, _ = units.get(kind, (kind, ""))
        run.add("ppn", "paired", metric + "_intra_over_inter", size, "", vs)
    run.add("ppn", "host", "load_1min", "", "", loads)
