#!/usr/bin/env python3
"""Issue 8's experiments, Tern against Linux + MPICH on identical QEMU nodes,
measured in one run (`make bench`):

  1 latency   NX ping-pong (Tern: libnx over Portals, yod; Linux: libnx-mpi,
              mpiexec), MPI ping-pong (Tern's MPI, yod; MPICH, mpiexec:
              bench/mpi/mpibench.c), raw Portals between two Tern kernel nodes
  2 ring      NX and MPI ring (streaming) bandwidth, 4 nodes
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
  9 floor     frames bounced off a nettest=echo node (bench/floor/floorping.c)
 10 npb       the NAS Parallel Benchmarks 3.4.1 (MPI), seed 003's section 4.5:
              EP MG CG FT IS LU SP BT on 4, 8, 16 nodes (BT, SP: 9, 16),
              class A (--npb-class), Tern and Linux jobs alternating
              (bench/npb.py)

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
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "qemu"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from ternlib import accel  # noqa: E402
from ternbench import jobs  # noqa: E402
import npb as npb_exp  # noqa: E402  (bench/npb.py: experiment 10)

CLUSTER = os.path.join(ROOT, "qemu", "cluster")
B = lambda *p: os.path.join(ROOT, "build", *p)  # noqa: E731
FIELDS = ["experiment", "system", "metric", "x", "unit", "median", "min", "max", "reps"]


class Run:
    """Settings of this run and the rows measured so far."""

    def __init__(self, a):
        self.a = a
        self.rows = []
        self.clusters = []
        self.t0 = time.monotonic()

    def add(self, exp, system, metric, x, unit, values):
        values = [v for v in values if v is not None]
        if not values:
            return
        self.rows.append({"experiment": exp, "system": system, "metric": metric, "x": x,
                          "unit": unit, "median": round(statistics.median(values), 3),
                          "min": round(min(values), 3), "max": round(max(values), 3),
                          "reps": len(values)})

    def log(self, msg):
        print(f"[{time.monotonic() - self.t0:6.0f} s] {msg}", flush=True)


def parse_r(text):
    """nxbench / plbench lines `R kind size unit value` -> {(kind, size): [values]}."""
    out = {}
    for line in text.splitlines():
        p = line.split()
        if len(p) >= 5 and p[0] == "R":
            try:
                out.setdefault((p[1], int(p[2])), []).append(float(p[-1]))
            except ValueError:
                pass
    return out


# ---- clusters -------------------------------------------------------------

def cl(name, *args, timeout=600):
    env = dict(os.environ, MPIEXEC_TIMEOUT=str(int(timeout * 0.8)))
    return subprocess.run([CLUSTER, "--name", name, *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def up(run, os_name, n, boot="direct", extra=()):
    """Boots a cluster; returns (name, seconds from `up` to every node ready)."""
    name = "bn" + os_name[0] + uuid.uuid4().hex[:6]
    run.clusters.append(name)
    t0 = time.monotonic()
    r = cl(name, "up", "-n", str(n), "--os", os_name, "--boot", boot, "--mem", run.a.mem,
           f"--{run.a.accel}", *extra, timeout=900)
    secs = time.monotonic() - t0
    if r.returncode:
        raise RuntimeError(f"{os_name} cluster of {n} did not come up:\n{r.stdout}{r.stderr}")
    return name, secs


def down(run, name):
    cl(name, "down", timeout=300)
    if name in run.clusters:
        run.clusters.remove(name)


# The MPI benchmark's builds (the NX programs' are build/nx-tern, build/nx-mpi).
MPIBENCH = {"tern": B("mpi-tern", "mpibench"), "linux": B("linux-node", "bin", "mpibench")}


def job(run, name, os_name, n, prog, *args, timeout=900, yod_opts=(), until_done=None):
    """Runs `prog` (an NX program's name, or a path) on n nodes (yod on
    Tern, mpiexec on Linux); returns (stdout, stderr, wall seconds).
    until_done = (experiment, system) for nxbench and mpibench: a Linux job
    still running 30 s after the program printed "E done" (MPICH hanging in
    MPI_Finalize) is stopped, its output counts and the hang is recorded as
    that experiment's and system's metric finalize_hang."""
    t0 = time.monotonic()
    if os_name == "tern":
        path = prog if os.path.isabs(prog) else B("nx-tern", prog)
        r = cl(name, "exec", "yod", *yod_opts, "-timeout", str(timeout - 30), "-sz", str(n),
               path, *map(str, args), timeout=timeout)
        out, err, rc = r.stdout, r.stderr, r.returncode
    else:
        path = prog if os.path.isabs(prog) else B("nx-mpi", prog)
        argv = [CLUSTER, "--name", name, "mpiexec", "-n", str(n), path, *map(str, args)]
        if until_done:
            out, err, rc, hung = jobs.run_until_done(
                argv, lambda o: "E done" in o, timeout,
                env=dict(os.environ, MPIEXEC_TIMEOUT=str(int(timeout * 0.8))))
            if hung:
                run.add(*until_done, "finalize_hang", n, "", [1])
                run.log(f"{os_name}: {os.path.basename(path)} {args[:1]} on {n} done but "
                        f"hung in MPI_Finalize; stopped")
                rc = 0
        else:
            r = cl(name, "mpiexec", "-n", str(n), path, *map(str, args), timeout=timeout)
            out, err, rc = r.stdout, r.stderr, r.returncode
    secs = time.monotonic() - t0
    if rc:
        raise JobFailed(f"{prog} {args} on {n} {os_name} nodes failed ({rc}):\n"
                        f"{out[-2000:]}{err[-2000:]}", out)
    return out, err, secs


class JobFailed(RuntimeError):
    """A benchmark job that failed or ran out of time; .stdout keeps what it
    printed, whose complete result lines still count."""

    def __init__(self, msg, stdout=""):
        super().__init__(msg)
        self.stdout = stdout


def measured(run, name, os_name, n, what, *args, timeout=900, mpi=False):
    """stdout of an nxbench (mpi: mpibench) job; if the job fails after
    printing results (seen: mpiexec hitting its time limit in MPI_Finalize
    after the last line), the lines it printed, and the failure is
    recorded."""
    prog = MPIBENCH[os_name] if mpi else "nxbench"
    exp, system = {"lat": "latency"}.get(what, what), (MPI_SYSTEM if mpi else SYSTEM)[os_name]
    try:
        return job(run, name, os_name, n, prog, what, *args, timeout=timeout,
                   until_done=(exp, system))[0]
    except (JobFailed, subprocess.TimeoutExpired) as e:
        out = getattr(e, "stdout", "") or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        run.add(exp, system, "failed_job", n, "", [1])
        run.log(f"{os_name}: {os.path.basename(prog)} {what} on {n} failed; keeping its "
                f"{len(parse_r(out))} complete results: {str(e)[:300]}")
        return out


YOD_TIMING = re.compile(r"loaded in ([\d.]+) ms, ran ([\d.]+) ms, ([\d.]+) ms in all")


def launch(run, name, os_name, counts):
    """Experiment 5: wall time of `qemu/cluster exec yod -sz N` and of
    `qemu/cluster mpiexec -n N` for nxhello; both go through the same
    namespace wrapper, whose own cost (`exec true`) is measured and taken
    off (metric trivial_job_net).  yod -v's own figure is kept as well."""
    a = run.a
    base = []
    for _ in range(a.reps):
        t0 = time.monotonic()
        cl(name, "exec", "true", timeout=120)
        base.append((time.monotonic() - t0) * 1000)
    b = statistics.median(base)
    system = "tern-yod" if os_name == "tern" else "linux-mpiexec"
    run.add("launch", system, "wrapper_exec_true", counts[0], "ms", base)
    any_failed = False
    for n in counts:
        wall, own, failed = [], [], 0
        for _ in range(a.reps):
            try:
                _, err, secs = job(run, name, os_name, n, "nxhello", timeout=180,
                                   yod_opts=("-v",) if os_name == "tern" else ())
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                failed += 1
                run.log(f"{os_name}: launch on {n} failed: {str(e)[:300]}")
                continue
            wall.append(secs * 1000)
            m = YOD_TIMING.search(err)
            if m:
                own.append(float(m.group(3)))
            if secs > 60:
                run.log(f"{os_name}: launch on {n} took {secs:.0f} s: one sample only")
                break
        run.add("launch", system, "trivial_job_wall", n, "ms", wall)
        run.add("launch", system, "trivial_job_net", n, "ms", [w - b for w in wall])
        if own:
            run.add("launch", system, "yod_v_total", n, "ms", own)
        if failed:
            run.add("launch", system, "failed_jobs", n, "", [failed])
            any_failed = True
    if os_name == "tern" and max(counts) == max(a.nodes):
        # After each job a Tern node zeroes its whole application region
        # before it is free again: what that costs (node 1's console).
        con = cl(name, "console", "1", timeout=60).stdout
        clean = [float(x) for x in re.findall(r"node cleaned in (\d+) ms", con)]
        run.add("launch", system, "node_clean_after_job", a.mem, "ms", clean)
    return any_failed


