#!/usr/bin/env python3
"""The Portals 4 reference benchmarks (../shared/third-party/portals4-tests,
test/benchmarks: msg_rate/P4msgrate, rtt_latency/ct_hotpotato and
events_hotpotato) against Tern's Portals, built by tests/ptlref.py into a
scratch directory, and what the Linux progress thread costs a computing
program.  Needs root.  One command:

    python3 bench/portals_reference.py [--reps 3] [--iters 256] [--rtt] [--tern]
        [--linux-rtt-loops N] [--tern-rtt-loops N]

- msgrate: P4msgrate -t 0 (LE + counting events) and -t 1 (ME + EQ), 8-byte
  messages, two Linux processes over a veth pair, with the progress thread
  (default) and without (TERN_PTL_PROGRESS=0) in the same run: messages/s,
  median of --reps.
- noise: `ptlnode compute` times fixed work quanta for 4 s; mean quantum
  with the thread idle and while another process does put/get/atomic
  round trips with it, against no thread (the baseline), same run.
- --rtt: ct_hotpotato and events_hotpotato (their loop count is a #define,
  10^6: minutes each; --linux-rtt-loops N sets it in the scratch copy).
- --tern: P4msgrate and (with --rtt) ct_hotpotato/events_hotpotato, their
  round trips lowered to --tern-rtt-loops in the scratch copy (10^6 would
  take hours under TCG), between two Tern nodes (qemu/cluster, TCG), and the
  noise of a computing Tern program (`ptlnode compute` on a TCG node, which
  handles frames in the NIC's interrupt while the program computes): mean
  and worst quantum idle and while a Linux process does round trips with it.
CSV: bench/results/<date>/portals_reference.csv."""
import argparse
import csv
import datetime
import os
import pathlib
import re
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import ptlref  # noqa: E402

NODE = str(ROOT / "build" / "portals" / "linux" / "ptlnode")
OFF = {"TERN_PTL_PROGRESS": "0"}


def msgrate(out):
    """{"single": msgs/s, "prepost": msgs/s} from P4msgrate's rank 0."""
    r = {}
    for key, pat in (("single", r"single direction:\s+([\d.]+)"),
                     ("prepost", r"pre-post:\s+([\d.]+)")):
        m = re.search(pat, out)
        if m:
            r[key] = float(m.group(1))
    return r


def hotpotato(out):
    m = re.search(r"Average catch-to-toss latency: ([\d.eE+-]+)", out)
    return float(m.group(1)) if m else None


def noise(pair, env, traffic):
    """Mean work quantum (us) of a computing target, with `traffic`: a
    client doing round trips with it meanwhile."""
    t = pair.pair.spawn(2, 0x300, [NODE, "compute", "4"], extra_env=env)
    sys.path.insert(0, str(ROOT / "tests" / "portals" / "linux"))
    from netns import read_until
    read_until(t, "READY", 10)
    clients = 0
    if traffic:
        end = time.monotonic() + 3.5
        while time.monotonic() < end:
            c = pair.pair.spawn(1, 0x301, [NODE, "rt", "2", str(0x300)])
            c.communicate(timeout=60)
            clients += c.returncode == 0
    line = read_until(t, "DONE", 30)
    t.communicate(timeout=10)
    return float(re.search(r"mean_us=([\d.]+)", line).group(1)), clients


