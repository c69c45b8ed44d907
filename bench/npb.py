"""Experiment 10: seed 003's NPB experiment (section 4.5, Figures 24 and 25)
on Tern against Linux + MPICH on identical nodes, in one run.

The NAS Parallel Benchmarks 3.4.1 (MPI), unmodified from
../shared/third-party/npb (bench/ternbench/npb.py builds them in
build/npb/), EP MG CG FT IS LU SP BT, on each node count (4, 8, 16 by
default; BT and SP on the squares 4, 9, 16): a Tern cluster and a Linux
cluster of the same size and memory are up together and every benchmark
runs on Tern, then on Linux, then the next (the system that goes first
swaps each repetition), so a shared host's load falls on both alike.
Rows: experiment "npb", system tern-mpi / linux-mpi, metric
"<BENCH>.<CLASS> time" (s, the benchmark's own "Time in seconds") and
"<BENCH>.<CLASS> Mop/s", x = ranks.  A run that does not verify, fails or
does not fit in the nodes' memory is counted as metric "<BENCH>.<CLASS>
failed".  MPICH on those nodes often hangs in MPI_Finalize after printing
its results (docs/linux-cluster.md): the printed results count, the job is
interrupted FINALIZE_GRACE s after them, and the hang is counted as
"<BENCH>.<CLASS> finalize_hang".

    python3 bench/run_all.py --only npb [--npb-class A] [--npb-nodes 4,8,16]
                             [--npb-bench ep,cg] [--npb-ppn 2] [--reps 3]

"btio" among the benchmarks is BT-IO, BT with NPB's SUBTYPE=full: MPI-IO
collective writes of the solution every 5 steps through subarray views,
read back for the verification.  Its file goes to a directory of the
service node's (build/npb/btio-<system>): on Tern through yod, on Linux over
NFS (the cluster exports build/npb).  Besides its time, metrics "BTIO.<CLASS>
I/O time" (s) and "I/O MB/s", as BT-IO prints them.

--npb-ppn K (issue 17): K ranks on each node of K CPUs, both systems (Tern:
yod -ppn K, a rank per core with memory of its own; Linux: mpiexec -ppn K);
--npb-nodes then counts ranks, and the metrics say "K/node" (e.g. "CG.A 2/node time").
"""
import os
import re
import subprocess
import time

from ternbench import jobs, npb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = os.path.join(ROOT, "qemu", "cluster")


def plan(benchmarks, counts):
    """(bench, ranks) pairs, each once: BT/SP on squares, CG FT IS MG on
    powers of two, EP LU on the count itself."""
    out = []
    for n in counts:
        for b in benchmarks:
            r = npb.ranks(b, n)
            if r and r >= 1 and (b, r) not in out:
                out.append((b, r))
    return out


def nodes_needed(benchmarks, counts):
    """The cluster size: the largest rank count of the plan (9 for BT and
    SP on 8 nodes)."""
    return max(r for _, r in plan(benchmarks, counts))


# A Linux run that has printed its results and then prints nothing for this
# long is taken to hang in MPI_Finalize and is interrupted (ternbench.jobs).
FINALIZE_GRACE = 30


def run_one(run, cl, name, system, bindir, bench, ranks, cls, timeout, ppn=1, wdir=None):
    """One run of bench on `ranks` ranks, ppn of them on each node (Tern:
    yod -ppn, a rank per core; Linux: hydra's -ppn, processes sharing the
    node's kernel), in the service node's directory wdir if given."""
    exe = npb.program(bindir, "bt", cls, "full") if bench == "btio" else \
        os.path.join(bindir, f"{bench}.{cls}.x")
    t0 = time.monotonic()
    hung = False
    if system == "tern":
        try:
            r = cl(name, "exec", *(("env", "-C", wdir) if wdir else ()), "yod", "-timeout",
                   str(timeout - 30), "-sz", str(ranks), "-ppn", str(ppn), exe,
                   timeout=timeout)
            out, err, rc = r.stdout, r.stderr, r.returncode
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else \
                (e.stdout or "")
            err, rc = "timeout", -1
    else:
        # NPB's report ends with the verification and the build's details.
        out, err, rc, hung = jobs.run_until_done(
            [CLUSTER, "--name", name, "mpiexec", *(("-wdir", wdir) if wdir else ()), "-n",
             str(ranks), "-ppn", str(ppn), exe],
            lambda o: re.search(r"Verification\s*=", o) is not None, timeout,
            grace=FINALIZE_GRACE, env=dict(os.environ, MPIEXEC_TIMEOUT=str(int(timeout * 0.8))))
    res = npb.parse(out)
    res["wall"] = time.monotonic() - t0
    res["rc"] = rc
    res["hung"] = hung
    if not res["verified"]:
        run.log(f"npb {system} {bench}.{cls} on {ranks}: not verified (rc {rc}): "
                f"{(out + err)[-600:]}")
    return res


