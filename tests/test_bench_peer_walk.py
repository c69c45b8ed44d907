"""bench/peer_walk.py keeps working: it builds its program, runs it for
each peer count and writes one CSV row per call and count, with the peers
it asked for really known to the NI (the program fails if fewer frames
were taken).  Not a performance test: no figure is judged."""
import csv
import os
import subprocess

from nodes import ROOT, make


def test_peer_walk_writes_a_row_per_call_and_peer_count(tmp_path):
    r = subprocess.run(["python3", os.path.join(ROOT, "bench", "peer_walk.py"), "--peers",
                        "1,300", "--reps", "2", "--calls", "2000", "--label", "t",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "| 300 |" in r.stdout, r.stdout
    rows = list(csv.DictReader(open(tmp_path / "peer_walk.csv")))
    assert {(row["call"], row["peers"]) for row in rows} == {
        ("eqget_ns", "1"), ("eqpoll_ns", "1"), ("eqget_ns", "300"), ("eqpoll_ns", "300")}
    for row in rows:
        assert row["label"] == "t" and int(row["reps"]) == 2 and float(row["median"]) > 0, row


def test_peerwalk_without_its_arguments_prints_its_usage():
    exe = os.path.join(ROOT, "build", "bench-host", "peerwalk")
    make("build/bench-host/peerwalk")
    r = subprocess.run([exe, "2"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage: peerwalk K CALLS" in r.stderr
