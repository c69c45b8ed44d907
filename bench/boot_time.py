#!/usr/bin/env python3
"""Time from QEMU start to a program's first output on a Tern node, under
TCG and (where /dev/kvm is usable) KVM.  Medians of repeated runs.

    python3 bench/boot_time.py [--runs 7] [--mem 64M]

Writes bench/results/<date>/boot_time.csv and prints a table."""
import argparse
import csv
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "qemu"))
from ternlib import accel  # noqa: E402

KERNEL = os.path.join(ROOT, "build", "tern.elf")
PROGRAM = os.path.join(ROOT, "build", "programs", "hello-musl")


def one_run(mode, mem):
    """Seconds from exec of QEMU to the program's first line on the console,
    and to QEMU's exit."""
    cmd = ["qemu-system-x86_64", "-nodefaults", "-display", "none", "-no-reboot", "-m", mem,
           *accel.qemu_accel_args(mode), "-kernel", KERNEL, "-append", "exit=qemu",
           "-initrd", f"{PROGRAM} first-output", "-serial", "stdio",
           "-device", "isa-debug-exit,iobase=0xf4,iosize=4"]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    first = None
    for line in p.stdout:
        if first is None and line.startswith(b"argc="):
            first = time.monotonic() - t0
    p.wait()
    return first, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--mem", default="64M")
    a = ap.parse_args()
    modes = ["tcg"] + (["kvm"] if accel.kvm_usable() else [])
    out_dir = os.path.join(ROOT, "bench", "results", datetime.date.today().isoformat())
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for mode in modes:
        firsts, totals = [], []
        for _ in range(a.runs):
            f, t = one_run(mode, a.mem)
            if f is not None:
                firsts.append(f)
                totals.append(t)
        rows.append({"mode": mode, "runs": len(firsts),
                     "first_output_ms": round(statistics.median(firsts) * 1000, 1),
                     "qemu_exit_ms": round(statistics.median(totals) * 1000, 1),
                     "min_first_ms": round(min(firsts) * 1000, 1),
                     "max_first_ms": round(max(firsts) * 1000, 1)})
    path = os.path.join(out_dir, "boot_time.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) + ["host", "kvm_emulates_ring0"])
        w.writeheader()
        for r in rows:
            w.writerow({**r, "host": platform.node(),
                        "kvm_emulates_ring0": accel.kvm_emulates_kernel_mode()})
    print(f"{'mode':5} {'runs':>4} {'first output (median)':>22} {'min..max':>16} {'QEMU exit':>10}")
    for r in rows:
        print(f"{r['mode']:5} {r['runs']:4} {r['first_output_ms']:19.1f} ms "
              f"{r['min_first_ms']:7.1f}..{r['max_first_ms']:<7.1f} {r['qemu_exit_ms']:7.1f} ms")
    print(f"written to {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
