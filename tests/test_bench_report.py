"""The bench report (bench/ternbench/report.py) draws and tabulates what was
measured: the ring on 4 nodes and on 2 nodes are two lines of the plot, not
one line zig-zagging between them, and the summary's ring table gives each
its fraction of the fabric floor; counts of failed jobs are not drawn.  No
cluster: rows made here."""
import os
import sys

from nodes import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
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
