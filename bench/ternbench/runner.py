"""The bookkeeping of a benchmark run (bench/run_all.py) and the clusters
its experiments run on: the rows measured, `qemu/cluster` up and down, one
job on N nodes (yod on Tern, mpiexec on Linux)."""
import os
import statistics
import subprocess
import time
import uuid

from ternbench import jobs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER = os.path.join(ROOT, "qemu", "cluster")
B = lambda *p: os.path.join(ROOT, "build", *p)  # noqa: E731
FIELDS = ["experiment", "system", "metric", "x", "unit", "median", "min", "max", "reps"]
SYSTEM = {"tern": "tern-nx", "linux": "linux-mpich"}
MPI_SYSTEM = {"tern": "tern-mpi", "linux": "linux-mpi"}


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
           f"--{run.a.accel}", *(("--cpu", run.a.cpu) if run.a.cpu else ()),
           *extra, timeout=900)
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
    that experiment's and system's metric finalize_hang (ternbench/jobs.py);
    the wall seconds returned are then None: they time the hang, not the job."""
    t0, hung = time.monotonic(), False
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
                argv, lambda o: "E done" in o, timeout, grace=getattr(run.a, "finalize_grace", 30),
                env=dict(os.environ, MPIEXEC_TIMEOUT=str(int(timeout * 0.8))))
            if hung:
                run.add(*until_done, "finalize_hang", n, "", [1])
                run.log(f"{os_name}: {os.path.basename(path)} {args[:1]} on {n} done but "
                        f"hung in MPI_Finalize; stopped")
                rc = 0
        else:
            r = cl(name, "mpiexec", "-n", str(n), path, *map(str, args), timeout=timeout)
            out, err, rc = r.stdout, r.stderr, r.returncode
    secs = None if hung else time.monotonic() - t0
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
    exp = {"lat": "latency", "stream": "ring"}.get(what, what)
    system = (MPI_SYSTEM if mpi else SYSTEM)[os_name]
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


def load1():
    """The host's 1-minute load average, recorded beside figures."""
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def alternate(run, what, pairs, sides, measure, sizes):
    """Sets ("pairs") of measurements of two or more sides, the order
    reversed every other time, so that all see the same load (experiments
    1b, 9b and 12).  measure(side) -> a benchmark's output (`R kind size
    unit value` lines).  -> (complete, failed): complete is a list, in pair
    order, of {side: {size: [values]}} for the pairs whose sides all gave
    every size (a ratio needs both); failed counts each side's failures."""
    complete, failed = [], {s: 0 for s in sides}
    for pair in range(pairs):
        got = {}
        for side in (sides if pair % 2 == 0 else sides[::-1]):
            try:
                out = measure(side)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                failed[side] += 1
                run.log(f"{what}: {side} of pair {pair} failed: {str(e)[:300]}")
                continue
            got[side] = {size: v for (_, size), v in parse_r(out).items()}
        if len(got) == len(sides) and all(set(g) == set(sizes) for g in got.values()):
            complete.append(got)
    return complete, failed
