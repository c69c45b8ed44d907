"""The benchmark scripts keep working: `bench/run_all.py --smoke` (one size,
two nodes, one repetition, Tern and Linux + MPICH; file I/O on one node,
Tern's fyod and Linux's NFS) writes its CSVs and summary with numbers in
them.  Not a performance test: no figure is judged."""
import csv
import os
import re
import signal
import subprocess

import pytest

from nodes import ROOT, make

pytestmark = [pytest.mark.cluster, pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")]
OUT = os.path.join(ROOT, "build", "bench-smoke")


def run_bench(argv, timeout):
    """Runs a bench script; past `timeout` it gets SIGTERM, on which it takes
    its clusters down (run_all.py's finally), and only then SIGKILL: a plain
    subprocess timeout kills it at once and leaves its QEMUs running."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        pytest.fail(f"{argv[1]} ran past {timeout} s (stopped):\n{out[-4000:]}\n{err[-4000:]}")
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def test_smoke_run_writes_csvs_and_summary():
    # Always: the nodes' initramfs carries the MPI programs, and an older one
    # lacks the benchmark programs added since (fileio) or the NFS modules.
    make("linux-node")
    make("build/bench-host/floorping", "build/nx-tern/nxhello", "build/nx-mpi/nxhello",
         "build/nx-tern/nxbench", "build/nx-mpi/nxbench", "build/programs/fileio-musl",
         "build/bin/fyod", "build/mpi-tern/mpibench", timeout=300)
    r = run_bench(["python3", os.path.join(ROOT, "bench", "run_all.py"), "--smoke", "--out", OUT],
                  timeout=420)
    assert r.returncode == 0, r.stdout + r.stderr
    for exp, systems in {"latency": {"tern-nx", "tern-portals", "linux-mpich", "tern-mpi",
                                     "linux-mpi"},
                         "ring": {"tern-nx", "linux-mpich", "tern-mpi", "linux-mpi",
                                  "tern-portals"},
                         "gsync": {"tern-nx", "linux-mpich"},
                         "launch": {"tern-yod", "linux-mpiexec"},
                         "memcpy": {"tern", "linux"},
                         "io": {"tern-fyod", "linux-nfs"},
                         "floor": {"fabric", "fabric-nodes"},
                         "ppn": {"tern-intra", "tern-inter", "paired"}}.items():
        with open(os.path.join(OUT, f"{exp}.csv")) as f:
            rows = list(csv.DictReader(f))
        assert {row["system"] for row in rows} >= systems, (exp, rows)
        for row in rows:
            assert float(row["median"]) >= 0 and int(row["reps"]) >= 1, row
    # Experiment 9: the echo floors, the 4-node ring's own (4 forwarding nodes)
    # and the 2-node gsync's (2 nodes running its barrier with raw frames).
    with open(os.path.join(OUT, "floor.csv")) as f:
        floor = {(row["system"], row["metric"], row["x"]) for row in csv.DictReader(f)}
    assert {("fabric", "echo_bw"), ("fabric-nodes", "echo_bw"),
            ("fabric-nodes", "ring_bw_4nodes"), ("fabric-nodes", "gsync_floor")} <= \
        {(s, m) for s, m, _ in floor}, floor
    assert ("fabric-nodes", "gsync_floor", "2") in floor, floor
    assert "| barrier's floor | Tern at barrier's floor |" in \
        open(os.path.join(OUT, "summary.md")).read()
    # Experiment 2's stream: raw Portals, NX and MPI on Tern, both on Linux.
    with open(os.path.join(OUT, "ring.csv")) as f:
        stream = {row["system"] for row in csv.DictReader(f) if row["metric"] == "stream_2nodes"}
    assert stream >= {"tern-portals", "tern-nx", "tern-mpi", "linux-mpich", "linux-mpi"}, stream
    summary = open(os.path.join(OUT, "summary.md")).read()
    for title in ("Ping-pong latency", "Ring bandwidth", "gsync", "Launch", "File I/O",
                  "fabric floor", "NX between two ranks of one node"):
        assert title in summary
    # Experiment 12: both ways of placing two ranks, and their ratio.
    assert re.search(r"\| lat \| 8 B \| us \| [\d.]+ \| [\d.]+ \| - \| - \| [\d.]+ \|", summary), \
        summary
    # A table row with a Tern/Linux ratio: a number in it.
    assert re.search(r"\| oneway \| 8 B \| us \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|", summary), \
        summary
    # File I/O: Tern's fyod, Linux's NFS and their ratio, for writes and reads on one node.
    for op in ("write", "read"):
        assert re.search(rf"\| {op}_1MiB_blocks \| 1 \| MBps \| [\d.]+ \| [\d.]+ \| [\d.]+ \|",
                         summary), summary
    with open(os.path.join(OUT, "host.csv")) as f:
        host = dict(csv.reader(f))
    assert host["accel"] and host["nproc"] and host["loadavg_start"]


def test_frames_experiment_counts_a_ping_pong_message_on_the_bridge(tmp_path):
    """The frames experiment also counts what one message of a 0-byte NX
    ping-pong costs on the bridge, from the taps' counters around a long and
    a short job (their difference leaves the jobs' start and end out).  One
    frame when the ACK rides in the answer's header; with every ACK alone it
    would be two.  On Linux, MPICH's TCP: its acks ride too."""
    make("linux-node", "build/nx-tern/nxbench", "build/nx-mpi/nxbench", "build/nx-tern/nxhello",
         "build/nx-mpi/nxhello")
    r = run_bench(["python3", os.path.join(ROOT, "bench", "run_all.py"), "--only", "frames",
                   "--reps", "1", "--out", str(tmp_path)], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(tmp_path / "frames.csv") as f:
        per = {row["system"]: float(row["median"]) for row in csv.DictReader(f)
               if row["metric"] == "frames_per_message"}
    assert set(per) == {"tern-nx", "linux-mpich"}, per
    # Not 2 (an ACK alone for every message), and not below 1: each message
    # is a frame of its own.
    for system, v in per.items():
        assert 0.95 <= v < 1.5, (system, v)
