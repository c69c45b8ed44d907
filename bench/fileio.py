#!/usr/bin/env python3
"""Forwarded file I/O throughput (docs/fileio.md): every rank writes its own
file with BLOCK-byte write() calls through an fyod, then reads it back;
aggregate MB/s = all ranks' bytes / the slowest rank's time.  1, 4 and 16
nodes, 1 and 2 fyods (a prefix served by one, another by two), next to the
service node's own write/read of the same file size and blocks.  Medians of
repeated runs.

    python3 bench/fileio.py [--runs 3] [--nodes 1,4,16] [--mib 8]
                            [--blocks 4096,65536,1048576,4194304] [--out fileio.csv]

Writes bench/results/<date>/fileio.csv and prints a table.  On a 2-core
machine 16 TCG nodes share two CPUs with the servers: the 2026-11-21 results
ran 1 and 4 nodes with every block size (fileio.csv) and 16 nodes with 1 MiB
blocks only (fileio_16.csv, --nodes 16 --blocks 1048576 --runs 1 --out ...)."""
import argparse
import csv
import datetime
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = os.path.join(ROOT, "qemu", "cluster")
FILEIO = os.path.join(ROOT, "build", "programs", "fileio-musl")


def start_fyod(name, root, prefix, log):
    p = subprocess.Popen([CLUSTER, "--name", name, "exec", "fyod", "--root", root, "--prefix",
                          prefix], stdout=log, stderr=log)
    time.sleep(1.5)
    return p


def run_job(name, n, path, mib, block):
    r = subprocess.run([CLUSTER, "--name", name, "exec", "yod", "-sz", str(n), FILEIO, "big",
                        path, str(mib), str(block)], capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(r.stdout + r.stderr)
    w = rd = 0.0
    total = 0
    for line in r.stdout.splitlines():
        f = dict(x.split("=") for x in line.split()[1:])
        assert f["crc_w"] == f["crc_r"] and f["got"] == f["bytes"], line
        w, rd = max(w, float(f["write_s"])), max(rd, float(f["read_s"]))
        total += int(f["bytes"])
    return total / w / 1e6, total / rd / 1e6


def local(path, mib, block):
    """The service node writing and reading the same file in the same blocks."""
    buf = os.urandom(block)
    total = mib << 20
    t0 = time.monotonic()
    fd = os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o644)
    left = total
    while left > 0:
        left -= os.write(fd, buf[:min(block, left)])
    os.close(fd)
    t1 = time.monotonic()
    fd = os.open(path, os.O_RDONLY)
    while os.read(fd, block):
        pass
    os.close(fd)
    t2 = time.monotonic()
    os.unlink(path)
    return total / (t1 - t0) / 1e6, total / (t2 - t1) / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--nodes", default="1,4,16")
    ap.add_argument("--mib", type=int, default=8, help="file size per rank")
    ap.add_argument("--blocks", default="4096,65536,1048576,4194304")
    ap.add_argument("--out", default="fileio.csv")
    a = ap.parse_args()
    nodes = [int(x) for x in a.nodes.split(",")]
    blocks = [int(x) for x in a.blocks.split(",")]
    out_dir = os.path.join(ROOT, "bench", "results", datetime.date.today().isoformat())
    os.makedirs(out_dir, exist_ok=True)
    name = "fb" + uuid.uuid4().hex[:7]
    roots = [tempfile.mkdtemp(prefix="fyod-bench-", dir="/tmp") for _ in range(3)]
    log = open(os.path.join(tempfile.gettempdir(), name + "-fyod.log"), "w")
    fyods = []
    rows = []
    try:
        subprocess.run([CLUSTER, "--name", name, "up", "-n", str(max(nodes)), "--boot",
                        "direct"], check=True, capture_output=True, timeout=600)
        fyods.append(start_fyod(name, roots[0], "/one", log))
        fyods.append(start_fyod(name, roots[1], "/two", log))
        fyods.append(start_fyod(name, roots[2], "/two", log))
        for block in blocks:
            lw, lr = zip(*(local(os.path.join(roots[0], "local"), a.mib, block)
                           for _ in range(a.runs)))
            rows.append(("local", 1, 0, block, a.mib, statistics.median(lw),
                         statistics.median(lr)))
            print(f"local          block {block:>8}: write {rows[-1][5]:8.1f} MB/s  "
                  f"read {rows[-1][6]:8.1f} MB/s", flush=True)
            for n in nodes:
                for nf, prefix in ((1, "/one"), (2, "/two")):
                    res = [run_job(name, n, prefix + "/f.%r", a.mib, block)
                           for _ in range(a.runs)]
                    w = statistics.median(x[0] for x in res)
                    r = statistics.median(x[1] for x in res)
                    rows.append(("fyod", n, nf, block, a.mib, w, r))
                    print(f"{n:2} nodes {nf} fyod block {block:>8}: write {w:8.1f} MB/s  "
                          f"read {r:8.1f} MB/s", flush=True)
                    for d in roots:
                        for f in os.listdir(d):
                            os.unlink(os.path.join(d, f))
    finally:
        for p in fyods:
            p.send_signal(signal.SIGTERM)
            p.wait(10)
        subprocess.run([CLUSTER, "--name", name, "down"], capture_output=True)
        for d in roots:
            shutil.rmtree(d, ignore_errors=True)
        log.close()
    with open(os.path.join(out_dir, a.out), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["where", "nodes", "fyods", "block_bytes", "mib_per_rank", "write_MBps",
                    "read_MBps"])
        for r in rows:
            w.writerow([r[0], r[1], r[2], r[3], r[4], f"{r[5]:.1f}", f"{r[6]:.1f}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
