"""summary.md and the plots of bench/run_all.py, from its rows (dicts with
experiment, system, metric, x, unit, median, min, max, reps)."""
import math
import os

TERN = ("tern-nx", "tern-yod", "tern-fyod", "tern", "tern-mpi")
LINUX = ("linux-mpich", "linux-mpiexec", "linux-nfs", "linux", "linux-mpi")
# More ratio columns where both systems are in a table: MPI against NX on
# Tern (issue 16's goal: 0-byte latency within 10 %), MPI against MPICH, NX
# against the raw Portals under it.
EXTRA_RATIOS = [("tern-mpi", "tern-nx"), ("tern-mpi", "linux-mpi"), ("tern-nx", "tern-portals"),
                ("tern-intra", "tern-inter")]
ORDER = ["latency", "mpinx", "latfloor", "ring", "gsync", "memcpy", "memavail", "noise", "launch", "io", "boot",
         "footprint", "floor", "frames", "npb", "stream", "ppn"]
TITLES = {
    "latency": "1. Ping-pong latency, one-way (us; lower is better)",
    "mpinx": "1b. Tern's MPI against NX, one-way ping-pong latency on the same 2 Tern nodes, "
             "jobs alternating (us; lower is better; the goal: MPI/NX at most 1.10 at 0 B); "
             "paired: each pair of adjacent jobs' MPI/NX",
    "latfloor": "9b. NX and raw Portals one-way latency between 2 Tern nodes against the "
                "fabric floor, NX jobs, Portals pairs and floor bursts alternating (us; the "
                "goal: each at most 1.5x the floor at 0 B); paired: each adjacent set's "
                "latency/floor",
    "ring": "2. Ring bandwidth, MB/s each node sends; stream_2nodes: node 0 streams to node 1, "
            "MB/s it sends, raw Portals (plbench ptl-bw) beside NX and MPI (higher is better)",
    "gsync": "3. gsync / MPI_Barrier (us per call; lower is better)",
    "memcpy": "4a. memcpy bandwidth on one node (MB/s; higher is better)",
    "memavail": "4b. Memory availability, seed 003 tests #1 and #2",
    "noise": "7. OS noise, fixed work quantum (us per quantum)",
    "launch": "5. Launch of a trivial NX program, wall time of the command (ms)",
    "io": "6. File I/O, aggregate MB/s of all ranks by node count, each rank its own file "
          "(Tern: one fyod; Linux: NFSv3 to the service node; higher is better)",
    "boot": "8a. Boot (s)",
    "footprint": "8b. Kernel footprint",
    "floor": "9. The fabric floor (frames bounced off a nettest=echo node by a host process, "
             "fabric, and by a nettest=ping node, fabric-nodes: one-way is its round trip "
             "halved; the floor the other tables use; ring_bw_4nodes: frames going round a "
             "ring of 4 forwarding nodes, MB/s each node sends, the ring's floor; gsync_floor: x "
             "nodes running gsync's dissemination barrier with raw frames, us a barrier, the "
             "barrier's floor; gsync_floor_acked: the same with a frame back for each frame, "
             "as Tern's acknowledgements)",
    "frames": "Frames on the bridge during a 2-node ring of 1 MiB messages, and per "
              "message of a 0-byte NX ping-pong (frames_per_message, x = 0)",
    "npb": "10. NAS Parallel Benchmarks 3.4.1 (MPI), x = ranks: the benchmark's own time "
           "(s; lower is better) and Mop/s total (higher is better); Tern's MPI against "
           "MPICH",
    "stream": "11. OpenMP triad a[i] = b[i] + s*c[i] on one node of 4 CPUs, x = OMP_NUM_THREADS "
              "(MB/s, the best of the program's timed triads; higher is better); host: the "
              "host's 1-minute load before each boot",
    "ppn": "12. NX between two ranks of one node (tern-intra: yod -ppn 2, the node's loop, "
           "one copy) and on two nodes (tern-inter: the NIC), one cluster of two 2-CPU nodes, "
           "launches alternating: one-way latency (us) and 2-rank ring bandwidth (MB/s each "
           "rank sends); paired: each adjacent pair of launches' intra/inter",
}
HIGHER_BETTER = {"ring", "memcpy", "io", "stream"}


def _key(x):
    try:
        return (0, float(x))
    except (TypeError, ValueError):
        return (1, str(x))