def experiment(run, up, down, cl):
    a = run.a
    src = npb.source()
    if not src:
        raise RuntimeError("no ../shared/third-party/npb (TERN_THIRD_PARTY)")
    benchmarks = a.npb_bench
    counts = a.npb_nodes
    cls = a.npb_class
    scratch = os.path.join(ROOT, "build", "npb")
    os.makedirs(scratch, exist_ok=True)
    subprocess.run(["make", "-C", ROOT, "linux-node"], check=True, capture_output=True,
                   timeout=1800)
    bins, io_bins, wdirs = {}, {}, {}
    plain = [b for b in benchmarks if b != "btio"]
    for system in ("tern", "linux"):
        if plain:
            bins[system], secs = npb.build(src, scratch, system, plain, cls)
            run.add("npb", f"{system}-mpi", f"build class {cls}", len(plain), "s", [secs])
            run.log(f"npb: {len(plain)} benchmarks class {cls} built for {system} "
                    f"in {secs:.0f} s")
        if "btio" in benchmarks:
            io_bins[system], _ = npb.build(src, scratch, system, ["bt"], cls, subtype="full")
            wdirs[system] = os.path.join(scratch, f"btio-{system}")
            os.makedirs(wdirs[system], exist_ok=True)
    ppn = getattr(a, "npb_ppn", 1)
    n = -(-nodes_needed(benchmarks, counts) // ppn)
    per = f" {ppn}/node" if ppn > 1 else ""
    smp = ("--smp", str(ppn)) if ppn > 1 else ()
    run.log(f"npb: clusters of {n} nodes, {a.mem} each{per}, class {cls}")
    tname, _ = up(run, "tern", n, extra=smp)
    lname, _ = up(run, "linux", n, extra=("--nfs", scratch, *smp))
    timeout = a.npb_timeout
    try:
        for bench, ranks in plan(benchmarks, counts):
            res = {"tern": [], "linux": []}
            for rep in range(a.reps):
                order = ("tern", "linux") if rep % 2 == 0 else ("linux", "tern")
                for system in order:
                    io = bench == "btio"
                    res[system].append(run_one(run, cl, tname if system == "tern" else lname,
                                               system, (io_bins if io else bins)[system],
                                               bench, ranks, cls, timeout, ppn,
                                               wdir=wdirs[system] if io else None))
            for system, rs in res.items():
                sysname = f"{system}-mpi"
                ok = [r for r in rs if r["verified"] and r["time"]]
                run.add("npb", sysname, f"{bench.upper()}.{cls}{per} time", ranks, "s",
                        [r["time"] for r in ok])
                run.add("npb", sysname, f"{bench.upper()}.{cls}{per} Mop/s", ranks, "Mop/s",
                        [r["mops"] for r in ok])
                if bench == "btio":
                    run.add("npb", sysname, f"BTIO.{cls}{per} I/O time", ranks, "s",
                            [r["io_time"] for r in ok if r["io_time"] is not None])
                    run.add("npb", sysname, f"BTIO.{cls}{per} I/O MB/s", ranks, "MB/s",
                            [r["io_rate"] for r in ok if r["io_rate"] is not None])
                if len(ok) < len(rs):
                    run.add("npb", sysname, f"{bench.upper()}.{cls}{per} failed", ranks, "",
                            [len(rs) - len(ok)])
                hung = [r for r in ok if r["hung"] or r["rc"] != 0]
                if hung:
                    run.add("npb", sysname, f"{bench.upper()}.{cls}{per} finalize_hang", ranks,
                            "", [len(hung)])
            t = [r["time"] for r in res["tern"] if r["verified"] and r["time"]]
            lx = [r["time"] for r in res["linux"] if r["verified"] and r["time"]]
            run.log(f"npb {bench}.{cls} on {ranks}{per}: tern {t} linux {lx}")
    finally:
        down(run, tname)
        down(run, lname)
