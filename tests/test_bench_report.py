"""The bench report (bench/ternbench/report.py, bench/npb_figure.py) draws and tabulates what was
measured: the ring on 4 nodes and on 2 nodes are two lines of the plot, not
one line zig-zagging between them, and the summary's ring table gives each
its fraction of the fabric floor; counts of failed jobs are not drawn.  No
cluster: rows made here."""
import os
import sys

import pytest

from nodes import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import npb_figure  # noqa: E402
from ternbench import report  # noqa: E402


def row(exp, system, metric, x, unit, median):
    return {"experiment": exp, "system": system, "metric": metric, "x": x, "unit": unit,
            "median": median, "min": median, "max": median, "reps": 3}


ROWS = [row("ring", "tern-nx", "per_node_4nodes", 1048576, "MBps", 200.0),
        row("ring", "tern-nx", "per_node_4nodes", 8388608, "MBps", 400.0),
        row("ring", "tern-nx", "per_node_2nodes", 1048576, "MBps", 500.0),
        row("ring", "tern-nx", "per_node_2nodes", 8388608, "MBps", 700.0),
        row("floor", "fabric-nodes", "echo_bw", 65520, "MBps", 1000.0),
        # A count of jobs that hung in MPI_Finalize (no unit): not a figure.
        row("ring", "linux-mpich", "finalize_hang", 4, "", 1.0)]


def test_ring_on_two_node_counts_is_two_lines():
    lines = report.plot_series(ROWS, "ring")
    assert lines == {"tern-nx per_node_4nodes": [(1048576.0, 200.0, 200.0, 200.0),
                                                 (8388608.0, 400.0, 400.0, 400.0)],
                     "tern-nx per_node_2nodes": [(1048576.0, 500.0, 500.0, 500.0),
                                                 (8388608.0, 700.0, 700.0, 700.0)]}
    # The hang count is neither a line nor a point (it was drawn as 1 MB/s
    # at 4 bytes before).
    assert not any(label.startswith("linux-mpich") for label in lines)
    # One metric (or one asked for): lines by system alone.
    assert list(report.plot_series(ROWS, "ring", "per_node_2nodes")) == ["tern-nx"]
    assert list(report.plot_series(ROWS, "floor")) == ["fabric-nodes"]


def test_ring_table_gives_each_node_count_its_floor_fraction():
    t = "\n".join(report.table(ROWS, "ring"))
    assert "| per_node_2nodes | 1 MiB | MBps | 500 | - | - | 1000 | 50% | - | 3 |" in t, t
    assert "| per_node_4nodes | 8 MiB | MBps | 400 | - | - | 1000 | 40% | - | 3 |" in t, t


def test_ring_table_gives_the_four_node_ring_its_own_floor():
    """A ring of 4 forwarding nodes (node_exps.ring_floor) is the floor of
    the 4-node ring's rows only; the echo floor stays beside it."""
    rows = ROWS + [row("floor", "fabric-nodes", "ring_bw_4nodes", 65520, "MBps", 500.0)]
    t = "\n".join(report.table(rows, "ring"))
    assert "ring's floor | Tern at ring's floor |" in t, t
    assert ("| per_node_4nodes | 8 MiB | MBps | 400 | - | - | 1000 | 40% | - | 500 | 80% | 3 |"
            in t), t
    assert "| per_node_2nodes | 1 MiB | MBps | 500 | - | - | 1000 | 50% | - | - | - | 3 |" in t, t
    # Without the ring's floor measured, the table has no such columns.
    assert "ring's floor" not in "\n".join(report.table(ROWS, "ring"))


def test_gsync_table_gives_each_node_count_its_barriers_floor():
    """N nodes running gsync's barrier with raw frames (node_exps.barrier_floor)
    are the floor of the N-node gsync row alone; the floor of log2 N one-way
    trips stays beside it."""
    rows = [row("gsync", "tern-nx", "gsync", 2, "us", 200.0),
            row("gsync", "tern-nx", "gsync", 16, "us", 8000.0),
            row("floor", "fabric-nodes", "oneway_floor", 0, "us", 50.0),
            row("floor", "fabric-nodes", "gsync_floor", 16, "us", 4000.0)]
    t = "\n".join(report.table(rows, "gsync"))
    assert "| barrier's floor | Tern at barrier's floor |" in t, t
    assert "| gsync | 16 | us | 8000 | 200 | 2% | - | 4000 | 50% | 3 |" in t, t
    assert "| gsync | 2 | us | 200 | 50.0 | 25% | - | - | - | 3 |" in t, t
    assert "barrier's floor" not in "\n".join(report.table(rows[:3], "gsync"))


NPB_CSV = "experiment,system,metric,x,unit,median,min,max,reps\n"


def npb_run(tmp_path, name, *rows):
    d = tmp_path / name
    d.mkdir()
    (d / "npb.csv").write_text(NPB_CSV + "".join(
        f"npb,{system},{metric},{x},{unit},{v},{v},{v},1\n" for system, metric, x, unit, v in rows))
    return str(d)


def test_npb_figure_takes_each_part_of_a_run_once(tmp_path):
    """bench/npb_figure.py draws experiment 10 from runs done in parts: the
    Mop/s of every part, and a benchmark measured in two parts is refused
    with both folders named, not one of them picked silently."""
    a = npb_run(tmp_path, "a", ("tern-mpi", "EP.A time", 16, "s", 30.1),
                ("tern-mpi", "EP.A Mop/s", 16, "Mop/s", 17.8),
                ("linux-mpi", "EP.A Mop/s", 16, "Mop/s", 15.2))
    b = npb_run(tmp_path, "b", ("tern-mpi", "BT.A Mop/s", 16, "Mop/s", 200.0),
                ("linux-mpi", "BT.A Mop/s", 16, "Mop/s", 150.0))
    got = sorted((r["system"], r["metric"], r["median"]) for r in npb_figure.npb_rows([a, b]))
    assert got == [("linux-mpi", "BT.A Mop/s", 150.0), ("linux-mpi", "EP.A Mop/s", 15.2),
                   ("tern-mpi", "BT.A Mop/s", 200.0), ("tern-mpi", "EP.A Mop/s", 17.8)]
    again = npb_run(tmp_path, "again", ("tern-mpi", "EP.A Mop/s", 16, "Mop/s", 18.0))
    with pytest.raises(SystemExit) as e:
        npb_figure.npb_rows([a, again])
    assert str(e.value) == f"npb_figure: EP.A Mop/s of tern-mpi on 16 ranks is in both {a} and {again}"
    with pytest.raises(SystemExit) as e:
        npb_figure.npb_rows([a, str(tmp_path)])
    assert str(e.value) == f"npb_figure: {tmp_path} has no npb.csv"
