#!/usr/bin/env python3
"""How long failures take to be seen (issue 19), on one virtual cluster:

  node death:  a two-rank job runs; one node's QEMU is killed.  Seconds from
               the kill to yod's exit, and to `yod -show` listing the node down.
  yod death:   a two-rank job runs; yod is killed with SIGKILL.  Seconds from
               the kill to `yod -show` listing both nodes free (the nodes end
               the orphan when yod has been silent YOD_SILENCE_S, the
               allocator frees them when they say so).

    python3 bench/failure_times.py [--runs 3]

Medians of --runs runs (each node death uses a node of its own: the cluster
has runs + 1 nodes); prints them with the load average before and after.
Timings are wall-clock polls of `yod -show` (about 0.3 s apart)."""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from clusters import down, node_states as states, start, yod_bg  # noqa: E402

RANKS = os.path.join(ROOT, "build", "programs", "ranks-musl")


def wait(pred, secs=180):
    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > secs:
            raise SystemExit("timed out")
        time.sleep(0.3)
    return time.monotonic()


def node_death(name, victim):
    p = yod_bg(name, "-list", f"1,{victim}", RANKS, "spin")
    assert "spinning" in p.stdout.readline()
    qemu = int(subprocess.run(["pgrep", "-f", f"tern-clusters/{name}/node{victim}.log"],
                              capture_output=True, text=True).stdout.split()[0])
    t0 = time.monotonic()
    os.kill(qemu, signal.SIGKILL)
    p.communicate(timeout=180)
    t_yod = time.monotonic() - t0
    t_down = wait(lambda: states(name).get(victim) == "down") - t0
    wait(lambda: states(name).get(1) == "free")
    return t_yod, t_down


def yod_death(name):
    p = yod_bg(name, "-list", "1,2", RANKS, "spin",
               pre=("sh", "-c", 'echo "yod pid $$"; exec "$@"', "sh"))
    pid = int(p.stdout.readline().split()[2])
    assert "spinning" in p.stdout.readline()
    t0 = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    p.communicate(timeout=30)
    return wait(lambda: states(name).get(1) == "free" and states(name).get(2) == "free") - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    load0 = open("/proc/loadavg").read().split()[:3]
    name = start("fb", "-n", str(a.runs + 2), "--boot", "direct")
    try:
        freed = [yod_death(name) for _ in range(a.runs)]
        deaths = [node_death(name, 3 + i) for i in range(a.runs)]
    finally:
        down(name)
    load1 = open("/proc/loadavg").read().split()[:3]
    med = statistics.median
    print(f"load average before {' '.join(load0)}, after {' '.join(load1)}")
    print(f"node death -> yod exits:       median {med(d[0] for d in deaths):.1f} s "
          f"{[round(d[0], 1) for d in deaths]}")
    print(f"node death -> node shown down: median {med(d[1] for d in deaths):.1f} s "
          f"{[round(d[1], 1) for d in deaths]}")
    print(f"yod killed -> nodes free:      median {med(freed):.1f} s {[round(x, 1) for x in freed]}")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