SYSTEM = {"tern": "tern-nx", "linux": "linux-mpich"}
MPI_SYSTEM = {"tern": "tern-mpi", "linux": "linux-mpi"}


def warm_up(run, name, os_name, n):
    """Warm-up, and a Linux node's first MPI_Init right after `up` can find
    no route to its peer (UCX): a few tries before measuring."""
    for attempt in range(4):
        try:
            job(run, name, os_name, n, "nxhello", timeout=300,
                until_done=("launch", SYSTEM[os_name]))
            return
        except (RuntimeError, subprocess.TimeoutExpired):
            if attempt == 3:
                raise
            time.sleep(3)


def network(run, os_name):
    """Experiments 1, 2, 3, 5 and the cluster part of 8 on one cluster of
    max(nodes) nodes of `os_name`."""
    a, sysname = run.a, SYSTEM[os_name]
    nmax = max(a.nodes)
    run.log(f"{os_name}: up -n {nmax}")
    name, secs = up(run, os_name, nmax)
    run.add("boot", os_name, "cluster_up_direct", nmax, "s", [secs])
    try:
        warm_up(run, name, os_name, 2)
        # NX, then MPI (the same ping-pong and ring in MPI calls), back to
        # back on the same nodes: their ratio is of one run.
        for mpi in (False, True):
            s = MPI_SYSTEM[os_name] if mpi else sysname
            out = measured(run, name, os_name, 2, "lat", a.reps, a.iters,
                           ",".join(map(str, a.lat_sizes)), mpi=mpi)
            for (kind, size), v in parse_r(out).items():
                run.add("latency", s, "oneway", size, "us", v)
            run.log(f"{os_name}: {s} latency done")
            if nmax >= 4 or a.smoke:
                rn = 4 if nmax >= 4 else 2
                out = measured(run, name, os_name, rn, "ring", a.reps, a.ring_bytes,
                               ",".join(map(str, a.ring_sizes)), mpi=mpi)
                for (kind, size), v in parse_r(out).items():
                    run.add("ring", s, f"per_node_{rn}nodes", size, "MBps", v)
                run.log(f"{os_name}: {s} ring done")
        for n in a.nodes:
            if n < 2:
                continue
            # A failure is recorded and the other counts are still tried:
            # Linux + MPICH jobs here often print every result and then do
            # not end (MPI_Finalize) before mpiexec's limit.
            out = measured(run, name, os_name, n, "gsync", a.reps, a.gsync_iters, timeout=300)
            for (kind, size), v in parse_r(out).items():
                run.add("gsync", sysname, "gsync", size, "us", v)
        run.log(f"{os_name}: gsync done")
    finally:
        down(run, name)


