#!/usr/bin/env python3
"""What a node's clearing between jobs costs the next launch: `yod -sz 1`
of a trivial program on a one-node cluster, right after the previous job
ended (back to back) and after a pause in which the node was left alone
(a clean node), alternating, in the same run.  Also the clearing itself,
from the node's console (`node cleaned in N ms (K KiB cleared)`).

    python3 bench/node_reuse.py [--reps 7] [--mem 256M] [--pause 3]
                                [--prog build/programs/hello-musl] [--root DIR]

--root runs another checkout's cluster and kernel (a build of the base
commit, for a before/after in one sitting); the program is this
checkout's.  Prints medians, min, max and the ratio back-to-back / clean;
the host's load before and after."""
import argparse
import os
import re
import statistics
import subprocess
import time
import uuid

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMING = re.compile(r"loaded in ([\d.]+) ms, ran ([\d.]+) ms, ([\d.]+) ms in all")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--mem", default="256M")
    ap.add_argument("--pause", type=float, default=3.0)
    ap.add_argument("--prog", default="build/programs/hello-musl")
    ap.add_argument("--root", default=HERE)
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    cluster = os.path.join(root, "qemu", "cluster")
    prog = os.path.join(HERE, a.prog)
    name = "nr" + uuid.uuid4().hex[:6]

    def cl(*args, timeout=300):
        return subprocess.run([cluster, "--name", name, *args], capture_output=True, text=True,
                              timeout=timeout)

    def launch():
        t0 = time.monotonic()
        r = cl("exec", "yod", "-v", "-sz", "1", prog)
        wall = (time.monotonic() - t0) * 1000
        m = TIMING.search(r.stderr)
        if r.returncode or not m:
            raise SystemExit(f"yod failed: {r.stdout}{r.stderr}")
        return float(m.group(3)), wall

    print(f"load before: {open('/proc/loadavg').read().strip()}")
    r = cl("up", "-n", "1", "--boot", "direct", "--mem", a.mem, timeout=600)
    if r.returncode:
        raise SystemExit(f"cluster did not come up: {r.stderr}")
    try:
        time.sleep(a.pause * 2)          # the node's first clearing, if it does one
        launch()                         # warm-up
        clean, b2b = [], []
        for _ in range(a.reps):
            time.sleep(a.pause)
            clean.append(launch())
            b2b.append(launch())
        con = cl("console", "1").stdout
    finally:
        cl("down")
    cleaned = [(float(t), float(k or 0)) for t, k in
               re.findall(r"node cleaned in (\d+) ms(?: \((\d+) KiB cleared\))?", con)]

    def show(label, xs, unit="ms"):
        print(f"{label:34} median {statistics.median(xs):8.1f} {unit}  "
              f"min {min(xs):8.1f}  max {max(xs):8.1f}  (n={len(xs)})")

    print(f"root {root}, node memory {a.mem}, program {a.prog}")
    show("clean node: yod -v total", [x[0] for x in clean])
    show("back to back: yod -v total", [x[0] for x in b2b])
    show("clean node: wall (with cluster exec)", [x[1] for x in clean])
    show("back to back: wall", [x[1] for x in b2b])
    if cleaned:
        show("node clearing after a job", [t for t, _ in cleaned])
        if any(k for _, k in cleaned):
            show("bytes cleared after a job", [k / 1024 for _, k in cleaned], "MiB")
    ratio = statistics.median(x[0] for x in b2b) / statistics.median(x[0] for x in clean)
    print(f"back to back / clean (yod -v total, medians): {ratio:.2f}")
    print(f"load after: {open('/proc/loadavg').read().strip()}")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
