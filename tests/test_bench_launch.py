"""Experiment 5 (bench/ternbench/cluster_exps.py, launch) times only jobs
that ended by themselves.  An MPICH job that printed everything and then hung
in MPI_Finalize used to be waited for until mpiexec's own time-out (144 s in
the 2026-11-28 run, four times) and, had it ended, timed as a launch.  Now it
is stopped after the finalize grace and counted as finalize_hang.  No
cluster: a stand-in for qemu/cluster whose 2-node jobs hang after their
output."""
import argparse
import os
import stat
import sys

from nodes import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
from ternbench import cluster_exps, runner  # noqa: E402

FAKE = """#!/bin/sh
# qemu/cluster --name NAME mpiexec -n N PROG | exec true
case "$3" in
exec) exit 0 ;;
mpiexec)
    echo "E done"
    if [ "$5" = 2 ]; then exec sleep 120; fi
    exit 0 ;;
esac
exit 2
"""


def test_a_launch_that_hangs_after_its_output_is_stopped_and_not_timed(tmp_path, monkeypatch):
    fake = tmp_path / "cluster"
    fake.write_text(FAKE)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(runner, "CLUSTER", str(fake))
    run = runner.Run(argparse.Namespace(reps=2, finalize_grace=1, nodes=[1, 2], mem="64M"))
    assert cluster_exps.launch(run, "fake", "linux", [1, 2]) is False
    got = {(r["metric"], r["x"]): r for r in run.rows}
    assert got[("trivial_job_wall", 1)]["reps"] == 2
    assert ("trivial_job_wall", 2) not in got, got
    hangs = [r for r in run.rows if r["metric"] == "finalize_hang" and r["x"] == 2]
    assert len(hangs) == 2, run.rows


def test_a_hung_job_ends_by_sigint_even_when_the_bench_ignores_it():
    """A benchmark started in the background (`make bench &`) inherits
    SIGINT ignored; the jobs it stops must still get Ctrl-C's SIGINT, not
    wait a minute for SIGKILL (that took test_a_launch_... 122 s in a run
    started with `&`)."""
    import signal
    from ternbench import jobs
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        out, _, rc, hung = jobs.run_until_done(["sh", "-c", "echo E done; exec sleep 100"],
                                               lambda o: "E done" in o, timeout=90, grace=0.5)
    finally:
        signal.signal(signal.SIGINT, old)
    assert hung and out == "E done\n"
    assert rc == -signal.SIGINT, rc