def _fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def _size(x):
    try:
        n = int(float(x))
    except (TypeError, ValueError):
        return str(x)
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B" if n or x == 0 else str(x)


def floor_of(rows, exp, x):
    """The fabric floor for one figure, or None: one-way latency for a frame
    of x bytes; x node barrier = ceil(log2 x) one-way zero-byte trips (a
    dissemination barrier); echo bandwidth for bandwidth.  The floor between
    two nodes (system fabric-nodes) where it was measured, else the host
    process's (node_exps.floor says why)."""
    by = {}
    for r in rows:
        if r["experiment"] == "floor":
            by.setdefault(r["system"], {})[(r["metric"], r["x"])] = r["median"]
    f = by.get("fabric-nodes") or by.get("fabric") or {}
    if exp == "latency":
        return f.get(("oneway_floor", x))
    if exp == "gsync" and ("oneway_floor", 0) in f:
        return math.ceil(math.log2(int(x))) * f[("oneway_floor", 0)]
    if exp == "ring":
        # The echo at the fabric's frame size (the largest measured), which
        # the nodes' Portals fragment at.
        bw = {int(size): v for (m, size), v in f.items() if m == "echo_bw"}
        return bw[max(bw)] if bw else None
    return None


def ring_floor_of(rows, metric):
    """The floor of the ring a ring row (per_node_Nnodes) was measured on:
    N forwarding nodes (node_exps.ring_floor), at the fabric's frame size;
    None where not measured."""
    want = metric.replace("per_node_", "ring_bw_")
    bw = {int(r["x"]): r["median"] for r in rows
          if r["experiment"] == "floor" and r["metric"] == want}
    return bw[max(bw)] if bw and want != metric else None


def barrier_floor_of(rows, x):
    """The floor of a gsync row on x nodes: x nodes running the same
    dissemination barrier with raw frames (node_exps.barrier_floor); None
    where not measured."""
    v = [r["median"] for r in rows if r["experiment"] == "floor" and
         r["metric"] == "gsync_floor" and str(r["x"]) == str(x)]
    return v[0] if v else None


def table(rows, exp):
    rs = [r for r in rows if r["experiment"] == exp]
    systems = []
    for r in rs:
        if r["system"] not in systems:
            systems.append(r["system"])
    t = next((s for s in TERN if s in systems), None)
    lx = next((s for s in LINUX if s in systems), None)
    cells = {}
    for r in rs:
        cells.setdefault((r["metric"], r["x"], r["unit"]), {})[r["system"]] = r
    has_floor = exp in ("latency", "ring", "gsync") and any(
        floor_of(rows, exp, x) for (_, x, _) in cells)
    head = ["metric", "x", "unit", *systems]
    if t and lx:
        head.append(f"{t}/{lx}")
    extra = [(a, b) for a, b in EXTRA_RATIOS if a in systems and b in systems and
             (a, b) != (t, lx)]
    head += [f"{a}/{b}" for a, b in extra]
    if has_floor:
        head += ["floor", "Tern at floor", "Linux at floor"]
    has_ring_floor = exp == "ring" and any(ring_floor_of(rows, m) for (m, _, _) in cells)
    if has_ring_floor:
        head += ["ring's floor", "Tern at ring's floor"]
    has_barrier_floor = exp == "gsync" and any(barrier_floor_of(rows, x) for (_, x, _) in cells)
    if has_barrier_floor:
        head += ["barrier's floor", "Tern at barrier's floor"]
    head.append("reps")
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (metric, x, unit), by in sorted(cells.items(), key=lambda kv: (kv[0][0], _key(kv[0][1]))):
        sized = exp in ("latency", "mpinx", "latfloor", "ring", "memcpy", "ppn") and unit     # failure counts: x is nodes
        line = [metric, _size(x) if sized else str(x), unit]
        line += [_fmt(by[s]["median"]) if s in by else "-" for s in systems]
        if t and lx:
            tv, lv = by.get(t), by.get(lx)
            line.append(f"{tv['median'] / lv['median']:.2f}" if tv and lv and lv["median"]
                        else "-")
        for a, b in extra:
            av, bv = by.get(a), by.get(b)
            line.append(f"{av['median'] / bv['median']:.2f}" if av and bv and bv["median"]
                        else "-")
        if has_floor:
            # Rows that count failures (no unit) are not figures.
            fl = floor_of(rows, exp, x) if unit else None
            line.append(_fmt(fl))
            for s in (t, lx):
                v = by.get(s)
                if fl and v and v["median"]:
                    frac = (v["median"] / fl if exp in HIGHER_BETTER else fl / v["median"])
                    line.append(f"{frac * 100:.0f}%")
                else:
                    line.append("-")
        if has_ring_floor:
            rf, v = ring_floor_of(rows, metric), by.get(t)
            line.append(_fmt(rf))
            line.append(f"{v['median'] / rf * 100:.0f}%" if rf and v and v["median"] else "-")
        if has_barrier_floor:
            bf, v = barrier_floor_of(rows, x), by.get(t)
            line.append(_fmt(bf))
            line.append(f"{bf / v['median'] * 100:.0f}%" if bf and v and v["median"] else "-")
        line.append("/".join(sorted({str(by[s]["reps"]) for s in by})))
        out.append("| " + " | ".join(line) + " |")
    return out


