"""The OpenMP triad of `make bench` (bench/programs/stream_triad.c,
bench/stream_omp.py, issue 17) keeps working: on a Tern node of 4 CPUs with
OMP_NUM_THREADS 1, 2 and 4 it says every element is right and ends with 0,
on a Linux node of 4 CPUs it says the same, and the bench script writes
its CSV with both systems (those two boot a Linux node each, about 5 s: in
`make test` since 2026-11-30, run_slow before).  Small arrays; no figure is
judged."""
import csv
import os
import subprocess
import sys

import pytest

from nodes import ROOT, make, run_node

sys.path.insert(0, os.path.join(ROOT, "bench"))
from ternbench import linuxnode  # noqa: E402

PROG = os.path.join(ROOT, "build", "bench", "stream_triad")


@pytest.fixture(scope="module", autouse=True)
def triad():
    make("build/bench/stream_triad", timeout=120)


@pytest.mark.parametrize("threads", ["1", "2", "4"])
def test_triad_on_a_four_cpu_tern_node_is_right_with_every_team(threads):
    r = run_node(PROG, "65536", "3", env=[f"OMP_NUM_THREADS={threads}"], mem="128M",
                 extra=["--smp", "4"])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "cpus 4" in lines and f"threads {threads}" in lines, r.stdout
    assert lines[-1] == f"triad check ok: 65536 elements, {threads} threads", r.stdout
    best = [l for l in lines if l.startswith("triad_best_MBps ")]
    assert best and float(best[0].split()[1]) > 0, r.stdout


def test_triad_refuses_bad_arguments():
    r = run_node(PROG, "0")
    assert r.returncode == 2
    assert r.stderr.startswith("usage: stream_triad"), r.stderr


needs_linux = pytest.mark.skipif(not linuxnode.debian_kernel(),
                                 reason="no Debian kernel (make linux-node)")


@pytest.mark.slow
@needs_linux
def test_triad_on_a_four_cpu_linux_node_gets_the_team_from_the_environment():
    """2 of 4 CPUs: libgomp's default would be a team of 4."""
    lines = linuxnode.run_on_linux(PROG, ["65536", "3"], "128M", smp=4,
                                   env=["OMP_NUM_THREADS=2"], timeout=300)
    assert "cpus 4" in lines and "threads 2" in lines, lines
    assert "triad check ok: 65536 elements, 2 threads" in lines, lines


@pytest.mark.slow
@needs_linux
def test_bench_script_writes_both_systems_and_the_host_load(tmp_path):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "stream_omp.py"),
                        "--runs", "1", "--threads", "2", "--elements", "65536", "--reps", "2",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(tmp_path / "stream.csv") as f:
        rows = list(csv.DictReader(f))
    best = {row["system"]: row for row in rows if row["metric"] == "triad_best"}
    assert set(best) == {"tern", "linux"}, rows
    assert all(row["x"] == "2" and float(row["median"]) > 0 for row in best.values()), rows
    assert [row for row in rows if row["system"] == "host" and row["metric"] == "load_1min"]
    assert [row for row in rows if row["system"] == "paired" and row["x"] == "2" and
            float(row["median"]) > 0]
    # The printed table: 2 threads, Tern, Linux, their ratio, the paired
    # ratio, the load.
    line = [l for l in r.stdout.splitlines() if l.startswith("| 2 | ")]
    assert line and len(line[0].strip("|").split("|")) == 6, r.stdout
    assert "not measured" not in line[0], r.stdout
