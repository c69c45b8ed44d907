"""The NAS Parallel Benchmarks 3.4.1 (MPI) from ../shared/third-party/npb,
built in a scratch directory for Tern (tern-mpif90 / tern-mpicc: static,
for yod) or for the Linux comparison nodes (Debian's MPICH mpif90 / mpicc),
and their output read back.  Used by tests/test_npb.py and bench/npb.py
(experiment 10).  The sources are copied to the scratch directory, never
into the tree; NPB's own README is at the source's top.

    src = npb.source()                       # or TERN_THIRD_PARTY=/path
    bindir, secs = npb.build(src, scratch, "tern", ["ep", "cg"], "S")
    r = npb.parse(stdout)                    # {"verified": True, "time": .., "mops": ..}
"""
import concurrent.futures
import os
import queue
import re
import shutil
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EIGHT = ["ep", "mg", "cg", "ft", "is", "lu", "sp", "bt"]   # seed 003's section 4.5
SQUARE = {"bt", "sp", "btio"}                              # need a square number of ranks
POWER_OF_TWO = {"cg", "ft", "is", "mg"}
DT_NODES = {"S": 5, "W": 11, "A": 21, "B": 43}             # DT's BH graph: this many ranks
# BT-IO (NPB's SUBTYPE of BT): what BT's makefile adds to the program's name.
BTIO = {"full": "mpi_io_full", "simple": "mpi_io_simple", "fortran": "fortran_io",
        "epio": "ep_io"}


def program(bindir, bench, cls, subtype=None):
    """The path a benchmark's program is built at (BT-IO: bt with its subtype's suffix)."""
    name = f"{bench}.{cls}.x"
    return os.path.join(bindir, name + (f".{BTIO[subtype]}" if subtype else ""))


def source():
    """The NPB3.4-MPI directory: $TERN_THIRD_PARTY/npb/... or
    ROOT/../shared/third-party/npb/...; None if absent."""
    base = os.environ.get("TERN_THIRD_PARTY") or os.path.join(ROOT, "..", "shared",
                                                               "third-party")
    d = os.path.join(base, "npb", "NPB3.4.1", "NPB3.4-MPI")
    return os.path.abspath(d) if os.path.isdir(d) else None


def make_def(system, bindir="../bin"):
    """config/make.def for one system, the programs into bindir."""
    if system == "tern":
        fc = os.path.join(ROOT, "build", "bin", "tern-mpif90")
        cc = os.path.join(ROOT, "build", "bin", "tern-mpicc")
        fflags = "-O2"
    else:
        fc, cc = "mpif90", "mpicc"
        # MPICH's mpif.h calls pass buffers of any type (gfortran >= 10).
        fflags = "-O2 -fallow-argument-mismatch"
    return (f"MPIFC = {fc}\nFLINK = $(MPIFC)\nFMPI_LIB =\nFMPI_INC =\nFFLAGS = {fflags}\n"
            f"FLINKFLAGS = $(FFLAGS)\nMPICC = {cc}\nCLINK = $(MPICC)\nCMPI_LIB =\n"
            f"CMPI_INC =\nCFLAGS = -O2\nCLINKFLAGS = $(CFLAGS)\nCC = gcc -g\n"
            f"BINDIR = {bindir}\nRAND = randi8\n")


# What tern-mpif90 and tern-mpicc link into a Tern program (lwkcc --mpi -show).
TERN_LIBS = [os.path.join(ROOT, "build", *p) for p in
             (("libmpi", "libmpi.a"), ("libmsg", "libmsg.a"), ("portals", "libportals-tern.a"))]


def stale(program, libs):
    """Whether program must be built (again): missing, or older than one of
    the libraries it links.  NPB's makefiles know nothing of those, so a
    program linked before a change to Tern's MPI would otherwise be run
    (and measured) as it was."""
    if not os.path.exists(program):
        return True
    t = os.path.getmtime(program)
    return any(os.path.exists(lib) and os.path.getmtime(lib) > t for lib in libs)


