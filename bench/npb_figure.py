#!/usr/bin/env python3
"""Experiment 10's figure (seed 003's Figures 24 and 25) from several runs.

A class A run of all eight benchmarks on 16 nodes of each system takes longer
than one sitting on the 2-core host, so it is done in parts (run_all.py
--npb-bench ..., each part Tern then Linux on the same clusters).  This draws
report.npb_plot's figure from the npb.csv of every part named:

    python3 bench/npb_figure.py OUT_DIR RUN_DIR [RUN_DIR...]

and writes OUT_DIR/npb.png.  A benchmark found in two runs at the same rank
count is an error, not a silent choice between them."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ternbench import report  # noqa: E402


def npb_rows(run_dirs):
    rows, seen = [], {}
    for d in run_dirs:
        if not os.path.exists(os.path.join(d, "npb.csv")):
            sys.exit(f"npb_figure: {d} has no npb.csv")
        for r in report.rows_from(d):
            if r["experiment"] != "npb" or r["unit"] != "Mop/s":
                continue
            key = (r["system"], r["metric"], r["x"])
            if key in seen:
                sys.exit(f"npb_figure: {r['metric']} of {r['system']} on {r['x']} ranks is in "
                         f"both {seen[key]} and {d}")
            seen[key] = d
            rows.append(r)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="folder for npb.png")
    ap.add_argument("runs", nargs="+", help="run_all.py output folders holding npb.csv")
    a = ap.parse_args()
    rows = npb_rows(a.runs)
    if not rows:
        sys.exit("npb_figure: no NPB Mop/s rows in " + " ".join(a.runs))
    try:
        import matplotlib
    except ImportError:
        system = report.system_python()
        if not system:
            raise
        os.execv(system, [system, os.path.abspath(__file__), *sys.argv[1:]])
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(a.out, exist_ok=True)
    report.npb_plot(a.out, rows, plt)
    print(f"npb_figure: {len(rows)} rows from {len(a.runs)} runs -> "
          f"{os.path.join(a.out, 'npb.png')}")


if __name__ == "__main__":
    main()
