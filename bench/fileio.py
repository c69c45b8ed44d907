#!/usr/bin/env python3
"""File I/O throughput (issue 8, experiment 6; docs/fileio.md,
docs/linux-cluster.md): every rank writes its own file with BLOCK-byte
write() calls, closes it, then reads it back; aggregate MB/s = all ranks'
bytes / the slowest rank's time.  Medians of repeated runs.  The same static
program (build/programs/fileio-musl, `fileio big PATH MIB BLOCK`) on

  tern   Tern nodes under yod, the file calls forwarded to 1 and 2 fyods
         (a prefix served by one, another by two);
  linux  Linux nodes (qemu/cluster up --os linux --nfs DIR) under
         `mpiexec -n N`, one rank per node, writing into DIR, which the
         service node exports by NFSv3 over TCP (NFS-Ganesha, qemu/nfs-serve)
         and every node has mounted at the same path.  The program is run
         with `cold`: before reading it drops the node's cached copy
         (posix_fadvise DONTNEED), so the read crosses the network as a Tern
         read does.  Closing the file flushes it to the server (NFS
         close-to-open; the server fsyncs on COMMIT, a few ms for 8 MiB on
         this disk), and is inside the write time, as on Tern;
  local  the service node's own write/read of the same file size and blocks.

fyod's root and the NFS export are directories under /tmp (the same disk).
Both clusters get the same --mem (default 256M, what a Linux node needs) and
the same accelerator.

    python3 bench/fileio.py [--runs 3] [--nodes 1,4,16] [--mib 8]
                            [--blocks 4096,65536,1048576,4194304]
                            [--systems local,tern,linux] [--mem 256M]
                            [--out fileio.csv]

Writes bench/results/<date>/OUT (columns where, nodes, fyods, block_bytes,
mib_per_rank, write_MBps, read_MBps; where = local, fyod or nfs; fyods = 0
for local and nfs rows) and prints a table.  On a 2-core machine 16 TCG nodes
share two CPUs with the servers: the 2026-11-21 results ran 1 and 4 nodes
with every block size (fileio.csv) and 16 nodes with 1 MiB blocks only
(fileio_16.csv, --nodes 16 --blocks 1048576 --runs 1 --out ...);
fileio_nfs.csv is --systems local,tern,linux --nodes 1,4 --out fileio_nfs.csv.
Here the systems run one after the other; bench/run_all.py's experiment "io"
(one fyod against NFS, 1 MiB blocks) uses run_tern and run_linux from here
with the two systems' jobs interleaved, fairer on a shared host."""
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


def aggregate(out, n):
    """(write MB/s, read MB/s) from the `big ...` lines of n ranks: all bytes
    over the slowest rank's time."""
    w = rd = 0.0
    total = ranks = 0
    for line in out.splitlines():
        if not line.startswith("big "):
            continue
        f = dict(x.split("=") for x in line.split()[1:])
        if f["crc_w"] != f["crc_r"] or f["got"] != f["bytes"]:
            raise RuntimeError(f"fileio: the bytes read back differ: {line}")
        w, rd = max(w, float(f["write_s"])), max(rd, float(f["read_s"]))
        total += int(f["bytes"])
        ranks += 1
    if ranks != n:
        raise RuntimeError(f"fileio: {ranks} of {n} ranks reported:\n{out}")
    return total / w / 1e6, total / rd / 1e6


def run_tern(name, n, path, mib, block, timeout=900):
    """One job of n ranks on Tern cluster `name` (yod; PATH under an fyod's prefix)."""
    r = subprocess.run([CLUSTER, "--name", name, "exec", "yod", "-sz", str(n), FILEIO, "big",
                        path, str(mib), str(block)], capture_output=True, text=True,
                       timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(r.stdout + r.stderr)
    return aggregate(r.stdout, n)


def run_linux(name, n, path, mib, block, timeout=900):
    """One job of n ranks, one per node, on Linux cluster `name` (mpiexec; PATH
    in the directory the cluster was booted with --nfs)."""
    env = dict(os.environ, MPIEXEC_TIMEOUT=str(int(timeout * 0.8)))
    r = subprocess.run([CLUSTER, "--name", name, "mpiexec", "-n", str(n), FILEIO, "big", path,
                        str(mib), str(block), "cold"], capture_output=True, text=True,
                       timeout=timeout, env=env)
    if r.returncode != 0:
        raise RuntimeError(r.stdout + r.stderr)
    return aggregate(r.stdout, n)



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


def clear(d):
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))


def report(rows, where, n, nf, block, mib, res):
    w = statistics.median(x[0] for x in res)
    r = statistics.median(x[1] for x in res)
    rows.append((where, n, nf, block, mib, w, r))
    label = f"{nf} fyod" if where == "fyod" else "NFS   "
    print(f"{n:2} nodes {label} block {block:>8}: write {w:8.1f} MB/s  read {r:8.1f} MB/s",
          flush=True)


