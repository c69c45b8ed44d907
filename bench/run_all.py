#!/usr/bin/env python3
"""Issue 8's experiments, Tern against Linux + MPICH on identical QEMU nodes,
measured in one run (`make bench`):

  1 latency   NX ping-pong (Tern: libnx over Portals, yod; Linux: libnx-mpi,
              mpiexec), MPI ping-pong (Tern's MPI, yod; MPICH, mpiexec:
              bench/mpi/mpibench.c), raw Portals between two Tern kernel nodes
  1b mpinx   Tern's MPI against NX: 0 and 8 B ping-pong on one 2-node Tern
              cluster, NX and MPI jobs alternating, MPI/NX printed
              (bench/ternbench/mpi_vs_nx.py; --mpinx-pairs)
  2 ring      NX and MPI ring bandwidth, 4 and 2 nodes; a one-way stream
              between 2 nodes (nxbench/mpibench stream), with raw Portals'
              (plbench-tern ptl-bw, step `portals`) beside it
  3 gsync     gsync (MPI_Barrier under libnx-mpi) against node count
  4 node      memcpy bandwidth, memory availability (bench/node.py)
  5 launch    `yod -sz N` against `mpiexec -n N` of a trivial NX program
  6 io        file write/read throughput, 1 to 16 nodes, each rank its own
              file (bench/fileio.py's program and figures): Tern through one
              fyod against Linux nodes writing to the service node over NFS
              (NFS-Ganesha, `qemu/cluster up --nfs`)
  7 noise     fixed-work-quantum loop (bench/node.py)
  8 boot      single-node boot (bench/boot_time.py), cluster `up` to ready,
              kernel footprint
  9 floor     frames bounced off a nettest=echo node (bench/floor/floorping.c);
              the 4-node ring's and each gsync's own floor (nettest=echo -- NEXT,
              nettest=barrier: kernel/net/)
  9b latfloor NX and raw Portals 0 and 8 B one-way latency against the
              fabric floor, paired: experiment 9's echo node and a 2-node
              Tern cluster up together, floorping bursts, NX jobs and a
              plbench-tern pair on the echo node's bridge alternating
              (bench/ternbench/lat_floor.py; --mpinx-pairs, --mpinx-iters)
 10 npb       the NAS Parallel Benchmarks 3.4.1 (MPI), seed 003's section 4.5:
              EP MG CG FT IS LU SP BT on 4, 8, 16 nodes (BT, SP: 9, 16),
              class A (--npb-class), Tern and Linux jobs alternating
              (bench/npb.py); --npb-bench btio: BT-IO (MPI-IO) as BT
 11 stream    OpenMP triad (STREAM-like) on one node of 4 CPUs, 1, 2 and 4
              threads (bench/stream_omp.py); not part of --smoke's default
 12 ppn       NX latency and 2-rank ring bandwidth between two ranks of one
              node (yod -ppn 2) against two ranks on two nodes, one cluster of
              two 2-CPU nodes, launches alternating (bench/ternbench/ppn_exp.py)

    python3 bench/run_all.py [--reps 5] [--nodes 2,4,8,16] [--only EXP,...]
                             [--io-nodes 1,4,16] [--io-mib 8] [--io-blocks 1048576]
                             [--npb-class A] [--npb-nodes 4,8,16] [--npb-bench ep,cg,...]
                             [--out DIR] [--smoke]

--smoke: one size, two nodes (io: one), one repetition (CI:
tests/test_bench_smoke.py).
Writes DIR (default bench/results/<date>/, smoke: build/bench-smoke/) with one
CSV per experiment (columns experiment, system, metric, x, unit, median, min,
max, reps), host.csv, summary.md and plots (bench/ternbench/report.py).
Every cluster started here is taken down, also on failure or Ctrl-C.  Needs
root (network namespaces, taps)."""
import argparse
import csv
import datetime
import os
import platform
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "qemu"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from ternlib import accel  # noqa: E402
from ternbench.runner import FIELDS, Run, cl, down, up  # noqa: E402
from ternbench.cluster_exps import frames, io, launch_step, network  # noqa: E402
from ternbench import lat_floor, mpi_vs_nx, ppn_exp  # noqa: E402
from ternbench.node_exps import boot_pxe, boot_single, floor, raw_portals, single_node  # noqa: E402,E501
import npb as npb_exp  # noqa: E402  (bench/npb.py: experiment 10)
import stream_omp  # noqa: E402  (bench/stream_omp.py: experiment 11)


# ---- the run --------------------------------------------------------------

