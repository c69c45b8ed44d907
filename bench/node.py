#!/usr/bin/env python3
"""Single-node experiments of seed 003 section 4.2 and the OS-noise test,
on a Tern node and on a Linux node with the same virtual hardware, measured
in the same run:

  memcpy bandwidth (1 KiB .. 16 MiB), memory availability tests #1 and #2
  (largest allocation; write/read a byte per page), fixed-work-quantum noise.

    python3 bench/node.py [--runs 5] [--mem 64M] [--kvm]

Writes bench/results/<date>/node_*.csv and prints a table.  The Linux side
needs a Debian kernel in /boot (linux-image-amd64); without it only Tern is
measured, and the table says so."""
import argparse
import csv
import datetime
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "qemu"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from ternlib import accel  # noqa: E402
from ternbench import linuxnode  # noqa: E402

BIN = os.path.join(ROOT, "build", "bench")


def on_tern(prog, args, mem, mode, cpu=None):
    r = subprocess.run([os.path.join(ROOT, "qemu", "run-node"), f"--{mode}", "--mem", mem,
                        *(["--cpu", cpu] if cpu else []), os.path.join(BIN, prog), *args],
                       capture_output=True, text=True,
                       timeout=900)
    if r.returncode:
        raise RuntimeError(f"{prog} on Tern failed: {r.stderr}")
    return r.stdout.splitlines()


def on_linux(prog, args, mem, mode, cpu=None):
    return linuxnode.run_on_linux(os.path.join(BIN, prog), args, mem,
                                  accel.qemu_accel_args(mode, cpu))


def parse_kv(lines):
    out = {}
    for l in lines:
        parts = l.split()
        if len(parts) == 2 and not l.startswith("#"):
            try:
                out[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return out


def median_of(runs, fn, *a):
    samples = [parse_kv(fn(*a)) for _ in range(runs)]
    keys = samples[0].keys()
    return {k: statistics.median(s[k] for s in samples if k in s) for k in keys}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mem", default="64M")
    ap.add_argument("--kvm", action="store_true")
    a = ap.parse_args()
    mode = "kvm" if a.kvm else "tcg"
    systems = {"tern": on_tern}
    if linuxnode.debian_kernel():
        systems["linux"] = on_linux
    out = os.path.join(ROOT, "bench", "results", datetime.date.today().isoformat())
    os.makedirs(out, exist_ok=True)
    results = {}
    for name, fn in systems.items():
        results[name] = {
            "memcpy": median_of(a.runs, fn, "memcpy_bw", [], a.mem, mode),
            "memavail": median_of(a.runs, fn, "memavail", [], a.mem, mode),
            "fwq": median_of(a.runs, fn, "fwq", [], a.mem, mode),
        }
    for exp in ("memcpy", "memavail", "fwq"):
        path = os.path.join(out, f"node_{exp}.csv")
        keys = list(results["tern"][exp])
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["metric", *results, "mode", "mem", "runs"])
            for k in keys:
                w.writerow([k, *(results[s][exp].get(k, "") for s in results), mode, a.mem, a.runs])
        print(f"\n{exp} ({mode}, {a.mem}, median of {a.runs}) -> {os.path.relpath(path, ROOT)}")
        print(f"  {'metric':28}" + "".join(f"{s:>14}" for s in results) +
              ("     tern/linux" if "linux" in results else ""))
        for k in keys:
            vals = [results[s][exp].get(k) for s in results]
            ratio = (f"{vals[0] / vals[1]:15.2f}" if len(vals) == 2 and vals[1] else "")
            print(f"  {k:28}" + "".join(f"{v:14.2f}" for v in vals) + ratio)
    if "linux" not in results:
        print("\n(no Debian kernel in /boot: Linux side not measured)")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
