"""Experiment 12 (issue 17): NX between two ranks of one node against two
ranks on two nodes, measured in the same run on one Tern cluster of two
2-CPU nodes, launches alternating so that the host's load drifts over both
alike.

- intra: `yod -sz 2 -ppn 2`, both ranks on one node: frames go through the
  node's loop (docs/kernel.md, "Ranks per core"), each payload copied once,
  from the sender's buffer into the matched one; no NIC.
- inter: `yod -sz 2 -ppn 1`, one rank per node: virtio-net and the virtual fabric.

REPS pairs of launches of nxbench lat (one-way us, 3 batches of ITERS round
trips per size), then REPS pairs of nxbench ring (2 ranks: each sends to the
other while receiving from it, MB/s each rank sends), each pair's first
launch alternating (runner.alternate).  Rows: system tern-intra /
tern-inter, metrics lat (us) and ring (MBps) by size, from the pairs whose
both launches gave every size; host load_1min before each launch; paired:
intra/inter of each pair, medians of their batches."""
import statistics

from .runner import alternate, down, job, load1, up

SYSTEMS = {"tern-intra": ("-ppn", "2"), "tern-inter": ("-ppn", "1")}


def experiment(run):
    a = run.a
    tests = {  # metric -> (nxbench mode, its arguments, sizes, unit)
        "lat": ("lat", (3, a.iters), [8] if a.smoke else [0, 8, 1024, 65536], "us"),
        "ring": ("ring", (3, a.ring_bytes), [65536] if a.smoke else [4096, 65536, 1 << 20],
                 "MBps"),
    }
    name, _ = up(run, "tern", 2, extra=("--smp", "2"))
    loads = []
    try:
        for metric, (mode, args, sizes, unit) in tests.items():
            extra = (a.lat_warmup,) if mode == "lat" else ()

            def measure(system):
                loads.append(load1())
                return job(run, name, "tern", 2, "nxbench", mode, *args,
                           ",".join(map(str, sizes)), *extra, yod_opts=SYSTEMS[system])[0]
            complete, failed = alternate(run, f"ppn {metric}", a.reps, tuple(SYSTEMS), measure,
                                         sizes)
            for system in SYSTEMS:
                for size in sizes:
                    run.add("ppn", system, metric, size, unit,
                            [v for got in complete for v in got[system][size]])
                if failed[system]:
                    run.add("ppn", system, f"{metric}_failed_job", 2, "", [failed[system]])
            for size in sizes:
                run.add("ppn", "paired", f"{metric}_intra_over_inter", size, "",
                        [statistics.median(got["tern-intra"][size]) /
                         statistics.median(got["tern-inter"][size]) for got in complete])
            run.log(f"ppn {metric}: {len(complete)} of {a.reps} pairs complete, "
                    f"load {load1():.2f}")
    finally:
        down(run, name)
    run.add("ppn", "host", "load_1min", "", "", loads)
