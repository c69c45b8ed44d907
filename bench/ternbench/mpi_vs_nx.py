"""Experiment 1b (bench/run_all.py, step "mpinx"): Tern's MPI against NX,
one-way ping-pong latency at 0 and 8 bytes on the same two Tern nodes.  The
issue's goal is MPI's 0-byte latency within 10 % of NX's: both are layers
over the same message engine (libmsg), so what MPI adds per message is what
this measures.

Experiment 1 runs NX and MPI on the 16-node cluster with a ring job between
them; a host shared with other work (load moving by 2x within minutes here)
can then favour either.  Here one 2-node cluster runs NX (bench/nx/nxbench.c
lat) and MPI (bench/mpi/mpibench.c lat) jobs alternately, pair by pair, the
first of each pair changing every time, so both see the same load.  Every job
does its own warm-up (2000 round trips; --smoke: 20) and --reps timed
repetitions of --mpinx-iters round trips (1000: a repetition is long next to the host's scheduling slices); the
figures are medians over all repetitions of all jobs, and each pair's MPI/NX
ratio of its two jobs' medians (paired), whose median, min and max are kept
too.  The script prints the MPI/NX lines at the end of the step, with the
ratio of the two best repetitions beside them (the lower envelope: what is
left when the host's load took least).  On this 2-core host shared with
other work none of the three resolves 10 % above a load of about 5
(docs/performance.md, experiment 1b)."""
import statistics

from ternbench.runner import MPIBENCH, alternate, down, job, up

SIZES = (0, 8)
GOAL = 1.10  # the issue's: MPI 0-byte latency within 10 % of NX


def ratios(per_job, every):
    """per_job: {system: {size: [each job's median]}} in job order (pair k is
    entry k of both systems); every: {system: {size: [every repetition]}}.
    -> {size: {"mpi", "nx": medians of every repetition, "ratio": theirs,
    "paired": [each pair's MPI/NX], "best": MPI/NX of the best repetitions}}
    for the sizes both systems have."""
    out = {}
    for size in SIZES:
        mpi, nx = every["tern-mpi"].get(size, []), every["tern-nx"].get(size, [])
        if not mpi or not nx:
            continue
        mm, nm = statistics.median(mpi), statistics.median(nx)
        pairs = zip(per_job["tern-mpi"].get(size, []), per_job["tern-nx"].get(size, []))
        out[size] = {"mpi": mm, "nx": nm, "ratio": mm / nm if nm > 0 else None,
                     "paired": [m / n for m, n in pairs if n > 0],
                     "best": min(mpi) / min(nx) if min(nx) > 0 else None}
    return out


def report_lines(rs):
    """What the step prints: one line per size, then the goal's verdict for
    0 bytes.  The figures are this run's; the verdict is only that."""
    lines = []
    for size, r in sorted(rs.items()):
        p = r["paired"]
        pr = (f"paired {statistics.median(p):.2f} ({min(p):.2f}-{max(p):.2f}, {len(p)} pairs)"
              if p else "no pairs")
        lines.append(f"MPI/NX {size} B: MPI {r['mpi']:.1f} us, NX {r['nx']:.1f} us one-way "
                     f"(medians), MPI/NX {r['ratio']:.2f}, {pr}, best repetitions "
                     f"{r['best']:.2f}")
    if 0 in rs and rs[0]["ratio"] is not None:
        r = rs[0]["ratio"]
        lines.append(f"MPI/NX 0 B goal <= {GOAL:.2f}: {'met' if r <= GOAL else 'not met'} "
                     f"in this run ({r:.2f})")
    return lines


def experiment(run):
    a = run.a
    name, _ = up(run, "tern", 2)
    # Per-job medians, per system and size, in job order: pair k is
    # (values[...][size][k] of both systems).
    values = {"tern-nx": {}, "tern-mpi": {}}
    every = {"tern-nx": {}, "tern-mpi": {}}
    sizes = ",".join(map(str, SIZES))
    try:
        job(run, name, "tern", 2, "nxhello", timeout=300)     # the nodes' first job

        def measure(system):
            prog = MPIBENCH["tern"] if system == "tern-mpi" else "nxbench"
            return job(run, name, "tern", 2, prog, "lat", a.reps, a.mpinx_iters, sizes,
                       a.lat_warmup, timeout=600)[0]
        complete, failed = alternate(run, "mpinx", a.mpinx_pairs, ("tern-nx", "tern-mpi"),
                                     measure, SIZES)
        for got in complete:
            for system, by_size in got.items():
                for size, v in by_size.items():
                    values[system].setdefault(size, []).append(statistics.median(v))
                    every[system].setdefault(size, []).extend(v)
    finally:
        down(run, name)
    for system in values:
        for size in SIZES:
            run.add("mpinx", system, "oneway", size, "us", every[system].get(size, []))
        if failed[system]:
            run.add("mpinx", system, "failed_job", 2, "", [failed[system]])
    rs = ratios(values, every)
    for size, r in rs.items():
        run.add("mpinx", "tern-mpi", "paired_ratio_to_nx", size, "ratio", r["paired"])
    for line in report_lines(rs) or ["MPI/NX: no complete pair of jobs"]:
        run.log(line)
    if not rs:
        raise RuntimeError("mpinx: no pair of NX and MPI jobs completed")
