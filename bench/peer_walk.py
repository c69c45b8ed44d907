#!/usr/bin/env python3
"""What a Portals call that finds nothing costs against the number of idle
peers its NI knows (bench/peerwalk/peerwalk.c): an empty PtlEQGet and a
PtlEQPoll with time-out 0, each the progress walk's fixed cost.  Medians of
--reps runs of --calls calls each.  No root, no cluster: the library runs on
its in-process test host.

    python3 bench/peer_walk.py [--peers 1,16,64,512,3000] [--reps 5]
                               [--lib OTHER/libportals-test.a --label before]
                               [--tern-nodes 2,8,16]

--lib links the same program against another build of the library (a
checkout of an earlier commit: `make build/portals/libportals-test.a`
there), for a before/after pair.  --tern-nodes also boots a cluster of
each size (build/tern.elf: copy another build's there for a before/after
pair) and runs bench/peerwalk/emptyget.c under yod: rank 0 hears from every
rank, then times an empty PtlEQGet beyond a bare Portals call (needs root).
CSV: bench/results/<date>/peer_walk.csv (appended, one row per label, call
and peer count)."""
import argparse
import csv
import datetime
import os
import statistics
import subprocess
import sys
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "bench", "peerwalk", "peerwalk.c")


def build(lib, out):
    if lib is None:
        subprocess.run(["make", "-s", "-C", ROOT, "build/bench-host/peerwalk"], check=True)
        return os.path.join(ROOT, "build", "bench-host", "peerwalk")
    subprocess.run(["cc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror",
                    "-I" + os.path.join(ROOT, "portals", "include"),
                    "-I" + os.path.join(ROOT, "portals", "host", "test"),
                    "-I" + os.path.join(ROOT, "tests", "portals"),
                    "-o", out, SRC, lib], check=True)
    return out


def tern(nodes, reps):
    """Median us an empty PtlEQGet costs rank 0 of a job of `nodes` beyond a
    bare Portals call, and all repetitions, on a fresh cluster."""
    subprocess.run(["make", "-s", "-C", ROOT, "build/nx-tern/emptyget"], check=True)
    cluster = os.path.join(ROOT, "qemu", "cluster")
    name = "pw" + uuid.uuid4().hex[:7]
    try:
        subprocess.run([cluster, "--name", name, "up", "-n", str(nodes), "--boot", "direct",
                        "--mem", "256M"], check=True, capture_output=True, timeout=900)
        r = subprocess.run([cluster, "--name", name, "exec", "yod", "-sz", str(nodes),
                            os.path.join(ROOT, "build", "nx-tern", "emptyget"), str(reps)],
                           capture_output=True, text=True, timeout=600)
    finally:
        subprocess.run([cluster, "--name", name, "down"], capture_output=True)
    v = [float(line.split()[4]) for line in r.stdout.splitlines() if line.startswith("R ")]
    if r.returncode or len(v) != reps:
        sys.exit(f"emptyget on {nodes} nodes: status {r.returncode}\n{r.stdout}{r.stderr}")
    return statistics.median(v), v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peers", default="1,16,64,512,3000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--calls", type=int, default=100000)
    ap.add_argument("--lib", help="another build's libportals-test.a")
    ap.add_argument("--label", default="this build")
    ap.add_argument("--tern-nodes", help="comma-separated cluster sizes (root)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results",
                                                  datetime.date.today().isoformat()))
    a = ap.parse_args()
    exe = build(a.lib, os.path.join(ROOT, "build", "bench-host", "peerwalk-other"))
    rows = []
    print(f"{a.label}: ns per call, median of {a.reps} x {a.calls} "
          f"(load {open('/proc/loadavg').read().split()[0]})")
    print("| idle peers | empty PtlEQGet | PtlEQPoll, time-out 0 |")
    print("|---:|---:|---:|")
    for k in [int(x) for x in a.peers.split(",")]:
        got = {}
        for _ in range(a.reps):
            r = subprocess.run([exe, str(k), str(a.calls)], capture_output=True, text=True)
            if r.returncode:
                sys.exit(f"peerwalk {k}: status {r.returncode}\n{r.stdout}{r.stderr}")
            for line in r.stdout.splitlines():
                _, _, _, metric, v = line.split()
                got.setdefault(metric, []).append(float(v))
        med = {m: statistics.median(v) for m, v in got.items()}
        print(f"| {k} | {med['eqget_ns']:.0f} | {med['eqpoll_ns']:.0f} |")
        for m, v in got.items():
            rows.append({"label": a.label, "call": m, "peers": k, "median": f"{med[m]:.1f}",
                         "min": f"{min(v):.1f}", "max": f"{max(v):.1f}", "reps": len(v)})
    if a.tern_nodes:
        print(f"\n{a.label}, Tern nodes: us an empty PtlEQGet costs rank 0 beyond a bare "
              f"Portals call, median of {a.reps} x 20000")
        print("| nodes | rank 0's idle peers | us |")
        print("|---:|---:|---:|")
        for n in [int(x) for x in a.tern_nodes.split(",")]:
            med, v = tern(n, a.reps)
            print(f"| {n} | {n - 1} | {med:.2f} |")
            rows.append({"label": a.label, "call": "tern_eqget_us", "peers": n - 1,
                         "median": f"{med:.3f}", "min": f"{min(v):.3f}", "max": f"{max(v):.3f}",
                         "reps": len(v)})
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "peer_walk.csv")
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        if new:
            w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
