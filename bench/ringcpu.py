#!/usr/bin/env python3
"""Host CPU per MB moved in the seed's ring (issue 18): what the emulator
spends carrying NX ring traffic between Tern nodes, and how often its
threads switch, beside the bandwidth of the same jobs.

A Tern cluster of --nodes nodes (qemu/cluster, virtio, TCG) runs
`yod -sz N nxbench ring ITERS BYTES BYTES` --reps times after a warm-up.
Around each job the script reads the nodes' QEMU processes' CPU time and
context switches from /proc (all threads; bench/msgcpu.py's reader) and
divides them by the MB the nodes sent (ITERS x BYTES x N).  The job's
launch is inside the window: a few ms of the nodes' CPU, against seconds of
ring.  On a host with fewer cores than emulated threads this CPU is what
bounds the ring.  Needs root.

    python3 bench/ringcpu.py [--nodes 4] [--bytes 8388608] [--iters 20] [--reps 3]

Writes bench/results/<date>/ringcpu.csv (or --out) and prints the table."""
import argparse
import json
import os
import statistics
import subprocess
import sys

import msgcpu  # bench/, beside this script; msgpath puts qemu/ and tests/ on the path

ROOT = msgcpu.ROOT
CLUSTER = os.path.join(ROOT, "qemu", "cluster")
NXBENCH = os.path.join(ROOT, "build", "nx-tern", "nxbench")


def cl(name, *args, timeout=600):
    r = subprocess.run([CLUSTER, "--name", name, *args], capture_output=True, text=True,
                       timeout=timeout)
    if r.returncode:
        raise RuntimeError(f"qemu/cluster {' '.join(args)} failed:\n{r.stdout}{r.stderr}")
    return r.stdout


def node_pids(name):
    from ternlib.cluster import RUN_BASE
    with open(os.path.join(RUN_BASE, name, "state.json")) as f:
        return [n["pid"] for n in json.load(f)["nodes"]]


def ring_mbps(out, iters):
    """Mean MB/s per node from nxbench ring's "R nx-ringN BYTES MBps X" lines."""
    v = [float(w[4]) for w in (line.split() for line in out.splitlines())
         if len(w) == 5 and w[0] == "R" and w[3] == "MBps"]
    if len(v) != iters:
        raise RuntimeError(f"nxbench ring printed {len(v)} results, not {iters}:\n{out}")
    return statistics.mean(v)


def ring(name, n, iters, size):
    out = cl(name, "exec", "yod", "-sz", str(n), NXBENCH, "ring", str(iters), str(size),
             str(size))
    return ring_mbps(out, iters)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--bytes", type=int, default=8 << 20)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default="ringcpu.csv")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("ringcpu: needs root (network namespace, bridge, taps)")
    name = f"ringcpu{os.getpid() % 100000}"
    load0 = os.getloadavg()
    runs = []
    try:
        cl(name, "up", "-n", str(a.nodes), "--os", "tern", "--mem", "256M", timeout=900)
        pids = node_pids(name)
        ring(name, a.nodes, 2, a.bytes)                      # warm-up
        mb = a.iters * a.bytes * a.nodes / 1e6
        for i in range(a.reps):
            c0, s0 = msgcpu.cpu_and_switches(pids)
            bw = ring(name, a.nodes, a.iters, a.bytes)
            c1, s1 = msgcpu.cpu_and_switches(pids)
            runs.append({"cpu_ms_per_mb": (c1 - c0) * 1e3 / mb,
                         "switches_per_mb": (s1 - s0) / mb, "mbps_per_node": bw})
            print(f"# run {i + 1}: {runs[-1]['cpu_ms_per_mb']:.2f} ms CPU and "
                  f"{runs[-1]['switches_per_mb']:.1f} switches per MB; {bw:.0f} MB/s per node",
                  flush=True)
    finally:
        subprocess.run([CLUSTER, "--name", name, "down"], capture_output=True, timeout=300)
    med = msgcpu.medians(runs)
    print(f"# {a.nodes} nodes, {a.iters} x {a.bytes} bytes, {a.reps} runs, host load "
          f"{load0[0]:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"host CPU per MB sent (all QEMUs)      {med['cpu_ms_per_mb']:8.2f} ms")
    print(f"context switches per MB sent          {med['switches_per_mb']:8.1f}")
    print(f"ring bandwidth, MB/s per node         {med['mbps_per_node']:8.1f}")
    msgcpu.write_csv(a.out, runs, {"nodes": a.nodes, "bytes": a.bytes}, load0)


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