def launch_step(run, os_name):
    """Experiment 5 on a fresh cluster of its own: a job that fails can
    leave Tern nodes unusable for the next ones (seen 2026-11-21: after a
    killed job, every later job failed in PtlEQAlloc), so after a failure
    the cluster is booted again for the next node count."""
    nmax = max(run.a.nodes)
    name = None
    try:
        for n in sorted({1, *run.a.nodes}):
            if name is None:
                name, _ = up(run, os_name, nmax)
                warm_up(run, name, os_name, 2)
            if launch(run, name, os_name, [n]):
                down(run, name)
                name = None
        run.log(f"{os_name}: launch done")
    finally:
        if name:
            down(run, name)


def tap_counters(name):
    """Frames and bytes the nodes sent (the taps' rx), summed over nodes."""
    r = cl(name, "exec", "sh", "-c",
           "for t in /sys/class/net/tap*; do echo $(cat $t/statistics/rx_packets) "
           "$(cat $t/statistics/rx_bytes); done", timeout=60)
    pk = by = 0
    for line in r.stdout.split("\n"):
        p = line.split()
        if len(p) == 2:
            pk, by = pk + int(p[0]), by + int(p[1])
    return pk, by


def frames(run):
    """Why bandwidth differs: the frames the nodes put on the bridge during a
    2-node ring of 1 MiB messages (bytes per frame, frames per MB of
    payload), read from the taps' counters around the job."""
    for os_name in ("tern", "linux"):
        name, _ = up(run, os_name, 2)
        try:
            for attempt in range(4):
                try:
                    job(run, name, os_name, 2, "nxhello", timeout=300)
                    break
                except RuntimeError:
                    if attempt == 3:
                        raise
                    time.sleep(3)
            p0, b0 = tap_counters(name)
            out, _, _ = job(run, name, os_name, 2, "nxbench", "ring", 1, 8 << 20, 1 << 20)
            p1, b1 = tap_counters(name)
            # nxbench: 8 iterations x 2 reps (warm-up + 1) x 2 nodes x 1 MiB
            payload = 8 * 2 * 2 * (1 << 20)
            run.add("frames", SYSTEM[os_name], "bytes_per_frame", 1 << 20, "B",
                    [(b1 - b0) / max(1, p1 - p0)])
            run.add("frames", SYSTEM[os_name], "frames_per_MB_payload", 1 << 20, "",
                    [(p1 - p0) / (payload / 1e6)])
        finally:
            down(run, name)
    run.log("frames done")


