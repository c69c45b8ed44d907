#!/usr/bin/env python3
"""What authentication adds to a launch (issue 19): the two MUNGE round
trips of one `yod` (yod signs its allocation request, the allocator
verifies it; docs/security.md), against a private munged started here, and
beside them the launch time of `yod -sz 1` from the latest launch results.
The allocator's per-node grants are sent while yod already loads the
program (allocd does not wait for them), and the job key's HMAC over a
control message is a SHA-256 of under 200 bytes: neither is on the launch's
critical path, so the credential is what authentication adds.

    python3 bench/auth_cost.py [--rounds 500] [--reps 5]

Prints the medians over --reps runs of build/bench-host/credbench (each the
median of --rounds sign/verify pairs) with the host's load."""
import argparse
import glob
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "qemu"))
from ternlib import munge  # noqa: E402

BENCH = os.path.join(ROOT, "build", "bench-host", "credbench")
LINE = re.compile(r"sign median ([\d.]+) us min ([\d.]+) us, verify median ([\d.]+) us")


def latest_launch_ms():
    """`yod -sz 1`'s own launch-to-end time (yod -v) from the newest
    experiment 5 results (launch.csv), or None."""
    for path in sorted(glob.glob(os.path.join(ROOT, "bench", "results", "*", "launch.csv")),
                       reverse=True):
        for line in open(path):
            f = line.strip().split(",")
            if len(f) > 6 and f[1] == "tern-yod" and f[2] == "yod_v_total" and f[3] == "1":
                try:
                    return float(f[5]), path
                except ValueError:
                    continue
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    if not os.access(BENCH, os.X_OK):
        sys.exit(f"{BENCH} is missing: run `make` first")
    run_dir = tempfile.mkdtemp(prefix="tern-auth-")
    pid = None
    try:
        pid = munge.start(run_dir, private=True)
        env = dict(os.environ, TERN_MUNGE_SOCKET=munge.paths(run_dir)["socket"])
        load0 = open("/proc/loadavg").read().split()[0]
        signs, verifies = [], []
        for _ in range(a.reps):
            p = subprocess.run([BENCH, str(a.rounds)], env=env, capture_output=True, text=True,
                               timeout=300)
            m = LINE.search(p.stdout)
            if p.returncode or not m:
                sys.exit("credbench failed: " + p.stdout + p.stderr)
            signs.append(float(m.group(1)))
            verifies.append(float(m.group(3)))
        load1 = open("/proc/loadavg").read().split()[0]
    finally:
        if pid:
            os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)          # munge.start's Popen: our child
        shutil.rmtree(run_dir, ignore_errors=True)
    s, v = statistics.median(signs), statistics.median(verifies)
    print(f"MUNGE credential per launch: sign {s:.0f} us + verify {v:.0f} us = {s + v:.0f} us "
          f"(medians of {a.reps} x {a.rounds}; load {load0} -> {load1})")
    got = latest_launch_ms()
    if got:
        ms, path = got
        print(f"yod -sz 1 launch {ms:.0f} ms ({os.path.relpath(path, ROOT)}): "
              f"authentication is {(s + v) / 1e3 / ms * 100:.3g} % of it")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
