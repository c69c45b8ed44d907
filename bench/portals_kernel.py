#!/usr/bin/env python3
"""Portals between two Tern kernel nodes (virtio-net, QEMU, a bridge in a
private network namespace): ping-pong latency 0 B .. 64 KiB (one-way =
round trip / 2, median of 200 or 50 round trips per repetition) and
streaming put bandwidth 4 KiB .. 16 MiB (8 MiB per repetition, one message
for 16 MiB), plus the cost of the tern_portals system call.

On the same bridge, for comparison: the latency and bandwidth loops of
bench/portals_linux.py (plbench: ptl-ping, ptl-bw to a ptl-pong server)
between each pair of kernel node and Linux process (tern_tern, tern_linux,
linux_tern, linux_linux = client_server); the Linux processes sit on veths
plugged into the bridge (MTU 1500 like the nodes), so linux_linux is the
host's own floor on that link.  Medians over the repetitions.  Needs root.

    python3 bench/portals_kernel.py [--reps 5] [--accel tcg|kvm] [--out NAME.csv]

Writes bench/results/<date>/portals_kernel.csv (or --out) and prints a table."""
import argparse
import csv
import datetime
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from nodes import run_node  # noqa: E402
from test_portals_kernel import bridged_namespace, prog, run_pair  # noqa: E402
from test_portals_kernel_wire import Procs, add_linux_port, kv, read_line  # noqa: E402

PLBENCH = os.path.join(ROOT, "build", "portals", "linux", "plbench")
PLBENCH_TERN = os.path.join(ROOT, "build", "portals", "kernel", "plbench-tern")
LAT = [0, 8, 64, 512, 1024, 4096, 16384, 65536]
BW = [4096, 65536, 1 << 20, 16 << 20]
# Who is where on the bridge: kernel nodes on the taps, Linux on veths.
TERN_TX, TERN_RX, LINUX_TX, LINUX_RX = 1, 2, 3, 4


def linux_cmd(ns, dev, pid, argv):
    return ["ip", "netns", "exec", ns, "env", f"TERN_IFACE={dev}", f"TERN_PID={pid}", *argv]


def pairs(reps, accel):
    """plbench latency and bandwidth for each (client, server) kind: kernel
    nodes on the taps, Linux processes on veths plugged into the same
    bridge (MTU 1500 like the nodes)."""
    samples = {}
    joined = lambda xs: ",".join(map(str, xs))  # noqa: E731
    with bridged_namespace(2) as (ns, taps):
        add_linux_port(ns, "lnx0", LINUX_TX)
        add_linux_port(ns, "lnx1", LINUX_RX)
        for src, dst in (("tern", "tern"), ("tern", "linux"), ("linux", "tern"),
                         ("linux", "linux")):
            ps = Procs()
            try:
                if dst == "tern":
                    srv = ps.node(ns, taps[1], TERN_RX, "virtio", ["ptl-pong"], 900, accel,
                                  program=PLBENCH_TERN)
                    nid = TERN_RX
                else:
                    srv = ps.start(linux_cmd(ns, "lnx1", 10, [PLBENCH, "ptl-pong"]))
                    nid = LINUX_RX
                pid = kv(read_line(srv, "READY", 60, []))["pid"]
                # Emulated ends are slow: fewer round trips per figure there.
                iters = "2000" if src == dst == "linux" else "200"
                for cpid, argv in ((20, ["ptl-ping", str(nid), str(pid), iters, str(reps),
                                         joined(LAT)]),
                                   (21, ["ptl-bw", str(nid), str(pid), str(8 << 20), str(reps),
                                         joined(BW)])):
                    if src == "tern":
                        c = ps.node(ns, taps[0], TERN_TX, "virtio", argv, 900, accel,
                                    program=PLBENCH_TERN)
                    else:
                        c = ps.start(linux_cmd(ns, "lnx0", cpid, [PLBENCH, *argv]))
                    out, err = c.communicate(timeout=920)
                    if c.returncode:
                        sys.exit(f"portals_kernel: plbench {argv[0]} {src} -> {dst} failed:\n"
                                 f"{out}\n{err}")
                    for line in out.splitlines():
                        if line.startswith("R "):
                            _, kind, size, _, val = line.split()
                            unit = "us" if kind == "ptl-lat" else "MBps"
                            what = "latency" if kind == "ptl-lat" else "bandwidth"
                            samples.setdefault((f"{src}_{dst}_{what}_{unit}", int(size)),
                                               []).append(float(val))
            finally:
                ps.close()      # the servers run until stopped
    return samples


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--accel", choices=["tcg", "kvm"], default="tcg")
    ap.add_argument("--out", default="portals_kernel.csv",
                    help="file name under bench/results/<date>/ (default portals_kernel.csv)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("portals_kernel: needs root (network namespace, bridge, taps)")

    samples = {}
    with bridged_namespace(2) as (ns, taps):
        (src, sout, serr), (crc, cout, cerr) = run_pair(
            ns, taps, ["server", "1"], ["client", "2", "bench", str(a.reps)],
            timeout=900, nics=("virtio", "virtio"), client_prog="pingpong-musl",
            server_prog="pingpong-musl", accel=a.accel)
    if crc or src:
        sys.exit(f"portals_kernel: client {crc}, server {src}\n{cout}\n{cerr}\n{sout}\n{serr}")
    for line in cout.splitlines():
        m = re.match(r"bench,(\w+),(\d+),(\d+),([\d.]+)$", line)
        if m:
            samples.setdefault((m[1], int(m[2])), []).append(float(m[4]))

    samples.update(pairs(a.reps, a.accel))

    cost = run_node(prog("badptr-musl"), timeout=120,
                    extra=[f"--{a.accel}", "--nic", "virtio", "--nid", "7"])
    m = re.search(r"cost: tern_portals nop (\d+) ns, PtlEQGet \(empty\) (\d+) ns, getpid (\d+) ns",
                  cost.stdout)
    if m:
        for name, v in zip(("call_nop_ns", "call_eqget_ns", "getpid_ns"), m.groups()):
            samples[(name, 0)] = [float(v)]

    out_dir = os.path.join(ROOT, "bench", "results", datetime.date.today().isoformat())
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, a.out)
    rows = [{"accel": a.accel, "nic": "veth" if k.startswith("linux_linux") else "virtio-net",
             "metric": k, "size": n, "reps": len(v),
             "median": round(statistics.median(v), 2), "min": round(min(v), 2),
             "max": round(max(v), 2)} for (k, n), v in samples.items()]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{'metric':<30}{'size':>10}{'reps':>6}{'median':>12}{'min':>12}{'max':>12}")
    for r in rows:
        print(f"{r['metric']:<30}{r['size']:>10}{r['reps']:>6}{r['median']:>12}{r['min']:>12}"
              f"{r['max']:>12}")
    print(f"written to {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
