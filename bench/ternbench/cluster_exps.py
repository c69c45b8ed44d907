"""Experiments on clusters of Tern and Linux nodes (bench/run_all.py):
NX and MPI latency and ring, NX gsync (1-3), launch (5), file I/O (6), the
frames the nodes put on the bridge."""
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

from ternbench.runner import MPI_SYSTEM, SYSTEM, cl, down, job, measured, parse_r, up


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
                # MPICH's jobs that hang in MPI_Finalize after printing all
                # are stopped after the finalize grace, not mpiexec's
                # time-out (144 s), and not timed (finalize_hang counts them)
                _, err, secs = job(run, name, os_name, n, "nxhello", timeout=180,
                                   yod_opts=("-v",) if os_name == "tern" else (),
                                   until_done=("launch", system))
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                failed += 1
                run.log(f"{os_name}: launch on {n} failed: {str(e)[:300]}")
                continue
            if secs is None:
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


def warm_up(run, name, os_name, n):
    """One small job before measuring (a Linux node is ready only once its
    link is running, boot/linux-node/rc, so its first MPI_Init finds its
    peers and needs no retry)."""
    job(run, name, os_name, n, "nxhello", timeout=300, until_done=("launch", SYSTEM[os_name]))


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
                           ",".join(map(str, a.lat_sizes)), a.lat_warmup, mpi=mpi)
            for (kind, size), v in parse_r(out).items():
                run.add("latency", s, "oneway", size, "us", v)
            run.log(f"{os_name}: {s} latency done")
            # The seed's ring is 4 nodes; 2 nodes as well, as the floor is
            # measured between two: on a 2-core host a 4-node ring runs twice
            # the emulated CPUs the floor does, and the 2-node one as many.
            for rn in [n for n in (4, 2) if n <= nmax]:
                out = measured(run, name, os_name, rn, "ring", a.reps, a.ring_bytes,
                               ",".join(map(str, a.ring_sizes)), mpi=mpi)
                for (kind, size), v in parse_r(out).items():
                    run.add("ring", s, f"per_node_{rn}nodes", size, "MBps", v)
                run.log(f"{os_name}: {s} ring on {rn} nodes done")
            # One way, node 0 to node 1 (raw Portals' ptl-bw beside it,
            # node_exps.raw_portals).
            out = measured(run, name, os_name, 2, "stream", a.reps, a.stream_bytes,
                           ",".join(map(str, a.stream_sizes)), mpi=mpi)
            for (kind, size), v in parse_r(out).items():
                run.add("ring", s, "stream_2nodes", size, "MBps", v)
            run.log(f"{os_name}: {s} stream done")
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


# A 0-byte NX ping-pong: round trips of the long job and of the short one,
# whose difference leaves out the jobs' start and end.
PINGPONG_LONG, PINGPONG_SHORT = 2000, 10


def frames(run):
    """Why bandwidth differs: the frames the nodes put on the bridge during a
    2-node ring of 1 MiB messages (bytes per frame, frames per MB of
    payload), read from the taps' counters around the job.  And what one
    message of a 0-byte NX ping-pong costs on the bridge (frames per
    message): 1 when each ACK rides in the answer's header, 2 when it goes
    alone (Tern; Linux: MPICH's TCP segments and acks)."""
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
            sent = {}
            for iters in (PINGPONG_SHORT, PINGPONG_LONG):
                q0, _ = tap_counters(name)
                # nxbench lat: 10 warm-up round trips, then a warm-up
                # repetition and a measured one of `iters` each.
                job(run, name, os_name, 2, "nxbench", "lat", 1, iters, 0, 10)
                q1, _ = tap_counters(name)
                sent[iters] = q1 - q0
            messages = 2 * 2 * (PINGPONG_LONG - PINGPONG_SHORT)
            run.add("frames", SYSTEM[os_name], "frames_per_message", 0, "",
                    [(sent[PINGPONG_LONG] - sent[PINGPONG_SHORT]) / messages])
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
