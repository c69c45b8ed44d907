#!/usr/bin/env python3
"""Host CPU per message (issue 18): what the emulator spends on one 0-byte
Portals round trip between two Tern nodes, and how often its threads switch.

The same two nodes as bench/msgpath.py (virtio-net, TCG, a bridge in a
private namespace, bench/msgpath/msgping.c in wait mode) play a long
untraced ping-pong.  Inside that loop, over a window of --window seconds,
the script reads both QEMU processes' CPU time and context switches from
/proc (all their threads: vCPU, I/O thread, the rest) and the frames their
taps carried; one round trip is two frames.  The figures are the window's
CPU time and switches divided by its round trips, medians over --reps runs.
A wake of an emulator thread costs CPU and switches, not only latency: on a
host with fewer cores than emulated threads (a 4-node ring or a barrier on
2 cores) that CPU is the limit.  Needs root.

    python3 bench/msgcpu.py [--reps 3] [--window 3] [--kernel ELF]

Writes bench/results/<date>/msgcpu.csv (or --out) and prints the table."""
import argparse
import csv
import datetime
import os
import statistics
import subprocess
import sys
import threading
import time

import msgpath  # bench/, beside this script; it puts qemu/ and tests/ on the path

ROOT = msgpath.ROOT

ROUNDS = 30000          # the untraced loop: 7-12 s of round trips on a 2-core host
SETTLE_S = 4.0          # boot, the program's start and its warm-up, from QEMU's start
HZ = os.sysconf("SC_CLK_TCK")


def qemu_pids(ns):
    r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    pids = []
    for x in r.stdout.split():
        try:
            with open(f"/proc/{x}/comm") as f:
                if f.read().startswith("qemu-system"):
                    pids.append(int(x))
        except OSError:
            pass
    return pids


def cpu_and_switches(pids):
    """CPU seconds and context switches of these processes, all threads."""
    cpu = sw = 0
    for pid in pids:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{pid}/task/{tid}/status") as f:
                    status = f.read().splitlines()
            except OSError:
                continue                # a thread that has just ended
            cpu += int(fields[11]) + int(fields[12])          # utime, stime
            for line in status:
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    sw += int(line.split()[1])
    return cpu / HZ, sw


def tap_frames(ns):
    r = subprocess.run(["ip", "netns", "exec", ns, "sh", "-c",
                        "cat /sys/class/net/tp*/statistics/rx_packets"],
                       capture_output=True, text=True)
    return sum(int(x) for x in r.stdout.split())


def sample(ns, window, out, stop):
    """In a thread: wait for both QEMUs, let them settle, then measure."""
    t_end = time.monotonic() + 120
    pids = []
    while len(pids) < 2 and time.monotonic() < t_end and not stop.is_set():
        time.sleep(0.1)
        pids = qemu_pids(ns)
    if len(pids) < 2:
        return
    time.sleep(SETTLE_S)
    c0, s0 = cpu_and_switches(pids)
    f0, t0 = tap_frames(ns), time.monotonic()
    time.sleep(window)
    c1, s1 = cpu_and_switches(pids)
    f1, t1 = tap_frames(ns), time.monotonic()
    out.update(cpu=c1 - c0, switches=s1 - s0, frames=f1 - f0, secs=t1 - t0)


def one_run(window, kernel):
    ns = f"tern-ptl-{os.getpid() % 100000}"     # bridged_namespace's name
    got, stop = {}, threading.Event()
    th = threading.Thread(target=sample, args=(ns, window, got, stop), daemon=True)
    th.start()
    try:
        cout, _ = msgpath.run_pair(ROUNDS, "wait", "tcg", kernel=kernel)
    finally:
        stop.set()
        th.join(5)
    lat = msgpath.parse(cout)["lat"]
    if not got or got["frames"] < 2:
        raise RuntimeError("the window caught no round trips")
    rts = got["frames"] / 2
    # The window must lie inside the untraced loop: a window that took in
    # the boot or the end has far fewer round trips than the loop's pace.
    rt_us = got["secs"] * 1e6 / rts
    if rt_us > 1.5 * 2 * lat["untraced_us"]:
        raise RuntimeError(f"the window's round trips ({rt_us:.0f} us) are not the loop's "
                           f"({2 * lat['untraced_us']:.0f} us): it was not inside the loop")
    return {"cpu_us_per_rt": got["cpu"] * 1e6 / rts, "switches_per_rt": got["switches"] / rts,
            "rt_us": rt_us, "loop_rt_us": 2 * lat["untraced_us"], "rounds": rts}


def medians(runs):
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def write_csv(name, runs, setting, load0):
    """bench/results/<date>/NAME: per metric of the runs, its median, min,
    max and count, then the run's setting (columns) and the host's load."""
    path = os.path.join(ROOT, "bench", "results", datetime.date.today().isoformat(), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    load = f"{load0[0]:.1f}/{os.getloadavg()[0]:.1f}"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", "median", "min", "max", "reps", *setting, "load"])
        for k in runs[0]:
            v = [r[k] for r in runs]
            w.writerow([k, round(statistics.median(v), 3), round(min(v), 3), round(max(v), 3),
                        len(v), *setting.values(), load])
    print(f"written to {os.path.relpath(path, ROOT)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--window", type=float, default=3.0, help="seconds measured per run")
    ap.add_argument("--kernel", help="the nodes boot this tern.elf (before/after comparisons)")
    ap.add_argument("--out", default="msgcpu.csv")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("msgcpu: needs root (network namespace, bridge, taps)")
    load0 = os.getloadavg()
    runs = []
    for i in range(a.reps):
        r = one_run(a.window, a.kernel)
        runs.append(r)
        print(f"# run {i + 1}: {r['cpu_us_per_rt']:.1f} us CPU and {r['switches_per_rt']:.2f} "
              f"switches per round trip; round trip {r['rt_us']:.0f} us in the window, "
              f"{r['loop_rt_us']:.0f} us the loop's median; {r['rounds']:.0f} round trips",
              flush=True)
    med = medians(runs)
    print(f"# {a.kernel or 'build/tern.elf'}: {a.reps} runs, host load {load0[0]:.1f} -> "
          f"{os.getloadavg()[0]:.1f}")
    print(f"host CPU per round trip (both QEMUs)      {med['cpu_us_per_rt']:8.1f} us")
    print(f"context switches per round trip           {med['switches_per_rt']:8.2f}")
    print(f"round trip, the window's mean             {med['rt_us']:8.1f} us")
    write_csv(a.out, runs, {"kernel": a.kernel or "build/tern.elf"}, load0)


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
