"""bench/programs/memcpy_bw.c (experiment 4) with the sizes of a smoke run:
`memcpy_bw KIB_PER_SAMPLE SAMPLES` on a Tern node prints the same table as
the figures' run (every size 1 KiB .. 16 MiB, a rate for each), and refuses
arguments it cannot use.  No figure is judged."""
import os
import subprocess

import pytest

from nodes import ROOT, make, run_node

PROG = os.path.join(ROOT, "build", "bench", "memcpy_bw")


@pytest.fixture(scope="module", autouse=True)
def memcpy_bw():
    make("build/bench/memcpy_bw", timeout=120)


def test_small_samples_print_every_size_on_a_tern_node():
    r = run_node(PROG, "1024", "3", mem="128M")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "# size_bytes MB_per_s", r.stdout
    rows = [line.split() for line in lines[1:]]
    assert [int(size) for size, _ in rows] == [1024 << (2 * k) for k in range(8)], r.stdout
    assert all(float(rate) > 0 for _, rate in rows), r.stdout


@pytest.mark.parametrize("args", [["0"], ["x"], ["64", "2"], ["64", "0"], ["64", "101"]])
def test_refuses_bad_arguments(args):
    # The same static program runs on the host: the check is before any copy.
    r = subprocess.run([PROG, *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert r.stderr.startswith("usage: memcpy_bw [KIB_PER_SAMPLE"), r.stderr
