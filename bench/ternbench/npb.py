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
import os
import re
import shutil
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EIGHT = ["ep", "mg", "cg", "ft", "is", "lu", "sp", "bt"]   # seed 003's section 4.5
SQUARE = {"bt", "sp"}                                      # need a square number of ranks
POWER_OF_TWO = {"cg", "ft", "is", "mg"}
DT_NODES = {"S": 5, "W": 11, "A": 21, "B": 43}             # DT's BH graph: this many ranks


def source():
    """The NPB3.4-MPI directory: $TERN_THIRD_PARTY/npb/... or
    ROOT/../shared/third-party/npb/...; None if absent."""
    base = os.environ.get("TERN_THIRD_PARTY") or os.path.join(ROOT, "..", "shared",
                                                               "third-party")
    d = os.path.join(base, "npb", "NPB3.4.1", "NPB3.4-MPI")
    return os.path.abspath(d) if os.path.isdir(d) else None


def make_def(system):
    """config/make.def for one system."""
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
            f"CMPI_INC =\nCFLAGS = -O2\nCLINKFLAGS = $(CFLAGS)\nCC = gcc -g\nBINDIR = ../bin\n"
            f"RAND = randi8\n")


def build(src, scratch, system, benchmarks, cls):
    """Copy src to scratch/npb-<system> (once), build benchmarks of class
    cls there; returns (bin directory, seconds the builds took).  Raises
    RuntimeError with the build's tail when one fails."""
    d = os.path.join(scratch, f"npb-{system}")
    if not os.path.isdir(d):
        shutil.copytree(src, d)
    os.makedirs(os.path.join(d, "bin"), exist_ok=True)
    with open(os.path.join(d, "config", "make.def"), "w") as f:
        f.write(make_def(system))
    t0 = time.monotonic()
    for b in benchmarks:
        if os.path.exists(os.path.join(d, "bin", f"{b}.{cls}.x")):
            continue
        r = subprocess.run(["make", b, f"CLASS={cls}"], cwd=d, capture_output=True, text=True,
                           timeout=1800)
        if r.returncode:
            raise RuntimeError(f"NPB {b} class {cls} for {system} did not build:\n"
                               f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return os.path.join(d, "bin"), time.monotonic() - t0


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
    """What a run printed: verified, time (s), mops (Mop/s total)."""
    t = re.search(r"Time in seconds\s*=\s*([\d.Ee+-]+)", out)
    m = re.search(r"Mop/s total\s*=\s*([\d.Ee+-]+)", out)
    return {"verified": bool(re.search(r"Verification\s*=\s*SUCCESSFUL", out)),
            "time": float(t.group(1)) if t else None,
            "mops": float(m.group(1)) if m else None}