def io(run, systems):
    """Experiment 6: every rank writes its own file of --io-mib MiB in
    BLOCK-byte write() calls, closes it and reads it back (fileio-musl, the
    same static program on both systems); aggregate MB/s = all bytes / the
    slowest rank's time (bench/fileio.py).  Tern: yod, the calls forwarded to
    one fyod.  Linux: mpiexec, one rank per node, into the directory the
    service node exports by NFSv3 (`up --nfs`), reads cold (the node's cached
    copy dropped first).  fyod's root and the export are under /tmp alike.

    Both clusters are up together (idle nodes of either OS cost the host
    next to nothing) and their jobs alternate, repetition by repetition, the
    first system changing each time: on a host shared with other work both
    see the same load.  One warm-up job each first, not counted."""
    import fileio
    from ternbench import report
    a = run.a
    label = {"tern": "tern-fyod", "linux": "linux-nfs"}
    fn = {"tern": fileio.run_tern, "linux": fileio.run_linux}
    tops, names, path = {}, {}, {}
    fy = log = None
    try:
        for os_name in systems:
            tops[os_name] = top = tempfile.mkdtemp(prefix=f"io-{os_name}-", dir="/tmp")
            if os_name == "tern":
                names[os_name], _ = up(run, os_name, max(a.io_nodes))
                log = open(top + "-fyod.log", "w")
                fy = fileio.start_fyod(names[os_name], top, "/io", log)
                path[os_name] = "/io/f.%r"
            else:
                names[os_name], _ = up(run, os_name, max(a.io_nodes), extra=("--nfs", top))
                path[os_name] = top + "/f.%r"
        for s in systems:
            fn[s](names[s], 1, path[s], a.io_mib, a.io_blocks[0])
        for block in a.io_blocks:
            blk = report._size(block).replace(" ", "")
            for n in a.io_nodes:
                res = {s: [] for s in systems}
                for rep in range(a.reps):
                    for s in (systems if rep % 2 == 0 else systems[::-1]):
                        res[s].append(fn[s](names[s], n, path[s], a.io_mib, block))
                for s in systems:
                    run.add("io", label[s], f"write_{blk}_blocks", n, "MBps",
                            [r[0] for r in res[s]])
                    run.add("io", label[s], f"read_{blk}_blocks", n, "MBps",
                            [r[1] for r in res[s]])
                # Tern's files go between counts.  NFS clients cache names and
                # handles: a file removed behind their back is written through
                # a stale handle (Ganesha keeps the old inode open) and then not
                # found, so Linux ranks reuse theirs (opened O_TRUNC).
                if "tern" in tops:
                    for f in os.listdir(tops["tern"]):
                        os.unlink(os.path.join(tops["tern"], f))
                run.log(f"io: {n} nodes, {report._size(block)} blocks done")
    finally:
        if fy:
            fy.send_signal(signal.SIGTERM)
            try:
                fy.wait(10)
            except subprocess.TimeoutExpired:
                fy.kill()
                fy.wait(5)
        if log:
            log.close()
            os.remove(log.name)
        for name in names.values():
            down(run, name)
        for top in tops.values():
            shutil.rmtree(top, ignore_errors=True)


