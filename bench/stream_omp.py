#!/usr/bin/env python3
"""Memory bandwidth of a node's threads (issue 17): the OpenMP triad
(bench/programs/stream_triad.c) on a Tern node and on a Linux node with the
same virtual hardware (memory, CPUs and their topology, accelerator), with
OMP_NUM_THREADS 1, 2 and 4, measured in the same run:

    python3 bench/stream_omp.py [--runs 5] [--threads 1,2,4] [--smp 4] [--mem 128M]
                                [--elements 2097152] [--reps 10] [--kvm] [--out DIR]

Each run boots a fresh node per system and thread count; Tern and Linux boots
alternate, so that a change in the host's load falls on both.  A run's
figure is the best of the program's --reps timed triads; the table gives the
median over --runs of it, Tern/Linux of the medians and the median of the
runs' own Tern/Linux (each run's two boots are next to each other).  The host's 1-minute load average
is recorded before every boot (system "host").  Writes DIR/stream.csv
(default bench/results/<date>/; the columns of bench/run_all.py's CSVs,
which runs this as `--only stream`).  The Linux side needs a Debian kernel
(`make linux-node`, or linux-image-amd64 in /boot); without it only Tern is
measured, and the table says so."""
import argparse
import csv
import datetime
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "qemu"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from ternlib import accel  # noqa: E402
from ternbench import linuxnode  # noqa: E402
from ternbench.runner import FIELDS, Run, load1  # noqa: E402

PROG = os.path.join(ROOT, "build", "bench", "stream_triad")


def parse(lines, threads, where):
    """The program's key-value lines; an error unless its check line says
    every element was right with the threads asked for."""
    kv = {}
    for line in lines:
        p = line.split()
        if len(p) == 2 and not line.startswith("#"):
            try:
                kv[p[0]] = float(p[1])
            except ValueError:
                pass
    if not any(line.startswith("triad check ok:") and line.endswith(f" {threads} threads")
               for line in lines):
        raise RuntimeError(f"stream_triad on {where}, {threads} threads: no check line:\n" +
                           "\n".join(lines[-20:]))
    return kv


def on_tern(threads, a):
    r = subprocess.run([os.path.join(ROOT, "qemu", "run-node"), f"--{a.accel}", "--mem", a.mem,
                        *(["--cpu", a.cpu] if a.cpu else []),
                        "--smp", str(a.smp), "-e", f"OMP_NUM_THREADS={threads}", PROG,
                        str(a.elements), str(a.triad_reps)],
                       capture_output=True, text=True, timeout=900)
    if r.returncode:
        raise RuntimeError(f"stream_triad on Tern failed ({r.returncode}): {r.stdout}{r.stderr}")
    return parse(r.stdout.splitlines(), threads, "Tern")


def on_linux(threads, a):
    lines = linuxnode.run_on_linux(PROG, [str(a.elements), str(a.triad_reps)], a.mem,
                                   accel.qemu_accel_args(a.accel, a.cpu), timeout=900, smp=a.smp,
                                   env=[f"OMP_NUM_THREADS={threads}"])
    return parse(lines, threads, "Linux")