def plot_series(rows, exp, metric=None):
    """{line label: [(x, median, min, max)]} of one experiment's sized rows.
    One line per system; per system and metric where the experiment has
    several (the ring on 4 nodes and on 2), so that their points are not
    drawn as one line."""
    sized = [r for r in rows if r["experiment"] == exp and r["unit"]]
    several = metric is None and len({r["metric"] for r in sized}) > 1
    by = {}
    for r in sized:
        if metric is None or r["metric"] == metric:
            try:
                x = float(r["x"])
            except (TypeError, ValueError):
                continue
            label = f"{r['system']} {r['metric']}" if several else r["system"]
            by.setdefault(label, []).append((x, r["median"], r["min"], r["max"]))
    return {s: sorted(v) for s, v in by.items()}


def summary(out_dir, rows, host, failed):
    lines = ["# Tern against Linux + MPICH: summary", "",
             # host.csv gives an earlier run's values back as text: "False" is not --smoke
             "Made by `bench/run_all.py`" + (" --smoke" if str(host.get("smoke")) == "True" else "") +
             "; medians over the repetitions (column reps). Ratios are Tern/Linux of the "
             "same run. \"at floor\" is the fabric floor as a fraction of the figure "
             "(latency, barrier) or the figure as a fraction of the floor (bandwidth).", "",
             "| host | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in host.items()]
    if failed:
        lines += ["", "**Not measured in this run (failures):**", ""]
        lines += [f"- {f}" for f in failed]
    exps = [e for e in ORDER if any(r["experiment"] == e for r in rows)]
    for exp in exps:
        lines += ["", f"## {TITLES.get(exp, exp)}", ""] + table(rows, exp)
    pngs = [p for p in ("latency.png", "ring.png", "gsync.png", "launch.png", "npb.png")
            if os.path.exists(os.path.join(out_dir, p))]
    if pngs:
        lines += ["", "## Plots", ""] + [f"![{p}]({p})" for p in pngs]
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def plots(out_dir, rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def plot(name, exp, xlabel, ylabel, logx, logy, extra=None, metric=None):
        ss = plot_series(rows, exp, metric)
        if not ss:
            return
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for s, pts in ss.items():
            xs = [p[0] if p[0] > 0 or not logx else 0.5 for p in pts]
            ax.errorbar(xs, [p[1] for p in pts],
                        yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]],
                        marker="o", capsize=3, label=s)
        if extra:
            extra(ax)
        if logx:
            ax.set_xscale("log", base=2)
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        ax.set_title(TITLES[exp].split(" (")[0])
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, name), dpi=90)
        plt.close(fig)

    def floor_lat(ax):
        for system, style in (("fabric-nodes", "k--"), ("fabric", "k:")):
            pts = plot_series(rows, "floor", "oneway_floor").get(system)
            if pts:
                ax.plot([p[0] if p[0] > 0 else 0.5 for p in pts], [p[1] for p in pts], style,
                        label=f"{system} floor")

    def floor_bw(ax):
        for system, style in (("fabric-nodes", "--"), ("fabric", ":")):
            pts = plot_series(rows, "floor", "echo_bw").get(system)
            if pts:   # at the fabric's frame size, the largest measured
                ax.axhline(max(pts)[1], color="k", linestyle=style,
                           label=f"{system} floor (echo)")
        pts = plot_series(rows, "floor", "ring_bw_4nodes").get("fabric-nodes")
        if pts:
            ax.axhline(max(pts)[1], color="k", linestyle="-.", label="4-node ring's floor")

    plot("latency.png", "latency", "message bytes (0 B drawn at 0.5)", "one-way us", True, True,
         floor_lat)
    plot("ring.png", "ring", "message bytes", "MB/s per node", True, True, floor_bw)
    def floor_barrier(ax):
        pts = plot_series(rows, "floor", "gsync_floor").get("fabric-nodes")
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "k-.", label="barrier's floor")

    plot("gsync.png", "gsync", "nodes", "us per barrier", True, True, floor_barrier)
    plot("launch.png", "launch", "nodes", "ms, trivial job (wall, less `exec true`)", True,
         False, metric="trivial_job_net")
    npb_plot(out_dir, rows, plt)