# ---- raw Portals and the floor (run-node on a bridge of their own) ----------

def raw_portals(run):
    """Experiment 1, raw Portals: plbench-tern ping-pong between two Tern
    kernel nodes (bench/portals_kernel.py's tern_tern pair)."""
    from test_portals_kernel import bridged_namespace
    from test_portals_kernel_wire import Procs, kv, read_line
    a = run.a
    with bridged_namespace(2) as (ns, taps):
        ps = Procs()
        try:
            prog = B("portals", "kernel", "plbench-tern")
            srv = ps.node(ns, taps[1], 2, "virtio", ["ptl-pong"], 900, a.accel, program=prog)
            pid = kv(read_line(srv, "READY", 120, []))["pid"]
            c = ps.node(ns, taps[0], 1, "virtio",
                        ["ptl-ping", "2", str(pid), str(a.iters), str(a.reps),
                         ",".join(map(str, a.lat_sizes))], 900, a.accel, program=prog)
            out, err = c.communicate(timeout=920)
            if c.returncode:
                raise RuntimeError(f"plbench-tern ptl-ping failed:\n{out}\n{err}")
        finally:
            ps.close()
    for (kind, size), v in parse_r(out).items():
        run.add("latency", "tern-portals", "oneway", size, "us", v)
    run.log("raw Portals done")