def experiment(run, a):
    """Adds rows "stream" to `run`: triad_best (MB/s) per system and thread
    count, the node's CPUs as the program saw them, and the host load before
    each boot.  a: this script's settings (args())."""
    systems = {"tern": on_tern}
    if linuxnode.debian_kernel():
        systems["linux"] = on_linux
    else:
        run.log("stream: no Debian kernel (make linux-node): Tern only")
    samples = {}    # (system, threads) -> list of the program's key-values
    loads = {t: [] for t in a.threads}
    for i in range(a.runs):
        for t in a.threads:
            # Which system boots first alternates too: the host's load
            # drifts within a run (other work on its 2 cores).
            order = list(systems.items())
            for name, fn in order if i % 2 == 0 else order[::-1]:
                loads[t].append(load1())
                samples.setdefault((name, t), []).append(fn(t, a))
        run.log(f"stream: run {i + 1} of {a.runs} done, load {load1():.2f}")
    for (name, t), ss in samples.items():
        run.add("stream", name, "triad_best", t, "MBps", [s["triad_best_MBps"] for s in ss])
        run.add("stream", name, "triad_median_of_reps", t, "MBps",
                [s["triad_median_MBps"] for s in ss])
        run.add("stream", name, "cpus_seen", t, "", [s["cpus"] for s in ss])
    for t, ls in loads.items():
        run.add("stream", "host", "load_1min", t, "", ls)
    # Tern/Linux of each run's pair of boots, taken next to each other:
    # drift in the host's load between runs cancels out of these.
    for t in a.threads:
        if ("linux", t) in samples:
            run.add("stream", "paired", "triad_best_tern_over_linux", t, "",
                    [x["triad_best_MBps"] / y["triad_best_MBps"]
                     for x, y in zip(samples[("tern", t)], samples[("linux", t)])])


def args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="boots per system and thread count")
    ap.add_argument("--threads", default="1,2,4", help="OMP_NUM_THREADS values")
    ap.add_argument("--smp", type=int, default=4, help="CPUs of both nodes")
    ap.add_argument("--mem", default="128M", help="memory of both nodes")
    ap.add_argument("--elements", type=int, default=2097152,
                    help="doubles per array (3 arrays; default 48 MiB in all)")
    ap.add_argument("--reps", dest="triad_reps", type=int, default=10,
                    help="timed triads per run, the best counts")
    ap.add_argument("--kvm", dest="accel", action="store_const", const="kvm", default="tcg")
    ap.add_argument("--cpu", help="TCG CPU model of both nodes: max (default) or noavx")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    a.threads = [int(t) for t in a.threads.split(",")]
    a.out = a.out or os.path.join(ROOT, "bench", "results", datetime.date.today().isoformat())
    return a


def table(rows):
    """The figures as printed: MB/s per thread count, Tern/Linux, load."""
    by = {(r["system"], r["metric"], r["x"]): r for r in rows}
    ts = sorted({r["x"] for r in rows if r["metric"] == "triad_best"})
    out = ["| threads | Tern MB/s (min-max) | Linux MB/s (min-max) | Tern/Linux | "
           "paired Tern/Linux (min-max) | host load (1 min, min-max) |", "|---|---|---|---|---|---|"]
    span = lambda r, f: f"{r['median']:{f}} ({r['min']:{f}}-{r['max']:{f}})"  # noqa: E731
    for t in ts:
        tv, lv = by.get(("tern", "triad_best", t)), by.get(("linux", "triad_best", t))
        pr = by.get(("paired", "triad_best_tern_over_linux", t))
        ld = by.get(("host", "load_1min", t))
        out.append(f"| {t} | {span(tv, '.0f')} | " +
                   (f"{span(lv, '.0f')} | {tv['median'] / lv['median']:.2f} | "
                    f"{span(pr, '.2f')}" if lv and pr else "not measured | - | -") +
                   (f" | {ld['min']:.1f}-{ld['max']:.1f} |" if ld else " | - |"))
    return out


def main():
    a = args()
    if not os.path.exists(PROG):
        sys.exit(f"stream_omp: no {PROG}: run `make bench-programs`")
    os.makedirs(a.out, exist_ok=True)
    run = Run(a)
    run.log(f"stream: {a.smp} CPUs, {a.mem}, {a.accel}, {a.elements} doubles per array, "
            f"threads {a.threads}, {a.runs} runs, host {os.cpu_count()} CPUs, load {load1():.2f}")
    experiment(run, a)
    path = os.path.join(a.out, "stream.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(run.rows)
    print(f"\ntriad, best of {a.triad_reps} per run, median of {a.runs} runs "
          f"({a.accel}, {a.smp} CPUs, {a.mem}) -> {os.path.relpath(path, ROOT)}")
    print("\n".join(table(run.rows)))


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