def build(src, scratch, system, benchmarks, cls, jobs=1, subtype=None):
    """Copy src to scratch/npb-<system> (once), build benchmarks of class
    cls there (those not built yet, or stale); returns (bin directory, seconds the builds took).  Raises
    RuntimeError with the build's tail when one fails.  jobs: benchmarks
    built at once (tests/test_npb.py: 2; bench/npb.py keeps 1, its build
    time is a figure), each worker in a copy of its own (npb-<system>-K
    beside the first): NPB's makefiles build sys/setparams and the common/
    objects on demand in the one tree, so two builds in it would race; the
    programs all go to the first copy's bin/.  subtype: BT-IO's (BTIO), in
    a tree of its own (npb-<system>-io<subtype>): its make target is bt's,
    which calls a plain bt up to date."""
    d = os.path.join(scratch, f"npb-{system}" + (f"-io{subtype}" if subtype else ""))
    bindir = os.path.join(d, "bin")
    libs = TERN_LIBS if system == "tern" else []
    todo = [b for b in benchmarks if stale(program(bindir, b, cls, subtype), libs)]
    for b in todo:          # NPB's make would call an existing one up to date
        for p in (program(bindir, b, cls), program(bindir, b, cls, subtype)):
            if os.path.exists(p):
                os.remove(p)
    trees = [d] + [f"{d}-{k}" for k in range(1, max(1, min(jobs, len(todo))))]
    for t in trees:
        if not os.path.isdir(t):
            shutil.copytree(src, t)
        with open(os.path.join(t, "config", "make.def"), "w") as f:
            f.write(make_def(system, bindir))
    os.makedirs(bindir, exist_ok=True)
    pending = queue.Queue()
    for b in todo:
        pending.put(b)

    def worker(tree):
        while True:
            try:
                b = pending.get_nowait()
            except queue.Empty:
                return
            r = subprocess.run(["make", b, f"CLASS={cls}"] +
                               ([f"SUBTYPE={subtype}"] if subtype else []), cwd=tree,
                               capture_output=True, text=True, timeout=1800)
            if r.returncode:
                while not pending.empty():      # the other workers stop too
                    pending.get_nowait()
                raise RuntimeError(f"NPB {b} class {cls} for {system} did not build:\n"
                                   f"{r.stdout[-3000:]}{r.stderr[-3000:]}")

    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(len(trees)) as ex:
        for f in [ex.submit(worker, t) for t in trees]:
            f.result()
    return bindir, time.monotonic() - t0


def ranks(bench, nodes):
    """The rank count a benchmark runs on for a node count: BT and SP the
    smallest square at least as large (seed 003: 9 where the others run on
    8), CG FT IS MG the largest power of two not above it, EP LU DT it."""
    if bench in SQUARE:
        k = int(nodes ** 0.5 + 1e-9)
        return k * k if k * k >= nodes else (k + 1) ** 2
    if bench in POWER_OF_TWO:
        p = 1
        while p * 2 <= nodes:
            p *= 2
        return p
    return nodes


def parse(out):
    """What a run printed: verified, time (s), mops (Mop/s total); BT-IO's
    io_time (s) and io_rate (MB/s) too, None for the others."""
    t = re.search(r"Time in seconds\s*=\s*([\d.Ee+-]+)", out)
    m = re.search(r"Mop/s total\s*=\s*([\d.Ee+-]+)", out)
    it = re.search(r"I/O timing in seconds\s*:\s*([\d.Ee+-]+)", out)
    ir = re.search(r"I/O data rate\s*\(MB/sec\)\s*:\s*([\d.Ee+-]+)", out)
    return {"verified": bool(re.search(r"Verification\s*=\s*SUCCESSFUL", out)),
            "time": float(t.group(1)) if t else None,
            "mops": float(m.group(1)) if m else None,
            "io_time": float(it.group(1)) if it else None,
            "io_rate": float(ir.group(1)) if ir else None}