def floor(run):
    """Experiment 9: a host process on the bridge bounces frames off a Tern
    node booted with nettest=echo.  The round trip crosses one emulated NIC
    receive and one transmit, as a one-way message between two nodes does:
    the round trip is the one-way floor between two nodes."""
    from test_portals_kernel import bridged_namespace
    from test_portals_kernel_wire import add_linux_port
    from test_netdev import wait_for_log
    a = run.a
    mac = "02:00:00:00:00:09"
    log = os.path.join(a.out, ".floor-console.log")
    with bridged_namespace(1) as (ns, taps):
        add_linux_port(ns, "flr0", 8)
        open(log, "w").close()
        q = subprocess.Popen(
            ["ip", "netns", "exec", ns, "qemu-system-x86_64", "-nodefaults", "-display", "none",
             "-no-reboot", *accel.qemu_accel_args(a.accel), "-m", a.mem, "-kernel",
             B("tern.elf"), "-append", "nettest=echo", "-serial", f"file:{log}",
             "-netdev", f"tap,id=n0,ifname={taps[0]},script=no,downscript=no",
             "-device", f"virtio-net-pci,netdev=n0,mac={mac}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        try:
            wait_for_log(log, r"nettest: echoing", 120, q)
            sizes = [s for s in a.lat_sizes if s <= 1500]
            fp = B("bench-host", "floorping")
            for argv in (["lat", a.iters, a.reps, ",".join(map(str, sizes))],
                         ["bw", a.floor_frames, a.reps]):
                r = subprocess.run(["ip", "netns", "exec", ns, fp, "flr0", mac,
                                    *map(str, argv)], capture_output=True, text=True,
                                   timeout=600)
                if r.returncode:
                    raise RuntimeError(f"floorping {argv}: {r.stdout}{r.stderr}")
                for (kind, size), v in parse_r(r.stdout).items():
                    if kind == "floor-rtt":
                        run.add("floor", "fabric", "oneway_floor", size, "us", v)
                    else:
                        run.add("floor", "fabric", "echo_bw", size, "MBps", v)
        finally:
            os.killpg(q.pid, signal.SIGTERM)
            try:
                q.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(q.pid, signal.SIGKILL)
                q.wait(5)
            if os.path.exists(log):
                os.remove(log)
    run.log("floor done")


# ---- single-node experiments (bench/node.py, bench/boot_time.py) -------------

def single_node(run):
    """Experiments 4 and 7 and the single-node part of 8, on one Tern node
    (qemu/run-node) and one Linux node (the Debian kernel, the program as
    init), through bench/node.py."""
    import node
    from ternbench import linuxnode
    a = run.a
    systems = {"tern": node.on_tern}
    if linuxnode.debian_kernel():
        systems["linux"] = node.on_linux
    progs = [("memcpy", "memcpy_bw", [])] if a.smoke else [
        ("memcpy", "memcpy_bw", []), ("memavail", "memavail", []), ("noise", "fwq", [])]
    for sysname, fn in systems.items():
        for exp, prog, args in progs:
            samples = [node.parse_kv(fn(prog, args, a.node_mem, a.accel))
                       for _ in range(a.reps)]
            for k in samples[0]:
                unit = ("MBps" if exp == "memcpy" else "us" if k.endswith("_us") else
                        "bytes" if k.endswith("bytes") else "")
                run.add(exp, sysname, exp if exp == "memcpy" else k,
                        k if exp == "memcpy" else a.node_mem, unit,
                        [s[k] for s in samples if k in s])
        run.log(f"{sysname}: single node done")
    # Kernel footprint: what the kernel (and, on Linux, its root) take of the node.
    for sysname in systems:
        m = {r["metric"]: r["median"] for r in run.rows
             if r["experiment"] == "memavail" and r["system"] == sysname}
        if "total_ram_bytes" in m and "largest_alloc_bytes" in m:
            run.add("footprint", sysname, "not_available_to_app", a.node_mem, "MiB",
                    [(m["total_ram_bytes"] - m["largest_alloc_bytes"]) / 2**20])
    run.add("footprint", "tern", "kernel_image", "", "KiB",
            [os.path.getsize(B("tern.elf")) / 1024])
    if os.path.exists(B("linux-node", "vmlinuz")):
        run.add("footprint", "linux", "kernel_image", "", "KiB",
                [os.path.getsize(B("linux-node", "vmlinuz")) / 1024])
        run.add("footprint", "linux", "initramfs", "", "KiB",
                [os.path.getsize(B("linux-node", "initramfs.cpio.gz")) / 1024])


def boot_single(run):
    """Experiment 8: QEMU start to a program's first output on one node
    (Tern: bench/boot_time.py's one_run)."""
    import boot_time
    a = run.a
    v = [boot_time.one_run(a.accel, a.node_mem)[0] for _ in range(a.reps)]
    run.add("boot", "tern", "qemu_to_first_output", 1, "s", [x for x in v if x])


def boot_pxe(run, os_name, n):
    """Experiment 8: PXE boot of n nodes, `up` start to every node ready."""
    name, secs = up(run, os_name, n, boot="pxe")
    down(run, name)
    run.add("boot", os_name, "cluster_up_pxe", n, "s", [secs])
    run.log(f"{os_name}: PXE up -n {n}: {secs:.1f} s")


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
            "accel": kvm_note or a.accel, "mem": a.mem, "node_mem": a.node_mem,
            "reps": a.reps, "smoke": a.smoke,
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                     capture_output=True, text=True).stdout.strip()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--nodes", help="gsync/launch node counts (default 2,4,8,16)")
    ap.add_argument("--only", help="comma-separated: network,launch,io,portals,floor,frames,"
                    "node,boot,pxe,npb; network, launch, io and pxe also as tern-X or "
                    "linux-X")
    ap.add_argument("--accel", choices=["tcg", "kvm"], default="tcg")
    ap.add_argument("--mem", default="256M", help="memory of cluster nodes (both OSes)")
    ap.add_argument("--node-mem", default="128M",
                    help="memory of single-node runs (Debian's kernel needs more than 64M)")
    ap.add_argument("--io-nodes", help="node counts of experiment 6 (default 1,4,16)")
    ap.add_argument("--io-mib", type=int, default=8, help="experiment 6: MiB each rank writes")
    ap.add_argument("--io-blocks", help="experiment 6: write/read sizes (default 1048576)")
    ap.add_argument("--npb-class", default="A", help="experiment 10: NPB class (S, W, A, B)")
    ap.add_argument("--npb-nodes", help="experiment 10: node counts (default 4,8,16)")
    ap.add_argument("--npb-bench", help="experiment 10: benchmarks (default the eight)")
    ap.add_argument("--npb-timeout", type=int, default=3600,
                    help="experiment 10: seconds one benchmark run may take")
    ap.add_argument("--out")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run_all: needs root (network namespaces, taps)")
    if a.smoke:
        a.reps = a.reps or 1
        a.nodes = [2]
        a.lat_sizes, a.ring_sizes = [8], [4096]
        a.iters, a.ring_bytes, a.gsync_iters, a.floor_frames = 20, 1 << 16, 20, 200
        a.io_nodes = [int(x) for x in (a.io_nodes or "1").split(",")]
        default_only = "network,launch,io,portals,floor,node"
    else:
        a.reps = a.reps or 5
        a.nodes = [int(x) for x in (a.nodes or "2,4,8,16").split(",")]
        a.lat_sizes = [0, 8, 64, 512, 1024, 4096, 16384, 65536]
        a.ring_sizes = [8, 64, 512, 4096, 65536, 1 << 20, 8 << 20]
        a.iters, a.ring_bytes, a.gsync_iters, a.floor_frames = 100, 4 << 20, 20, 2000
        a.io_nodes = [int(x) for x in (a.io_nodes or "1,4,16").split(",")]
        default_only = "network,launch,io,portals,floor,frames,node,boot,pxe,npb"
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

    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, stop)
    failed = []
    steps = [("floor", floor), ("portals", raw_portals), ("frames", frames),
             ("tern-network", lambda r: network(r, "tern")),
             ("linux-network", lambda r: network(r, "linux")),
             ("tern-launch", lambda r: launch_step(r, "tern")),
             ("linux-launch", lambda r: launch_step(r, "linux")),
             ("io", lambda r: io(r, [s for s in ("tern", "linux")
                                     if "io" in only or f"{s}-io" in only])),
             ("node", single_node), ("boot", boot_single),
             ("tern-pxe", lambda r: boot_pxe(r, "tern", 1)),
             ("linux-pxe", lambda r: boot_pxe(r, "linux", 1)),
             ("tern-pxe", lambda r: boot_pxe(r, "tern", max(r.a.nodes))),
             ("npb", lambda r: npb_exp.experiment(r, up, down, cl))]
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
    main()