def tern_noise(traffic, secs=12):
    """(mean us, max us, rt clients done) of a computing Tern program, with
    `traffic`: Linux `ptlnode rt` clients against it meanwhile."""
    import select
    from test_portals_kernel_linux import computing_tern_node
    with computing_tern_node(secs) as (run, node):
        clients = 0
        if traffic:
            end = time.monotonic() + secs - 3
            while time.monotonic() < end:
                clients += run().returncode == 0
        end, line = time.monotonic() + secs + 60, ""
        while "DONE" not in line and time.monotonic() < end and node.poll() is None:
            if select.select([node.stdout], [], [], 1)[0]:
                line = node.stdout.readline()
    m = re.search(r"mean_us=([\d.]+) max_us=([\d.]+)", line)
    if not m:
        raise RuntimeError(f"no DONE line from the Tern node: {line!r}")
    return float(m.group(1)), float(m.group(2)), clients


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--iters", type=int, default=256, help="P4msgrate -i")
    ap.add_argument("--rtt", action="store_true")
    ap.add_argument("--tern", action="store_true")
    ap.add_argument("--tern-rtt-loops", type=int, default=10000)
    ap.add_argument("--linux-rtt-loops", type=int, default=None,
                    help="round trips of the Linux rtt runs (default: the source's 10^6)")
    a = ap.parse_args()
    if ptlref.third_party() is None:
        sys.exit("no ../shared/third-party/portals4-tests (PORTALS4_TESTS overrides)")
    print("load before:", open("/proc/loadavg").read().strip())
    rows = []
    with tempfile.TemporaryDirectory() as d:
        lin = ptlref.build("linux", os.path.join(d, "linux"), bench=True,
                           rtt_loops=a.linux_rtt_loops)
        pair = ptlref.LinuxPair()
        try:
            for t in ("0", "1"):
                for name, env in (("thread", {}), ("no-thread", OFF)):
                    got = {"single": [], "prepost": []}
                    for _ in range(a.reps):
                        r = pair.run(lin["P4msgrate"], 2, timeout=300, env=env,
                                     args=["-p", "1", "-n", "1", "-t", t, "-i", str(a.iters)])
                        for k, v in msgrate(r[0][1]).items():
                            got[k].append(v)
                    for k, v in got.items():
                        if v:
                            rows.append(("linux-2", f"msgrate -t {t} {k}", name, "msgs/s",
                                         statistics.median(v), len(v)))
            base = [noise(pair, OFF, False)[0] for _ in range(a.reps)]
            idle = [noise(pair, {}, False)[0] for _ in range(a.reps)]
            busy = [noise(pair, {}, True) for _ in range(a.reps)]
            for name, v in (("no-thread idle", base), ("thread idle", idle),
                            ("thread + round trips", [x for x, _ in busy])):
                rows.append(("linux-2", "noise mean quantum", name, "us",
                             statistics.median(v), len(v)))
            rows.append(("linux-2", "noise: rt clients done", "thread + round trips", "count",
                         statistics.median([c for _, c in busy]), len(busy)))
            if a.rtt:
                for prog in ("ct_hotpotato", "events_hotpotato"):
                    for name, env in (("thread", {}), ("no-thread", OFF)):
                        r = pair.run(lin[prog], 2, timeout=600, env=env)
                        loops = a.linux_rtt_loops or 1000000
                        rows.append(("linux-2", f"{prog} ({loops} loops)", name,
                                     "us catch-to-toss", hotpotato(r[0][1]), 1))
        finally:
            pair.close()
        if a.tern:
            tern = ptlref.build("tern", os.path.join(d, "tern"), bench=True,
                                rtt_loops=a.tern_rtt_loops)
            c = ptlref.TernCluster(2)
            try:
                for t in ("0", "1"):
                    got = {"single": [], "prepost": []}
                    for _ in range(a.reps):
                        [(s, out), _] = c.run(tern["P4msgrate"], 2, timeout=300,
                                              args=["-p", "1", "-n", "1", "-t", t,
                                                    "-i", str(max(1, a.iters // 8))])
                        for k, v in msgrate(out).items():
                            got[k].append(v)
                    for k, v in got.items():
                        if v:
                            rows.append(("tern-2", f"msgrate -t {t} {k}", "-", "msgs/s",
                                         statistics.median(v), len(v)))
                if a.rtt:
                    for prog in ("ct_hotpotato", "events_hotpotato"):
                        v = []
                        for _ in range(a.reps):
                            [(s, out), _] = c.run(tern[prog], 2, timeout=600)
                            if hotpotato(out) is not None:
                                v.append(hotpotato(out))
                        if v:
                            rows.append(("tern-2", f"{prog} ({a.tern_rtt_loops} loops)", "-",
                                         "us catch-to-toss", statistics.median(v), len(v)))
            finally:
                c.close()
            quiet = [tern_noise(False) for _ in range(a.reps)]
            busy = [tern_noise(True) for _ in range(a.reps)]
            for name, v in (("idle", quiet), ("round trips", busy)):
                rows.append(("tern-1", "noise mean quantum", name, "us",
                             statistics.median(x[0] for x in v), len(v)))
                rows.append(("tern-1", "noise worst quantum", name, "us",
                             statistics.median(x[1] for x in v), len(v)))
            rows.append(("tern-1", "noise: rt clients done", "round trips", "count",
                         statistics.median(x[2] for x in busy), len(busy)))
    print("load after:", open("/proc/loadavg").read().strip())
    out = ROOT / "bench" / "results" / datetime.date.today().isoformat()
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "portals_reference.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["where", "what", "progress", "unit", "median", "n"])
        w.writerows(rows)
    for r in rows:
        print(f"{r[0]:8s} {r[1]:28s} {r[2]:22s} {r[4]:>12.2f} {r[3]} (n={r[5]})")
    print("csv:", out / "portals_reference.csv")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