def npb_plot(out_dir, rows, plt):
    """Experiment 10 in the style of seed 003's Figures 24 and 25: one panel
    per class, a pair of bars per benchmark (Tern, Linux) at its largest rank
    count, the benchmark's Mop/s, the ranks under each name."""
    rs = [r for r in rows if r["experiment"] == "npb" and r["unit"] == "Mop/s"]
    if not rs:
        return
    classes = sorted({r["metric"].split()[0].split(".")[1] for r in rs})
    fig, axes = plt.subplots(1, len(classes), figsize=(6.4 * len(classes), 4.4), squeeze=False)
    for ax, cls in zip(axes[0], classes):
        best = {}
        for r in rs:
            bench, c = r["metric"].split()[0].split(".")
            if c != cls:
                continue
            k = (bench, r["system"])
            if k not in best or int(r["x"]) > int(best[k]["x"]):
                best[k] = r
        benches = [b.upper() for b in ("ep", "mg", "cg", "ft", "is", "sp", "bt", "lu")
                   if any(k[0] == b.upper() for k in best)]
        for i, (system, color) in enumerate((("tern-mpi", "tab:blue"),
                                             ("linux-mpi", "tab:gray"))):
            xs = [j + (i - 0.5) * 0.38 for j in range(len(benches))]
            ys = [best[(b, system)]["median"] if (b, system) in best else 0 for b in benches]
            ax.bar(xs, ys, width=0.38, color=color,
                   label="Tern (MPI on Portals)" if system == "tern-mpi" else "Linux + MPICH")
        labels = []
        for b in benches:
            n = {best[k]["x"] for k in best if k[0] == b}
            labels.append(f"{b}\n({max(int(x) for x in n)})")
        ax.set_xticks(range(len(benches)))
        ax.set_xticklabels(labels)
        ax.set_yscale("log")
        # Head room for the legend above the tallest bar.
        ax.set_ylim(top=max(r["median"] for k, r in best.items()) * 6)
        ax.set_ylabel("Mop/s total (log)")
        ax.set_title(f"NPB class {cls} (ranks)")
        ax.legend()
        ax.grid(True, axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "npb.png"), dpi=90)
    plt.close(fig)


def rows_from(out_dir):
    """The rows back from run_all.py's per-experiment CSVs."""
    import csv
    rows = []
    for name in sorted(os.listdir(out_dir)):
        if not name.endswith(".csv") or name == "host.csv":
            continue
        with open(os.path.join(out_dir, name)) as f:
            for r in csv.DictReader(f):
                if "experiment" not in r:
                    continue
                for k in ("median", "min", "max"):
                    r[k] = float(r[k])
                r["reps"] = int(r["reps"])
                if r["x"].lstrip("-").isdigit():
                    r["x"] = int(r["x"])
                rows.append(r)
    return rows


def system_python():
    """Debian's python3 (where bench/install-deps puts python3-matplotlib)
    when this Python is another one (a pyenv one, say); else None."""
    import sys
    system = "/usr/bin/python3"
    if os.path.realpath(sys.executable) == os.path.realpath(system) or \
            not os.path.exists(system):
        return None
    return system


def plots_anywhere(out_dir, rows):
    """plots(), or, where this Python has no matplotlib, the system's python3
    on the CSVs."""
    import subprocess
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        system = system_python()
        if not system:
            raise
        subprocess.run([system, os.path.abspath(__file__), out_dir], check=True, timeout=300)
        return
    plots(out_dir, rows)


if __name__ == "__main__":
    import sys
    plots(sys.argv[1], rows_from(sys.argv[1]))