def tern_part(a, nodes, blocks, rows):
    name = "fb" + uuid.uuid4().hex[:7]
    roots = [tempfile.mkdtemp(prefix="fyod-bench-", dir="/tmp") for _ in range(3)]
    log = open(os.path.join(tempfile.gettempdir(), name + "-fyod.log"), "w")
    fyods = []
    try:
        subprocess.run([CLUSTER, "--name", name, "up", "-n", str(max(nodes)), "--boot",
                        "direct", "--mem", a.mem], check=True, capture_output=True, timeout=900)
        fyods.append(start_fyod(name, roots[0], "/one", log))
        fyods.append(start_fyod(name, roots[1], "/two", log))
        fyods.append(start_fyod(name, roots[2], "/two", log))
        run_tern(name, 1, "/one/f.%r", a.mib, blocks[0])   # warm-up, not counted
        clear(roots[0])
        for block in blocks:
            for n in nodes:
                for nf, prefix in ((1, "/one"), (2, "/two")):
                    res = [run_tern(name, n, prefix + "/f.%r", a.mib, block)
                           for _ in range(a.runs)]
                    report(rows, "fyod", n, nf, block, a.mib, res)
                    for d in roots:
                        clear(d)
    finally:
        for p in fyods:
            p.send_signal(signal.SIGTERM)
            p.wait(10)
        subprocess.run([CLUSTER, "--name", name, "down"], capture_output=True)
        for d in roots:
            shutil.rmtree(d, ignore_errors=True)
        log.close()


def linux_part(a, nodes, blocks, rows):
    name = "fbl" + uuid.uuid4().hex[:6]
    export = tempfile.mkdtemp(prefix="nfs-bench-", dir="/tmp")
    try:
        r = subprocess.run([CLUSTER, "--name", name, "up", "--os", "linux", "-n",
                            str(max(nodes)), "--boot", "direct", "--mem", a.mem, "--nfs",
                            export], capture_output=True, text=True, timeout=900)
        if r.returncode:
            raise RuntimeError(f"Linux cluster with NFS did not come up:\n{r.stdout}{r.stderr}")
        run_linux(name, 1, export + "/f.%r", a.mib, blocks[0])   # warm-up, not counted
        for block in blocks:
            for n in nodes:
                res = [run_linux(name, n, export + "/f.%r", a.mib, block)
                       for _ in range(a.runs)]
                report(rows, "nfs", n, 0, block, a.mib, res)
    finally:
        subprocess.run([CLUSTER, "--name", name, "down"], capture_output=True)
        shutil.rmtree(export, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--nodes", default="1,4,16")
    ap.add_argument("--mib", type=int, default=8, help="file size per rank")
    ap.add_argument("--blocks", default="4096,65536,1048576,4194304")
    ap.add_argument("--systems", default="local,tern,linux")
    ap.add_argument("--mem", default="256M", help="node memory, Tern and Linux alike")
    ap.add_argument("--out", default="fileio.csv")
    a = ap.parse_args()
    nodes = [int(x) for x in a.nodes.split(",")]
    blocks = [int(x) for x in a.blocks.split(",")]
    systems = a.systems.split(",")
    out_dir = os.path.join(ROOT, "bench", "results", datetime.date.today().isoformat())
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    if "local" in systems:
        d = tempfile.mkdtemp(prefix="local-bench-", dir="/tmp")
        try:
            for block in blocks:
                lw, lr = zip(*(local(os.path.join(d, "local"), a.mib, block)
                               for _ in range(a.runs)))
                rows.append(("local", 1, 0, block, a.mib, statistics.median(lw),
                             statistics.median(lr)))
                print(f"local          block {block:>8}: write {rows[-1][5]:8.1f} MB/s  "
                      f"read {rows[-1][6]:8.1f} MB/s", flush=True)
        finally:
            shutil.rmtree(d, ignore_errors=True)
    done = False
    try:
        if "tern" in systems:
            tern_part(a, nodes, blocks, rows)
        if "linux" in systems:
            linux_part(a, nodes, blocks, rows)
        done = True
    finally:
        # A failed run keeps what it measured, next to (not over) a whole one.
        with open(os.path.join(out_dir, a.out + ("" if done else ".partial")), "w",
                  newline="") as f:
            w = csv.writer(f)
            w.writerow(["where", "nodes", "fyods", "block_bytes", "mib_per_rank", "write_MBps",
                        "read_MBps"])
            for r in rows:
                w.writerow([r[0], r[1], r[2], r[3], r[4], f"{r[5]:.1f}", f"{r[6]:.1f}"])
    return 0


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    sys.exit(main())