def host_info(a):
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    kvm_note = ""
    if a.accel == "kvm":
        kvm_note = f"kvm (emulates ring 0: {accel.kvm_emulates_kernel_mode()})"
    return {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "host": platform.node(), "nproc": os.cpu_count(), "cpu": cpu,
            "loadavg_start": " ".join(open("/proc/loadavg").read().split()[:3]),
            "accel": kvm_note or a.accel, "node_cpu": a.cpu or "max", "mem": a.mem,
            "node_mem": a.node_mem,
            "reps": a.reps, "smoke": a.smoke,
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                     capture_output=True, text=True).stdout.strip()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--nodes", help="gsync/launch node counts (default 2,4,8,16)")
    ap.add_argument("--only", help="comma-separated: network,mpinx,latfloor,launch,io,portals,floor,"
                    "frames,node,boot,pxe,npb,stream,ppn; network, launch, io and pxe also as "
                    "tern-X or linux-X")
    ap.add_argument("--accel", choices=["tcg", "kvm"], default="tcg")
    ap.add_argument("--cpu", help="TCG nodes' CPU, both OSes, clusters and single nodes "
                                  "(qemu/cluster up --cpu, qemu/run-node --cpu): max (default) "
                                  "or noavx")
    ap.add_argument("--mem", default="256M", help="memory of cluster nodes (both OSes)")
    ap.add_argument("--node-mem", default="128M",
                    help="memory of single-node runs (Debian's kernel needs more than 64M)")
    ap.add_argument("--mpinx-pairs", type=int,
                    help="experiments 1b and 9b: pairs of jobs (default --reps; smoke 2)")
    ap.add_argument("--mpinx-iters", type=int,
                    help="experiments 1b and 9b: round trips per repetition (default 1000; smoke 50)")
    ap.add_argument("--io-nodes", help="node counts of experiment 6 (default 1,4,16)")
    ap.add_argument("--io-mib", type=int, default=8, help="experiment 6: MiB each rank writes")
    ap.add_argument("--io-blocks", help="experiment 6: write/read sizes (default 1048576)")
    ap.add_argument("--npb-class", default="A", help="experiment 10: NPB class (S, W, A, B)")
    ap.add_argument("--npb-nodes", help="experiment 10: node counts (default 4,8,16)")
    ap.add_argument("--npb-bench", help="experiment 10: benchmarks (default the eight; "
                    "btio: BT-IO full)")
    ap.add_argument("--npb-ppn", type=int, default=1,
                    help="experiment 10: ranks per node, nodes of that many CPUs (both OSes)")
    ap.add_argument("--npb-timeout", type=int, default=3600,
                    help="experiment 10: seconds one benchmark run may take")
    ap.add_argument("--out")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run_all: needs root (network namespaces, taps)")
    if a.smoke:
        a.reps = a.reps or 1
        a.nodes = [2]
        a.lat_sizes, a.ring_sizes, a.stream_sizes = [8], [4096], [65536]
        a.iters, a.ring_bytes, a.gsync_iters, a.floor_frames = 20, 1 << 16, 20, 200
        a.stream_bytes = 1 << 18
        # The ping-pongs' warm-up (nxbench/mpibench lat WARMUP): 2000 round
        # trips are 10-30 s a job on loaded Linux nodes under TCG.
        a.lat_warmup = 20
        a.io_nodes = [int(x) for x in (a.io_nodes or "1").split(",")]
        # A Linux job that printed "E done" and then nothing for this long is
        # taken to hang in MPI_Finalize and interrupted (ternbench/jobs.py):
        # 30 s tells a slow finalize from a hang for the figures; the smoke
        # keeps the printed results either way and needs no such figure.
        a.finalize_grace = 10
        default_only = "network,launch,io,portals,floor,node,ppn"
    else:
        a.reps = a.reps or 5
        a.nodes = [int(x) for x in (a.nodes or "2,4,8,16").split(",")]
        a.lat_sizes = [0, 8, 64, 512, 1024, 4096, 16384, 65536]
        a.ring_sizes = [8, 64, 512, 4096, 65536, 1 << 20, 8 << 20]
        a.stream_sizes = [4096, 65536, 1 << 20, 8 << 20]
        a.iters, a.ring_bytes, a.gsync_iters, a.floor_frames = 100, 4 << 20, 20, 2000
        a.stream_bytes = 16 << 20
        a.lat_warmup = 2000
        a.io_nodes = [int(x) for x in (a.io_nodes or "1,4,16").split(",")]
        a.finalize_grace = 30
        default_only = ("network,mpinx,latfloor,launch,io,portals,floor,frames,node,boot,pxe,npb,"
                        "stream,ppn")
    a.mpinx_pairs = a.mpinx_pairs or (2 if a.smoke else a.reps)
    a.mpinx_iters = a.mpinx_iters or (50 if a.smoke else 1000)
    a.io_blocks = [int(x) for x in (a.io_blocks or "1048576").split(",")]
    a.npb_nodes = [int(x) for x in (a.npb_nodes or "4,8,16").split(",")]
    a.npb_bench = (a.npb_bench or ",".join(npb_exp.npb.EIGHT)).lower().split(",")
    only = set((a.only or default_only).split(","))
    a.out = a.out or (os.path.join(ROOT, "build", "bench-smoke") if a.smoke else
                      os.path.join(ROOT, "bench", "results", datetime.date.today().isoformat()))
    os.makedirs(a.out, exist_ok=True)
    if not a.only:      # a whole run replaces this script's earlier files
        from ternbench import report
        for f in [f"{e}.csv" for e in report.ORDER] + ["summary.md", "host.csv"] + \
                [f"{p}.png" for p in ("latency", "ring", "gsync", "launch", "npb")]:
            if os.path.exists(os.path.join(a.out, f)):
                os.remove(os.path.join(a.out, f))
    run = Run(a)
    host = host_info(a)
    host_csv = os.path.join(a.out, "host.csv")
    if a.only and os.path.exists(host_csv):
        # A partial run adds to an earlier whole one: its host line joins
        # the earlier ones, its experiments replace theirs.
        with open(host_csv) as f:
            earlier = dict(list(csv.reader(f))[1:])
        earlier[f"rerun {a.only}"] = (f"{host['date']}, load {host['loadavg_start']}, "
                                      f"commit {host['commit']}")
        host = earlier
    write_host(host_csv, host)
    run.log(f"host {host['cpu']} x{host['nproc']}, load {host['loadavg_start']}, "
            f"{host['accel']}, out {a.out}")

    failed = []
    steps = [("floor", floor), ("portals", raw_portals), ("frames", frames),
             ("tern-network", lambda r: network(r, "tern")),
             ("linux-network", lambda r: network(r, "linux")),
             ("mpinx", mpi_vs_nx.experiment),
             ("latfloor", lat_floor.experiment),
             ("tern-launch", lambda r: launch_step(r, "tern")),
             ("linux-launch", lambda r: launch_step(r, "linux")),
             ("io", lambda r: io(r, [s for s in ("tern", "linux")
                                     if "io" in only or f"{s}-io" in only])),
             ("node", single_node), ("boot", boot_single),
             ("tern-pxe", lambda r: boot_pxe(r, "tern", 1)),
             ("linux-pxe", lambda r: boot_pxe(r, "linux", 1)),
             ("tern-pxe", lambda r: boot_pxe(r, "tern", max(r.a.nodes))),
             ("npb", lambda r: npb_exp.experiment(r, up, down, cl)),
             ("stream", stream_step),
             ("ppn", ppn_exp.experiment)]
    try:
        for key, fn in steps:
            if key not in only and key.split("-")[-1] not in only and \
                    not any(k.endswith("-" + key) for k in only):
                continue      # "network" names both tern-network and linux-network;
                # "tern-io" selects step "io" with Tern alone
            try:
                fn(run)
            except Exception as e:  # noqa: BLE001 (one experiment failing leaves the others)
                failed.append(f"{key}: {str(e)[:300]}")
                run.log(f"FAILED {key}: {str(e)[:2000]}")
    finally:
        for name in list(run.clusters):
            run.log(f"taking down {name}")
            down(run, name)
        # The load at the end too: a 2-core host shared with other work can
        # change a great deal during a run.
        end = " ".join(open("/proc/loadavg").read().split()[:3])
        rerun = f"rerun {a.only}"
        if rerun in host:
            host[rerun] += f", load at end {end}"
        else:
            host["loadavg_end"] = end
        write_host(host_csv, host)
        write(run, host, failed)
    sys.exit(1 if failed else 0)


