"""Experiment 9b, NX and raw Portals latency against the fabric floor, paired
(bench/ternbench/lat_floor.py), keeps working: `bench/run_all.py --smoke
--only latfloor` boots the echo node and a 2-node Tern cluster together,
alternates NX jobs and raw Portals pairs with floor bursts from a node and
from a host process and prints each over each floor; its CSV and summary are
well formed.  No figure is judged (the goal's verdict line is
printed either way)."""
import csv
import os
import re
import sys

import pytest

from nodes import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
from ternbench import lat_floor, report  # noqa: E402


def test_pairs_and_lines():
    lat = {0: [200.0, 300.0, 250.0], 8: [210.0]}
    flo = {0: [50.0, 100.0, 0.0], 8: [70.0]}
    ratios = lat_floor.paired(lat, flo)
    assert ratios == {0: [4.0, 3.0], 8: [3.0]}       # a zero floor gives no ratio
    lines = lat_floor.report_lines(ratios, {0: [190.0, 300.0], 8: [210.0]},
                                   {0: [40.0, 100.0], 8: [70.0]}, "node floor")
    assert lines == [
        "NX/node floor 0 B: NX 245.0 us (190.0-300.0), node floor 70.0 us (40.0-100.0); "
        "paired 3.50 (3.00-4.00, 2 pairs); best repetitions 4.75",
        "NX/node floor 8 B: NX 210.0 us (210.0-210.0), node floor 70.0 us (70.0-70.0); "
        "paired 3.00 (3.00-3.00, 1 pairs); best repetitions 3.00"]
    assert lat_floor.goal_line(ratios, "node floor") == [
        "NX/node floor 0 B goal <= 1.5: not met in this run (paired median 3.50)"]
    assert lat_floor.goal_line({0: [1.2, 1.6, 1.4]}, "x") == [
        "NX/x 0 B goal <= 1.5: met in this run (paired median 1.40)"]
    assert lat_floor.goal_line({8: [1.0]}, "x") == []
    assert lat_floor.goal_line({0: [1.6]}, "x", "Portals") == [
        "Portals/x 0 B goal <= 1.5: not met in this run (paired median 1.60)"]
    assert lat_floor.report_lines({0: [2.0]}, {0: [100.0]}, {0: [50.0]}, "x", "Portals") == [
        "Portals/x 0 B: Portals 100.0 us (100.0-100.0), x 50.0 us (50.0-50.0); "
        "paired 2.00 (2.00-2.00, 1 pairs); best repetitions 2.00"]
    assert lat_floor.paired({0: [1.0]}, {}) == {}


def test_summary_table_names_the_experiment():
    rows = [{"experiment": "latfloor", "system": s, "metric": m, "x": 0, "unit": "us",
             "median": v, "min": v, "max": v, "reps": 3}
            for s, m, v in (("tern-nx", "oneway", 200.0), ("fabric", "oneway_floor", 50.0))]
    t = report.table(rows, "latfloor")
    assert any(line.startswith("| oneway | 0 B | us |") for line in t), t


def test_rerun_summary_is_not_called_smoke(tmp_path):
    """A partial run (--only) reads the earlier host.csv back, where smoke is
    the text "False"; its summary said "Made by `bench/run_all.py` --smoke"."""
    for smoke, said in ((False, False), ("False", False), (True, True), ("True", True)):
        report.summary(str(tmp_path), [], {"smoke": smoke}, [])
        text = open(os.path.join(tmp_path, "summary.md")).read()
        assert ("run_all.py` --smoke" in text) == said, (smoke, text[:200])


@pytest.mark.cluster
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, taps)")
def test_smoke_run_prints_nx_over_floor(tmp_path):
    from test_bench_smoke import run_bench
    out = str(tmp_path / "out")
    r = run_bench(["python3", os.path.join(ROOT, "bench", "run_all.py"), "--smoke",
                   "--only", "latfloor", "--out", out], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for who in ("NX", "Portals"):
        for what in ("floor between two nodes", "host process's floor"):
            for size in (0, 8):
                assert re.search(rf"{who}/{what} {size} B: {who} [\d.]+ us \([\d.]+-[\d.]+\), "
                                 rf"{what} [\d.]+ us \([\d.]+-[\d.]+\); paired [\d.]+ "
                                 rf"\([\d.]+-[\d.]+, 2 pairs\); best repetitions [\d.]+",
                                 r.stdout), r.stdout
            assert re.search(rf"{who}/{what} 0 B goal <= 1\.5: (met|not met) in this run",
                             r.stdout), r.stdout
    with open(os.path.join(out, "latfloor.csv")) as f:
        rows = list(csv.DictReader(f))
    got = {(row["system"], row["metric"], row["x"]): row for row in rows}
    for size in ("0", "8"):
        for key in (("tern-nx", "oneway", size), ("tern-portals", "oneway", size),
                    ("fabric", "oneway_floor", size), ("fabric-nodes", "oneway_floor", size),
                    ("tern-nx", "paired_ratio_to_floor", size),
                    ("tern-nx", "paired_ratio_to_floor_host", size),
                    ("tern-portals", "paired_ratio_to_floor", size),
                    ("tern-portals", "paired_ratio_to_floor_host", size)):
            assert key in got, (key, rows)
            assert float(got[key]["median"]) > 0, got[key]
    assert "## 9b. NX and raw Portals one-way latency" in open(os.path.join(out, "summary.md")).read()
