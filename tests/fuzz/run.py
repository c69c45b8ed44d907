#!/usr/bin/env python3
"""Runs the libFuzzer harnesses of tests/fuzz/ (built by `make fuzz-build`
into build/fuzz/) one at a time, one job each, and reports per harness the
inputs run, the seconds, exec/s and the crashes.  Each starts from its seeds
(the harness writes them: TERN_FUZZ_SEEDS) plus what earlier runs kept in
build/fuzz/corpus/NAME; a crashing input is written to
build/fuzz/artifacts/NAME/.  Before fuzzing, the inputs that once crashed a
harness (tests/fuzz/regress/NAME/) are replayed.  Exit status 1 if any
harness crashed.  `make fuzz` runs this with --runs $(FUZZ_RUNS);
tests/test_fuzz.py runs a short smoke of each through run_one()."""
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGETS = ["portals_rx", "elf", "fileserver", "allocd", "yod"]
REGRESS = os.path.join(ROOT, "tests", "fuzz", "regress")


def harness(build, name):
    return os.path.join(build, name)


def replay(build, name):
    """Runs the harness once on every kept crashing input: (ok, output)."""
    d = os.path.join(REGRESS, name)
    files = sorted(os.path.join(d, f) for f in os.listdir(d)) if os.path.isdir(d) else []
    if not files:
        return True, ""
    p = subprocess.run([harness(build, name), "-close_fd_mask=3"] + files,
                       capture_output=True, text=True, errors="replace")
    return p.returncode == 0, p.stdout + p.stderr


def run_one(build, name, runs, corpus, artifacts, timeout=None):
    """Fuzzes one harness for `runs` inputs; a dict of what happened."""
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    env = dict(os.environ, TERN_FUZZ_SEEDS=corpus)
    subprocess.run([harness(build, name)], env=env, check=True, capture_output=True)
    cmd = [harness(build, name), f"-runs={runs}", "-close_fd_mask=3",
           "-print_final_stats=1", "-timeout=25", "-rss_limit_mb=4096",
           f"-artifact_prefix={artifacts}/", corpus]
    load = open("/proc/loadavg").read().split()[:3]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout)
    secs = time.monotonic() - t0
    out = p.stdout + p.stderr
    m = re.search(r"stat::number_of_executed_units:\s*(\d+)", out)
    execs = int(m.group(1)) if m else 0
    crash = re.findall(r"Test unit written to (\S+)", out)
    return {"name": name, "runs": runs, "execs": execs, "seconds": secs,
            "exec_s": execs / secs if secs else 0.0, "rc": p.returncode,
            "crashed": p.returncode != 0, "artifacts": crash, "load": " ".join(load),
            "cmd": " ".join(cmd), "output": out}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1000000)
    ap.add_argument("--only", nargs="*", choices=TARGETS, default=TARGETS)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "fuzz"))
    a = ap.parse_args()
    bad = False
    rows = []
    for name in a.only:
        ok, out = replay(a.build, name)
        if not ok:
            print(f"{name}: a kept crashing input crashes it again\n{out[-4000:]}")
            bad = True
            continue
        r = run_one(a.build, name, a.runs, os.path.join(a.build, "corpus", name),
                    os.path.join(a.build, "artifacts", name))
        rows.append(r)
        state = "CRASH " + " ".join(r["artifacts"]) if r["crashed"] else "ok"
        print(f"{name}: {r['execs']} inputs in {r['seconds']:.0f} s, "
              f"{r['exec_s']:.0f} exec/s, load {r['load']}: {state}", flush=True)
        if r["crashed"]:
            print(r["output"][-6000:])
            bad = True
    print("\nharness      inputs     seconds  exec/s  crashes")
    for r in rows:
        print(f"{r['name']:<12} {r['execs']:<10} {r['seconds']:<8.0f} {r['exec_s']:<7.0f} "
              f"{1 if r['crashed'] else 0}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