def stream_step(run):
    """Experiment 11 with this run's repetitions, single-node memory and
    accelerator; --smoke: small arrays, 1 and 2 threads, one run."""
    a = run.a
    argv = ["--runs", str(a.reps), "--mem", a.node_mem, "--out", a.out]
    if a.accel == "kvm":
        argv.append("--kvm")
    if a.cpu:
        argv += ["--cpu", a.cpu]
    if a.smoke:
        argv += ["--threads", "1,2", "--elements", "65536", "--reps", "2"]
    stream_omp.experiment(run, stream_omp.args(argv))


def write_host(path, host):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["key", "value"])
        w.writerows(host.items())


def write(run, host, failed):
    from ternbench import report
    rows = run.rows
    if run.a.only:
        fresh = {(r["experiment"], r["system"]) for r in rows}
        rows = [r for r in report.rows_from(run.a.out)
                if (r["experiment"], r["system"]) not in fresh] + rows
    by_exp = {}
    for r in rows:
        by_exp.setdefault(r["experiment"], []).append(r)
    for exp, exp_rows in by_exp.items():
        with open(os.path.join(run.a.out, f"{exp}.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(exp_rows)
    try:
        report.plots_anywhere(run.a.out, rows)
    except (ImportError, subprocess.SubprocessError):
        run.log("no matplotlib (bench/install-deps): plots left out")
    report.summary(run.a.out, rows, host, failed)
    run.log(f"written to {run.a.out}")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
