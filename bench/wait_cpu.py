#!/usr/bin/env python3
"""Host CPU that a waiting rank costs: on a two-node cluster, `nxbench block`
has rank 0 wait in a receive (then in a gsync) while rank 1 sleeps MS ms
before it sends (joins); `spinwait eq|ct` has rank 0 spin on PtlEQGet
(PtlCTGet) meanwhile, as a library polling a user-space NIC would.  From the moment rank 0's "B ..." line reaches yod
until its result line does, the CPU time (utime + stime, /proc/PID/stat) of
each node's QEMU process is sampled: the blocked node's share of one host
core is what a rank blocked in a receive costs; the sleeping node's is what
a rank in nanosleep costs.

    python3 bench/wait_cpu.py [--reps 5] [--ms 2000] [--root DIR]

--root runs another checkout's cluster and kernel (a build of the base
commit, for a before/after in one sitting); the programs are this
checkout's."""
import argparse
import os
import statistics
import subprocess
import time
import uuid

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK    # utime, stime


def qemu_pid(name, node):
    out = subprocess.run(["pgrep", "-f", f"tern-clusters/{name}/node{node}.log"],
                         capture_output=True, text=True).stdout.split()
    if not out:
        raise SystemExit(f"no QEMU process for node {node} of {name}")
    return int(out[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ms", type=int, default=2000)
    ap.add_argument("--root", default=HERE)
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    cluster = os.path.join(root, "qemu", "cluster")
    prog = os.path.join(HERE, "build", "nx-tern", "nxbench")
    name = "wc" + uuid.uuid4().hex[:6]
    print(f"load before: {open('/proc/loadavg').read().strip()}")
    r = subprocess.run([cluster, "--name", name, "up", "-n", "2", "--boot", "direct"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode:
        raise SystemExit(f"cluster did not come up: {r.stderr}")
    share = {k: {1: [], 2: []} for k in ("recv", "gsync", "spin-eq", "spin-ct")}
    spin = os.path.join(HERE, "build", "portals", "kernel", "spinwait-musl")
    jobs = [[prog, "block", str(a.reps), str(a.ms)]]
    jobs += [[spin, how, str(a.ms)] for _ in range(a.reps) for how in ("eq", "ct")]
    try:
        pids = {n: qemu_pid(name, n) for n in (1, 2)}
        for job in jobs:
            watch(cluster, name, job, pids, share)
    finally:
        subprocess.run([cluster, "--name", name, "down"], capture_output=True, timeout=300)
    print(f"root {root}; rank 0 waits, rank 1 sleeps {a.ms} ms; which node holds rank 0 is "
          f"the allocator's choice (the [0] lines above)")
    for kind in share:
        for n in (1, 2):
            xs = share[kind][n]
            if xs:
                print(f"{kind:7} node {n}: host CPU median {statistics.median(xs) * 100:5.1f} % "
                      f"of a core (min {min(xs) * 100:.1f}, max {max(xs) * 100:.1f}, n={len(xs)})")
    print(f"load after: {open('/proc/loadavg').read().strip()}")


def watch(cluster, name, job, pids, share):
    """Runs one yod job, sampling the nodes' CPU between rank 0's "B KIND"
    line and its next line."""
    p = subprocess.Popen([cluster, "--name", name, "exec", "yod", "-label", "-sz", "2", *job],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start = None
    try:
        for line in p.stdout:
            words = line.split()
            if len(words) >= 3 and words[0] == "[0]" and words[1] == "B":
                start = (words[2], time.monotonic(), {n: cpu_seconds(pid) for n, pid in pids.items()})
            elif words and words[0] == "[0]" and start:
                kind, t0, c0 = start
                wall = time.monotonic() - t0
                for n, pid in pids.items():
                    share[kind][n].append((cpu_seconds(pid) - c0[n]) / wall)
                print(f"{kind:7} {' '.join(words[1:])}; window {wall * 1000:.0f} ms; host CPU "
                      f"node 1 {share[kind][1][-1] * 100:.1f} %, node 2 "
                      f"{share[kind][2][-1] * 100:.1f} %", flush=True)
                start = None
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    if p.returncode:
        raise SystemExit(f"yod failed: {p.stderr.read()}")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
